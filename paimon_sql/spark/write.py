"""Plan a distributed write: bring each bucket's rows to one task, then the paimon data source.

A primary-key bucket must be written by one task (its sequence numbers continue one counter), so
fixed-bucket tables get a bucket column computed by Paimon's hash in a vectorized ``mapInArrow``
and are repartitioned by (partition, bucket). Dynamic-bucket tables are repartitioned by partition
(one task owns a partition's key→bucket index). Append tables without buckets on a local warehouse
are written by Spark's own Parquet writer (:mod:`.native_write`); others as they are.
"""

from __future__ import annotations

import json
from typing import Optional

import pyarrow as pa
from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import IntegerType, StructField, StructType

from paimon_sql.format import binary_row
from paimon_sql.spark import native_write
from paimon_sql.spark.source import BUCKET_COLUMN, ROWKIND_COLUMN
from paimon_sql.table.paths import MAIN_BRANCH


def _with_bucket(df: DataFrame, table) -> DataFrame:
    keys = table.schema.bucket_keys
    types = [f.type for f in table.schema.fields_of(keys)]
    buckets = table.options.bucket
    arrow_types = {f.name: f.type.to_arrow() for f in table.schema.fields_of(keys)}

    def add_bucket(batches):
        for batch in batches:
            cols = [batch.column(k).cast(arrow_types[k]) for k in keys]
            b = binary_row.bucket_of(binary_row.hash_rows(cols, types), buckets)
            yield batch.append_column(BUCKET_COLUMN, pa.array(b, pa.int32()))

    schema = StructType(df.schema.fields + [StructField(BUCKET_COLUMN, IntegerType(), False)])
    return df.mapInArrow(add_bucket, schema)


def write_dataframe(df: DataFrame, table, warehouse: str, overwrite: bool = False,
                    partition_spec: Optional[dict] = None, dynamic: bool = False, options: Optional[dict] = None):
    """Write ``df`` (columns named and ordered as the table's) into ``table`` as one snapshot."""
    if native_write.eligible(table) and ROWKIND_COLUMN not in df.columns:
        return native_write.write(df, table, overwrite, partition_spec, dynamic)
    schema = table.schema
    parts = [F.col(f"`{k}`") for k in schema.partition_keys]
    if table.options.bucket > 0:
        df = _with_bucket(df, table)
        df = df.repartition(*parts, F.col(BUCKET_COLUMN))
    elif schema.is_primary_key_table:
        df = df.repartition(*parts) if parts else df.coalesce(1)
    writer = df.write.format("paimon").option("warehouse", warehouse).options(**(options or {}))
    if partition_spec:
        writer = writer.option("paimon.overwrite-partition", json.dumps(partition_spec))
    if dynamic:
        writer = writer.option("partitionOverwriteMode", "dynamic")
    if table.branch != MAIN_BRANCH:
        writer = writer.option("branch", table.branch)
    writer.mode("overwrite" if overwrite else "append").save(table.name)
