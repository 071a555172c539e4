"""paimon-sql's own JVM classes for Spark: per-row work that Spark's built-in expressions can do
only with a join or a Python worker. They are in ``java/paimon-sql-spark.jar``, built from the Java
sources beside it by ``scripts/build_jvm.sh`` and committed, so users need no JDK.

- ``DeletedRow`` (:func:`without_deleted`) applies a read's deletion vectors inside a native Parquet
  read. It replaces an anti-join whose broadcast of the positions cost ~0.5 s per query: over 1M rows
  with 155k deleted, 1.5 s became 0.6 s, against 0.5 s for the read with no vectors
  (docs/performance.md).
- ``CappedBatches`` (:func:`capped_batches`) collects a small query result's Arrow batches in one
  job, each partition whole while it is small, for the server (``server/operations.py``).
- ``PlanNeeds`` (:func:`plan_needs`, :func:`output_ids`) reads what a query's plans say about its
  relations for ``spark/pushdown.py``, where the plans' JSON took ~45 ms each for a MERGE.
- ``LocalBatches`` (:func:`local_batches`) makes a local relation's result Arrow batches on the
  driver, with no job, for the server and for a write of rows on the driver (:func:`local_table`,
  :func:`local_rows`: ``spark/local_write.py``).

:func:`paimon_sql.connect` puts the jar in ``spark.jars`` of the sessions it builds (:func:`with_jar`).
A session that was given to it gets the jar by ``ADD JAR`` when the class is first needed. Where the
class still cannot be loaded, :func:`without_deleted` returns None and callers use Spark's built-in plans.
"""

from __future__ import annotations

import hashlib
import json
import logging
import struct
import weakref
from pathlib import Path
from typing import TYPE_CHECKING, Dict, List, Optional, Sequence, Tuple

import pyarrow as pa
from pyspark.sql import Column, DataFrame

from paimon_sql.spark.types import jvm_arrow_schema

if TYPE_CHECKING:
    from pyspark.sql import SparkSession
    from pyroaring import AbstractBitMap

_HERE = Path(__file__).parent / "java"
JAR = _HERE / "paimon-sql-spark.jar"
_DELETED_ROW = "paimon_sql.spark.DeletedRow"
_CAPPED_BATCHES = "paimon_sql.spark.CappedBatches"
_LOCAL_BATCHES = "paimon_sql.spark.LocalBatches"
_PLAN_NEEDS = "paimon_sql.spark.PlanNeeds"
# SparkSession -> {class name: an instance loaded by name, or None where it cannot be}
_loaded: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()
_log = logging.getLogger(__name__)


def sources_digest() -> str:
    """SHA-256 of the Java sources, in name order: what the jar records it was built from."""
    digest = hashlib.sha256()
    for path in sorted(_HERE.glob("*.java")):
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def with_jar(conf: Dict[str, str]) -> Dict[str, str]:
    """``conf`` for a new Spark session, with the jar added to ``spark.jars``."""
    jars = [j for j in conf.get("spark.jars", "").split(",") if j.strip()]
    return {**conf, "spark.jars": ",".join(jars + [str(JAR)])}


def without_deleted(spark: SparkSession, df: DataFrame, file_size: Column, row_index: Column,
                    vectors: Sequence[Tuple[int, AbstractBitMap]]) -> Optional[DataFrame]:
    """``df`` without the rows the deletion ``vectors`` (file size -> deleted positions) name, each row
    found by its file's size and its row index; None when the sizes repeat (a row's file would be
    ambiguous) or the class cannot be loaded."""
    sizes = [size for size, _ in vectors]
    if len(set(sizes)) != len(sizes):
        return None
    udf = _deleted_row(spark)
    if udf is None:
        return None
    from pyspark.sql.classic.column import Column as JColumn, _to_seq
    # a broadcast variable (no job, unlike a broadcast join's exchange): each executor fetches it once
    read_udf = udf.over(spark.sparkContext._jsc.broadcast(bytearray(encoded_vectors(vectors))))
    deleted = read_udf.apply(_to_seq(spark.sparkContext, [file_size._jc, row_index._jc]))
    return df.where(~JColumn(deleted))


def available(spark: SparkSession) -> bool:
    """Whether ``DeletedRow`` loads in this session."""
    return _deleted_row(spark) is not None


def encoded_vectors(vectors: Sequence[Tuple[int, AbstractBitMap]]) -> bytes:
    """The vectors as ``DeletedRow`` takes them (its header comment): sorted by file size, each
    bitmap in Roaring's portable format."""
    items: List[Tuple[int, bytes]] = sorted((size, bitmap.serialize()) for size, bitmap in vectors)
    head = struct.pack(">i", len(items)) + b"".join(struct.pack(">qi", size, len(body)) for size, body in items)
    return head + b"".join(body for _, body in items)


def capped_batches(spark: SparkSession, batches, max_bytes: int):
    """The JavaRDD of ``batches`` (an RDD of Arrow IPC messages) with each partition's batches whole
    while they come to ``max_bytes``, else ``CappedBatches.TOO_BIG`` alone; None when the class
    cannot be loaded."""
    capped = _instance(spark, _CAPPED_BATCHES)
    return capped.of(batches, max_bytes) if capped is not None else None


def local_batches(spark: SparkSession, df: DataFrame, schema: pa.Schema, time_zone: str,
                  per_batch: int) -> Optional[List[pa.RecordBatch]]:
    """``df``'s result as Arrow record batches of ``schema`` (:func:`jvm_arrow_schema`'s) made on the
    driver, when its plan is a local table scan; else (or when the class cannot be loaded) None."""
    local = _instance(spark, _LOCAL_BATCHES)
    messages = local.of(df._jdf, time_zone, per_batch) if local is not None else None
    return None if messages is None else [pa.ipc.read_record_batch(pa.py_buffer(m), schema) for m in messages]


def local_rows(df: DataFrame) -> Optional[int]:
    """The most rows ``df`` can have when its optimized plan reads local relations alone (-1 when
    it reads anything else or has no bound); None when the class cannot be loaded."""
    local = _instance(df.sparkSession, _LOCAL_BATCHES)
    return local.localRows(df._jdf) if local is not None else None


def local_table(df: DataFrame) -> Optional[pa.Table]:
    """``df``'s rows as Spark's JVM writes them for Python, made on the driver without a job when
    its plan reads local relations the driver can finish (``LocalBatches``: a local table scan, a
    SELECT of literals, a small join of local relations); else (or when the class cannot be
    loaded) None."""
    time_zone = df.sparkSession.conf.get("spark.sql.session.timeZone")
    schema = jvm_arrow_schema(df.schema, time_zone)
    batches = local_batches(df.sparkSession, df, schema, time_zone, 10_000)
    return None if batches is None else pa.Table.from_batches(batches, schema)


def plan_needs(df: DataFrame, filters: bool) -> Optional[dict]:
    """``{"referenced": [attribute ids], "relations": [[[[id, name], ...], condition tree or None], ...]}``
    of ``df``'s analyzed plan and (when ``filters``) its optimized plan (``PlanNeeds.of``); None when
    the class cannot be loaded."""
    needs = _instance(df.sparkSession, _PLAN_NEEDS)
    return None if needs is None else json.loads(needs.of(df._jdf, filters))


def output_ids(df: DataFrame) -> Optional[List[int]]:
    """The ids Spark gave ``df``'s output columns; None when the class cannot be loaded."""
    needs = _instance(df.sparkSession, _PLAN_NEEDS)
    return None if needs is None else json.loads(needs.outputIds(df._jdf))


def _deleted_row(spark: SparkSession):
    """A ``DeletedRow`` of this session without vectors (``over`` gives a read's), loaded once."""
    return _instance(spark, _DELETED_ROW)


def _instance(spark: SparkSession, name: str):
    """An instance of class ``name`` of this session, made once (None: it cannot be loaded)."""
    known = _loaded.setdefault(spark, {})
    if name not in known:
        known[name] = _load(spark, name)
    return known[name]


def _load(spark: SparkSession, name: str):
    """The class by name; a session without the jar (one given to ``connect()``) gets it by ADD JAR first."""
    from py4j.protocol import Py4JError
    utils = spark._jvm.org.apache.spark.util.Utils
    try:
        return utils.classForName(name, True, False).newInstance()
    except Py4JError:
        pass
    try:
        spark._jsparkSession.sql(f"ADD JAR '{JAR}'")
        return utils.classForName(name, True, False).newInstance()
    except Py4JError as e:
        _log.warning("paimon-sql's JVM class %s cannot be loaded (%s); Spark's built-in plans are used instead",
                     name, str(e).splitlines()[0])
        return None
