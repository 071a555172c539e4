"""``t$consumers``: streaming consumers and the next snapshot each will read."""

from paimon_sql.systables.base import SystemTable, columns, register


@register
class ConsumersTable(SystemTable):
    name = "consumers"
    FIELDS = columns("consumer_id STRING NOT NULL", "next_snapshot_id BIGINT NOT NULL")

    def rows(self, predicate=None):
        consumers = self.table.consumer_manager.consumers()
        return self.table_of({"consumer_id": list(consumers), "next_snapshot_id": list(consumers.values())})
