"""The live files of the partitions a write touches, as Paimon's ``FileSystemWriteRestore`` reads them.

A writer needs each bucket it writes to continue: the highest sequence number, the files its
compaction levels hold, the bucket count the partition was written with; a commit needs the live
files of the partitions it deletes from or rebases. Planning the whole table for that made a one-row
INSERT into a table of 20,000 files cost seconds, growing with the table, where Paimon restores each
(partition, bucket) it writes by a scan filtered to it. So here: manifests whose partition stats
(and bucket range) exclude every wanted partition (and bucket) are skipped unread, and of the others
only the wanted entries are kept before ADDs and DELETEs are merged.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Collection, List, Optional

from paimon_sql.manifest.manifest_file import ManifestEntry, ManifestFileMeta, merge_entries
from paimon_sql.manifest.manifest_merge import may_hold_partitions
from paimon_sql.read.scan import manifest_entries, manifest_list
from paimon_sql.store.file_store import FileStore

if TYPE_CHECKING:
    from paimon_sql.snapshot.snapshot import Snapshot


def live_entries(table: FileStore, snapshot: Optional[Snapshot], partitions: Collection[bytes],
                 buckets: Optional[Collection[int]] = None) -> List[ManifestEntry]:
    """The live files of ``snapshot`` in ``partitions`` (BinaryRow bytes), of ``buckets`` when given."""
    if snapshot is None or not partitions:
        return []
    wanted = set(partitions)
    types = [f.type for f in table.schema.fields_of(table.schema.partition_keys)]
    may_hold = may_hold_partitions(wanted, types)
    bucket_set = None if buckets is None else set(buckets)

    def read(meta: ManifestFileMeta) -> bool:
        if bucket_set is not None and meta.min_bucket is not None and meta.max_bucket is not None \
                and not any(meta.min_bucket <= b <= meta.max_bucket for b in bucket_set):
            return False
        return may_hold(meta)

    metas = [m for m in manifest_list(table, snapshot.base_manifest_list, snapshot.base_manifest_list_size)
             + manifest_list(table, snapshot.delta_manifest_list, snapshot.delta_manifest_list_size) if read(m)]
    kept = [e for e in manifest_entries(table, metas)
            if e.partition in wanted and (bucket_set is None or e.bucket in bucket_set)]
    return merge_entries(kept)
