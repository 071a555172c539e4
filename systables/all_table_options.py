"""``sys.all_table_options``: (database, table, key, value) of every table's options, with the
``path`` its catalog gives it when loading it, as Java's ``Table.options()`` holds it (secret values
masked)."""

from paimon_sql.options.core_options import redact
from paimon_sql.systables.base import GlobalSystemTable, columns, register


@register
class AllTableOptionsTable(GlobalSystemTable):
    name = "all_table_options"
    FIELDS = columns("database_name STRING NOT NULL", "table_name STRING NOT NULL", "key STRING NOT NULL",
                     "value STRING NOT NULL")
    pushdown = frozenset({"database_name", "table_name"})

    def rows(self, predicate=None):
        out = []
        for db, name, t in self.tables(predicate):
            for k, v in sorted(redact({**t.schema.options, 'path': t.path}).items()):
                out.append({"database_name": db, "table_name": name, "key": k, "value": v})
        return self.from_rows(out)
