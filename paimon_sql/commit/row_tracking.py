"""Row tracking at commit (``row-tracking.enabled``): Java's RowTrackingCommitUtils.

Each attempt of a commit, against the latest snapshot it rebases on (a lost race re-assigns):

- sequence numbers: a new file whose ``min_sequence_number`` is 0 (an append writer's first file)
  gets the new snapshot's id as min and max; one whose max is 0 keeps its min and gets the id as
  max; any other (a compaction's file) keeps its own. A row's ``_SEQUENCE_NUMBER`` is thus the
  snapshot that committed it.
- row ids: each new APPEND file without a first row id (and without a physical ``_ROW_ID``
  column) gets ``first_row_id`` = the next free id, counting on from the latest snapshot's
  ``nextRowId`` (0 without one) by its row count, in commit order — grouped by partition first
  when ``row-tracking.partition-group-on-commit`` (so a partition's new ids are contiguous; Java
  groups through a hash map, we keep the partitions' first-seen order: any order is valid, the
  ids are read from the manifest). COMPACT files keep their rows' ids physically and get none.
  The new snapshot's ``nextRowId`` is the first id left unassigned.

Data evolution (files merged by row id, :mod:`paimon_sql.read.data_evolution`) builds on these ids.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Dict, List, Optional, Tuple

from paimon_sql.manifest.manifest_file import ADD, FILE_SOURCE_APPEND, ManifestEntry
from paimon_sql.schema.table_schema import ROW_ID


def assign(entries: List[ManifestEntry], snapshot_id: int, next_row_id: Optional[int],
           group_by_partition: bool) -> Tuple[List[ManifestEntry], int]:
    """``entries`` with sequence numbers and first row ids assigned, and the snapshot's next row id."""
    if group_by_partition:
        groups: Dict[bytes, List[ManifestEntry]] = {}
        for e in entries:
            groups.setdefault(e.partition, []).append(e)
        entries = [e for group in groups.values() for e in group]
    start = next_row_id or 0
    out = []
    for e in entries:
        if e.kind != ADD:
            out.append(e)
            continue
        f = e.file
        if f.min_sequence_number == 0:
            f = replace(f, min_sequence_number=snapshot_id, max_sequence_number=snapshot_id)
        elif f.max_sequence_number == 0:
            f = replace(f, max_sequence_number=snapshot_id)
        if f.file_source == FILE_SOURCE_APPEND and f.first_row_id is None and ROW_ID not in (f.write_cols or ()):
            f = replace(f, first_row_id=start)
            start += f.row_count
        out.append(replace(e, file=f))
    return out, start


def row_id_range(entries: List[ManifestEntry]) -> Tuple[Optional[int], Optional[int]]:
    """A manifest's ``_MIN_ROW_ID`` / ``_MAX_ROW_ID``: the span of its entries' row ids, None when
    any entry has no first row id (Java's ManifestFile.RowIdStats)."""
    if not entries or any(e.file.first_row_id is None for e in entries):
        return None, None
    return (min(e.file.first_row_id for e in entries),
            max(e.file.first_row_id + e.file.row_count - 1 for e in entries))
