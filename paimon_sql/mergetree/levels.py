"""Levels and sorted runs of one bucket's LSM tree.

Level 0 holds files straight from write-buffer flushes: each file is a sorted run of its own,
newest (highest max sequence number) first. Every level above holds one sorted run: files with
disjoint key ranges. A read or a compaction sees the runs newest first: level-0 files, then
level 1, 2, ... (older data sits deeper). ``num-levels`` defaults to the compaction trigger + 1.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable, List, Tuple

from paimon_sql.manifest.manifest_file import DataFileMeta
from paimon_sql.schema.table_schema import TableSchema


@dataclass(frozen=True)
class SortedRun:
    level: int
    files: Tuple[DataFileMeta, ...]

    @property
    def total_size(self) -> int:
        return sum(f.file_size for f in self.files)


def _level0_order(f: DataFileMeta):
    return (-f.max_sequence_number, -f.min_sequence_number, f.file_name)


class Levels:
    def __init__(self, files: Iterable[DataFileMeta], num_levels: int, min_key: Callable[[DataFileMeta], tuple]):
        """``min_key(file)``: the file's decoded min key, to order the files of a level."""
        self.num_levels = num_levels
        self._min_key = min_key
        self.files: List[DataFileMeta] = []
        self.update([], files)

    @property
    def max_level(self) -> int:
        return self.num_levels - 1

    def update(self, before: Iterable[DataFileMeta], after: Iterable[DataFileMeta]) -> None:
        gone = {(f.file_name, f.level) for f in before}
        self.files = [f for f in self.files if (f.file_name, f.level) not in gone] + list(after)
        self.num_levels = max(self.num_levels, max((f.level for f in self.files), default=0) + 1)

    def level(self, i: int) -> List[DataFileMeta]:
        files = [f for f in self.files if f.level == i]
        return sorted(files, key=_level0_order) if i == 0 else sorted(files, key=self._min_key)

    def sorted_runs(self) -> List[SortedRun]:
        runs = [SortedRun(0, (f,)) for f in self.level(0)]
        for i in range(1, self.num_levels):
            files = self.level(i)
            if files:
                runs.append(SortedRun(i, tuple(files)))
        return runs

    def non_empty_highest_level(self) -> int:
        return max((f.level for f in self.files), default=-1)


def num_levels(options) -> int:
    """The levels of a bucket's tree: ``num-levels``, else the compaction trigger + 1."""
    v = options.get("num-levels")
    return v if v is not None else options.get("num-sorted-run.compaction-trigger") + 1


def merge_on_write(schema: TableSchema) -> bool:
    """A primary-key table with deletion vectors (``schema``: as read or written, options included)."""
    return schema.is_primary_key_table and bool(schema.core_options().get("deletion-vectors.enabled"))


def needs_level0_empty(schema: TableSchema) -> bool:
    """Paimon's lookup strategy: the lookup changelog producer, first-row, and merge-on-write (unless
    ``lookup-wait = false``: compaction may then lag, level 0 staying unread) compact L0 away each commit."""
    options = schema.core_options()
    if merge_on_write(schema):
        return bool(options.get("lookup-wait"))
    return options.get("changelog-producer") == "lookup" or options.merge_engine == "first-row"
