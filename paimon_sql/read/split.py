"""Split: the files a reader reads together, planned by :class:`~paimon_sql.read.scan.TableScan`
(Paimon's ``DataSplit``): one bucket's files of one partition, cut into sections of overlapping
key ranges for a primary-key table, with the deletion vectors of its files.

A value of its own because the scan plans it, while readers, compactions and incremental reads
(:mod:`paimon_sql.read.split_read`, :mod:`paimon_sql.compact`, :mod:`paimon_sql.read.incremental`)
consume it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional, Tuple

from pyroaring import FrozenBitMap

from paimon_sql.manifest.manifest_file import DataFileMeta


@dataclass(frozen=True)
class Split:
    partition: bytes
    bucket: int
    files: Tuple[DataFileMeta, ...]
    sections: Tuple[Tuple[DataFileMeta, ...], ...] = ()
    deletion_vectors: Tuple[Tuple[str, FrozenBitMap], ...] = field(default=(), compare=False)
    before: Tuple[DataFileMeta, ...] = ()  # incremental diff: the bucket's files at the start snapshot
    keep_retractions: bool = False  # a batch incremental read: every row as stored, -U/-D ones too

    def deletion_vector(self, file_name: str) -> Optional[FrozenBitMap]:
        """Deleted row positions of one of the split's files (None when it has none)."""
        return next((dv for name, dv in self.deletion_vectors if name == file_name), None)

    @property
    def raw_convertible(self) -> bool:
        """True when no two files overlap in key, so rows need no merge."""
        return not self.before and (all(len(s) == 1 for s in self.sections) if self.sections else True)

    @property
    def row_count(self) -> int:
        return sum(f.row_count for f in self.files)
