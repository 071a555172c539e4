"""A table scan as a Spark DataFrame.

Splits that need no merge (append files; primary-key buckets whose files do not overlap) in
Parquet of the current schema on a local warehouse are read by Spark's native Parquet reader —
with its own projection and filter pushdown — keeping only +I/+U rows of primary-key files. The
other splits go through the ``paimon`` Python data source. The two halves are unioned.
"""

from __future__ import annotations

import json
from typing import List, Optional

from pyspark.sql import DataFrame, SparkSession

from paimon_sql.format import binary_row
from paimon_sql.format import predicate as P
from paimon_sql.format.schema import VALUE_KIND
from paimon_sql.format.types import AtomicType
from paimon_sql.spark.types import spark_ddl


def native_readable(table, split) -> bool:
    """Whether Spark's Parquet reader can read this split as it stands on disk."""
    return (split.raw_convertible and table.io.scheme == ""
            and all(f.file_name.endswith(".parquet") and f.schema_id == table.schema.id and f.external_path is None
                    for f in split.files))


def _no_time_columns(fields) -> bool:
    return not any(isinstance(f.type, AtomicType) and f.type.name == "TIME" for f in fields)


def scan_dataframe(spark: SparkSession, table, warehouse: str, columns: Optional[List[str]] = None,
                   predicate: Optional[P.Predicate] = None, snapshot_id: Optional[int] = None,
                   tag: Optional[str] = None, catalog_options: Optional[dict] = None) -> DataFrame:
    columns = list(columns) if columns is not None else table.schema.field_names
    scan = table.new_scan().select(columns).filter(predicate)
    scan = scan.with_tag(tag) if tag else scan.with_snapshot(snapshot_id)
    snapshot = scan.snapshot()
    fields = table.schema.fields_of(columns)
    splits = scan.plan().splits if snapshot else []
    native = [s for s in splits if native_readable(table, s)] if _no_time_columns(fields) else []
    frames = []
    if native:
        part_types = [f.type for f in table.schema.fields_of(table.schema.partition_keys)]
        paths = [table.paths.data_file_path(binary_row.from_bytes(s.partition, part_types), s.bucket, f.file_name)
                 for s in native for f in s.files]
        read_fields = list(fields)
        ddl = spark_ddl(read_fields) + (f", `{VALUE_KIND}` TINYINT" if table.schema.is_primary_key_table else "")
        df = spark.read.schema(ddl).parquet(*paths)
        if table.schema.is_primary_key_table:
            df = df.where(f"`{VALUE_KIND}` IN (0, 2)")
        frames.append(df.select(*[f"`{c}`" for c in columns]))
    if len(native) < len(splits) or not frames:
        reader = spark.read.format("paimon").option("warehouse", warehouse).options(**(catalog_options or {}))
        reader = reader.option("paimon.columns", json.dumps(columns)).option("paimon.filter", P.to_json(predicate))
        if native:
            reader = reader.option("paimon.skip-native", "true")
        if snapshot is not None:
            reader = reader.option("scan.snapshot-id", str(snapshot.id))
        frames.append(reader.load(table.name))
    out = frames[0]
    for f in frames[1:]:
        out = out.unionByName(f)
    return out
