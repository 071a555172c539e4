"""Postpone bucket mode (``bucket = -2``) on the write side: how many buckets a partition gets.

A primary-key table with ``bucket = -2`` has no bucket count of its own: each partition gets one
when its rows first reach real buckets, and keeps it (the count its files record as
``totalBuckets``). Paimon 2.0 decides it in two places, both reproduced here:

- a batch write with ``postpone.batch-write-fixed-bucket`` (default true: paimon-spark's INSERT,
  UPDATE, DELETE and MERGE INTO) writes straight into real buckets. A partition with real files
  keeps its count; a new one gets a count inferred from the data written (PaimonSparkWriter's
  ``preparePostponeBucketAssignment``): ``ceil(rows / postpone.target-row-num-per-bucket)`` when
  that is set, else ``ceil(size / postpone.target-size-per-bucket)`` (1 GB: one bucket for most
  writes), the rows the postpone bucket already holds counted in (not by an overwrite), at most
  ``postpone.batch-write-fixed-bucket.max-parallelism``;
- ``CALL sys.compact`` (SparkPostponeCompactProcedure): a partition with real files keeps its
  count; a new one gets ``ceil(postpone rows / postpone.target-row-num-per-bucket)`` when that is
  set, else ``postpone.default-bucket-num``, else Spark's default parallelism.

Every writer of one write must agree on a partition's count, so a distributed write plans the
counts on the driver and hands them to its tasks as the dynamic option :data:`PLAN_OPTION`.
"""

from __future__ import annotations

import json
from typing import Dict, Optional, Tuple

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from paimon_sql.data import binary_row
from paimon_sql.data.types import AtomicType
from paimon_sql.io.paths import POSTPONE_BUCKET
from paimon_sql.read.scan import ScanStore


PLAN_OPTION = "paimon-sql.postpone-bucket-plan"  # {partition BinaryRow hex: bucket count}, JSON


def encode_plan(plan: Dict[bytes, int]) -> str:
    return json.dumps({p.hex(): int(n) for p, n in sorted(plan.items())})


def decode_plan(text: Optional[str]) -> Dict[bytes, int]:
    return {bytes.fromhex(p): int(n) for p, n in json.loads(text).items()} if text else {}


def bucket_metadata(table: ScanStore, snapshot_id: Optional[int]) -> Tuple[Dict[bytes, int], Dict[bytes, int]]:
    """(bucket count of each partition with real-bucket files, rows in each partition's postpone
    bucket) in the snapshot; a partition whose files disagree on the count fails, as in Paimon."""
    known: Dict[bytes, int] = {}
    postpone: Dict[bytes, int] = {}
    if not snapshot_id:
        return known, postpone
    for e in table.new_scan().with_snapshot(snapshot_id).plan_entries():
        if e.bucket == POSTPONE_BUCKET:
            postpone[e.partition] = postpone.get(e.partition, 0) + e.file.row_count
        elif e.bucket >= 0 and e.total_buckets > 0:
            had = known.setdefault(e.partition, e.total_buckets)
            if had != e.total_buckets:
                raise ValueError(f"table {table.name}: a partition has different total buckets {had} "
                                 f"and {e.total_buckets}")
    return known, postpone


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def infer_write_buckets(options, rows: int, size: int, postpone_rows: int) -> int:
    """A new partition's bucket count for a fixed-bucket batch write of ``rows`` rows of
    ``size`` bytes (BinaryRow sizes), the postpone bucket holding ``postpone_rows`` more."""
    most = options.get("postpone.batch-write-fixed-bucket.max-parallelism")
    if most == 1:
        return 1
    per_bucket = options.get("postpone.target-row-num-per-bucket")
    if per_bucket is not None:
        total = rows + postpone_rows
        return min(max(1, _ceil_div(total, per_bucket)), most)
    target = options.get("postpone.target-size-per-bucket")
    estimated = _ceil_div(size * (rows + postpone_rows), rows) if rows else 0
    return min(max(1, _ceil_div(estimated, target)), most)


def compaction_buckets(options, postpone_rows: int, default_parallelism: int) -> int:
    """A partition's bucket count when compaction gives it real buckets for the first time."""
    per_bucket = options.get("postpone.target-row-num-per-bucket")
    if per_bucket is not None:
        return max(1, _ceil_div(postpone_rows, per_bucket))
    default = options.raw.get("postpone.default-bucket-num")  # Paimon 2.0 uses it only when set
    return int(default) if default is not None else max(1, default_parallelism)


def _var_size(col: pa.Array, t) -> np.ndarray:
    """Bytes a value of ``col`` takes in a BinaryRow's variable part (Paimon's BinaryRowWriter)."""
    n = len(col)
    if isinstance(t, AtomicType):
        name = t.name
        precision = t.args[0] if t.args else None
        if name == "DECIMAL":
            return np.full(n, 16 if (precision or 10) > 18 else 0, np.int64)
        if name.startswith("TIMESTAMP"):
            return np.full(n, 8 if (6 if precision is None else precision) > 3 else 0, np.int64)
        if name in ("CHAR", "VARCHAR", "BINARY", "VARBINARY"):
            lengths = pc.binary_length(col.cast(pa.binary()) if pa.types.is_string(col.type)
                                       or pa.types.is_large_string(col.type) else col)
            length = lengths.fill_null(0).to_numpy(zero_copy_only=False).astype(np.int64)
            return np.where(length <= 7, 0, (length + 7) // 8 * 8)
        return np.zeros(n, np.int64)
    # nested values: not serialized to measure them (that would be Python per row); each row is
    # given an equal share of the column's Arrow bytes, 8-byte aligned, and NULLs none. Only the
    # sum per partition matters, against a target of a gigabyte by default.
    if n == 0:
        return np.zeros(0, np.int64)
    valid = col.is_valid().to_numpy(zero_copy_only=False)
    share = (col.nbytes // max(int(valid.sum()), 1) + 7) // 8 * 8
    return np.where(valid, share, 0).astype(np.int64)


def row_sizes(data: pa.Table, schema) -> np.ndarray:
    """Each row's BinaryRow size, as PaimonSparkWriter sums it to infer a new partition's buckets."""
    arity = len(schema.fields)
    fixed = ((arity + 63) // 64) * 8 + 8 * arity
    total = np.full(data.num_rows, fixed, np.int64)
    for f in schema.fields:
        if f.name in data.column_names:
            total += _var_size(data.column(f.name).combine_chunks(), f.type)
    return total


def partition_groups(data: pa.Table, schema) -> Tuple[np.ndarray, Dict[int, bytes]]:
    """Each row's partition code and each code's partition BinaryRow (rows in ``data`` may carry
    other Arrow types than the table's: the partition values are cast first)."""
    keys = schema.partition_keys
    if not keys:
        return np.zeros(data.num_rows, np.int64), {0: binary_row.to_bytes([], [])}
    fields = schema.fields_of(keys)
    codes, dictionaries = None, []
    for f in fields:
        enc = pc.dictionary_encode(data.column(f.name).combine_chunks().cast(f.type.to_arrow()), null_encoding="encode")
        idx = enc.indices.to_numpy(zero_copy_only=False).astype(np.int64)
        size = len(enc.dictionary)
        codes = idx if codes is None else codes * size + idx
        dictionaries.append((enc.dictionary.to_pylist(), size))
    out = {}
    for code in np.unique(codes):
        rest, values = int(code), []
        for d, size in reversed(dictionaries):
            values.append(d[rest % size])
            rest //= size
        out[int(code)] = binary_row.to_bytes(list(reversed(values)), [f.type for f in fields])
    return codes, out


def batch_stats(data: pa.Table, schema, with_size: bool) -> Dict[bytes, Tuple[int, int]]:
    """(rows, BinaryRow bytes) of each partition in ``data``: a write's input, summed per task."""
    codes, partitions = partition_groups(data, schema)
    sizes = row_sizes(data, schema) if with_size else None
    out = {}
    for code, pbytes in partitions.items():
        mask = codes == code
        out[pbytes] = (int(mask.sum()), int(sizes[mask].sum()) if sizes is not None else 0)
    return out


def write_plan(options, known: Dict[bytes, int], postponed: Dict[bytes, int],
               stats: Dict[bytes, Tuple[int, int]], overwrite: bool) -> Dict[bytes, int]:
    """Every partition's bucket count for a fixed-bucket batch write with these per-partition
    ``stats`` (:func:`batch_stats`): as Paimon 2.0's Spark writer plans it."""
    plan = dict(known)
    for pbytes, (rows, size) in stats.items():
        if pbytes not in plan:
            plan[pbytes] = infer_write_buckets(options, rows, size, 0 if overwrite else postponed.get(pbytes, 0))
    return plan


def batch_fixed_bucket(table) -> bool:
    """A postpone table written into real buckets (``postpone.batch-write-fixed-bucket``)."""
    return (table.schema.is_primary_key_table and table.options.bucket == POSTPONE_BUCKET
            and bool(table.options.get("postpone.batch-write-fixed-bucket")))
