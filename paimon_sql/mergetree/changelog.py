"""Changelog rows from a before and an after state of the same keys (full-compaction, lookup).

Paimon's full-compaction producer compares each key's value in the top level before a full
compaction with its merged value after it; the lookup producer compares the value found in the
upper levels with the value after level-0 rows are merged in. Both reduce to: for each *touched*
key, ``before`` (a merge of some of its rows) against ``after`` (a merge of all of them):

- only after → +I;  only before → -D;  both → -U before, +U after
  (skipped when the values are equal and ``changelog-producer.row-deduplicate`` is on).
"""

from __future__ import annotations

from typing import List

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from paimon_sql.data import row_kind
from paimon_sql.mergetree.key_groups import KeyGroups, with_column
from paimon_sql.schema.table_schema import VALUE_KIND

GROUP_ID = "__paimon_key_group"


def diff(merge, g: KeyGroups, touched: np.ndarray, before: np.ndarray, value_columns: List[str],
         row_deduplicate: bool = False) -> pa.Table:
    """Changelog rows (the table's columns, kinds set) of the groups where ``touched`` rows exist.

    ``touched`` and ``before`` are masks over the sorted rows of ``g``: rows that make a key
    changed, and rows that make up its before state.
    """
    g = with_column(g, GROUP_ID, g.row_group())
    after_rows = merge.merge(g)
    before_rows = merge.merge(g.subset(before)) if before.any() else after_rows.slice(0, 0)
    a = _index_by_group(after_rows, g.count)
    b = _index_by_group(before_rows, g.count)
    hot = g.any(touched)
    ins = np.flatnonzero(hot & (a >= 0) & (b < 0))
    dele = np.flatnonzero(hot & (a < 0) & (b >= 0))
    upd = np.flatnonzero(hot & (a >= 0) & (b >= 0))
    if row_deduplicate and len(upd):
        same = _equal_rows(before_rows.take(pa.array(b[upd])), after_rows.take(pa.array(a[upd])), value_columns)
        upd = upd[~same]
    parts = [(before_rows, b[dele], row_kind.DELETE, dele, 0), (before_rows, b[upd], row_kind.UPDATE_BEFORE, upd, 0),
             (after_rows, a[upd], row_kind.UPDATE_AFTER, upd, 1), (after_rows, a[ins], row_kind.INSERT, ins, 1)]
    tables, keys = [], []
    for rows, idx, kind, groups, rank in parts:
        if len(idx):
            t = rows.take(pa.array(idx))
            tables.append(t.set_column(t.column_names.index(VALUE_KIND), VALUE_KIND,
                                       pa.array(np.full(len(idx), kind, np.int8))))
            keys.append(groups * 2 + rank)
    if not tables:
        return after_rows.slice(0, 0).drop_columns([GROUP_ID])
    out = pa.concat_tables(tables).take(pa.array(np.argsort(np.concatenate(keys), kind="stable")))
    return out.drop_columns([GROUP_ID])


def _index_by_group(rows: pa.Table, count: int) -> np.ndarray:
    """Per key group, the row of ``rows`` holding its added (+I/+U) value; -1 where none."""
    out = np.full(count, -1, np.int64)
    kinds = rows.column(VALUE_KIND).to_numpy()
    live = (kinds == row_kind.INSERT) | (kinds == row_kind.UPDATE_AFTER)
    out[rows.column(GROUP_ID).to_numpy()[live]] = np.flatnonzero(live)
    return out


def _equal_rows(x: pa.Table, y: pa.Table, columns: List[str]) -> np.ndarray:
    """Rows equal in every column (NULL equal to NULL). Columns Arrow cannot compare (nested types)
    count as changed: the pair is then kept, which is never wrong, only less deduplicated."""
    same = np.ones(x.num_rows, bool)
    for c in columns:
        a, b = x.column(c), y.column(c)
        try:
            eq = pc.fill_null(pc.equal(a, b), False)
        except (pa.ArrowNotImplementedError, pa.ArrowInvalid):
            return np.zeros(x.num_rows, bool)
        both_null = pc.and_(a.is_null(), b.is_null())
        same &= np.asarray(pc.or_(eq, both_null).to_numpy(zero_copy_only=False))
    return same
