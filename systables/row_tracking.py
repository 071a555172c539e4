"""``t$row_tracking``: a row-tracking table's rows with ``_ROW_ID`` and ``_SEQUENCE_NUMBER`` after
its columns (Java's RowTrackingTable), so ``SELECT *`` shows them; other tables refuse it."""

from paimon_sql.exceptions import PaimonError
from paimon_sql.read import metadata_columns
from paimon_sql.systables.base import SystemTable, register


@register
class RowTrackingTable(SystemTable):
    name = "row_tracking"

    @classmethod
    def supports(cls, table) -> bool:
        return metadata_columns.row_tracking(table.schema)

    def __init__(self, table):
        super().__init__(table)
        if not self.supports(table):
            raise PaimonError(f"Table {table.name} does not support row tracking, please enable "
                              f"'row-tracking.enabled' option to use 'row_tracking' table.")

    @property
    def fields(self):
        tracked = [f for f in metadata_columns.fields(self.table.schema) if f.name in metadata_columns.TRACKED]
        return list(self.table.schema.fields) + tracked

    def to_dataframe(self, session, columns=None, predicate=None):
        pushed = predicate.only(set(self.table.schema.field_names)) if predicate is not None else None
        return session.scan_dataframe(self.table, list(columns or self.field_names), pushed)
