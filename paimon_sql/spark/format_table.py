"""Format tables read and written by Spark's own file sources (``spark.read.format(csv|parquet|orc|json)``).

Reads load the table's location with its columns as the schema: Spark discovers the ``k=v/``
partition directories and prunes them by the query's filters, which reach the file scan because a
query's relation is this DataFrame's plan. Writes run Spark's writer into a staging directory
``<location>/_staging-<id>`` (passed over by readers, as every ``_`` name), then move the files into
place: a failing write leaves the table as it was, and INSERT OVERWRITE replaces exactly the
partitions Spark's rules say — every file of the table (static, no PARTITION clause), the
partitions the PARTITION clause names (static), or those the query writes (dynamic,
``spark.sql.sources.partitionOverwriteMode``). No snapshot is made: the files are the table.
"""

from __future__ import annotations

import uuid
from typing import Dict, List, Optional, Tuple
from urllib.parse import unquote, urlparse

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from paimon_sql.exceptions import PaimonError
from paimon_sql.io.paths import escape_path_name
from paimon_sql.maintenance.migrate_table import HIVE_DEFAULT_PARTITION
from paimon_sql.spark.types import spark_ddl, spark_type
from paimon_sql.table.format_table import FormatTable


def _hidden(name: str) -> bool:
    """Names Spark's file index passes over (``_SUCCESS``, ``_schema``, ``.crc`` files, staging)."""
    return name.startswith(".") or (name.startswith("_") and "=" not in name)


def spark_path(spark: SparkSession, path: str) -> str:
    """The location as Spark's Hadoop filesystem names it; refused when Spark has no filesystem
    for its scheme (object stores need Hadoop's connector, e.g. hadoop-aws for s3a://)."""
    scheme = urlparse(path).scheme
    if scheme in ("", "file"):
        return path
    hadoop = {"s3": "s3a"}.get(scheme, scheme)
    jvm = spark.sparkContext._jvm
    try:
        jvm.org.apache.hadoop.fs.FileSystem.getFileSystemClass(hadoop, spark._jsc.hadoopConfiguration())
    except Exception:
        raise PaimonError(f"format table at {path}: Spark has no Hadoop filesystem for '{hadoop}://' (add its "
                          "connector, e.g. hadoop-aws, to Spark's classpath)") from None
    return hadoop + path[len(scheme):]


def read(spark: SparkSession, table: FormatTable, columns: Optional[List[str]] = None) -> DataFrame:
    """The table's rows (``columns``: those wanted, in the table's order when None)."""
    wanted = columns or table.schema.field_names
    if not table.io.exists(table.path):  # a table registered elsewhere whose directory is not made yet
        return spark.createDataFrame([], spark_ddl(table.schema.fields)).select(*[F.col(f"`{c}`") for c in wanted])
    options = {k: v for k, v in table.spark_options().items() if k != "compression"}  # read: by file name
    path = spark_path(spark, table.path)
    df = (spark.read.format(table.format).schema(spark_ddl(table.schema.fields)).options(**options)
          .option("basePath", path).load(path))
    return df.select(*[F.col(f"`{c}`") for c in wanted])


def write(spark: SparkSession, df: DataFrame, table: FormatTable, overwrite: bool = False,
          partition_spec: Optional[Dict[str, object]] = None, dynamic: bool = False) -> None:
    """Write ``df`` (the table's columns, in order) as INSERT INTO, or INSERT OVERWRITE of the whole
    table / of ``partition_spec`` (static values) / of the partitions written (``dynamic``)."""
    keys = table.schema.partition_keys
    staging = f"{table.path}/_staging-{uuid.uuid4().hex}"
    io = table.io
    try:
        (df.write.format(table.format).options(**table.spark_options()).partitionBy(*keys)
         .mode("errorifexists").save(spark_path(spark, staging)))
        files = _files(io, staging)
        written = {rel.rsplit("/", 1)[0] for rel in files if "/" in rel}  # the partition directories
        if overwrite:
            for rel in _partitions_replaced(spark, table, partition_spec or {}, dynamic, written):
                _remove(io, table.path, rel)
        for folder in written:
            io.mkdirs(f"{table.path}/{folder}")
        for rel in files:
            io.rename(f"{staging}/{rel}", f"{table.path}/{rel}")
    finally:
        io.delete(staging)


def _files(io, root: str, prefix: str = "") -> List[str]:
    """The data files under ``root`` (relative paths), hidden names passed over."""
    out = []
    base = f"{root}/{prefix}" if prefix else root
    dirs = set(io.list_dirs(base))
    for name in io.list_names(base):
        if _hidden(name):
            continue
        rel = f"{prefix}{name}"
        out += _files(io, root, rel + "/") if name in dirs else [rel]
    return out


def _remove(io, root: str, rel: str) -> None:
    """A partition directory (``rel``), or with ``rel`` empty every data file and partition
    directory of the table (its ``_schema`` stays)."""
    if rel:
        io.delete(f"{root}/{rel}")
        return
    for name in io.list_names(root):
        if not _hidden(name):
            io.delete(f"{root}/{name}")


def _partition_dirs(io, root: str, depth: int, prefix: str = "") -> List[str]:
    if depth == 0:
        return [prefix.rstrip("/")]
    base = f"{root}/{prefix}" if prefix else root
    return [d for name in io.list_dirs(base) if not _hidden(name) and "=" in name
            for d in _partition_dirs(io, root, depth - 1, f"{prefix}{name}/")]


def partition_values(table: FormatTable) -> List[Tuple[Optional[str], ...]]:
    """Each partition directory's values, as their names say them (NULL for Spark's default name)."""
    out = []
    for d in _partition_dirs(table.io, table.path, len(table.schema.partition_keys)):
        texts = (unquote(seg.split("=", 1)[1]) for seg in d.split("/"))
        out.append(tuple(None if t == HIVE_DEFAULT_PARTITION else t for t in texts))
    return sorted(out, key=lambda values: [v or "" for v in values])


def _partitions_replaced(spark, table: FormatTable, spec: Dict[str, object], dynamic: bool, written: set) -> List[str]:
    """What INSERT OVERWRITE removes before the new files move in: "" (every data file) for a whole
    table, else partition directories (relative to the location)."""
    keys = table.schema.partition_keys
    if not keys or (not spec and not dynamic):
        return [""]
    if dynamic and len(spec) < len(keys):  # Spark's dynamic mode: the partitions the query wrote
        return sorted(written)
    names = _dir_names(spark, table, spec)
    return [d for d in _partition_dirs(table.io, table.path, len(keys))
            if all(seg.split("=", 1)[1] == names[seg.split("=", 1)[0]] for seg in d.split("/")
                   if seg.split("=", 1)[0] in names)]


def _dir_names(spark, table: FormatTable, spec: Dict[str, object]) -> Dict[str, str]:
    """Each static partition value as Spark names its directory: the value cast to the column's
    type, then to a string (Spark evaluates both casts, as its writer does), then escaped."""
    if not spec:
        return {}
    cols = [F.lit(v).cast(spark_type(table.schema.field(k).type)).cast("string").alias(k) for k, v in spec.items()]
    row = spark.range(1).select(*cols).collect()[0]
    return {escape_path_name(k): HIVE_DEFAULT_PARTITION if row[k] in (None, "") else escape_path_name(row[k])
            for k in spec}


def truncate(spark: SparkSession, table: FormatTable, spec: Dict[str, object]) -> None:
    """TRUNCATE TABLE [PARTITION (...)]: the data files of the table or of the partitions named go,
    their directories stay (as Spark truncates its tables: the partitions remain, empty)."""
    keys = table.schema.partition_keys
    folders = _partitions_replaced(spark, table, spec, False, set()) if spec else \
        _partition_dirs(table.io, table.path, len(keys)) if keys else [""]
    for folder in folders:
        root = f"{table.path}/{folder}" if folder else table.path
        for rel in _files(table.io, root):
            table.io.delete(f"{root}/{rel}")
