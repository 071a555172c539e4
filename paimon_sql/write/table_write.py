"""TableWrite: Arrow rows in, data files and commit messages out — no per-row Python.

A write buffers input; each flush (at :meth:`prepare_commit`, and at ``write-buffer-size`` where
the buffer may not be spilled to local disk: :mod:`paimon_sql.write.spill`) turns the buffer into
files, one group of files per (partition, bucket):

1. conform the input to the table schema (names, casts, NOT NULL), derive row kinds;
2. code each row's partition (dictionary indices) and bucket (Paimon's BinaryRow hash), so that
   one stable argsort groups rows;
3. assign sequence numbers in arrival order, continuing the bucket's highest one (restored from the
   live files of the partitions written, and only those: :mod:`paimon_sql.write.restore`);
4. primary-key tables: sort by (group, key, sequence.field, sequence) and fold each key's rows
   by the table's merge engine (so one file holds one row per key); append tables keep input order;
5. write ``data-<uuid>-<n>.<format>`` files rolled at ``target-file-size``, with stats.

The messages are plain picklable data so Spark tasks can return them to the driver, which
commits once (see :mod:`paimon_sql.commit.table_commit`).
"""

from __future__ import annotations

import os
import uuid
from concurrent.futures import ThreadPoolExecutor
from typing import Callable, Dict, List, Optional, Protocol, Sequence, Set, Tuple

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from paimon_sql.data import binary_row, row_kind
from paimon_sql.data.arrow_offsets import with_offsets
from paimon_sql.exceptions import PaimonError, SchemaError, SnapshotNotFoundError
from paimon_sql.io.paths import POSTPONE_BUCKET
from paimon_sql.manifest.manifest_file import DataFileMeta, IndexManifestEntry
from paimon_sql.mergetree.compact_result import CompactResult
from paimon_sql.read.scan import ScanStore
from paimon_sql.schema.table_schema import SEQUENCE_NUMBER, VALUE_KIND
from paimon_sql.write import postpone
from paimon_sql.write.commit_message import CommitMessage, delete_files
from paimon_sql.write.cross_partition import CrossPartitionAssigner
from paimon_sql.write.dynamic_bucket import DynamicBucketAssigner
from paimon_sql.write.file_writer import delete_data_files, kv_table, write_files
from paimon_sql.write.restore import live_entries
from paimon_sql.write.spill import SpillFiles


_GROUP = "__paimon_group"  # (partition, bucket) code of a buffered row while it is folded


def conform(data: pa.Table, schema) -> pa.Table:
    """The input as the table's Arrow schema: same columns, safe casts, NOT NULL checked."""
    target = schema.arrow_schema()
    data = with_offsets(data)  # Spark's input, as PySpark 4.1 hands it over
    names = data.column_names
    missing = [n for n in target.names if n not in names]
    extra = [n for n in names if n not in target.names]
    if missing or extra:
        detail = []
        if missing:
            detail.append(f"missing column(s) {', '.join(missing)}")
        if extra:
            detail.append(f"unknown column(s) {', '.join(extra)}")
        raise SchemaError(f"data does not match the table schema: {'; '.join(detail)}")
    cols = []
    for f in target:
        col = data.column(f.name)
        if not col.type.equals(f.type):
            try:
                col = col.cast(f.type, safe=True)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as e:
                raise SchemaError(f"column '{f.name}': cannot cast {col.type} to {f.type} ({e})") from None
        if not f.nullable and col.null_count:
            raise SchemaError(f"column '{f.name}' is NOT NULL but the data has {col.null_count} null value(s)")
        cols.append(col)
    return pa.Table.from_arrays(cols, schema=target)


class BucketCompaction(Protocol):
    """A bucket's LSM compaction as the write drives it (compact.merge_tree_compact's BucketCompactor,
    a layer above, is one): the files written are added, a compaction runs now and then, and under
    merge-on-write it has deletion vectors to commit."""

    mow: bool

    def add(self, files: Sequence[DataFileMeta]) -> None: ...

    def compact(self, full: bool = False) -> Optional[CompactResult]: ...

    def index_changes(self) -> List[IndexManifestEntry]: ...


class TableWrite:
    """Writes rows of one table; ``overwrite``: the files written replace the table's (no restore of
    existing sequence numbers or levels). Primary-key buckets are compacted after each flush unless
    ``write-only`` is set; ``full-compaction.delta-commits`` forces a full compaction every N commits
    (at every commit of a Spark batch write, :attr:`batch`)."""

    def __init__(self, table: ScanStore, compactor: Callable[..., BucketCompaction], overwrite: bool = False,
                 postpone_plan: Optional[Dict[bytes, int]] = None):
        """``compactor(table, partition, bucket, files, snapshot_id)``: a bucket's LSM compaction
        (:class:`BucketCompaction`), given by the table as
        Paimon's writers get their compact manager, so writing does not depend on compaction.

        A postpone table (``bucket = -2``, :mod:`paimon_sql.write.postpone`) is written as paimon-spark
        writes it in batch: into real buckets, write-only (``postpone.batch-write-fixed-bucket``,
        the default), or else into the postpone bucket, as Paimon's postpone writers (Avro files,
        no stats, rows in arrival order, invisible until compaction). ``postpone_plan``
        (partition → bucket count): the write of a postpone compaction, which compacts the buckets
        it writes into."""
        self.table = table
        self._new_compactor = compactor
        self.schema = table.schema
        self.options = table.options
        self.is_pk = self.schema.is_primary_key_table
        self._overwrite = overwrite
        self._buffer: List[Tuple[pa.Table, Optional[pa.Array]]] = []
        self._buffer_bytes = 0
        self._messages: Dict[Tuple[bytes, int], CommitMessage] = {}
        self._next_seq: Dict[Tuple[bytes, int], int] = {}
        self._restored: Set[bytes] = set()  # the partitions whose buckets were restored
        self._base: Optional[int] = None  # the snapshot sequences and levels were restored from
        self._base_snapshot = None  # ... as read when pinned (restored lazily, partition by partition)
        self._restored_files: Dict[Tuple[bytes, int], List[DataFileMeta]] = {}
        self._bucket_counts: Dict[bytes, int] = {}  # each partition's bucket count in the restored snapshot
        self._compactors: Dict[Tuple[bytes, int], BucketCompaction] = {}
        self._compaction = self.is_pk and not self.options.get("write-only")
        self.batch = False  # a Spark batch write: full-compaction.delta-commits compacts at each (paimon-spark)
        self._input_changelog = self.is_pk and self.options.get("changelog-producer") == "input"
        self._buffer_limit = self.options.get("write-buffer-size")
        bucket = self.options.bucket
        self._postpone: Optional[str] = None  # "fixed", "bucket" (postpone files) or "compact"
        self._plan: Dict[bytes, int] = {}  # postpone table: each partition's bucket count in this write
        self._postpone_meta = None
        if bucket == POSTPONE_BUCKET and self.is_pk:
            if postpone_plan is not None:
                self._postpone, self._plan = "compact", dict(postpone_plan)
                self._compaction = True
            else:
                fixed = self.options.get("postpone.batch-write-fixed-bucket")
                self._postpone = "fixed" if fixed else "bucket"
                self._plan = postpone.decode_plan(self.options.raw.get(postpone.PLAN_OPTION))
                self._compaction = False  # Paimon writes both write-only; compaction assigns and compacts
                if not fixed:  # compaction writes the changelog of what it assigns
                    self._input_changelog = False
                    self._postpone_files = _postpone_file_table(table)
                    # Paimon's postpone writer prefix: one per writer, which compaction reads in order
                    self._postpone_prefix = (f"data--u-{uuid.uuid4()}-s-{int.from_bytes(os.urandom(4), 'big') >> 1}"
                                             f"-w-")
        self._dynamic = self._cross = None
        if self.is_pk and bucket == -1 and self.schema.cross_partition_update:
            self._cross = CrossPartitionAssigner(table)
        elif self.is_pk and bucket == -1:
            self._dynamic = DynamicBucketAssigner(table)
        # a full buffer goes to local disk, merged into each bucket's run at the flush (as Paimon's)
        self._spills = SpillFiles(self.options) if self.is_pk and self._postpone != "bucket" and \
            self.options.get("write-buffer-spillable") else None

    # -- input ----------------------------------------------------------------------------

    def write_arrow(self, data, row_kinds: Optional[pa.Array] = None) -> None:
        """Buffer rows (a Table or RecordBatch). ``row_kinds``: int8 +I/-U/+U/-D per row."""
        if isinstance(data, pa.RecordBatch):
            data = pa.Table.from_batches([data])
        if row_kinds is not None:
            if not self.is_pk:
                raise SchemaError(f"table {self.table.name} is an append table: row kinds need a primary key")
            row_kinds = pa.array(row_kinds, pa.int8()) if not isinstance(row_kinds, pa.Array) else row_kinds
            if len(row_kinds) != data.num_rows:
                raise SchemaError("row_kinds must have one entry per row")
        data = conform(data, self.schema)
        self._buffer.append((data, row_kinds))
        self._buffer_bytes += data.nbytes
        if self._buffer_bytes >= self._buffer_limit:
            self._buffer_full()

    def _buffer_full(self) -> None:
        """Spill the buffer to local disk (:mod:`paimon_sql.write.spill`), or write it out as files
        where it may not be spilled (``write-buffer-spillable`` off, an append or postpone-bucket
        write, ``write-buffer-spill.max-disk-size`` reached)."""
        if self._spills is not None and self._spills.fits(self._buffer_bytes):
            self._spill_buffer()
        else:
            self.flush()

    def _spill_buffer(self) -> None:
        located = self._locate(*self._take_buffer())
        if located is not None:
            data, kinds, _, seq, groups = located
            rows = _with_kv_columns(data, kinds, seq)
            for _, idx, pvals, pbytes, bucket, _ in groups:
                self._spills.add((pbytes, bucket), pvals, rows.take(pa.array(idx)))

    def flush(self) -> None:
        """Write the buffered and spilled rows out as level-0 files, then compact what they reached.
        Rows still buffered join the spilled ones when the spill disk has room for them, so each
        bucket gets one sorted run, as Paimon merges its spilled and in-memory runs at the flush."""
        if self._spills and self._spills.fits(self._buffer_bytes):
            self._spill_buffer()
        written = self._write_spilled() if self._spills else []
        located = self._locate(*self._take_buffer())
        if located is not None:
            written += self._write_groups(*located)
        self._compact(list(dict.fromkeys(written)), full=False)

    def _take_buffer(self) -> Tuple[Optional[pa.Table], Optional[pa.Array]]:
        """The buffered rows as one table and their row kinds (None: all inserts); the buffer empties."""
        if not self._buffer:
            return None, None
        data = pa.concat_tables([t for t, _ in self._buffer]).combine_chunks()
        kinds = None
        if any(k is not None for _, k in self._buffer):
            kinds = pa.concat_arrays([k if k is not None else pa.array(np.zeros(t.num_rows, np.int8))
                                      for t, k in self._buffer])
        self._buffer, self._buffer_bytes = [], 0
        return data, kinds

    def _write_spilled(self) -> List[Tuple[bytes, int]]:
        """The spilled rows as one sorted run per bucket (:meth:`SpillFiles.runs`: more where a
        bucket outgrew the write buffer). Runs are written a few at a time, within the write
        buffer's bytes and one per core (in parallel), so memory holds what a flush would."""
        runs = self._spills.runs(self._buffer_limit)
        step = max(1, os.cpu_count() or 2)
        written, chunk, size = [], [], 0
        try:
            for run in runs + [None]:
                if chunk and (run is None or len(chunk) == step or size + run[2] > self._buffer_limit):
                    written += self._write_runs(chunk)
                    chunk, size = [], 0
                if run is not None:
                    chunk.append(run)
                    size += run[2]
        finally:
            self._spills.close()
        return written

    def _write_runs(self, runs: list) -> List[Tuple[bytes, int]]:
        pieces, groups, first = [], [], 0
        for code, (key, paths, _) in enumerate(runs):
            piece = self._spills.read(paths)
            seq = piece.column(SEQUENCE_NUMBER).to_numpy()
            groups.append((code, np.arange(first, first + piece.num_rows), self._spills.partitions[key], key[0], key[1],
                           seq))
            pieces.append(piece)
            first += piece.num_rows
        table = pa.concat_tables(pieces).combine_chunks()
        group = np.repeat(np.arange(len(runs)), [len(g[1]) for g in groups])
        return self._write_groups(table.drop_columns([SEQUENCE_NUMBER, VALUE_KIND]),
                                  table.column(VALUE_KIND).combine_chunks(), group,
                                  table.column(SEQUENCE_NUMBER).to_numpy(), groups)

    def prepare_commit(self) -> List[CommitMessage]:
        """Flush and hand over the files written since the last call."""
        self.flush()
        if self._compaction and self._messages and self._full_compaction_due():
            self._compact(list(self._messages), full=True)
        for key, compactor in self._compactors.items():  # merge-on-write: the buckets' new deletion vectors
            if compactor.mow:
                self._message(key).compact_index_changes.extend(compactor.index_changes())
        messages = [m for m in self._messages.values() if not m.is_empty()]
        for m in messages:
            m.base_snapshot = self._restore_base()
        if self._dynamic is not None:
            self._dynamic.attach_index_files(messages)
        self._messages = {}
        return messages

    def abort(self, messages: Optional[List[CommitMessage]] = None) -> None:
        """Delete the files of ``messages`` (default: of everything not yet handed over)."""
        self._buffer = []
        if self._spills is not None:
            self._spills.close()
        delete_files(self.table, messages if messages is not None else list(self._messages.values()))

    # -- grouping -------------------------------------------------------------------------

    def _row_kinds(self, data: pa.Table, kinds: Optional[pa.Array]) -> Optional[pa.Array]:
        field_name = self.options.rowkind_field
        if kinds is None and field_name:
            kinds = row_kind.from_short_strings(data.column(field_name).combine_chunks(), field_name)
        return kinds

    def _buckets(self, data: pa.Table, partition_codes: np.ndarray, partition_values) -> Optional[np.ndarray]:
        bucket = self.options.bucket
        if bucket > 0:
            keys = self.schema.bucket_keys
            hashes = binary_row.hash_rows([data.column(k) for k in keys],
                                          [f.type for f in self.schema.fields_of(keys)])
            return binary_row.bucket_of(hashes, bucket)
        if self._dynamic is not None:
            return self._dynamic.assign(data, partition_codes, partition_values)
        if self._postpone in ("fixed", "compact"):
            return self._postpone_buckets(data, partition_codes, partition_values)
        return None  # bucket-unaware: every row in bucket 0; postpone files: the postpone bucket

    def _postpone_buckets(self, data: pa.Table, partition_codes: np.ndarray, partition_values) -> np.ndarray:
        """A postpone table's rows hashed into their partition's bucket count (kept by a partition
        with real buckets, planned for a new one: :mod:`paimon_sql.write.postpone`)."""
        keys = self.schema.bucket_keys
        hashes = binary_row.hash_rows([data.column(k) for k in keys], [f.type for f in self.schema.fields_of(keys)])
        part_types = [f.type for f in self.schema.fields_of(self.schema.partition_keys)]
        counts = np.empty(data.num_rows, np.int64)
        for code, values in partition_values.items():
            mask = partition_codes == code
            pbytes = binary_row.to_bytes(values, part_types)
            if pbytes not in self._plan:
                self._plan[pbytes] = self._new_partition_buckets(pbytes, data, mask)
            counts[mask] = self._plan[pbytes]
        return binary_row.bucket_of(hashes, counts)

    def _new_partition_buckets(self, pbytes: bytes, data: pa.Table, mask: np.ndarray) -> int:
        if self._postpone_meta is None:
            self._postpone_meta = postpone.bucket_metadata(self.table, self._restore_base())
        known, postponed = self._postpone_meta
        if pbytes in known:
            return known[pbytes]
        if self._postpone == "compact":
            raise PaimonError(f"table {self.table.name}: postpone compaction has no bucket count for a partition")
        rows = int(mask.sum())
        size = 0 if self.options.get("postpone.target-row-num-per-bucket") is not None else \
            int(postpone.row_sizes(data.filter(pa.array(mask)), self.schema).sum())
        postponed_rows = 0 if self._overwrite else postponed.get(pbytes, 0)  # an overwrite replaces them
        return postpone.infer_write_buckets(self.options, rows, size, postponed_rows)

    def _partition_codes(self, data: pa.Table):
        return partition_codes(self.schema.partition_keys, data)

    # -- the flush ------------------------------------------------------------------------

    def pin_base(self, snapshot_id: int) -> None:
        """Build on snapshot ``snapshot_id`` (0: none) rather than the latest one when first needed:
        a compaction pins the snapshot it planned, so the buckets it writes continue from that one.
        The snapshot itself is pinned with the id: the lazy restore reads its files."""
        self._base = snapshot_id or 0
        self._base_snapshot = self.table.snapshot_manager.snapshot(snapshot_id) if snapshot_id else None

    def _restore_base(self) -> int:
        """The snapshot this write builds on, pinned once: sequences, levels and vectors all come from it."""
        if self._base is None:
            self._base_snapshot = self.table.snapshot_manager.latest()
            self._base = self._base_snapshot.id if self._base_snapshot else 0
        return self._base

    def _restore(self, partitions) -> None:
        """Restore the buckets of ``partitions`` not restored yet, from the live files of those
        partitions only (:mod:`paimon_sql.write.restore`), as Paimon's writers restore each bucket
        they write: every bucket's next sequence number, its files (for compaction) and the
        partition's bucket count. Java's unaware-bucket append writer ignores earlier files (it
        counts from 0; with row tracking the commit turns that into the snapshot id:
        commit/row_tracking.py), so such a table restores nothing."""
        base = self._restore_base()
        todo = set(partitions) - self._restored
        self._restored |= todo
        unaware_append = self.options.bucket == -1 and not self.is_pk
        if not todo or self._overwrite or unaware_append or not base:
            return
        counts_sequences = not self.options.get("row-tracking.enabled")
        if self._base_snapshot is None or self._base_snapshot.id != base:  # pinned by id alone
            self._base_snapshot = self.table.snapshot_manager.snapshot(base)
        for e in live_entries(self.table, self._base_snapshot, todo):
            if e.bucket < 0:  # a postpone writer starts its own sequence, as Paimon's ignores earlier files
                continue
            key = (e.partition, e.bucket)
            if counts_sequences:
                self._next_seq[key] = max(self._next_seq.get(key, 0), e.file.max_sequence_number + 1)
            self._restored_files.setdefault(key, []).append(e.file)
            self._bucket_counts[e.partition] = e.total_buckets

    def _check_bucket_count(self, partitions) -> None:
        """A fixed-bucket partition is written with the bucket count its files have, as Paimon
        insists: a key hashed into another count of buckets would live in two buckets at once.
        After ``ALTER TABLE ... SET ('bucket' = ...)`` the partition is rescaled first."""
        bucket = self.options.bucket
        for p in partitions:
            had = self._bucket_counts.get(p)
            if bucket > 0 and had is not None and had != bucket:
                keys = self.schema.partition_keys
                values = binary_row.from_bytes(p, [f.type for f in self.schema.fields_of(keys)])
                where = f"partition {', '.join(f'{k}={v}' for k, v in zip(keys, values))}" if keys else "the table"
                raise PaimonError(f"table {self.table.name}: {where} was written with {had} buckets but 'bucket' is "
                                  f"{bucket}; rescale it first (CALL sys.rescale or INSERT OVERWRITE), as Paimon requires")

    def _locate(self, data: Optional[pa.Table], kinds: Optional[pa.Array]):
        """The rows' (partition, bucket) groups and sequence numbers: (rows, kinds, group code per
        row, sequence numbers (primary-key tables), groups as (code, row indices, partition values,
        partition bytes, bucket, their sequence numbers)); None when no row is left to write."""
        if data is None:
            return None
        kinds = self._row_kinds(data, kinds)
        if kinds is not None and self.options.ignore_delete:
            keep = row_kind.is_add(kinds)
            data, kinds = data.filter(keep), kinds.filter(keep)
        if data.num_rows == 0:
            return None
        pcodes, pvalues = self._partition_codes(data)
        if self._cross is not None:  # a key lives in one partition: rows may be moved, retracted or dropped
            base = None if self._overwrite else self._restore_base()
            data, kinds, pcodes, pvalues, buckets = self._cross.route(data, kinds, pcodes, pvalues, base)
        else:
            buckets = self._buckets(data, pcodes, pvalues)
        n = data.num_rows
        if n == 0:
            return None
        group = pcodes if buckets is None else pcodes * (int(buckets.max()) + 1) + buckets
        # sequence numbers in arrival order within each group, after the bucket's last one
        part_types = [f.type for f in self.schema.fields_of(self.schema.partition_keys)]
        unbucketed = POSTPONE_BUCKET if self._postpone == "bucket" else 0
        located = []
        for g, idx in _group_rows(group):
            first_row = int(idx[0])
            pvals = pvalues[int(pcodes[first_row])]
            bucket = unbucketed if buckets is None else int(buckets[first_row])
            located.append((g, idx, pvals, binary_row.to_bytes(pvals, part_types), bucket))
        self._restore({pbytes for _, _, _, pbytes, _ in located})
        seq = np.empty(n, dtype=np.int64) if self.is_pk else None
        groups = []
        for g, idx, pvals, pbytes, bucket in located:
            first = self._next_seq.get((pbytes, bucket), 0)
            self._next_seq[(pbytes, bucket)] = first + len(idx)
            group_seq = first + np.arange(len(idx))
            if seq is not None:
                seq[idx] = group_seq
            groups.append((g, idx, pvals, pbytes, bucket, group_seq))
        self._check_bucket_count({pbytes for _, _, _, pbytes, _, _ in groups})
        return data, kinds, group, seq, groups

    def _write_groups(self, data: pa.Table, kinds: Optional[pa.Array], group: np.ndarray, seq: Optional[np.ndarray],
                      groups: list) -> List[Tuple[bytes, int]]:
        """Write located rows (:meth:`_locate`) as level-0 files; returns the (partition, bucket)s written."""
        n = data.num_rows
        if self._postpone == "bucket":  # as Paimon's postpone writer: every row in arrival order, unfolded
            all_kinds = kinds if kinds is not None else pa.array(np.zeros(n, np.int8))
            # Paimon 2.0's postpone writer records no sequence: -1 (compaction numbers the rows)
            jobs = [(_Take(data, idx), pvals, pbytes, bucket, np.full(len(idx), -1, np.int64),
                     all_kinds.take(pa.array(idx))) for g, idx, pvals, pbytes, bucket, group_seq in groups]
        elif self.is_pk:
            jobs = self._primary_key_slices(data, kinds, group, seq, groups)
        else:
            jobs = [(_Take(data, idx), pvals, pbytes, bucket, group_seq, None)
                    for g, idx, pvals, pbytes, bucket, group_seq in groups]
        if self._input_changelog:  # changelog-producer 'input': the rows as they came, kinds and all
            zeros = pa.array(np.zeros(n, np.int8))
            jobs += [(_Take(data, idx), pvals, pbytes, bucket, group_seq,
                      (kinds if kinds is not None else zeros).take(pa.array(idx)), "changelog-")
                     for g, idx, pvals, pbytes, bucket, group_seq in groups]
        self._run(jobs)
        return [(pbytes, bucket) for _, _, _, pbytes, bucket, _ in groups]

    def _message(self, key: Tuple[bytes, int]) -> CommitMessage:
        return self._messages.setdefault(key, CommitMessage(key[0], key[1], self._total_buckets(key)))

    def _total_buckets(self, key: Tuple[bytes, int]) -> int:
        """What the files' manifest entries record as totalBuckets: the table's ``bucket``, and for a
        postpone table's real buckets the partition's bucket count."""
        if self._postpone is None or key[1] == POSTPONE_BUCKET:
            return self.options.bucket
        return self._plan[key[0]]

    def _run(self, jobs) -> None:
        """Write the (partition, bucket) slices; Arrow's writers release the GIL, so threads overlap."""
        if len(jobs) == 1:  # one slice (a one-row INSERT's): no pool to start, nothing else to remove
            results = [self._write_files(*jobs[0])]
        else:
            with ThreadPoolExecutor(max_workers=max(1, min(len(jobs), os.cpu_count() or 2))) as pool:
                futures = [pool.submit(self._write_files, *job) for job in jobs]
            failed = [f.exception() for f in futures if f.exception() is not None]
            results = [f.result() for f in futures if f.exception() is None]
            if failed:  # a failed write commits nothing: remove what the other slices wrote
                self.abort([CommitMessage(pbytes, bucket, self.options.bucket, files)
                            for (pbytes, bucket), files, _ in results])
                raise failed[0]
        for key, files, is_changelog in results:
            msg = self._message(key)
            if is_changelog:
                msg.changelog_files.extend(files)
            else:
                msg.new_files.extend(files)
                if self._compaction:
                    self._compactor(key).add(files)

    # -- compaction -----------------------------------------------------------------------

    def _compactor(self, key: Tuple[bytes, int]):
        if key not in self._compactors:
            self._restore({key[0]})
            self._compactors[key] = self._new_compactor(self.table, key[0], key[1], self._restored_files.get(key, []),
                                                    self._restore_base())
        return self._compactors[key]

    def _compact(self, keys: List[Tuple[bytes, int]], full: bool) -> None:
        """One compaction per bucket (buckets in parallel), folded into the buckets' messages."""
        if not self._compaction or not keys:
            return
        with ThreadPoolExecutor(max_workers=max(1, min(len(keys), os.cpu_count() or 2))) as pool:
            results = list(pool.map(lambda k: self._compactor(k).compact(full=full), keys))
        for key, result in zip(keys, results):
            if result is not None:
                self._fold_compaction(self._message(key), result)

    def compact_buckets(self, keys: List[Tuple[bytes, int]]) -> None:
        """Compact these buckets (not fully), written to or not: a postpone compaction's real
        buckets with level-0 files."""
        self._compact(list(keys), full=False)

    def _fold_compaction(self, msg: CommitMessage, result: CompactResult) -> None:
        """A compaction may consume what an earlier one of this write produced: those files never
        reach a snapshot, so they drop out of the message (and off the disk unless upgraded)."""
        produced = {(f.file_name, f.level) for f in msg.compact_after}
        kept = {f.file_name for f in result.after}
        pvals = None
        for f in result.before:
            if (f.file_name, f.level) in produced:
                msg.compact_after = [a for a in msg.compact_after if (a.file_name, a.level) != (f.file_name, f.level)]
                if f.file_name not in kept:
                    if pvals is None:
                        types = [x.type for x in self.schema.fields_of(self.schema.partition_keys)]
                        pvals = binary_row.from_bytes(msg.partition, types)
                    delete_data_files(self.table, pvals, msg.bucket, [f])
            else:
                msg.compact_before.append(f)
        msg.compact_after += result.after
        msg.compact_changelog += result.changelog

    def _full_compaction_due(self) -> bool:
        """``full-compaction.delta-commits = N``: this commit is the N-th since the last COMPACT, or
        any commit of a Spark batch write (paimon-spark compacts the buckets such a write touched).
        When expiry kept fewer snapshots than that and none of them is a COMPACT, the count went
        with the expired ones: the compaction is due (rather than never, or a failed write)."""
        n = self.options.get("full-compaction.delta-commits")
        if not n or self.batch:
            return bool(n)
        sm = self.table.snapshot_manager
        sid, count = sm.latest_id(), 1
        while sid is not None and count < n and sid >= 1:
            try:
                if sm.snapshot(sid).commit_kind == "COMPACT":
                    return False
            except SnapshotNotFoundError:
                return True
            count, sid = count + 1, sid - 1
        return count >= n

    def _primary_key_slices(self, data, kinds, group, seq, groups) -> list:
        """Fold duplicate keys of each (partition, bucket) by the merge engine; one slice per group."""
        merge = self.table.merge_function
        kinds = kinds if kinds is not None else pa.array(np.zeros(data.num_rows, np.int8))
        table = (data.append_column(_GROUP, pa.array(group)).append_column(SEQUENCE_NUMBER, pa.array(seq))
                 .append_column(VALUE_KIND, kinds))
        merged = merge.merge(merge.group(table, [_GROUP] + self.schema.trimmed_primary_keys, in_sequence_order=True))
        kept_groups = merged.column(_GROUP).to_numpy()
        rows_seq = merged.column(SEQUENCE_NUMBER).to_numpy()
        rows_kind = merged.column(VALUE_KIND).combine_chunks()
        rows = merged.select(self.schema.field_names)
        n = len(kept_groups)
        bounds = np.flatnonzero(np.r_[True, kept_groups[1:] != kept_groups[:-1]]) if n else np.array([], int)
        by_group = {g: (pv, pb, b) for g, _, pv, pb, b, _ in groups}
        jobs = []
        for s, e in zip(bounds, np.r_[bounds[1:], n]):
            pvals, pbytes, bucket = by_group[int(kept_groups[s])]
            jobs.append((rows.slice(s, e - s), pvals, pbytes, bucket, rows_seq[s:e], rows_kind.slice(s, e - s)))
        return jobs

    def _write_files(self, rows: pa.Table, pvals, pbytes: bytes, bucket: int, seq: np.ndarray,
                     kinds: Optional[pa.Array], prefix: str = "data-"):
        """Write one (partition, bucket) slice as level-0 files (or changelog files) rolled at size."""
        if isinstance(rows, _Take):
            rows = rows()
        if bucket == POSTPONE_BUCKET:
            files = write_files(self._postpone_files, kv_table(self.schema, rows, seq, kinds), pvals, bucket,
                                prefix=self._postpone_prefix, postpone=True)
        elif self.is_pk:
            files = write_files(self.table, kv_table(self.schema, rows, seq, kinds), pvals, bucket, prefix=prefix)
        else:
            files = write_files(self.table, rows, pvals, bucket, first_sequence=int(seq[0]))
        return (pbytes, bucket), files, prefix == "changelog-"


def _with_kv_columns(data: pa.Table, kinds: Optional[pa.Array], seq: np.ndarray) -> pa.Table:
    """Located primary-key rows with their sequence numbers and row kinds (None: all inserts) as columns."""
    kinds = kinds if kinds is not None else pa.array(np.zeros(data.num_rows, np.int8))
    return data.append_column(SEQUENCE_NUMBER, pa.array(seq)).append_column(VALUE_KIND, kinds)


class _Take:
    """Rows to gather later: the gather then runs in the writer thread, beside the others."""

    def __init__(self, table: pa.Table, indices: np.ndarray):
        self.table, self.indices = table, indices

    def __call__(self) -> pa.Table:
        return self.table.take(pa.array(self.indices))


def _postpone_file_table(table: ScanStore) -> ScanStore:
    """The table as Paimon's postpone writer writes its files: Avro, no stats (a compression
    Avro lacks, e.g. a Parquet-only codec, becomes Avro's zstd)."""
    postponed = {"file.format": "avro", "metadata.stats-mode": "none"}
    try:
        return table.copy(postponed)
    except PaimonError:
        return table.copy({**postponed, "file.compression": "zstd"})



def partition_codes(keys: List[str], data: pa.Table):
    """Per-row partition code and, per code, the partition's values (over the columns ``keys``)."""
    n = data.num_rows
    if not keys:
        return np.zeros(n, dtype=np.int64), {0: []}
    codes = None
    dictionaries = []
    for k in keys:
        enc = pc.dictionary_encode(data.column(k).combine_chunks(), null_encoding="encode")
        idx = enc.indices.to_numpy(zero_copy_only=False).astype(np.int64)
        size = len(enc.dictionary)
        codes = idx if codes is None else codes * size + idx
        dictionaries.append((enc.dictionary.to_pylist(), size))
    values = {}
    for code in _present(codes):
        rest, vals = int(code), []
        for d, size in reversed(dictionaries):
            vals.append(d[rest % size])
            rest //= size
        values[int(code)] = list(reversed(vals))
    return codes, values

def _present(codes: np.ndarray) -> np.ndarray:
    """Distinct non-negative codes, ascending (bincount when the range is small: much faster)."""
    top = int(codes.max()) if len(codes) else 0
    return np.flatnonzero(np.bincount(codes)) if top < 4 * len(codes) + 65536 else np.unique(codes)


def _group_rows(group: np.ndarray):
    """(code, row indices in arrival order) per distinct group code."""
    codes = _present(group)
    if len(codes) <= 32:  # few groups: one vectorized compare each beats a full argsort
        return [(int(g), np.flatnonzero(group == g)) for g in codes]
    order = np.argsort(group, kind="stable")
    sorted_groups = group[order]
    starts = np.flatnonzero(np.r_[True, sorted_groups[1:] != sorted_groups[:-1]])
    return [(int(sorted_groups[s]), order[s:e]) for s, e in zip(starts, np.r_[starts[1:], len(order)])]
