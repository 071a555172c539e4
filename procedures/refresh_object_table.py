"""``refresh_object_table``: paimon-spark's RefreshObjectTableProcedure over :meth:`ObjectTable.refresh`.

The object table's rows become the listing of its ``object-location`` (one OVERWRITE snapshot);
the output is the number of files listed. The location is reached with the session's catalog
options (``s3.*`` ...), as Java reaches it with the catalog's FileIO.
"""

from __future__ import annotations

from paimon_sql.procedures.base import Procedure, columns, register, required
from paimon_sql.table.object_table import ObjectTable


@register
class RefreshObjectTableProcedure(Procedure):
    name = "refresh_object_table"
    parameters = (required("table", "STRING"),)
    output = columns("file_number BIGINT NOT NULL")
    description = "Make an object table's rows the listing of its object-location (one OVERWRITE snapshot)."

    def call(self, session, args):
        table = self.table(session, args["table"])
        if not isinstance(table, ObjectTable):
            raise self.fail(f"table '{args['table']}' is not an object table ('type' = 'object-table')")
        return [(table.refresh(session.catalog_options),)]
