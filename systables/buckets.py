"""``t$buckets``: per (partition, bucket) of a snapshot, its records, bytes and files; the partition
as ``{v1, v2}`` (as ``$files`` shows it), sorted by that text, then bucket."""

from paimon_sql.systables.base import SnapshotMetadataTable, columns, register
from paimon_sql.systables.partitions import group_files


@register
class BucketsTable(SnapshotMetadataTable):
    name = "buckets"
    FIELDS = columns("partition STRING", "bucket INT NOT NULL", "record_count BIGINT NOT NULL",
                     "file_size_in_bytes BIGINT NOT NULL", "file_count BIGINT NOT NULL",
                     "last_update_time TIMESTAMP(3)")
    pushdown = frozenset({"partition", "bucket"})

    def rows(self, predicate=None):
        entries = [(e, part) for e, part, _ in self.live_entries(predicate, postpone=True)]
        groups = group_files(entries, lambda e: (e.partition, e.bucket))
        out = []
        for (_, bucket), g in sorted(groups.items(), key=lambda kv: (kv[1]["partition"], kv[0][1])):
            out.append({"partition": g["partition"], "bucket": bucket, "record_count": g["records"],
                        "file_size_in_bytes": g["bytes"], "file_count": g["files"],
                        "last_update_time": g["last"]})
        return self.from_rows(out)
