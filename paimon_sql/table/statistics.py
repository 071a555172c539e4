"""Table statistics (ANALYZE): a ``statistics/stat-<uuid>-0`` JSON file named by an ANALYZE snapshot.

The file is Paimon's ``Statistics``: the snapshot and schema it was computed on, the merged record
count and size, and per analyzed column a ``ColStats`` (colId, distinctCount, min and max as text,
nullCount, avgLen, maxLen; absent values omitted). Query engines use them for planning; users see
them in ``t$statistics``.
"""

from __future__ import annotations

import json
import uuid
from typing import Dict, List, Optional

from paimon_sql.exceptions import CorruptMetadataError, PaimonError


def write_statistics(table, merged_record_count: int, merged_record_size: Optional[int],
                     col_stats: Dict[str, dict]) -> int:
    """Commit statistics computed on the latest snapshot; returns the ANALYZE snapshot's id."""
    snap = table.snapshot_manager.latest()
    if snap is None:
        raise PaimonError(f"table {table.name} has no snapshot to analyze")
    body = {"snapshotId": snap.id, "schemaId": snap.schema_id, "mergedRecordCount": merged_record_count}
    if merged_record_size is not None:
        body["mergedRecordSize"] = merged_record_size
    body["colStats"] = {name: {k: v for k, v in col_stats[name].items() if v is not None}
                        for name in java_hash_order(list(col_stats))}
    name = f"stat-{uuid.uuid4()}-0"
    table.io.write_bytes(table.paths.statistics_path(name), json.dumps(body).encode("utf-8"))
    return table.new_commit().commit_statistics(name)


def java_hash_order(keys: List[str]) -> List[str]:
    """``keys`` in the order a ``java.util.HashMap`` they were put into iterates them, which is the
    order paimon-spark's ANALYZE writes its column statistics in: by bucket (the key's
    ``String.hashCode`` spread and masked by the table size, 16 doubled while over 3/4 full), then
    by insertion."""
    size = 16
    while len(keys) > size * 3 // 4:
        size *= 2

    def bucket(key: str) -> int:
        h = 0
        for unit in key.encode("utf-16-be").hex(" ", 2).split():  # Java's UTF-16 code units
            h = (31 * h + int(unit, 16)) & 0xFFFFFFFF
        return (h ^ (h >> 16)) & (size - 1)
    return [k for _, _, k in sorted((bucket(k), i, k) for i, k in enumerate(keys))]


def read_statistics(table, snapshot) -> Optional[dict]:
    """The statistics a snapshot names (None when it names none)."""
    if snapshot is None or not snapshot.statistics:
        return None
    path = table.paths.statistics_path(snapshot.statistics)
    try:
        return json.loads(table.io.read_text(path))
    except (FileNotFoundError, OSError, ValueError):
        raise CorruptMetadataError(f"statistics file {path} is missing or malformed") from None
