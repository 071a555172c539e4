"""SimpleStats: per-column min, max and null count of a file (or of partitions in a manifest).

On disk a SimpleStats is two BinaryRows (min values, max values) and an array of null counts.
``metadata.stats-mode`` decides what is kept: ``none`` (nothing), ``counts`` (null counts only),
``truncate(N)`` (the default, N=16: strings cut to N characters, the max rounded up so it stays
an upper bound) and ``full``. Columns of nested types carry only null counts.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, List, Optional, Sequence

import pyarrow as pa
import pyarrow.compute as pc

from paimon_sql.data import binary_row
from paimon_sql.data.types import AtomicType, DataField, DataType
from paimon_sql.exceptions import InvalidOptionError


@dataclass(frozen=True)
class SimpleStats:
    min_values: bytes
    max_values: bytes
    null_counts: Optional[List[Optional[int]]]

    def to_avro(self) -> dict:
        return {"_MIN_VALUES": self.min_values, "_MAX_VALUES": self.max_values, "_NULL_COUNTS": self.null_counts}

    @staticmethod
    def from_avro(rec: dict) -> "SimpleStats":
        return SimpleStats(rec["_MIN_VALUES"], rec["_MAX_VALUES"], rec.get("_NULL_COUNTS"))

    def decode(self, types: Sequence[DataType]) -> "ColumnStats":
        """Min/max/null-count lists for ``types`` (the columns these stats were written for)."""
        n = len(types)
        arity = int.from_bytes(self.min_values[:4], "big", signed=True) if len(self.min_values) >= 4 else 0
        if arity != n:  # stats written for another column set (e.g. empty): unknown
            return ColumnStats([None] * n, [None] * n, [None] * n)
        mins = binary_row.from_bytes(self.min_values, types)
        maxs = binary_row.from_bytes(self.max_values, types)
        nulls = list(self.null_counts) if self.null_counts is not None else [None] * n
        return ColumnStats(mins, maxs, nulls + [None] * (n - len(nulls)))


@dataclass(frozen=True)
class ColumnStats:
    mins: List[Any]
    maxs: List[Any]
    null_counts: List[Optional[int]]


EMPTY_STATS = SimpleStats(binary_row.empty_row(), binary_row.empty_row(), [])


def _mode(mode: str):
    m = re.fullmatch(r"\s*(none|counts|full|truncate\((\d+)\))\s*", mode.lower())
    if not m:
        raise InvalidOptionError(f"option 'metadata.stats-mode' must be none, counts, full or truncate(N), "
                                 f"got {mode!r}")
    return m.group(1).split("(")[0], int(m.group(2)) if m.group(2) else None


def _truncate_max(value: Any, length: int) -> Any:
    """Cut to ``length`` and round the last character/byte up; None when no upper bound fits."""
    if isinstance(value, str):
        if len(value) <= length:
            return value
        chars = list(value[:length])
        for i in range(length - 1, -1, -1):
            cp = ord(chars[i]) + 1
            if 0xD800 <= cp <= 0xDFFF:
                cp = 0xE000
            if cp <= 0x10FFFF:
                return "".join(chars[:i]) + chr(cp)
        return None
    if len(value) <= length:
        return value
    b = bytearray(value[:length])
    for i in range(length - 1, -1, -1):
        if b[i] < 0xFF:
            b[i] += 1
            return bytes(b[:i + 1])
    return None


# types whose Parquet footer min/max read back as the values we would compute (and Spark writes alike)
_FOOTER_TYPES = {"BOOLEAN", "TINYINT", "SMALLINT", "INT", "BIGINT", "FLOAT", "DOUBLE", "DECIMAL", "DATE", "CHAR",
                 "VARCHAR", "BINARY", "VARBINARY"}


def footer_stats_match(fields: Sequence[DataField]) -> bool:
    return all(isinstance(f.type, AtomicType) and f.type.name in _FOOTER_TYPES for f in fields)


def collect(table: pa.Table, fields: Sequence[DataField], mode: str) -> SimpleStats:
    """Stats of ``fields`` over the columns of ``table`` with those names (one min_max per column)."""
    mins, maxs, nulls = [], [], []
    wants_bounds = _mode(mode)[0] not in ("none", "counts")
    for f in fields:
        col = table.column(f.name)
        nulls.append(col.null_count)
        lo = hi = None
        if wants_bounds and isinstance(f.type, AtomicType) and col.null_count < len(col) and len(col):
            mm = pc.min_max(col)
            lo, hi = mm["min"].as_py(), mm["max"].as_py()
        mins.append(lo)
        maxs.append(hi)
    return encode(fields, mins, maxs, nulls, mode)


def encode(fields: Sequence[DataField], mins: List[Any], maxs: List[Any], nulls: List[Optional[int]],
           mode: str) -> SimpleStats:
    """Per-column min/max/null counts as SimpleStats, shaped by ``metadata.stats-mode``
    (none: nothing; counts: null counts; truncate(N): strings/bytes cut to N; full: as they are)."""
    kind, length = _mode(mode)
    types = [f.type for f in fields]
    if kind == "none":
        none = [None] * len(fields)
        return SimpleStats(binary_row.to_bytes(none, types), binary_row.to_bytes(none, types), none)
    if kind == "counts":
        mins = maxs = [None] * len(fields)
    elif length is not None:
        cut = [(lo[:length], _truncate_max(hi, length)) if isinstance(lo, (str, bytes)) else (lo, hi)
               for lo, hi in zip(mins, maxs)]
        mins, maxs = [c[0] for c in cut], [c[1] for c in cut]
    return SimpleStats(binary_row.to_bytes(mins, types), binary_row.to_bytes(maxs, types), list(nulls))


def merge_partition_stats(partitions: Sequence[List[Any]], types: Sequence[DataType]) -> SimpleStats:
    """Min/max/nulls over a set of partition value tuples (a manifest's ``_PARTITION_STATS``)."""
    if not types:
        return EMPTY_STATS
    mins, maxs, nulls = [], [], []
    for i in range(len(types)):
        vals = [p[i] for p in partitions if p[i] is not None]
        mins.append(min(vals) if vals else None)
        maxs.append(max(vals) if vals else None)
        nulls.append(sum(1 for p in partitions if p[i] is None))
    return SimpleStats(binary_row.to_bytes(mins, types), binary_row.to_bytes(maxs, types), nulls)
