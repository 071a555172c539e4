"""Which sorted runs to compact, and into which level: Paimon's universal compaction.

Given a bucket's runs newest first, :func:`pick` tries in order (like RocksDB's universal style):

1. size amplification: when the runs above the oldest together exceed
   ``compaction.max-size-amplification-percent`` of it, compact everything (a full compaction);
2. size ratio: starting from the newest run, keep adding the next run while the candidates' size
   (times 1 + ``compaction.size-ratio`` %) is not smaller than it;
3. run count: above ``num-sorted-run.compaction-trigger`` runs, compact the newest ones down to it.

The output level is one above the first run left out (never 0), or the max level when every run
is taken. Deletes may be dropped only when nothing older remains below the output.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import List, Optional, Tuple

from paimon_sql.manifest.manifest_file import DataFileMeta
from paimon_sql.mergetree.levels import SortedRun


@dataclass(frozen=True)
class CompactUnit:
    output_level: int
    files: Tuple[DataFileMeta, ...]


@dataclass(frozen=True)
class UniversalCompaction:
    max_size_amp: int = 200
    size_ratio: int = 1
    trigger: int = 5

    @staticmethod
    def from_options(options) -> "UniversalCompaction":
        return UniversalCompaction(options.get("compaction.max-size-amplification-percent"),
                                   options.get("compaction.size-ratio"),
                                   options.get("num-sorted-run.compaction-trigger"))

    def pick(self, num_levels: int, runs: List[SortedRun]) -> Optional[CompactUnit]:
        max_level = num_levels - 1
        unit = self._for_size_amp(max_level, runs) or self._for_size_ratio(max_level, runs)
        if unit is None and len(runs) > self.trigger:
            unit = self.pick_for_size_ratio(max_level, runs, len(runs) - self.trigger + 1)
        if unit is not None and len(unit.files) == 1 and unit.files[0].level == unit.output_level:
            return None  # nothing would change
        return unit

    def _for_size_amp(self, max_level: int, runs: List[SortedRun]) -> Optional[CompactUnit]:
        if len(runs) < self.trigger:
            return None
        candidate = sum(r.total_size for r in runs[:-1])
        if candidate * 100 > self.max_size_amp * runs[-1].total_size:
            return _unit(max_level, runs)
        return None

    def _for_size_ratio(self, max_level: int, runs: List[SortedRun]) -> Optional[CompactUnit]:
        return self.pick_for_size_ratio(max_level, runs, 1) if len(runs) >= self.trigger else None

    def pick_for_size_ratio(self, max_level: int, runs: List[SortedRun], count: int,
                            force: bool = False) -> Optional[CompactUnit]:
        size = sum(r.total_size for r in runs[:count])
        triggered = force or count > 1
        for nxt in runs[count:]:
            if size * (100.0 + self.size_ratio) / 100.0 < nxt.total_size and (not triggered or nxt.level > 1):
                break
            size += nxt.total_size
            count += 1
            triggered = True
        return self._create_unit(runs, max_level, count) if triggered else None

    def force_pick_level0(self, num_levels: int, runs: List[SortedRun]) -> Optional[CompactUnit]:
        """Every level-0 run into an upper level (lookup changelog and first-row need L0 empty)."""
        count = 0
        while count < len(runs) and runs[count].level == 0:
            count += 1
        return self.pick_for_size_ratio(num_levels - 1, runs, count, force=True) if count else None

    @staticmethod
    def _create_unit(runs: List[SortedRun], max_level: int, count: int) -> CompactUnit:
        output = max_level if count == len(runs) else max(0, runs[count].level - 1)
        if output == 0:  # never output to level 0: take runs until an upper level appears
            for nxt in runs[count:]:
                count += 1
                if nxt.level != 0:
                    output = nxt.level
                    break
        if count == len(runs):
            output = max_level
        return _unit(output, runs[:count])


def _unit(output_level: int, runs: List[SortedRun]) -> CompactUnit:
    return CompactUnit(output_level, tuple(f for r in runs for f in r.files))


def full_compaction(num_levels: int, runs: List[SortedRun]) -> Optional[CompactUnit]:
    """Everything into the max level; None when that is already all there is."""
    max_level = num_levels - 1
    if not runs or (len(runs) == 1 and runs[0].level == max_level):
        return None
    return _unit(max_level, runs)
