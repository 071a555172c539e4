"""Cut a bucket's files into sections of overlapping key ranges (Paimon's IntervalPartition).

Files of different sections never share a key, so sections are read or compacted independently:
a section of one file needs no merge, a section of several is merged by key.
"""

from __future__ import annotations

from typing import Callable, List, Sequence, Tuple

from paimon_sql.manifest.manifest_file import DataFileMeta


def merge_order(files: Sequence[DataFileMeta]) -> List[DataFileMeta]:
    """Oldest first: higher levels before lower ones, then by sequence range and name.

    Rows of one key are merged in (sequence, this order): a stable sort keeps it for equal
    sequence numbers, so a tie goes to the newer file the same way in every read and compaction.
    """
    return sorted(files, key=lambda f: (-f.level, f.max_sequence_number, f.min_sequence_number, f.file_name))


def sections(files: Sequence[DataFileMeta],
             key_range: Callable[[DataFileMeta], Tuple[tuple, tuple]]) -> List[Tuple[DataFileMeta, ...]]:
    """``key_range(file)`` → (min key, max key) as comparable tuples; sections come in key order,
    each section's files in :func:`merge_order`."""
    ranged = sorted(((*key_range(f), f) for f in files), key=lambda x: (x[0], x[1]))
    out, current, current_max = [], [], None
    for lo, hi, f in ranged:
        if current and lo > current_max:
            out.append(tuple(current))
            current, current_max = [], None
        current.append(f)
        current_max = hi if current_max is None or hi > current_max else current_max
    if current:
        out.append(tuple(current))
    return [tuple(merge_order(section)) for section in out]
