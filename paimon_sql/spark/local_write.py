"""A small write whose rows are on the driver already, done by the driver itself, without a Spark write job.

The rows of ``INSERT ... VALUES (...)`` are in the statement's local relation; those of a MERGE
whose target was read on the driver (:mod:`~paimon_sql.spark.driver_read`) and whose source is a
VALUES or a literal SELECT are computed from local relations alone. Spark's write job for them
costs several times the write itself: a Python worker for the bucket column, a shuffle, a Python
worker for the data file, and one more for the commit (issue 46: a one-row INSERT took 0.33 s
against paimon-spark's 0.22 s), and on a busy server each job waits behind every running one. So
the rows are taken as Arrow — without any job when the optimized plan is a local relation
(paimon-sql's ``LocalBatches``), else by one job of Spark's JVM. Spark evaluates the casts and
checks as the write job would, and the same converters make the batch a write task gets. Then the
same :class:`~paimon_sql.spark.writer.PaimonWriter` a Spark write uses writes and commits them
here: same files, same snapshot.

Several rows are taken only into a table whose files do not depend on how rows are spread over
tasks: one with primary keys or fixed buckets, each of whose buckets one task writes (one file per
bucket either way). A table without buckets gets a file per task from a Spark job, and
paimon-spark's layout is the reference (tests/differential): it takes a single row only, which
makes one data file whoever writes it.

    rows = driver_rows(df, table)        # None: not a small write of rows on the driver
    if rows is not None:
        write(table, rows, overwrite=False, partition_spec=None, dynamic=False)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional

import pyarrow as pa
from pyspark.sql import DataFrame

from paimon_sql.spark import jvm_classes
from paimon_sql.spark.writer import PaimonWriter

if TYPE_CHECKING:
    from paimon_sql.table.table import FileStoreTable


MAX_ROWS = 10_000  # rows a plan of local relations can give at most, to be taken on the driver


def driver_rows(df: DataFrame, table: FileStoreTable) -> Optional[pa.Table]:
    """``df``'s rows when its optimized plan reads local relations alone and gives at most one row,
    or at most :data:`MAX_ROWS` into a table whose buckets each one task writes; else None."""
    most = jvm_classes.local_rows(df)
    if most is None or most < 0 or (most > 1 and (most > MAX_ROWS or not _bucketed(table))):
        return None
    rows = jvm_classes.local_table(df)  # toArrow would schedule a job, queued behind every running one
    return rows if rows is not None else df.toArrow()


def _bucketed(table: FileStoreTable) -> bool:
    """Whether each bucket of ``table`` is written by one task, so one writer makes the files a
    Spark job makes: fixed buckets, or primary keys in dynamic buckets (each partition's index is
    one task's)."""
    bucket = table.options.bucket
    return bucket > 0 or (bucket == -1 and table.schema.is_primary_key_table)


def write(table: FileStoreTable, rows: pa.Table, overwrite: bool, partition_spec: Optional[dict],
          dynamic: bool) -> None:
    """``rows`` written into ``table`` as one snapshot (its data file deleted again on failure)."""
    writer = PaimonWriter(table, overwrite, partition_spec, dynamic)
    writer.commit([writer.write(iter(rows.to_batches()))])
