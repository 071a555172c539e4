"""KeyGroups: the rows of a merge, sorted by key then sequence, cut into one group per key.

This is the vectorized stand-in for Paimon's SortMergeReader: instead of a heap that yields the
records of one key at a time to a merge function, one multi-column sort orders every row and the
merge functions work on whole columns with the group boundaries (``starts``). Sorted columns are
gathered lazily, so a deduplicate merge touches only the key and order columns.
"""

from __future__ import annotations

from typing import Dict, List, Optional

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc


class KeyGroups:
    def __init__(self, table: pa.Table, order: np.ndarray, starts: np.ndarray):
        self.table = table
        self.order = order            # sorted position -> row of ``table``
        self.starts = starts          # sorted position of each group's first row
        self.n = len(order)
        self.count = len(starts)
        self._sorted: Dict[str, pa.Array] = {}
        self._row_group: Optional[np.ndarray] = None

    @staticmethod
    def of(table: pa.Table, key_columns: List[str], order_columns: List[str],
           descending: Optional[List[str]] = None) -> "KeyGroups":
        """Sort ``table`` by keys then order columns (a stable sort keeps arrival order for ties)."""
        n = table.num_rows
        if n == 0:
            return KeyGroups(table, np.zeros(0, np.int64), np.zeros(0, np.int64))
        desc = set(descending or ())
        columns = key_columns + order_columns
        numeric = _as_numeric([table.column(c) for c in columns])
        if numeric is not None:
            # numpy's lexsort is a stable merge sort: files are sorted runs, so this is a cheap merge
            keys = [-a if c in desc else a for c, a in zip(columns, numeric)]
            order = np.lexsort(keys[::-1])
        else:
            sort_keys = [(c, "descending" if c in desc else "ascending") for c in columns]
            # a NULL sequence field is the oldest, in either order (Paimon's comparator: nulls first)
            order = np.asarray(pc.sort_indices(table.select(columns), sort_keys=sort_keys, null_placement="at_start"))
        groups = KeyGroups(table, order, np.zeros(1, np.int64))
        differs = np.zeros(n - 1, dtype=bool)
        for i, c in enumerate(key_columns):
            if numeric is not None:
                k = numeric[i][order]
                differs |= k[1:] != k[:-1]
            else:
                differs |= _neighbours_differ(groups.column(c))
        groups.starts = np.flatnonzero(np.r_[True, differs])
        groups.count = len(groups.starts)
        return groups

    # -- sorted views --------------------------------------------------------------------------

    @property
    def ends(self) -> np.ndarray:
        return np.r_[self.starts[1:], self.n]

    @property
    def sizes(self) -> np.ndarray:
        return self.ends - self.starts

    def column(self, name: str) -> pa.Array:
        """Column ``name`` in sorted order."""
        if name not in self._sorted:
            self._sorted[name] = self.table.column(name).combine_chunks().take(pa.array(self.order))
        return self._sorted[name]

    def row_group(self) -> np.ndarray:
        """Group index of every sorted row."""
        if self._row_group is None:
            self._row_group = np.repeat(np.arange(self.count, dtype=np.int64), self.sizes)
        return self._row_group

    # -- picking one row per group -------------------------------------------------------------

    def last(self, mask: Optional[np.ndarray] = None) -> np.ndarray:
        """Per group, the sorted position of its last row where ``mask`` holds; -1 where none."""
        if mask is None:
            return self.ends - 1
        pos = np.where(mask, np.arange(self.n), -1)
        return np.maximum.reduceat(pos, self.starts) if self.n else pos

    def first(self, mask: Optional[np.ndarray] = None) -> np.ndarray:
        """Per group, the sorted position of its first row where ``mask`` holds; -1 where none."""
        if mask is None:
            return self.starts.copy()
        pos = np.where(mask, np.arange(self.n), self.n)
        found = np.minimum.reduceat(pos, self.starts) if self.n else pos
        return np.where(found == self.n, -1, found)

    def any(self, mask: np.ndarray) -> np.ndarray:
        return np.maximum.reduceat(mask.astype(np.int8), self.starts).astype(bool) if self.n else mask

    def pick(self, column: pa.Array, positions: np.ndarray) -> pa.Array:
        """``column`` (sorted order) at ``positions``; NULL where a position is -1."""
        missing = positions < 0
        idx = pa.array(np.where(missing, 0, positions), mask=missing if missing.any() else None)
        return column.take(idx)

    def rows(self, positions: np.ndarray) -> pa.Table:
        """Rows of the original table at sorted ``positions`` (all >= 0)."""
        return self.table.take(pa.array(self.order[positions]))

    def subset(self, mask: np.ndarray) -> "KeyGroups":
        """The sorted rows where ``mask`` holds, regrouped (groups left empty disappear)."""
        kept = np.flatnonzero(mask)
        gid = self.row_group()[kept]
        starts = np.flatnonzero(np.r_[True, gid[1:] != gid[:-1]]) if len(kept) else np.zeros(0, np.int64)
        sub = KeyGroups(self.table, self.order[kept], starts)
        for name, col in self._sorted.items():
            sub._sorted[name] = col.take(pa.array(kept))
        return sub

    def group_of_subset(self, mask: np.ndarray) -> np.ndarray:
        """For :meth:`subset` (same mask): the original group index of each of its groups."""
        gid = self.row_group()[np.flatnonzero(mask)]
        return gid[np.r_[True, gid[1:] != gid[:-1]]] if len(gid) else gid


def _as_numeric(columns: List[pa.ChunkedArray]) -> Optional[List[np.ndarray]]:
    """The columns as int64/float numpy arrays when all are null-free fixed-width numbers, else None."""
    out = []
    for col in columns:
        t = col.type
        if col.null_count or not (pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_date(t)
                                  or pa.types.is_timestamp(t) or pa.types.is_time(t)):
            return None
        arr = col.combine_chunks() if isinstance(col, pa.ChunkedArray) else col
        if pa.types.is_date(t) or pa.types.is_timestamp(t) or pa.types.is_time(t):
            arr = arr.view(pa.int32() if t.bit_width == 32 else pa.int64())
        out.append(arr.to_numpy())
    return out


def _neighbours_differ(col: pa.Array) -> np.ndarray:
    """``col[i+1] != col[i]`` for each neighbour pair, NULL equal to NULL."""
    n = len(col)
    a, b = col.slice(1), col.slice(0, n - 1)
    neq = pc.not_equal(a, b)
    if neq.null_count:
        neq = pc.if_else(neq.is_null(), pc.xor(a.is_null(), b.is_null()), neq)
    return np.asarray(neq.to_numpy(zero_copy_only=False))


def with_column(g: KeyGroups, name: str, sorted_values: np.ndarray) -> KeyGroups:
    """``g`` over its table plus a column given in sorted order (merges carry it along)."""
    original = np.empty(g.n, sorted_values.dtype)
    original[g.order] = sorted_values
    out = KeyGroups(g.table.append_column(name, pa.array(original)), g.order, g.starts)
    out._sorted = dict(g._sorted)
    out._row_group = g._row_group
    return out
