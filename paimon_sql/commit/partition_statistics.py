"""PartitionStatistics: what a commit changes in each partition (Paimon's ``PartitionEntry`` of the
commit's file entries, as ``PartitionStatistics``), the ``statistics`` a REST catalog's commit
request carries so its server can keep each table's and partition's record, file and byte counts.

Each count is a delta: an ADD entry adds its file's rows, bytes and one file, a DELETE takes them
away; the last file creation time is the latest of the entries' (epoch millis); a partition's spec
is its values as the table names its directories (``partition.default-name``,
``partition.legacy-name``), an unpartitioned table's the empty spec.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Dict, Iterable, List

from paimon_sql.data import binary_row
from paimon_sql.manifest.manifest_file import ADD
from paimon_sql.store.file_store import FileStore

if TYPE_CHECKING:
    from paimon_sql.manifest.manifest_file import ManifestEntry


def partition_statistics(table: "FileStore", entries: Iterable["ManifestEntry"]) -> List[dict]:
    """The JSON of Paimon's PartitionStatistics, a delta per partition ``entries`` touch."""
    groups: Dict[bytes, dict] = {}
    for e in entries:
        sign = 1 if e.kind == ADD else -1
        g = groups.setdefault(e.partition, {"recordCount": 0, "fileSizeInBytes": 0, "fileCount": 0,
                                            "lastFileCreationTime": 0, "totalBuckets": e.total_buckets})
        g["recordCount"] += sign * e.file.row_count
        g["fileSizeInBytes"] += sign * e.file.file_size
        g["fileCount"] += sign
        if e.file.creation_time is not None:
            g["lastFileCreationTime"] = max(g["lastFileCreationTime"], int(e.file.creation_time.timestamp() * 1000))
    types = [f.type for f in table.schema.fields_of(table.schema.partition_keys)]
    return [{"spec": dict(table.paths.partition_spec(binary_row.from_bytes(p, types))), **g}
            for p, g in groups.items()]
