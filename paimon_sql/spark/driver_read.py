"""A small filtered read done on the driver: a query's scan whose planned files are few and small
(a point lookup on a primary key, a filter over a small table) is read by paimon-sql's own
:class:`~paimon_sql.read.split_read.SplitReader` in the driver's threads, and its rows are handed to
Spark as a local relation. Spark still plans and runs the query over them.

Why: Spark's file source costs every query a job — tasks to schedule, the Hadoop configuration
broadcast, the row-index and deleted-row columns of a merge-on-read bucket — about 60 ms of CPU
for a point lookup on a 1M-row table, which a server answering many small queries pays on each
(docs/performance.md, issue 47). The same lookup read here takes a few milliseconds: the predicate's
key conjuncts are applied to each file's rows before the merge, so only the key's own rows merge,
and files decoded once are kept decoded (:mod:`paimon_sql.read.data_file_cache`).

Caveats:

- Files are read whole (pyarrow uses no Parquet page index) and kept decoded for the next read (up
  to :data:`~paimon_sql.read.data_file_cache.CAPACITY` bytes in all), so the planned files are capped at
  :data:`DRIVER_READ_BYTES` (the session's ``paimon.sql.driverReadBytes``; 0 turns this off) —
  Spark's reader, which skips pages, takes bigger reads; so do reads without a filter.
- A read whose rows after the filter pass :data:`DRIVER_READ_ROWS` is left to Spark after all.
- The rows reach the JVM as Arrow record batches (py4j), where Spark makes them a ``LocalRelation``
  (below its ``spark.sql.execution.arrowLocalRelationThreshold``): the same Arrow data the
  ``paimon`` source hands Spark from an executor.

Example::

    SET paimon.sql.driverReadBytes = 0;   -- every read through Spark's readers
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING, Optional

import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import types as T

from paimon_sql.exceptions import InvalidOptionError
from paimon_sql.read.data_file_cache import DRIVER_FILES
from paimon_sql.read.scan import TableScan, read_splits
from paimon_sql.spark.types import spark_ddl, to_spark_arrow

if TYPE_CHECKING:
    from paimon_sql.data.predicate import Predicate

DRIVER_READ_BYTES = 8 << 20  # planned data-file bytes at most: ~20 ms of reading on one core
DRIVER_READ_ROWS = 10_000  # rows after the filter at most
SETTING = "paimon.sql.driverReadBytes"


def byte_limit(spark: SparkSession) -> int:
    """The session's cap on a driver read's planned bytes (:data:`SETTING`), 0 when it is off."""
    text = spark.conf.get(SETTING, None)
    if text is None:
        return DRIVER_READ_BYTES
    try:
        return max(int(text.strip()), 0)
    except ValueError:
        raise InvalidOptionError(f"{SETTING} must be a number of bytes, got {text!r}") from None


def applies(splits: list, predicate: Optional[Predicate], limit: int) -> bool:
    """Whether a filtered scan's ``splits`` are small enough to read on the driver."""
    if predicate is None or limit <= 0 or any(s.before for s in splits):
        return False
    return sum(f.file_size for s in splits for f in s.files) <= limit


def read(scan: TableScan, splits: list, fields: list) -> Optional[pa.Table]:
    """The rows of ``splits`` after ``scan``'s filter, as Spark takes them; None past
    :data:`DRIVER_READ_ROWS`."""
    rows = read_splits(scan.reader(DRIVER_FILES), splits)
    if rows.num_rows > DRIVER_READ_ROWS:
        return None
    return to_spark_arrow(rows, fields)


def dataframe(spark: SparkSession, rows: pa.Table, fields: list) -> DataFrame:
    """``rows`` (:func:`to_spark_arrow`'s) as a DataFrame of a local relation, every column nullable
    as the other reads make them."""
    array_list, utils, sql_utils = _classes(spark.sparkContext._jvm)
    batches = array_list()
    for batch in rows.combine_chunks().to_batches():
        batches.add(batch.serialize().to_pybytes())
    jdf = sql_utils.toDataFrame(utils.toSeq(batches).iterator(), _schema_json(spark_ddl(fields)), spark._jsparkSession)
    return DataFrame(jdf, spark)


@lru_cache(maxsize=256)
def _schema_json(ddl: str) -> str:
    return T._parse_datatype_string(ddl).json()


@lru_cache(maxsize=None)
def _classes(jvm) -> tuple:
    """The JVM classes :func:`dataframe` calls, looked up once (py4j asks the JVM on each lookup)."""
    return jvm.java.util.ArrayList, jvm.PythonUtils, jvm.PythonSQLUtils
