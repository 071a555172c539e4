"""``t$statistics``: the statistics file an ANALYZE committed with the snapshot, if any
(``statistics/<name>``, JSON); no row when the snapshot has none."""

import json

from paimon_sql.systables.base import SnapshotMetadataTable, columns, register


@register
class StatisticsTable(SnapshotMetadataTable):
    name = "statistics"
    FIELDS = columns("snapshot_id BIGINT NOT NULL", "schema_id BIGINT NOT NULL", "mergedRecordCount BIGINT",
                     "mergedRecordSize BIGINT", "colstat STRING")

    def rows(self, predicate=None):
        snap = self.snapshot()
        out = []
        if snap is not None and snap.statistics:
            stats = json.loads(self.table.io.read_text(f"{self.table.path}/statistics/{snap.statistics}"))
            out.append(dict((("snapshot_id", stats.get("snapshotId", snap.id)),
                                ("schema_id", stats.get("schemaId", snap.schema_id)),
                                ("mergedRecordCount", stats.get("mergedRecordCount")),
                                ("mergedRecordSize", stats.get("mergedRecordSize")),
                                ("colstat", json.dumps(stats.get("colStats") or {})))))
        return self.from_rows(out)
