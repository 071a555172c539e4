"""Plan a distributed write: values stored as Spark stores them, each bucket's rows brought to one
task, then the paimon data source.

A value goes into a column as Spark's INSERT into its own tables puts it (:func:`assign`): ANSI
store assignment decides which casts are allowed, a number that does not fit fails the job,
CHAR(n)/VARCHAR(n) lengths are enforced and CHAR values padded, all as Spark column expressions.

A primary-key bucket must be written by one task (its sequence numbers continue one counter), so
fixed-bucket tables get a bucket column computed by Paimon's hash in a vectorized ``mapInArrow``
and are repartitioned by (partition, bucket). Dynamic-bucket tables are repartitioned by partition
(one task owns a partition's key→bucket index; with cross-partition upsert one task owns all).
Append tables without buckets on a local warehouse are written by Spark's own Parquet writer
(:mod:`.native_write`); others as they are.
"""

from __future__ import annotations

import json
import re
from typing import List, Optional

import numpy as np
import pyarrow as pa
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T
from pyspark.sql.types import IntegerType, StructField, StructType

from paimon_sql.data import binary_row
from paimon_sql.data.types import (MAX_LENGTH, ArrayType, AtomicType, DataField, DataType, MapType, MultisetType,
                                   paimon_type_from_sql)
from paimon_sql.exceptions import SchemaError
from paimon_sql.io.paths import MAIN_BRANCH
from paimon_sql.schema.schema_change import AddColumn
from paimon_sql.spark import local_write, native_write
from paimon_sql.spark.columns import BUCKET_COLUMN, ROWKIND_COLUMN
from paimon_sql.spark.types import can_store_assign, spark_datatype
from paimon_sql.write import postpone

MERGE_SCHEMA = "write.merge-schema"
PLANNED = "paimon.planned"  # a write this module planned: the DataFrame API hooks pass it to Spark as it is
EXPLICIT_CAST = "write.merge-schema.explicit-cast"


def option_enabled(table, key: str) -> bool:
    """Whether a boolean table option (or per-write option) is 'true'."""
    return table.options.raw.get(key, "false").lower() == "true"


def _sql(t: T.DataType) -> str:
    """A type as Spark's error messages quote it (``"DECIMAL(7,3)"``)."""
    return f'"{t.simpleString().upper()}"'


def assign(col: Column, source: T.DataType, field: DataField, table_name: str, any_cast: bool = False) -> Column:
    """``col`` (of Spark type ``source``) as stored into ``field`` by Spark's INSERT into its own tables,
    so that a Paimon table and a Spark table given the same statement agree: a cast ANSI store
    assignment refuses fails here, before any job (``any_cast`` allows it: explicit-cast); a number
    that does not fit fails the job; CHAR/VARCHAR values are fitted (:func:`_fit_strings`).
    Errors carry Spark's condition names."""
    target = _assignable(source, field, table_name, any_cast)
    out = col if source == target else _checked_cast(col, source, target, field.name)
    return _fit_strings(out, field.type).alias(field.name)


def assign_sql(column: Optional[str], source: T.DataType, field: DataField, table_name: str,
               any_cast: bool = False) -> Optional[str]:
    """:func:`assign` as a SQL expression over the plainly named ``column`` (None: a NULL of
    ``source`` NullType), for ``selectExpr``: one py4j call for a whole row of them where the
    Column API makes ~3 per column (a one-row INSERT's ~10 ms). None when it takes the Column API:
    a column or field name that is not plain, a nested type, a CHAR/VARCHAR(n), a collated string."""
    target = _assignable(source, field, table_name, any_cast)
    if not (_PLAIN.fullmatch(field.name) and (column is None or _PLAIN.fullmatch(column))
            and type(target) in _SQL_TYPES and (target == T.StringType() or not isinstance(target, T.StringType))
            and not _bounded(field.type)):
        return None
    ref, to = column or "NULL", target.simpleString()
    if source == target:
        value = ref
    elif isinstance(source, T.NumericType) and isinstance(target, T.NumericType):
        message = _overflow(source, target, field.name).replace("\\", "\\\\").replace("'", "\\'")
        value = (f"CASE WHEN {ref} IS NOT NULL AND TRY_CAST({ref} AS {to}) IS NULL THEN raise_error('{message}') "
                 f"ELSE CAST({ref} AS {to}) END")
    else:
        value = f"CAST({ref} AS {to})"
    return f"{value} AS `{field.name}`"


_PLAIN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_SQL_TYPES = (T.BooleanType, T.ByteType, T.ShortType, T.IntegerType, T.LongType, T.FloatType, T.DoubleType,
              T.DecimalType, T.StringType, T.BinaryType, T.DateType, T.TimestampType, T.TimestampNTZType)


def _assignable(source: T.DataType, field: DataField, table_name: str, any_cast: bool) -> T.DataType:
    """The Spark type of ``field``, once ANSI store assignment allows ``source`` into it."""
    target = spark_datatype(field.type)
    if not (any_cast or can_store_assign(source, target)):
        raise SchemaError(f"[INCOMPATIBLE_DATA_FOR_TABLE.CANNOT_SAFELY_CAST] Cannot write incompatible data for "
                          f"table {table_name}: cannot safely cast `{field.name}` {_sql(source)} to {_sql(target)}")
    return target


def _overflow(source: T.DataType, target: T.DataType, name: str) -> str:
    return (f"[CAST_OVERFLOW_IN_TABLE_INSERT] Fail to assign a value of {_sql(source)} type to the "
            f"{_sql(target)} type column `{name}` due to an overflow.")


def _checked_cast(col: Column, source: T.DataType, target: T.DataType, name: str) -> Column:
    """``col`` cast to ``target``; a number that does not fit fails the job (Spark's table insert
    does so whatever ``spark.sql.ansi.enabled`` says) rather than wrap or become NULL."""
    if not (isinstance(source, T.NumericType) and isinstance(target, T.NumericType)):
        return col.cast(target)
    fails = col.isNotNull() & col.try_cast(target).isNull()
    return F.when(fails, F.raise_error(F.lit(_overflow(source, target, name)))).otherwise(col.cast(target))


def _bounded(t: DataType) -> bool:
    """Whether ``t`` holds CHAR(n)/VARCHAR(n) values, at any depth (STRING is VARCHAR(MAX_LENGTH))."""
    if isinstance(t, AtomicType):
        return t.name in ("CHAR", "VARCHAR") and t.precision < MAX_LENGTH
    if isinstance(t, (ArrayType, MultisetType)):
        return _bounded(t.element)
    if isinstance(t, MapType):
        return _bounded(t.key) or _bounded(t.value)
    return any(_bounded(f.type) for f in t.fields)


def _fit_strings(col: Column, t: DataType) -> Column:
    """Spark's write-side CHAR/VARCHAR rule on every bounded string in ``col`` (nested ones too)."""
    if not _bounded(t):
        return col
    if isinstance(t, AtomicType):
        return _fit_length(col, t.precision, pad=t.name == "CHAR")
    if isinstance(t, ArrayType):
        return F.transform(col, lambda e: _fit_strings(e, t.element))
    if isinstance(t, MultisetType):
        return F.transform_keys(col, lambda k, _: _fit_strings(k, t.element))
    if isinstance(t, MapType):
        keyed = F.transform_keys(col, lambda k, _: _fit_strings(k, t.key))
        return F.transform_values(keyed, lambda _, v: _fit_strings(v, t.value))
    fields = [_fit_strings(col[f.name], f.type).alias(f.name) for f in t.fields]
    return F.when(col.isNull(), col).otherwise(F.struct(*fields))


def _fit_length(col: Column, n: int, pad: bool) -> Column:
    """A value longer than ``n`` fails the job unless the excess is trailing spaces, which are cut;
    CHAR values are padded to ``n`` (Spark stores them padded)."""
    error = f"[EXCEED_LIMIT_LENGTH] Exceeds char/varchar type length limitation: {n}."
    fitted = (F.when(col.isNull() | (F.length(col) <= n), col)
              .when(F.length(F.rtrim(col)) <= n, F.substring(col, 1, n))
              .otherwise(F.raise_error(F.lit(error))))
    return F.rpad(fitted, n, " ") if pad else fitted


def add_columns(table, columns: List[StructField]):
    """``write.merge-schema``: add source columns the table lacks (one schema change, as paimon-spark
    does; new columns are nullable and read NULL in older rows). Returns the table at its new schema
    with the same per-write options."""
    if not columns:
        return table
    schema = table.schema_manager.commit_changes(
        [AddColumn(c.name, paimon_type_from_sql(c.dataType.simpleString())) for c in columns])
    return table.with_schema(schema).copy(table.dynamic_options)


def merge_schema(table, schema: StructType):
    """The table the DataFrame API writes ``schema`` into: with ``write.merge-schema`` (a table or
    write option) its columns the table lacks are added first (not the planner's own bucket and
    row-kind columns); otherwise the table as it is."""
    if not option_enabled(table, MERGE_SCHEMA):
        return table
    known = {n.lower() for n in table.schema.field_names} | {BUCKET_COLUMN.lower(), ROWKIND_COLUMN.lower()}
    return add_columns(table, [f for f in schema.fields if f.name.lower() not in known])


def _with_bucket(df: DataFrame, table, plan: Optional[dict] = None) -> DataFrame:
    """``df`` with each row's bucket (``plan``: a postpone table's bucket count per partition)."""
    keys = table.schema.bucket_keys
    types = [f.type for f in table.schema.fields_of(keys)]
    buckets = table.options.bucket
    arrow_types = {f.name: f.type.to_arrow() for f in table.schema.fields_of(keys)}
    table_schema = table.schema

    def add_bucket(batches):
        for batch in batches:
            cols = [batch.column(k).cast(arrow_types[k]) for k in keys]
            counts = buckets
            if plan is not None:
                codes, partitions = postpone.partition_groups(pa.Table.from_batches([batch]), table_schema)
                counts = np.empty(batch.num_rows, np.int64)
                for code, pbytes in partitions.items():
                    counts[codes == code] = plan.get(pbytes, 1)
            b = binary_row.bucket_of(binary_row.hash_rows(cols, types), counts)
            yield batch.append_column(BUCKET_COLUMN, pa.array(b, pa.int32()))

    schema = StructType(df.schema.fields + [StructField(BUCKET_COLUMN, IntegerType(), False)])
    return df.mapInArrow(add_bucket, schema)


def distribute(df: DataFrame, table) -> DataFrame:
    """``df`` brought to the tasks that may write it: each fixed bucket's rows to one task (with the
    bucket column the writer drops), a dynamic-bucket table's rows by partition (all to one task when
    a key may move between partitions: it owns the global key index); append tables without
    buckets as they are. Works on streaming DataFrames too."""
    parts = [] if table.schema.cross_partition_update else [F.col(f"`{k}`") for k in table.schema.partition_keys]
    if table.options.bucket > 0:
        return _with_bucket(df, table).repartition(*parts, F.col(BUCKET_COLUMN))
    plan = postpone.decode_plan(table.options.raw.get(postpone.PLAN_OPTION))
    if plan and postpone.batch_fixed_bucket(table):  # a postpone table's batch write: planned buckets
        return _with_bucket(df, table, plan).repartition(*parts, F.col(BUCKET_COLUMN))
    if table.schema.is_primary_key_table:
        return df.repartition(*parts) if parts else df.coalesce(1)
    return df


def postpone_plan(df: DataFrame, table, overwrite: bool) -> dict:
    """A postpone table's bucket count per partition for a batch write of ``df`` into real buckets
    (:mod:`paimon_sql.write.postpone`): a partition with real buckets keeps its count; a new one's
    is inferred from its rows in ``df`` (one Spark job summing rows and sizes per partition), as
    paimon-spark's writer does before it writes."""
    known, postponed = postpone.bucket_metadata(table, table.snapshot_manager.latest_id())
    if not table.schema.partition_keys and known:
        return known
    schema = table.schema
    with_size = table.options.get("postpone.target-row-num-per-bucket") is None
    out = StructType([StructField("p", T.BinaryType(), False), StructField("n", T.LongType(), False),
                      StructField("s", T.LongType(), False)])

    def stats(batches):
        for batch in batches:
            got = postpone.batch_stats(pa.Table.from_batches([batch]), schema, with_size)
            yield pa.RecordBatch.from_pydict({"p": list(got), "n": [v[0] for v in got.values()],
                                              "s": [v[1] for v in got.values()]},
                                             schema=pa.schema([("p", pa.binary()), ("n", pa.int64()),
                                                               ("s", pa.int64())]))

    totals = {}
    for row in df.mapInArrow(stats, out).groupBy("p").agg(F.sum("n").alias("n"), F.sum("s").alias("s")).collect():
        totals[bytes(row["p"])] = (int(row["n"]), int(row["s"]))
    return postpone.write_plan(table.options, known, postponed, totals, overwrite)


def location_options(table, warehouse: Optional[str]) -> dict:
    """The ``paimon`` source's options naming ``table``: its warehouse, or (a table loaded by
    location) none, and its branch."""
    out = {"warehouse": warehouse} if warehouse else {}
    if table.branch != MAIN_BRANCH:
        out["branch"] = table.branch
    return out


def source_name(table, warehouse: Optional[str]) -> str:
    """What ``save()``/``start()`` is given: ``db.t`` in a warehouse, else the table's location."""
    return table.name if warehouse else table.path


def write_dataframe(df: DataFrame, table, warehouse: Optional[str], overwrite: bool = False,
                    partition_spec: Optional[dict] = None, dynamic: bool = False, options: Optional[dict] = None,
                    local: bool = False):
    """Write ``df`` (columns named and ordered as the table's) into ``table`` as one snapshot;
    ``warehouse`` None: the table was loaded by its location. ``local``: ``table`` carries every
    option of the write (``options`` only name its catalog), so a few rows already on the driver
    may be written there (:mod:`paimon_sql.spark.local_write`)."""
    if local and not postpone.batch_fixed_bucket(table):
        rows = local_write.driver_rows(df, table)
        if rows is not None:
            return local_write.write(merge_schema(table, df.schema), rows, overwrite, partition_spec, dynamic)
    if native_write.eligible(table) and ROWKIND_COLUMN not in df.columns:
        return native_write.write(df, table, overwrite, partition_spec, dynamic)
    persisted = None
    try:
        if postpone.batch_fixed_bucket(table):  # every task must hash a partition into the same count
            persisted = df = df.persist()  # planned and written from the same rows, as paimon-spark
            plan = postpone_plan(df, table, overwrite)
            options = {**(options or {}), postpone.PLAN_OPTION: postpone.encode_plan(plan)}
            table = table.copy({postpone.PLAN_OPTION: options[postpone.PLAN_OPTION]})
        _save(df, table, warehouse, overwrite, partition_spec, dynamic, options)
    finally:
        if persisted is not None:
            persisted.unpersist()


def _save(df: DataFrame, table, warehouse: Optional[str], overwrite: bool, partition_spec: Optional[dict],
          dynamic: bool, options: Optional[dict]) -> None:
    writer = distribute(df, table).write.format("paimon").options(**(options or {}))
    writer = writer.options(**location_options(table, warehouse)).option(PLANNED, "true")
    if partition_spec:
        # DECIMAL/DATE literals as text: the commit casts the spec to the partition types again
        writer = writer.option("paimon.overwrite-partition", json.dumps(partition_spec, default=str))
    if dynamic:
        writer = writer.option("partitionOverwriteMode", "dynamic")
    writer.mode("overwrite" if overwrite else "append").save(source_name(table, warehouse))


def by_name(df: DataFrame, table, case_sensitive: bool = False) -> DataFrame:
    """``df``'s columns matched to the table's by name, as Spark's DataFrame writes to a v2 table
    match them, and stored as its INSERT stores them (:func:`assign`). With ``write.merge-schema``
    the caller added the data's new columns first; otherwise a column the table lacks fails. A
    table column the data lacks is NULL, as paimon-spark's output resolver fills it (a NOT NULL
    column then fails as INSERT's NULL would)."""
    fold = (lambda n: n) if case_sensitive else str.lower
    columns = {fold(f.name): f for f in df.schema.fields}
    if len(columns) < len(df.schema.fields):
        raise SchemaError(f"[INCOMPATIBLE_DATA_FOR_TABLE.AMBIGUOUS_COLUMN_NAME] Cannot write to {table.name}: "
                          f"the data has columns of the same name ({', '.join(df.columns)})")
    extra = sorted(set(columns) - {fold(n) for n in table.schema.field_names})
    if extra:
        names = ", ".join(columns[c].name for c in extra)
        raise SchemaError(f"[INCOMPATIBLE_DATA_FOR_TABLE.EXTRA_COLUMNS] Cannot write to {table.name}: unknown "
                          f"column(s) {names} (set '{MERGE_SCHEMA}' = 'true' to add them)")
    any_cast = option_enabled(table, MERGE_SCHEMA) and option_enabled(table, EXPLICIT_CAST)
    return df.select(*[assign(F.col(f"`{columns[fold(f.name)].name}`"), columns[fold(f.name)].dataType, f, table.name,
                              any_cast) if fold(f.name) in columns
                       else assign(F.lit(None), T.NullType(), f, table.name, any_cast)
                       for f in table.schema.fields])
