"""``refresh_object_table``: Paimon 1.0's procedure, which wrote an object table's rows from a listing.

Since Paimon 2.0 an object table is the listing of its location made at each read
(:mod:`paimon_sql.table.object_table`): there is nothing to refresh, and Paimon 2.0 has no such
procedure. The name stays, so that a 1.0 script calling it fails in one line saying so.
"""

from __future__ import annotations

from paimon_sql.procedures.base import Procedure, columns, register, required
from paimon_sql.table.object_table import ObjectTable


@register
class RefreshObjectTableProcedure(Procedure):
    name = "refresh_object_table"
    parameters = (required("table", "STRING"),)
    output = columns("file_number BIGINT NOT NULL")
    description = "Paimon 1.0's refresh of an object table; refused: since 2.0 an object table lists its files at each read."

    def call(self, session, args):
        table = self.table(session, args["table"])
        if not isinstance(table, ObjectTable):
            raise self.fail(f"table '{args['table']}' is not an object table ('type' = 'object-table')")
        raise self.fail(f"object table {table.name} lists the files under {table.path} at each read (Paimon 2.0): "
                        "there is nothing to refresh")
