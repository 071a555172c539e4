"""``t$statistics``: what the last ANALYZE computed, as the snapshot read names it; no row when
the table was never analyzed."""

import json

from paimon_sql.systables.base import SnapshotMetadataTable, columns, register
from paimon_sql.table.statistics import read_statistics


@register
class StatisticsTable(SnapshotMetadataTable):
    name = "statistics"
    FIELDS = columns("snapshot_id BIGINT NOT NULL", "schema_id BIGINT NOT NULL", "mergedRecordCount BIGINT",
                     "mergedRecordSize BIGINT", "colstat STRING")

    def rows(self, predicate=None):
        stats = read_statistics(self.table, self.snapshot())
        if stats is None:
            return self.from_rows([])
        return self.from_rows([{"snapshot_id": stats["snapshotId"], "schema_id": stats["schemaId"],
                                "mergedRecordCount": stats.get("mergedRecordCount"),
                                "mergedRecordSize": stats.get("mergedRecordSize"),
                                "colstat": _pretty_json(stats.get("colStats") or {})}])


def _pretty_json(value: dict) -> str:
    """``value`` as Java's ``JsonSerdeUtil.toJson`` prints it (Jackson's default pretty printer:
    two-space indents, ``" : "`` between key and value, ``{ }`` when empty)."""
    return json.dumps(value, indent=2, separators=(",", " : "), ensure_ascii=False) if value else "{ }"
