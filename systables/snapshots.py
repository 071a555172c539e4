"""``t$snapshots``: one row per snapshot (pushed down: ``snapshot_id`` ranges skip snapshot files)."""

from concurrent.futures import ThreadPoolExecutor

from paimon_sql.systables.base import SystemTable, columns, local_time, pushed_value_test, register


@register
class SnapshotsTable(SystemTable):
    name = "snapshots"
    FIELDS = columns("snapshot_id BIGINT NOT NULL", "schema_id BIGINT NOT NULL", "commit_user STRING NOT NULL",
                     "commit_identifier BIGINT NOT NULL", "commit_kind STRING NOT NULL",
                     "commit_time TIMESTAMP(3) NOT NULL", "base_manifest_list STRING NOT NULL",
                     "delta_manifest_list STRING NOT NULL", "changelog_manifest_list STRING",
                     "total_record_count BIGINT", "delta_record_count BIGINT", "changelog_record_count BIGINT",
                     "watermark BIGINT", "next_row_id BIGINT", "operation STRING")
    pushdown = frozenset({"snapshot_id"})

    def rows(self, predicate=None):
        sm = self.table.snapshot_manager
        wanted = pushed_value_test(predicate, ["snapshot_id"])
        ids = [i for i in sm.listed_ids() if wanted({"snapshot_id": i})]
        with ThreadPoolExecutor(max_workers=min(16, max(1, len(ids)))) as pool:  # one small file each
            snaps = list(pool.map(sm.snapshot, ids))
        return self.table_of({
            "snapshot_id": [s.id for s in snaps], "schema_id": [s.schema_id for s in snaps],
            "commit_user": [s.commit_user for s in snaps],
            "commit_identifier": [s.commit_identifier for s in snaps],
            "commit_kind": [s.commit_kind for s in snaps], "commit_time": [local_time(s.time_millis) for s in snaps],
            "base_manifest_list": [s.base_manifest_list for s in snaps],
            "delta_manifest_list": [s.delta_manifest_list for s in snaps],
            "changelog_manifest_list": [s.changelog_manifest_list for s in snaps],
            "total_record_count": [s.total_record_count for s in snaps],
            "delta_record_count": [s.delta_record_count for s in snaps],
            "changelog_record_count": [s.changelog_record_count for s in snaps],
            "watermark": [s.watermark for s in snaps], "next_row_id": [s.next_row_id for s in snaps],
            "operation": [s.operation for s in snaps],
        })
