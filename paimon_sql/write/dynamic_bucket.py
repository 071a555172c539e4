"""Dynamic bucket mode (``bucket = -1`` on primary-key tables): a key keeps its bucket forever.

Which bucket holds a key is remembered in HASH index files, one per (partition, bucket): the
4-byte big-endian hashes of the trimmed primary keys living there. A write loads the index of
the partitions it touches, keeps known keys in their bucket and puts new keys in the first
bucket still under ``dynamic-bucket.target-row-num`` keys, opening a new bucket when all are
full. The rewritten index files ride along in the commit messages. (A primary key lacking a
partition column needs a global index instead, and Paimon writes no HASH files for it: see
:mod:`paimon_sql.write.cross_partition`.)
"""

from __future__ import annotations

from typing import Dict, List, Tuple

import numpy as np
import pyarrow as pa

from paimon_sql.data import binary_row
from paimon_sql.manifest.manifest_file import ADD, DELETE, IndexManifestEntry
from paimon_sql.store.file_store import FileStore


HASH_INDEX = "HASH"


class DynamicBucketAssigner:
    def __init__(self, table: FileStore):
        self.table = table
        self.schema = table.schema
        self.target_rows = table.options.checked("dynamic-bucket.target-row-num")  # >= 1: each bucket takes keys
        self._part_types = [f.type for f in self.schema.fields_of(self.schema.partition_keys)]
        # partition bytes -> {bucket: sorted unique hashes}
        self._index: Dict[bytes, Dict[int, np.ndarray]] = {}
        self._old_files: Dict[bytes, List[IndexManifestEntry]] = {}
        self.max_buckets = 1

    def _load(self, partition: bytes) -> Dict[int, np.ndarray]:
        if partition not in self._index:
            buckets: Dict[int, np.ndarray] = {}
            olds = []
            snap = self.table.snapshot_manager.latest()
            for e in self.table.index_manifest_entries(snap.index_manifest if snap else None):
                if e.partition == partition and e.index_type == HASH_INDEX:
                    data = self.table.io.read_bytes(self.table.paths.index_path(e.file_name))
                    hashes = np.frombuffer(data, dtype=">i4").astype(np.int32)
                    buckets[e.bucket] = np.union1d(buckets.get(e.bucket, np.zeros(0, np.int32)), hashes)
                    olds.append(e)
            self._index[partition] = buckets
            self._old_files[partition] = olds
        return self._index[partition]

    def assign(self, data: pa.Table, partition_codes: np.ndarray, partition_values: Dict[int, list]) -> np.ndarray:
        """Bucket of every row (``partition_values``: code → the partition's values); updates the index."""
        keys = self.schema.trimmed_primary_keys
        hashes = binary_row.hash_rows([data.column(k) for k in keys], [f.type for f in self.schema.fields_of(keys)])
        out = np.zeros(len(hashes), dtype=np.int32)
        for code, values in partition_values.items():
            rows = np.flatnonzero(partition_codes == code)
            out[rows] = self._assign_partition(binary_row.to_bytes(values, self._part_types), hashes[rows])
        self.max_buckets = max([self.max_buckets] + [len(b) for b in self._index.values()])
        return out

    def _assign_partition(self, partition: bytes, hashes: np.ndarray) -> np.ndarray:
        buckets = self._load(partition)
        result = np.full(len(hashes), -1, dtype=np.int32)
        for b, known in buckets.items():
            pos = np.searchsorted(known, hashes)
            hit = (pos < len(known)) & (known[np.minimum(pos, len(known) - 1)] == hashes)
            result[hit] = b
        for b, hs in self._fill(buckets, np.unique(hashes[result < 0])).items():
            buckets[b] = np.union1d(buckets.get(b, np.zeros(0, np.int32)), hs).astype(np.int32)
            pos = np.searchsorted(hs, hashes)
            hit = (pos < len(hs)) & (hs[np.minimum(pos, len(hs) - 1)] == hashes) & (result < 0)
            result[hit] = b
        return result

    def _fill(self, buckets: Dict[int, np.ndarray], new_hashes: np.ndarray) -> Dict[int, np.ndarray]:
        """New keys → buckets with room, as :func:`fill_buckets` orders them."""
        counts = {b: len(h) for b, h in buckets.items()}
        assigned: Dict[int, np.ndarray] = {}
        cursor = 0
        for b, k in fill_buckets(counts, len(new_hashes), self.target_rows):
            assigned[b] = new_hashes[cursor:cursor + k]
            cursor += k
        return assigned

    def attach_index_files(self, messages) -> None:
        """Write the new HASH index of every touched (partition, bucket) into its commit message."""
        for m in messages:
            if m.partition not in self._index or m.bucket not in self._index[m.partition]:
                continue
            hashes = self._index[m.partition][m.bucket]
            name = self.table.paths.new_index_file_name()
            data = hashes.astype(">i4").tobytes()
            self.table.io.write_bytes(self.table.paths.index_path(name), data)
            m.index_changes.append(IndexManifestEntry(ADD, m.partition, m.bucket, HASH_INDEX, name, len(data),
                                                      len(hashes)))
            for old in self._old_files.get(m.partition, []):
                if old.bucket == m.bucket:
                    m.index_changes.append(IndexManifestEntry(DELETE, old.partition, old.bucket, old.index_type,
                                                              old.file_name, old.file_size, old.row_count))


def fill_buckets(counts: Dict[int, int], n: int, target: int) -> List[Tuple[int, int]]:
    """Where ``n`` new keys of one partition go, as Paimon's assigners put them: first the buckets in
    use that still have room (lowest first), then new buckets (lowest free numbers), each up to
    ``target`` keys (>= 1). Returns (bucket, how many) in order and counts them into ``counts``."""
    out = []
    for b in sorted(counts):
        take = min(n, target - counts[b])
        if take > 0:
            out.append((b, take))
            counts[b] += take
            n -= take
    b = 0
    while n > 0 and target > 0:  # bounded whatever the option says (validation refuses < 1)
        if b not in counts:
            counts[b] = min(n, target)
            out.append((b, counts[b]))
            n -= counts[b]
        b += 1
    return out
