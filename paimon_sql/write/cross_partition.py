"""Cross-partition upsert: ``bucket = -1`` on a table whose primary key lacks a partition column.

One key may then arrive in any partition but must live in one, so a write keeps a global index
key → (partition, bucket), as Paimon's ``GlobalIndexAssigner``: bootstrapped at the start of each
write from the snapshot it builds on (key columns only, merged, as ``IndexBootstrap`` reads them),
then every written row is routed, per key in arrival order. When the key lives in another
partition, the merge engine decides:

- deduplicate: a -D (the row's values, the old partition) retracts the old row in its old
  partition and bucket, and the row is written in its own partition;
- partial-update, aggregation: the row goes to the old partition (its partition columns rewritten);
- first-row: the row is dropped.

A new key takes a bucket of its partition as Paimon's assigner gives one (:func:`fill_buckets`,
``dynamic-bucket.target-row-num`` keys each). Java writes no HASH index files in this mode, nor do
we. The index is keyed on the trimmed primary key (Paimon's choice). ``cross-partition-upsert.
index-ttl`` leaves out of the bootstrap every bucket none of whose files is younger than the ttl
(keys only there may then be duplicated, as in Paimon); ``cross-partition-upsert.bootstrap-
parallelism`` is the number of threads reading the bootstrap.
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from typing import Dict, List, Optional, Tuple

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from paimon_sql.data import binary_row, row_kind
from paimon_sql.read.scan import ScanStore
from paimon_sql.write.dynamic_bucket import fill_buckets


_PID, _BUCKET, _ROW = "__paimon_pid", "__paimon_bucket", "__paimon_row"

# what a row meets when its key lives in another partition (Paimon's ExistsAction)
DELETE, USE_OLD, SKIP_NEW = "delete", "use-old", "skip-new"
_ACTIONS = {"deduplicate": DELETE, "partial-update": USE_OLD, "aggregation": USE_OLD, "first-row": SKIP_NEW}


class CrossPartitionAssigner:
    def __init__(self, table: ScanStore):
        self.table = table
        schema = table.schema
        self.keys = schema.trimmed_primary_keys
        self.partition_keys = schema.partition_keys
        self._part_types = [f.type for f in schema.fields_of(self.partition_keys)]
        self.action = _ACTIONS[table.options.merge_engine]
        self.target_rows = table.options.checked("dynamic-bucket.target-row-num")
        key_fields = [f.to_arrow() for f in schema.fields_of(self.keys)]
        self._index = pa.schema(key_fields + [pa.field(_PID, pa.int32()), pa.field(_BUCKET, pa.int32())]).empty_table()
        self._pids: Dict[bytes, int] = {}  # partition bytes → id (Paimon's IDMapping)
        self._values: List[list] = []      # id → the partition's values
        self._counts: Dict[int, Dict[int, int]] = {}  # id → bucket → keys living there
        self._bootstrapped = False

    # -- the index --------------------------------------------------------------------------

    def _pid(self, partition: bytes, values: Optional[list] = None) -> int:
        if partition not in self._pids:
            self._pids[partition] = len(self._values)
            self._values.append(values if values is not None else binary_row.from_bytes(partition, self._part_types))
        return self._pids[partition]

    def bootstrap(self, snapshot_id: Optional[int]) -> None:
        """Load every live key of ``snapshot_id`` (None: none, e.g. an overwrite) with its place."""
        self._bootstrapped = True
        if not snapshot_id:
            return
        scan = self.table.new_scan().with_snapshot(snapshot_id).select(*self.keys)
        splits = scan.plan().splits
        ttl = self.table.options.get("cross-partition-upsert.index-ttl")
        if ttl is not None:  # Paimon's IndexBootstrap.filterSplit: a bucket with a file younger than the ttl
            oldest = time.time() * 1000 - ttl
            splits = [s for s in splits if any(f.creation_time is None or f.creation_time.timestamp() * 1000 >= oldest
                                               for f in s.files)]
        reader = scan.reader()
        threads = max(1, min(len(splits), self.table.options.get("cross-partition-upsert.bootstrap-parallelism")))
        with ThreadPoolExecutor(max_workers=threads) as pool:
            keys = list(pool.map(reader.read, splits))
        parts = []
        for split, rows in zip(splits, keys):
            if rows.num_rows:
                pid = self._pid(split.partition)
                buckets = self._counts.setdefault(pid, {})
                buckets[split.bucket] = buckets.get(split.bucket, 0) + rows.num_rows
                parts.append(rows.append_column(_PID, pa.array(np.full(rows.num_rows, pid, np.int32)))
                             .append_column(_BUCKET, pa.array(np.full(rows.num_rows, split.bucket, np.int32))))
        if parts:
            self._index = pa.concat_tables([p.cast(self._index.schema) for p in parts])

    def _lookup(self, data: pa.Table) -> Tuple[np.ndarray, np.ndarray]:
        """Each row's key's (partition id, bucket) in the index; -1 for keys it lacks."""
        n = data.num_rows
        probe = data.select(self.keys).append_column(_ROW, pa.array(np.arange(n, dtype=np.int64)))
        found = probe.join(self._index, self.keys, join_type="inner")
        old_pid, old_bucket = np.full(n, -1, np.int64), np.full(n, -1, np.int64)
        rows = found.column(_ROW).to_numpy()
        old_pid[rows] = found.column(_PID).to_numpy()
        old_bucket[rows] = found.column(_BUCKET).to_numpy()
        return old_pid, old_bucket

    # -- routing ----------------------------------------------------------------------------

    def route(self, data: pa.Table, kinds: Optional[pa.Array], pcodes: np.ndarray, pvalues: Dict[int, list],
              snapshot_id: Optional[int]):
        """The rows as they must be written: retractions added, rows moved or dropped, each with its
        bucket. Returns (data, kinds, partition codes, code → partition values, buckets), the codes
        being this index's partition ids; the index then knows where every key lives."""
        if not self._bootstrapped:
            self.bootstrap(snapshot_id)
        n = data.num_rows
        kinds = np.zeros(n, np.int8) if kinds is None else np.asarray(kinds.to_numpy(zero_copy_only=False), np.int8)
        codes, inverse = np.unique(pcodes, return_inverse=True)
        pid = np.array([self._pid(binary_row.to_bytes(pvalues[int(c)], self._part_types), pvalues[int(c)])
                        for c in codes], np.int64)[inverse.reshape(-1)]
        old_pid, old_bucket = self._lookup(data)

        # rows grouped by key, arrival order within a key (s: sorted position, r: the row)
        order = np.asarray(pc.sort_indices(data.select(self.keys).append_column(_ROW, pa.array(np.arange(n))),
                                           sort_keys=[(k, "ascending") for k in self.keys + [_ROW]]))
        starts = np.r_[True, ~_same_key(data.select(self.keys).take(pa.array(order)))]
        group = np.cumsum(starts) - 1
        ends = np.r_[starts[1:], True]
        r = order
        p, h0, b0 = pid[r], old_pid[r], old_bucket[r]
        if self.action == DELETE:
            dest, keep = p, np.ones(n, bool)
        else:  # the key stays where it lives, or where its first row puts it
            home = np.where(h0 >= 0, h0, p[np.flatnonzero(starts)][group])
            dest, keep = home, (p == home) if self.action == SKIP_NEW else np.ones(n, bool)
        bucket = np.where(dest == h0, b0, -1)
        if self.action == DELETE:  # keys leaving their old home free its slots first
            self._count_out(h0[ends], b0[ends], (h0[ends] >= 0) & (h0[ends] != dest[ends]))
        self._new_buckets(group, dest, bucket)

        retract = np.zeros(n, bool)
        prev_dest, prev_bucket = h0.copy(), b0.copy()
        if self.action == DELETE:
            later = np.flatnonzero(~starts)
            prev_dest[later], prev_bucket[later] = dest[later - 1], bucket[later - 1]
            retract = (prev_dest >= 0) & (prev_dest != dest)
            passed = (dest != dest[ends][group]) & (dest != h0)  # places a key entered and left in this batch
            _, first = np.unique(group[passed] * (len(self._values) + 1) + dest[passed], return_index=True)
            self._count_out(dest[passed][first], bucket[passed][first], np.ones(len(first), bool))
        self._remember(data, r[ends], dest[ends], bucket[ends])

        # retractions just before their row, everything in arrival order
        src = np.r_[r[retract], r[keep]]
        out = np.argsort(np.r_[2 * r[retract], 2 * r[keep] + 1], kind="stable")
        src, out_pid = src[out], np.r_[prev_dest[retract], dest[keep]][out]
        out_bucket = np.r_[prev_bucket[retract], bucket[keep]][out].astype(np.int32)
        out_kind = np.r_[np.full(int(retract.sum()), row_kind.DELETE, np.int8), kinds[r[keep]]][out]
        rows = self._in_partitions(data.take(pa.array(src)), out_pid, pid[src])
        return rows, pa.array(out_kind, pa.int8()), out_pid, {int(i): self._values[i] for i in np.unique(out_pid)}, \
            out_bucket

    def _new_buckets(self, group: np.ndarray, dest: np.ndarray, bucket: np.ndarray) -> None:
        """A bucket for every (key, partition) the key enters anew (``bucket`` -1 there), keys in
        order; ``bucket`` filled in place."""
        need = np.flatnonzero(bucket < 0)
        if not len(need):
            return
        pairs, first, inverse = np.unique(group[need] * (len(self._values) + 1) + dest[need], return_index=True,
                                          return_inverse=True)
        pair_part, pair_bucket = dest[need][first], np.empty(len(pairs), np.int64)
        for q in np.unique(pair_part):
            mine = np.flatnonzero(pair_part == q)
            filled = fill_buckets(self._counts.setdefault(int(q), {}), len(mine), self.target_rows)
            pair_bucket[mine] = np.repeat([b for b, _ in filled], [k for _, k in filled])
        bucket[need] = pair_bucket[inverse.reshape(-1)]

    def _count_out(self, parts: np.ndarray, buckets: np.ndarray, mask: np.ndarray) -> None:
        """One key fewer in each (partition, bucket) where ``mask`` holds."""
        if mask.any():
            places, n = np.unique(np.stack([parts[mask], buckets[mask]]), axis=1, return_counts=True)
            for (q, b), k in zip(places.T, n):
                self._counts[int(q)][int(b)] -= int(k)

    def _remember(self, data: pa.Table, rows: np.ndarray, dest: np.ndarray, bucket: np.ndarray) -> None:
        """The index with these keys at their new places."""
        final = (data.select(self.keys).take(pa.array(rows))
                 .append_column(_PID, pa.array(dest, pa.int32())).append_column(_BUCKET, pa.array(bucket, pa.int32())))
        kept = self._index.join(final.select(self.keys), self.keys, join_type="left anti")
        self._index = pa.concat_tables([kept.select(self._index.schema.names).cast(self._index.schema),
                                        final.cast(self._index.schema)])

    def _in_partitions(self, rows: pa.Table, pid: np.ndarray, own: np.ndarray) -> pa.Table:
        """``rows`` with the partition columns of partition ``pid`` where it is not their ``own``."""
        moved = own != pid
        if not moved.any():
            return rows
        ids = np.unique(pid[moved])
        at = pa.array(np.minimum(np.searchsorted(ids, pid), len(ids) - 1))  # meaningful where moved
        mask = pa.array(moved)
        for i, k in enumerate(self.partition_keys):
            field = rows.schema.field(k)
            values = pa.array([self._values[q][i] for q in ids], field.type).take(at)
            column = pc.if_else(mask, values, rows.column(k))
            rows = rows.set_column(rows.schema.get_field_index(k), field, column)
        return rows


def _same_key(keys: pa.Table) -> np.ndarray:
    """For each row after the first: whether its key equals the previous row's."""
    n = keys.num_rows
    same = np.ones(max(n - 1, 0), bool)
    for column in keys.columns:
        col = column.combine_chunks()
        same &= np.asarray(pc.equal(col.slice(1), col.slice(0, n - 1)).fill_null(False), bool)
    return same
