"""A merge split read as deletion vectors: which stored rows merging would drop, by position.

With the deduplicate and first-row merge engines, merging overlapping files keeps one row of each
key exactly as it was written (the newest, or the first) and drops the others; a key whose winner
is a retraction (-U/-D) is dropped whole. So the merged rows of a bucket are its stored rows less
a set of positions per file — the same shape as Paimon's deletion vectors. Marking those positions
lets a split that needs a merge be read as files that do not (every section one file), by Spark's
own Parquet reader with its column pruning and filter pushdown, instead of through Python workers
whose Arrow batches the JVM converts back row by row (the larger part of a merge-on-read query's
cost, measured for issue 46). Filters may run before the positions are removed: every stored row
is either the key's winner, unchanged, or dropped whatever its values.

Only the keys, sequence numbers, row kinds and sequence fields are read to find the winners (what
:class:`~paimon_sql.mergetree.merge_function.MergeFunction` orders by), once per split: data files
never change, so a split's positions are kept (:data:`_CACHE`) for the next query of the same files.
Partial-update and aggregation build new rows from several: they are merged as before.

    vectored = as_vectors(table, split)    # None: not for this split (read it merged)
"""

from __future__ import annotations

from array import array
from collections import OrderedDict
from dataclasses import replace
from threading import Lock
from typing import Dict, Optional

import numpy as np
import pyarrow as pa
from pyroaring import BitMap, FrozenBitMap

from paimon_sql.data import row_kind
from paimon_sql.read import data_evolution
from paimon_sql.read.split import Split
from paimon_sql.read.split_read import POSITION_COLUMN, SplitReader
from paimon_sql.schema.table_schema import KEY_PREFIX, VALUE_KIND
from paimon_sql.store.file_store import FileStore


ENGINES = ("deduplicate", "first-row")  # merged rows are stored rows, unchanged
_FILE = "__paimon_file_number"
_CACHE: "OrderedDict[tuple, Optional[tuple]]" = OrderedDict()
_CACHED_SPLITS = 512
_LOCK = Lock()


def applies(table: FileStore, split: Split) -> bool:
    """Whether ``split`` is a merge of a primary-key table whose winners are stored rows."""
    return (table.schema.is_primary_key_table and not split.raw_convertible and not split.before
            and not split.keep_retractions and table.merge_function.name in ENGINES
            and not data_evolution.enabled(table))


def as_vectors(table: FileStore, split: Split) -> Optional[Split]:
    """``split`` with every file its own section and the rows merging drops marked deleted (on top
    of the vectors its files have); None when :func:`applies` says no."""
    if not applies(table, split):
        return None
    # the options too: a read's own (``/*+ OPTIONS('ignore-delete' = 'true') */``) change what merging keeps
    key = (table.path, table.schema.id, tuple(sorted(table.schema.options.items())), split.partition, split.bucket,
           tuple(f.file_name for f in split.files), split.deletion_vectors)
    with _LOCK:
        vectors = _CACHE.get(key)
        if vectors is not None:
            _CACHE.move_to_end(key)
    if vectors is None:
        vectors = _dropped(table, split)
        with _LOCK:
            _CACHE[key] = vectors
            while len(_CACHE) > _CACHED_SPLITS:
                _CACHE.popitem(last=False)
    return replace(split, sections=tuple((f,) for f in split.files), deletion_vectors=vectors)


def _dropped(table: FileStore, split: Split) -> tuple:
    """Per file with deleted rows: its vector (its own, plus the rows the merge of each overlapping
    section drops), as ``Split.deletion_vectors`` holds them."""
    reader = SplitReader(table, projection=[])  # keys, system columns and the merge's sequence fields
    merge = table.merge_function
    keys = [KEY_PREFIX + k for k in table.schema.trimmed_primary_keys]
    deleted: Dict[str, BitMap] = {name: BitMap(dv) for name, dv in split.deletion_vectors}
    for section in split.sections:
        if len(section) == 1:  # alone in its key range: its retractions are dropped by the kind filter
            continue
        parts = [_numbered(reader.read_kv(split, f, with_position=True), i) for i, f in enumerate(section)]
        rows = pa.concat_tables(parts)
        merged = merge.merge(merge.group(rows, keys))
        live = merged.filter(row_kind.is_add(merged.column(VALUE_KIND)))
        kept_file = live.column(_FILE).to_numpy()
        kept_position = live.column(POSITION_COLUMN).to_numpy()
        for i, (f, part) in enumerate(zip(section, parts)):
            dropped = np.setdiff1d(part.column(POSITION_COLUMN).to_numpy(), kept_position[kept_file == i],
                                   assume_unique=True)
            if len(dropped):
                deleted.setdefault(f.file_name, BitMap()).update(BitMap(array('I', dropped.astype(np.uint32).tobytes())))
    return tuple((name, FrozenBitMap(bitmap)) for name, bitmap in deleted.items() if len(bitmap))


def _numbered(rows: pa.Table, number: int) -> pa.Table:
    return rows.append_column(_FILE, pa.array(np.full(rows.num_rows, number, np.int32)))

