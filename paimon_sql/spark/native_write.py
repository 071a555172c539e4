"""INSERT into a bucket-unaware append table by Spark's own Parquet writer (in the JVM).

Handing rows to Python writer tasks costs ~2x a native Spark write (DESIGN.md §4), and an append
table without buckets needs none of our per-row work (no keys, no buckets, no sequence column).
So Spark writes the files into a staging directory of the table — one subdirectory per partition,
keyed by a hash of the partition columns, which stay in the files as Paimon wants — and the driver
then turns each file into a Paimon data file: it reads the footer (row count, per-column min/max
and null counts, the partition's values), moves the file to ``<partition>/bucket-0/data-*.parquet``
and commits all of them as one snapshot. A failed job or commit leaves nothing behind.

Used for local warehouses and plain column types (numbers, decimals, dates, strings, binary);
anything else goes through the ``paimon`` data source. Nested columns must: Spark's Parquet writer
stamps a field id (``parquet.field.id``) only on a StructField, so it cannot give an ARRAY's element
or a MAP's key and value the ids Java's writer gives them (``write.file_writer.element_id``).
"""

from __future__ import annotations

import datetime as dt
import os
import shutil
import uuid
from typing import Dict, List, Optional

import pyarrow.parquet as pq
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from paimon_sql.data import binary_row, stats
from paimon_sql.exceptions import PaimonError
from paimon_sql.format.file_format import parquet_footer_stats
from paimon_sql.index.file_index import indexed_columns
from paimon_sql.manifest.manifest_file import FILE_SOURCE_APPEND, DataFileMeta
from paimon_sql.options.iceberg_options import iceberg_options
from paimon_sql.write.commit_message import CommitMessage

_PARTITION_DIR = "__paimon_partition"


def eligible(table) -> bool:
    o = table.options
    return (not table.schema.is_primary_key_table and o.bucket == -1 and table.io.scheme == ""
            and o.file_format == "parquet" and o.get("data-file.prefix") == "data-"
            and stats.footer_stats_match(table.schema.fields)
            and not indexed_columns(table.schema.options)  # file indexes are built from Arrow rows
            and iceberg_options(table.schema.options) is None)  # Iceberg readers need our files' field ids


def write(df: DataFrame, table, overwrite: bool, partition_spec: Optional[dict], dynamic: bool) -> None:
    """Write ``df`` (the table's columns, already cast) as one APPEND or OVERWRITE snapshot."""
    table.schema.check_writable(table.name)
    keys = table.schema.partition_keys
    for f in table.schema.fields:
        if not f.type.nullable:  # Spark casts never check NOT NULL: fail the job with our message
            df = df.withColumn(f.name, F.when(F.col(f"`{f.name}`").isNull(), F.raise_error(F.lit(
                f"column '{f.name}' is NOT NULL but the data has null value(s)"))).otherwise(F.col(f"`{f.name}`")))
    # each column's Paimon field id in the files (PARQUET:field_id), as Java's writer stores them:
    # Iceberg readers find columns by id, also once 'metadata.iceberg.storage' is turned on later
    df = df.select(*[F.col(f"`{f.name}`").alias(f.name, metadata={"parquet.field.id": f.id})
                     for f in table.schema.fields])
    staging = f"{table.path}/.staging-{uuid.uuid4()}"
    writer = df
    if keys:
        writer = df.withColumn(_PARTITION_DIR, F.xxhash64(*[F.col(f"`{k}`") for k in keys]))
    out = writer.write.mode("overwrite").option("compression", table.options.file_compression)
    # decimals as Java Paimon stores them (INT32 / INT64 up to precision 18), whatever the session's
    # spark.sql.parquet.writeLegacyFormat says: Spark reads this write option before the session's
    out = out.option("spark.sql.parquet.writeLegacyFormat", "false")
    # parquet-mr reads its own keys (bloom filters, dictionary...) from the write options, and zstd's
    # level from file.compression.zstd-level unless they give one, as in Paimon (parquet-mr's own default is 3)
    out = out.option("parquet.compression.codec.zstd.level", str(table.options.get("file.compression.zstd-level")))
    out = out.options(**{k: v for k, v in table.schema.options.items() if k.startswith("parquet.")})
    if keys:
        out = out.partitionBy(_PARTITION_DIR)
    moved: List[str] = []
    try:
        out.parquet(staging)
        messages = _adopt(table, staging, moved)
        commit = table.new_commit().with_operation("OVERWRITE" if overwrite else "WRITE")
        if overwrite:
            dyn = dynamic and not partition_spec and bool(keys)
            commit.overwrite(messages, partition=partition_spec, dynamic=dyn)
        else:
            commit.commit(messages)
    except BaseException:
        for path in moved:
            table.io.delete(path)
        raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _adopt(table, staging: str, moved: List[str]) -> List[CommitMessage]:
    """Each staged Parquet file → a data file of its partition (footer stats, sequence numbers).
    Each Spark task is a writer of its own, which counts from 0 as Java's unaware-bucket append
    writer does (it ignores earlier files; with row tracking the commit stamps the snapshot id)."""
    schema = table.schema
    part_fields = schema.fields_of(schema.partition_keys)
    part_types = [f.type for f in part_fields]
    messages: Dict[bytes, CommitMessage] = {}
    mode = table.options.stats_mode
    for root, _, names in os.walk(staging):
        for name in sorted(n for n in names if n.endswith(".parquet")):
            path = os.path.join(root, name)
            meta = pq.read_metadata(path)
            if meta.num_rows == 0:
                continue
            _check_decimals(meta, schema.fields, name)
            mins, maxs, nulls = parquet_footer_stats(meta, schema.field_names)
            by_name = dict(zip(schema.field_names, zip(mins, maxs, nulls)))
            pvals = []
            for f in part_fields:
                lo, hi, n = by_name[f.name]
                if n not in (0, meta.num_rows) or lo != hi:
                    raise PaimonError(f"staged file {name} holds several partitions of {table.name}")
                pvals.append(None if n == meta.num_rows else lo)
            pbytes = binary_row.to_bytes(pvals, part_types)
            file_name = table.paths.new_data_file_name()
            target = table.paths.data_file_path(pvals, 0, file_name)
            table.io.mkdirs(target.rsplit("/", 1)[0])
            os.rename(path, target)
            moved.append(target)
            msg = messages.setdefault(pbytes, CommitMessage(pbytes, 0, table.options.bucket))
            msg.new_files.append(DataFileMeta(
                file_name=file_name, file_size=os.path.getsize(target), row_count=meta.num_rows,
                min_key=binary_row.empty_row(), max_key=binary_row.empty_row(), key_stats=stats.EMPTY_STATS,
                value_stats=stats.encode(schema.fields, mins, maxs, nulls, mode),
                min_sequence_number=0, max_sequence_number=meta.num_rows - 1, schema_id=schema.id,
                level=0, extra_files=(), creation_time=dt.datetime.now(dt.timezone.utc).replace(microsecond=0),
                delete_row_count=0, embedded_index=None, file_source=FILE_SOURCE_APPEND, value_stats_cols=None,
                external_path=None))
    return list(messages.values())


def _check_decimals(meta, fields, name: str) -> None:
    """Refuse a staged file whose small decimals are not INT32 / INT64 as Java Paimon stores them
    (a Spark that ignored the writeLegacyFormat write option): Paimon 1.0 could not read it."""
    physical = {meta.schema.column(i).name: meta.schema.column(i).physical_type for i in range(meta.num_columns)}
    for f in fields:
        if f.type.name == "DECIMAL" and f.type.precision <= 18 and physical[f.name] not in ("INT32", "INT64"):
            raise PaimonError(f"staged file {name} stores DECIMAL column '{f.name}' as {physical[f.name]}, "
                              "not as Java Paimon does: set spark.sql.parquet.writeLegacyFormat=false")
