"""``t$ro``: read-optimized rows — a primary-key table's fully compacted files only (the max level,
its deletion vectors applied, as Paimon's ``withLevel``), read with no merge: fast, and as fresh as
the last full compaction. Append tables read as they are."""

from paimon_sql.systables.base import SystemTable, register


@register
class ReadOptimizedTable(SystemTable):
    name = "ro"

    @property
    def fields(self):
        return self.table.schema.fields

    def to_dataframe(self, session, columns=None, predicate=None):
        return session.scan_dataframe(self.table, columns, predicate, read_optimized=True)
