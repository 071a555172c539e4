"""``t$partitions``: per partition of a snapshot, its records, bytes and files.

``record_count`` counts rows as stored (before merging, as Paimon's does); ``deleted_record_count``
is what deletion vectors mark deleted. Pushed down: a ``partition`` conjunct (``k=v/...`` text).
"""

from collections import defaultdict

from paimon_sql.read.postpone import real_buckets
from paimon_sql.systables.base import (
    SnapshotMetadataTable,
    columns,
    partition_spec_renderer,
    pushed_value_test,
    register,
)


def deleted_counts(table, snapshot) -> dict:
    """Rows marked deleted by deletion vectors, per (partition bytes, bucket)."""
    out = defaultdict(int)
    if snapshot is not None and snapshot.index_manifest:
        for e in table.index_manifest_entries(snapshot.index_manifest):
            if e.index_type == "DELETION_VECTORS":
                out[(e.partition, e.bucket)] += sum(r.cardinality or 0 for r in e.dv_ranges or ())
    return out


def group_files(sys_table, predicate, key, batch_scan: bool = False):
    """Live files grouped by ``key(entry)``: record count, bytes, files, last creation, buckets;
    ``batch_scan``: only those Paimon's batch scan plans (a postpone table's real buckets)."""
    spec = partition_spec_renderer(sys_table.table)
    wanted = pushed_value_test(predicate, ["partition", "bucket"])
    groups = {}
    snap = sys_table.snapshot()
    entries = sys_table.table.new_scan().with_snapshot(snap.id).plan_entries() if snap else []
    for e in real_buckets(sys_table.table, entries) if batch_scan else entries:
        part = spec(e.partition)
        if not wanted({"partition": part, "bucket": e.bucket}):
            continue
        g = groups.setdefault(key(e), {"partition": part, "records": 0, "bytes": 0, "files": 0, "last": None,
                                       "total_buckets": e.total_buckets})
        g["records"] += e.file.row_count
        g["bytes"] += e.file.file_size
        g["files"] += 1
        created = e.file.creation_time
        if created is not None and (g["last"] is None or created > g["last"]):
            g["last"] = created
    return groups


@register
class PartitionsTable(SnapshotMetadataTable):
    name = "partitions"
    FIELDS = columns("partition STRING", "record_count BIGINT NOT NULL", "file_size_in_bytes BIGINT NOT NULL",
                     "file_count BIGINT NOT NULL", "last_update_time TIMESTAMP(3)", "created_at TIMESTAMP(3)",
                     "created_by STRING", "updated_by STRING", "options STRING", "total_buckets INT NOT NULL",
                     "done BOOLEAN NOT NULL", "deleted_record_count BIGINT")
    pushdown = frozenset({"partition"})

    def rows(self, predicate=None):
        groups = group_files(self, predicate, lambda e: e.partition, batch_scan=True)
        deleted = deleted_counts(self.table, self.snapshot())
        out = []
        for part, g in sorted(groups.items(), key=lambda kv: kv[1]["partition"] or ""):
            out.append({"partition": g["partition"], "record_count": g["records"], "file_size_in_bytes": g["bytes"],
                        "file_count": g["files"], "last_update_time": g["last"],
                        "created_at": None, "created_by": None, "updated_by": None,
                        "options": None, "total_buckets": g["total_buckets"], "done": False,
                        "deleted_record_count": sum(n for (p, _), n in deleted.items() if p == part)})
        return self.from_rows(out)
