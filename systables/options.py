"""``t$options``: the table's options as (key, value) rows, as the latest schema stores them
(secret values masked)."""

from paimon_sql.options.core_options import redact
from paimon_sql.systables.base import SystemTable, columns, register


@register
class OptionsTable(SystemTable):
    name = "options"
    FIELDS = columns("key STRING NOT NULL", "value STRING NOT NULL")

    def rows(self, predicate=None):
        items = sorted(redact(self.table.schema.options).items())
        return self.table_of({"key": [k for k, _ in items], "value": [v for _, v in items]})
