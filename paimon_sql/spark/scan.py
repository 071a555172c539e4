"""A table scan as a Spark DataFrame.

Splits that need no merge (append files; primary-key buckets whose files do not overlap) in
Parquet of the current schema on a local warehouse are read by Spark's native Parquet reader —
with its own projection and filter pushdown — keeping only +I/+U rows of primary-key files (a
filter needless when every file sits at the max level, where compaction dropped retractions) and
dropping rows deleted by deletion vectors (by file and row index: paimon-sql's JVM class in the
scan's stage, else an anti-join). The
other splits go through the ``paimon`` Python data source. The two halves are unioned.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from functools import partial
from typing import Dict, List, NamedTuple, Optional

import numpy as np
import pyarrow as pa
import pyarrow.fs as pafs
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from paimon_sql.data import binary_row
from paimon_sql.data import predicate as P
from paimon_sql.data.types import MAX_LENGTH, AtomicType
from paimon_sql.format.file_format import check_size
from paimon_sql.io.paths import MAIN_BRANCH
from paimon_sql.mergetree.levels import num_levels
from paimon_sql.read import data_evolution, file_skipping, merge_vectors, metadata_columns
from paimon_sql.read.scan import PlanStats
from paimon_sql.schema.table_schema import VALUE_KIND
from paimon_sql.spark import driver_read, jvm_classes
from paimon_sql.spark.types import spark_ddl, spark_type, to_spark_arrow
from paimon_sql.table import fallback_read
from paimon_sql.table import unserved_features
from paimon_sql.table.object_table import ObjectTable


def native_readable(table, split) -> bool:
    """Whether Spark's Parquet reader can read this split as it stands on disk."""
    if data_evolution.enabled(table) and len(data_evolution.row_id_groups(split.files, table.name)) < len(split.files):
        return False  # row id groups of several files are merged column by column
    return split.raw_convertible and _files_readable(table, split.files)


def _files_readable(table, files) -> bool:
    """Whether Spark's Parquet reader can read these files as they are. A file whose stats leave
    out a partition column may not hold it (one migrate_table adopted from a Hive layout): the
    paimon source reads it, filling the column from the partition."""
    keys = set(table.schema.partition_keys)
    return table.io.scheme == "" and all(
        f.file_name.endswith(".parquet") and f.schema_id == table.schema.id and f.external_path is None
        and (f.value_stats_cols is None or keys <= set(f.value_stats_cols)) for f in files)


class VectorCap(NamedTuple):
    """How many deleted positions, in how many files with vectors, one native read takes in all;
    splits past that (a merge-on-write table after many updates) are read by the paimon source,
    whose Arrow reader drops deleted rows as it decodes."""
    positions: int
    files: int

    def text(self) -> str:  # as the paimon source is told it (``paimon.skip-native``)
        return f"{self.positions},{self.files}"

    @classmethod
    def parse(cls, text: Optional[str]) -> Optional["VectorCap"]:
        parts = (text or "").split(",")
        return cls(int(parts[0]), int(parts[1])) if len(parts) == 2 and all(p.isdigit() for p in parts) else None


BROADCAST_CAP = VectorCap(500_000, 64)  # the anti-join's broadcast (3M positions ran a 1 GB driver out of heap)
UDF_CAP = VectorCap(10_000_000, 4096)  # paimon-sql's UDF: a Spark broadcast variable of the Roaring bitmaps


def _within(cap: VectorCap, splits, before=()) -> list:
    """``splits`` in order, each taken while the deleted positions and files with vectors of those
    taken, added to ``before``'s, stay within ``cap``."""
    positions = sum(len(dv) for s in before for _, dv in s.deletion_vectors)
    files = sum(len(s.deletion_vectors) for s in before)
    out = []
    for s in splits:
        n, k = sum(len(dv) for _, dv in s.deletion_vectors), len(s.deletion_vectors)
        if positions + n > cap.positions or files + k > cap.files:
            continue
        positions, files = positions + n, files + k
        out.append(s)
    return out


def native_splits(table, splits, cap: VectorCap) -> list:
    """The splits Spark's Parquet reader takes; the paimon source reads the others, deciding the same
    way from the same plan and ``cap`` (passed to it as ``paimon.skip-native``)."""
    return _within(cap, [s for s in splits if native_readable(table, s)])


def merged_natively(table, splits, native, cap: VectorCap) -> list:
    """Merge splits Spark's Parquet reader takes too, as deletion vectors of the rows merging drops
    (:mod:`paimon_sql.read.merge_vectors`), while ``cap`` lasts beside ``native``'s own vectors.
    The paimon source is told their buckets (``paimon.merged-natively``)."""
    candidates = [s for s in splits if merge_vectors.applies(table, s) and _files_readable(table, s.files)]
    if not candidates:
        return []
    with ThreadPoolExecutor(max_workers=4) as pool:  # Arrow reads and sorts release the GIL
        vectored = list(pool.map(partial(merge_vectors.as_vectors, table), candidates))
    return _within(cap, vectored, before=native)


def split_key(split) -> tuple:
    return split.partition, split.bucket, tuple(f.file_name for f in split.files)


def _located(df: DataFrame) -> DataFrame:
    """A native read with each row's file name, file size and row index (Spark's ``_metadata`` of
    the Parquet relation, which no projection above it passes on)."""
    return df.select("*", F.col("_metadata.file_name").alias(_FILE_NAME), F.col("_metadata.file_size").alias(_FILE_SIZE),
                     F.col("_metadata.row_index").alias(_ROW))


def _distinct_sizes(files: list) -> List[list]:
    """Files with deleted rows, (path, file meta), as reads whose files all differ in size, for the
    UDF knows a row's file by its size: the n-th file of each size goes to the n-th read."""
    reads: List[list] = []
    seen: Dict[int, int] = {}
    for path, f in files:
        n = seen[f.file_size] = seen.get(f.file_size, -1) + 1
        if n == len(reads):
            reads.append([])
        reads[n].append((path, f))
    return reads


def _parts(files: list, marked: dict, deleting: List[list], in_scan: bool) -> List[list]:
    """The native reads of ``files`` ((path, file meta)): ``deleting``, the reads of the files with
    deleted rows, and the files without any. Those are read apart from them — no row locations, no
    vectors for their rows — unless they are few (:data:`_JOINED_ROWS`): then they join the first
    read of deleted rows, where their sizes are not its files' (the JVM class knows a row's file by
    its size). One read is one Parquet scan to plan, broadcast and compile (a served point query's
    two scans cost more than the rows they read)."""
    plain = [(p, f) for p, f in files if f.file_name not in marked]
    if not (in_scan and deleting and deleting[0]) or sum(f.row_count for _, f in plain) > _JOINED_ROWS:
        return [plain] + deleting
    sizes = {f.file_size for _, f in deleting[0]}
    apart = [(p, f) for p, f in plain if f.file_size in sizes]
    return [apart, deleting[0] + [(p, f) for p, f in plain if f.file_size not in sizes]] + deleting[1:]


_JOINED_ROWS = 1_000_000  # rows without deletes a read of deleted rows takes in


def _without_deleted(spark: SparkSession, df: DataFrame, vectors: List[tuple]) -> DataFrame:
    """The deletion ``vectors`` ((file meta, bitmap) of each file read) applied to their native
    Parquet read (:func:`_located`): in the scan's own stage by paimon-sql's JVM class
    (:func:`jvm_classes.without_deleted`, each row's file known by its size), else by an anti-join
    against the deleted positions, broadcast (they are few next to the rows), on one BIGINT key — the
    file's number in this read shifted left 40 bits plus the row index — for Spark's long-keyed hash
    join is much cheaper per row than one keyed on (file name, row index) (1.8x vs 2.6x a plain scan
    at 1% deleted)."""
    inside = jvm_classes.without_deleted(spark, df, F.col(_FILE_SIZE), F.col(_ROW),
                                         [(f.file_size, bitmap) for f, bitmap in vectors])
    if inside is not None:
        return inside
    file_name = F.col(_FILE_NAME)
    number = F.when(file_name == vectors[0][0].file_name, F.lit(0))
    for i, (f, _) in enumerate(vectors[1:], 1):
        number = number.when(file_name == f.file_name, F.lit(i))
    key = F.shiftleft(number.otherwise(F.lit(-1)).cast("long"), _ROW_BITS) + F.col(_ROW)
    keys = np.concatenate([(np.int64(i) << _ROW_BITS) + np.asarray(bitmap.to_array(), dtype=np.int64)
                           for i, (_, bitmap) in enumerate(vectors)])
    deleted = spark.createDataFrame(pa.table({_KEY: pa.array(keys)}))
    return df.select("*", key.alias(_KEY)).join(F.broadcast(deleted), on=[_KEY], how="left_anti").drop(_KEY)


def _with_metadata(spark: SparkSession, df: DataFrame, splits, paths: List[str], names: List[str]) -> DataFrame:
    """A native read (:func:`_located`) with the metadata columns ``names``: the row index is
    Spark's; file path and bucket come by file name from a broadcast table of the read's files."""
    out = df.withColumn(metadata_columns.ROW_INDEX, F.col(_ROW))
    if metadata_columns.FILE_PATH in names or metadata_columns.BUCKET in names:
        files = pa.table({_FILE_NAME: [f.file_name for s in splits for f in s.files],
                          metadata_columns.FILE_PATH: paths,
                          metadata_columns.BUCKET: pa.array([s.bucket for s in splits for _ in s.files], pa.int32())})
        out = out.join(F.broadcast(spark.createDataFrame(files)), on=_FILE_NAME)
    return out


_FILE_NAME, _FILE_SIZE, _ROW = "__paimon_file_name", "__paimon_file_size", "__paimon_row"
_KEY, _ROW_BITS = "__paimon_dv_key", 40  # row positions below 2^40 per file


def _read_time_skipping(table, splits, predicate):
    """Native splits less the files their ``.index`` files / Parquet bloom filters rule out
    (checked on the driver, in threads: Spark's reader can't), and how many were dropped."""
    reader = table.new_scan().filter(predicate).reader()
    with ThreadPoolExecutor(max_workers=8) as pool:
        kept = list(pool.map(reader.files_to_read, splits))
    out = [replace(s, files=tuple(files), sections=tuple((f,) for f in files)) if s.sections else
           replace(s, files=tuple(files)) for s, files in zip(splits, kept) if files]
    return out, sum(len(s.files) for s in splits) - sum(len(f) for f in kept)


# whatever the session says, a damaged or vanished file fails the read instead of being skipped
_FAIL_ON_DAMAGE = {"ignoreCorruptFiles": "false", "ignoreMissingFiles": "false"}


# Parquet's readers compare doubles bit by bit: -0.0 is not in a dictionary or bloom filter that has
# 0.0, and a NaN is above the max pyarrow writes (which leaves NaN out); Spark's -0.0 = 0.0 and NaN > 1
_NO_ROW_GROUP_SKIPPING = {"parquet.filter.stats.enabled": "false", "parquet.filter.dictionary.enabled": "false",
                          "parquet.filter.bloom.enabled": "false"}


def _has_floats(t: pa.DataType) -> bool:
    """Whether a column holds doubles or floats: Spark's Parquet reader must not skip row groups by
    the file's own stats, dictionaries or bloom filters on them (written without NaN, and -0.0 apart
    from 0.0, where Spark's comparisons put NaN above every number and -0.0 equal to 0.0)."""
    if pa.types.is_floating(t):
        return True
    if pa.types.is_struct(t):
        return any(_has_floats(t.field(i).type) for i in range(t.num_fields))
    if pa.types.is_map(t):
        return _has_floats(t.key_type) or _has_floats(t.item_type)
    return pa.types.is_list(t) and _has_floats(t.value_type)


def _check_on_disk(io, paths: List[str], sizes: List[int]) -> None:
    """Every file exists with the size its manifest entry records: Spark's Parquet reader skips
    zero-byte files without a word (fewer rows), so the driver compares sizes first — one stat per
    file in one call (the native read is local-only: no object-store requests)."""
    for path, size, info in zip(paths, sizes, io.fs.get_file_info([io.arrow_path(p) for p in paths])):
        check_size(path, info.size if info.type != pafs.FileType.NotFound else None, size)


def _no_time_columns(fields) -> bool:
    return not any(isinstance(f.type, AtomicType) and f.type.name == "TIME" for f in fields)


@dataclass
class ScanReport:
    """What planning did for one table reference (EXPLAIN prints it)."""

    table: str
    snapshot_id: Optional[int]
    columns: List[str]
    predicate: Optional[P.Predicate]
    stats: PlanStats
    native_splits: int
    merge_splits: int
    files_skipped_at_read: Optional[int] = None  # by .index files / Parquet bloom filters (native reads)
    on_driver: bool = False  # a small filtered read (:mod:`paimon_sql.spark.driver_read`)

    def lines(self) -> List[str]:
        s = self.stats
        at_read = "" if self.files_skipped_at_read is None else \
            f", {self.files_skipped_at_read} more skipped by index files and Parquet bloom filters"
        return [f"paimon table {self.table} @ snapshot {self.snapshot_id}",
                f"  columns: {', '.join(self.columns)}",
                f"  pushed filter: {self.predicate.describe() if self.predicate else 'none'}",
                f"  manifests read: {s.manifests_read} of {s.manifests_total}",
                f"  files: {s.files_planned} planned of {s.files_total} "
                f"({s.files_after_partition} after partition pruning, {s.files_after_buckets} in the selected "
                f"buckets, {s.files_after_stats} after stats, "
                f"{s.files_planned} after file indexes in manifests{at_read})",
                f"  splits: {self.native_splits + self.merge_splits} read on the driver (a small filtered read)"
                if self.on_driver else
                f"  splits: {self.native_splits} read by Spark's Parquet reader, {self.merge_splits} merged"]


def source_reader(spark: SparkSession, table, warehouse: str, catalog_options: Optional[dict], snapshot):
    """A ``paimon`` source reader of ``table`` as the driver planned it: same branch, same
    dynamic options, pinned to the planned snapshot so executors read what the driver saw."""
    reader = spark.read.format("paimon").option("warehouse", warehouse).options(**(catalog_options or {}))
    reader = reader.options(**table.dynamic_options)
    if table.branch != MAIN_BRANCH:
        reader = reader.option("branch", table.branch)
    # pinned by an option of ours: ``scan.snapshot-id`` would also switch to that snapshot's schema
    return reader.option("paimon.snapshot-id", str(snapshot.id)) if snapshot is not None else reader


def scan_dataframe(spark: SparkSession, table, warehouse: str, columns: Optional[List[str]] = None,
                   predicate: Optional[P.Predicate] = None, catalog_options: Optional[dict] = None,
                   reports: Optional[List[ScanReport]] = None, read_optimized: bool = False,
                   reuse: Optional[OrderedDict] = None) -> DataFrame:
    """The rows of ``table`` (a time-travelled / branch / option-copied table reads as such);
    ``columns`` may name metadata columns (:mod:`paimon_sql.read.metadata_columns`). A table
    with a fallback or primary branch reads each partition from the branch that wins it.

    ``reuse``: DataFrames built before, by what they read (:func:`_reuse_key`). The scan is planned
    and its files checked every time; only building the DataFrame (~20 ms of py4j calls, a BI
    tool's repeated small query pays it each time) is skipped when the same files, snapshot, columns
    and options (and filter, where the ``paimon`` source reads part of the scan) were read before:
    data files never change, so the same plan reads the same rows. A DataFrame from here may then
    be shared: callers that persist it pass no ``reuse``."""
    branches = fallback_read.tables(table)
    if branches is not None:
        first, second = branches
        read = partial(scan_dataframe, spark, warehouse=warehouse, columns=columns, catalog_options=catalog_options,
                       reports=reports, read_optimized=read_optimized, reuse=reuse)
        more, second_predicate = fallback_read.second_read(first, second, predicate)
        out = read(first, predicate=predicate)
        return out.unionByName(read(second, predicate=second_predicate)) if more else out
    if isinstance(table, ObjectTable):  # Paimon 2.0's: the files under its location now, no snapshots
        return _listing(spark, table, columns)
    columns = list(columns) if columns is not None else table.schema.field_names
    hidden = {f.name for f in metadata_columns.fields(table.schema)}
    wanted_meta = [c for c in columns if c in hidden]
    data_columns = [c for c in columns if c not in hidden]
    if metadata_columns.PARTITION in wanted_meta:  # a ROW of the row's own partition columns
        data_columns += [k for k in table.schema.partition_keys if k not in data_columns]
    # rows are counted by some column: one paimon-sql reads, when the table has one
    data_columns = data_columns or (unserved_features.readable_columns(table) or table.schema.field_names)[:1]
    unserved_features.check_read(table, data_columns)
    scan = table.new_scan().select(data_columns).filter(predicate).with_read_optimized(read_optimized)
    fields = table.schema.fields_of(data_columns)
    plan = scan.plan()
    snapshot, splits = plan.snapshot, plan.splits
    read_meta = [c for c in wanted_meta if c != metadata_columns.PARTITION]  # what each read adds
    if metadata_columns.LOCATED & set(read_meta):
        metadata_columns.check_located(table, splits)
    if reuse is not None and not read_meta and not read_optimized and \
            driver_read.applies(splits, predicate, driver_read.byte_limit(spark)):
        key = _reuse_key(table, snapshot, columns, fields, predicate, read_optimized,
                         [f.file_name for s in splits for f in s.files], len(splits)) + ("on the driver",)
        rows = None if key in reuse else driver_read.read(scan, splits, fields)
        if key in reuse or rows is not None:
            if reports is not None:
                reports.append(ScanReport(table.name, snapshot.id if snapshot else None, columns, predicate,
                                          plan.stats, 0, len(splits), on_driver=True))
            if rows is None:
                reuse.move_to_end(key)
                return reuse[key]
            return _finished(driver_read.dataframe(spark, rows, fields), table, columns, fields, wanted_meta,
                             reuse, key, as_asked=data_columns == columns)
    # row ids come from each file's manifest entry (or the ids a compacted file holds): our reader
    native_ok = _no_time_columns(fields) and not set(metadata_columns.TRACKED) & set(read_meta)
    in_scan = jvm_classes.available(spark)  # deleted rows dropped by the UDF, else by an anti-join
    cap = UDF_CAP if in_scan else BROADCAST_CAP
    native = native_splits(table, splits, cap) if native_ok else []
    # read_meta's row index would be of the stored rows: a merge has none
    vectored = merged_natively(table, splits, native, cap) if native_ok and not read_meta else []
    native += vectored
    frames = []
    skipped, native_count = None, len(native)
    if native and file_skipping.applies(table, predicate):
        native, skipped = _read_time_skipping(table, native, predicate)
    part_types = [f.type for f in table.schema.fields_of(table.schema.partition_keys)]
    paths = [table.paths.data_file_path(binary_row.from_bytes(s.partition, part_types), s.bucket, f.file_name,
                                        f.external_path)
             for s in native for f in s.files]
    _check_on_disk(table.io, paths, [f.file_size for s in native for f in s.files])
    if reports is not None:
        reports.append(ScanReport(table.name, snapshot.id if snapshot else None, columns, predicate,
                                  plan.stats, native_count, len(splits) - native_count, skipped))
    # Spark's Parquet reader takes the filter from the query above it: a native-only read's DataFrame
    # depends on the filter only through the files it picked, so point queries on other keys of the
    # same buckets share it
    sourced = native_count < len(splits) or not native
    key = _reuse_key(table, snapshot, columns, fields, predicate if sourced else None, read_optimized, paths,
                     len(splits))
    if reuse is not None and key in reuse:
        reuse.move_to_end(key)
        return reuse[key]
    if native:
        # files at the max level come from compactions that dropped -U/-D rows, and a file whose
        # meta counts none holds none (Paimon's deleteRowCount; None from old writers): no kind filter
        max_level = num_levels(table.options) - 1
        kind_filter = table.schema.is_primary_key_table and not any(s.keep_retractions for s in native) \
            and any(f.level < max_level and f.delete_row_count != 0 for s in native for f in s.files)
        ddl = spark_ddl(list(fields)) + (f", `{VALUE_KIND}` TINYINT" if kind_filter else "")
        reader = spark.read.schema(ddl).options(**_FAIL_ON_DAMAGE)
        if any(_has_floats(t) and not pa.types.is_floating(t) for t in (f.type.to_arrow() for f in fields)):
            reader = reader.options(**_NO_ROW_GROUP_SKIPPING)  # a nested one: no skipping at all
        # a float column read as itself times one (exact, NaN and -0.0 too), which Spark does not push into
        # the reader: filters on the other columns still skip row groups
        unpushed = {f.name: (F.col(f"`{f.name}`") * F.lit(1.0).cast(spark_type(f.type))).alias(f.name)
                    for f in fields if pa.types.is_floating(f.type.to_arrow())}
        marked = {name: bitmap for s in native for name, bitmap in s.deletion_vectors}
        files = list(zip(paths, (f for s in native for f in s.files)))
        # files without deleted rows are read apart from those with some unless few (_parts)
        with_deletes = [(p, f) for p, f in files if f.file_name in marked]
        parts = _parts(files, marked, _distinct_sizes(with_deletes) if in_scan else [with_deletes], in_scan)
        for i, part in enumerate(parts):
            if not part:
                continue
            deletes = any(f.file_name in marked for _, f in part)
            df = reader.parquet(*[p for p, _ in part])
            if kind_filter:
                df = df.where(f"`{VALUE_KIND}` IN (0, 2)")
            if deletes or read_meta:
                df = _located(df)
            if deletes:
                df = _without_deleted(spark, df, [(f, marked[f.file_name]) for _, f in part if f.file_name in marked])
            if read_meta:
                df = _with_metadata(spark, df, native, paths, read_meta)
            frames.append(df.select(*[unpushed.get(c, f"`{c}`") for c in data_columns + read_meta]))
    if sourced:
        reader = source_reader(spark, table, warehouse, catalog_options, snapshot)
        reader = reader.option("paimon.columns", json.dumps(data_columns)).option("paimon.filter", P.to_json(predicate))
        if native_count:
            reader = reader.option("paimon.skip-native", cap.text())
        if vectored:
            reader = reader.option("paimon.merged-natively", json.dumps([[s.partition.hex(), s.bucket]
                                                                         for s in vectored]))
        if read_optimized:
            reader = reader.option("paimon.read-optimized", "true")
        if read_meta:
            reader = reader.option("paimon.metadata", json.dumps(read_meta))
        frames.append(reader.load(table.name))
    out = frames[0]
    for f in frames[1:]:
        out = out.unionByName(f)
    return _finished(out, table, columns, fields, wanted_meta, reuse, key)


def _finished(out: DataFrame, table, columns: List[str], fields, wanted_meta: List[str],
              reuse: Optional[OrderedDict], key: tuple, as_asked: bool = False) -> DataFrame:
    """A scan's rows as asked for: ``columns`` in order (with ``__paimon_partition`` made from the
    partition columns), CHAR/VARCHAR marked; kept in ``reuse`` under ``key``. ``as_asked``: ``out``
    has exactly ``columns`` already (a select costs a py4j call per column)."""
    if metadata_columns.PARTITION in wanted_meta:
        out = out.withColumn(metadata_columns.PARTITION, F.struct(*[F.col(f"`{k}`") for k in table.schema.partition_keys]))
    out = _char_types(out if as_asked else out.select(*[f"`{c}`" for c in columns]), fields)
    if reuse is not None:
        reuse[key] = out
        while len(reuse) > _REUSED_SCANS:
            reuse.popitem(last=False)
    return out


def _listing(spark: SparkSession, table: ObjectTable, columns: Optional[List[str]]) -> DataFrame:
    """An object table's rows as a DataFrame of ``columns`` (at least one, so rows are counted)."""
    fields = table.schema.fields_of([c for c in columns or () if c in table.schema.field_names]) or \
        table.schema.fields[:1 if columns is not None else None]
    data = to_spark_arrow(table.listing([f.name for f in fields]), fields)
    return spark.createDataFrame(data if data.num_rows else [], schema=spark_ddl(fields))


_REUSED_SCANS = 64  # per session: DataFrames of this many recent scans are kept for reuse


def _reuse_key(table, snapshot, columns, fields, predicate, read_optimized: bool, paths: List[str],
               splits: int) -> tuple:
    """Everything a scan's DataFrame is built from: the table's files at one snapshot (and which
    of them Spark reads itself), its schema (by id, and the types read: a table dropped and made
    again at the same place starts at schema 0 again) and per-read options, the columns and the
    filter."""
    return (table.path, table.branch, snapshot.id if snapshot else None, table.schema.id, spark_ddl(list(fields)),
            tuple(sorted(table.dynamic_options.items())), tuple(columns), P.to_json(predicate), read_optimized,
            tuple(paths), splits)



def _char_types(df: DataFrame, fields) -> DataFrame:
    """CHAR(n) / VARCHAR(n) columns marked as Spark marks its own (a STRING with the declared type
    in its metadata), so Spark pads CHAR literals in comparisons as it does for its tables."""
    declared = {f.name: f"{f.type.name.lower()}({f.type.args[0]})" for f in fields
                if isinstance(f.type, AtomicType) and f.type.name in ("CHAR", "VARCHAR")
                and f.type.args and f.type.args[0] != MAX_LENGTH}
    if not declared:
        return df
    return df.select(*[F.col(f"`{c}`").alias(c, metadata={"__CHAR_VARCHAR_TYPE_STRING": declared[c]})
                       if c in declared else F.col(f"`{c}`") for c in df.columns])
