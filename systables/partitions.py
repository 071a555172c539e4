"""``t$partitions``: per partition of a snapshot, its records, bytes and files.

``record_count`` counts rows as stored (before merging, as Paimon's does); ``deleted_record_count``
is what deletion vectors mark deleted. Pushed down: a ``partition`` conjunct (``k=v/...`` text).
"""

from paimon_sql.index.deletion_vector import INDEX_TYPE as DV_INDEX_TYPE
from paimon_sql.read.postpone import real_buckets
from paimon_sql.systables.base import (
    SnapshotMetadataTable,
    columns,
    partition_spec_renderer,
    pushed_value_test,
    register,
)


def deleted_counts(table, snapshot) -> dict:
    """Rows marked deleted by deletion vectors, per partition bytes (None where a vector's count is
    unknown, as Java's); none counted unless the table has deletion vectors."""
    out: dict = {}
    if snapshot is None or not snapshot.index_manifest or not table.options.get("deletion-vectors.enabled"):
        return out
    for e in table.index_manifest_entries(snapshot.index_manifest):
        if e.index_type == DV_INDEX_TYPE and e.dv_ranges and out.get(e.partition, 0) is not None:
            counts = [r.cardinality for r in e.dv_ranges]
            out[e.partition] = None if None in counts else out.get(e.partition, 0) + sum(counts)
    return out


def group_files(entries, key) -> dict:
    """``(entry, partition text)`` pairs grouped by ``key(entry)``: the partition's text, record
    count, bytes, files, last creation and buckets of each group."""
    groups = {}
    for e, part in entries:
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
        spec = partition_spec_renderer(self.table)
        wanted = pushed_value_test(predicate, ["partition"])
        snap = self.snapshot()
        planned = self.table.new_scan().with_snapshot(snap.id).plan_entries() if snap else []
        entries = [(e, spec(e.partition)) for e in real_buckets(self.table, planned)]  # as Paimon's batch scan
        groups = group_files([(e, part) for e, part in entries if wanted({"partition": part})], lambda e: e.partition)
        deleted = deleted_counts(self.table, snap)
        out = []
        for part, g in sorted(groups.items(), key=lambda kv: kv[1]["partition"]):
            out.append({"partition": g["partition"], "record_count": g["records"], "file_size_in_bytes": g["bytes"],
                        "file_count": g["files"], "last_update_time": g["last"],
                        "created_at": None, "created_by": None, "updated_by": None,
                        "options": None, "total_buckets": g["total_buckets"], "done": False,
                        "deleted_record_count": deleted.get(part, 0)})
        return self.from_rows(out)
