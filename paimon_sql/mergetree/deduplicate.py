"""The deduplicate merge function over whole Arrow tables: for each key, the last row wins.

"Last" is by the order columns (``sequence.field`` columns, then ``_SEQUENCE_NUMBER``). One
multi-column stable sort and one adjacent-row comparison per key column replace the per-row heap
merge of a Java MergeTree reader; the same kernel folds duplicate keys inside one write.
"""

from __future__ import annotations

from typing import List

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc


def last_per_key(table: pa.Table, key_columns: List[str], order_columns: List[str]) -> np.ndarray:
    """Row indices of ``table`` holding the last row of each key, in key order."""
    n = table.num_rows
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    sort_keys = [(c, "ascending") for c in key_columns + order_columns]
    order = np.asarray(pc.sort_indices(table.select(key_columns + order_columns), sort_keys=sort_keys))
    differs = np.zeros(n - 1, dtype=bool)
    for c in key_columns:
        col = table.column(c).combine_chunks().take(pa.array(order))
        neq = pc.not_equal(col.slice(1), col.slice(0, n - 1))
        if neq.null_count:  # a NULL on either side: rows differ unless both are NULL
            neq = pc.if_else(neq.is_null(), pc.xor(col.slice(1).is_null(), col.slice(0, n - 1).is_null()), neq)
        differs |= np.asarray(neq.to_numpy(zero_copy_only=False))
    return order[np.r_[differs, True]]
