"""A one-row write (``INSERT ... VALUES (...)``) done by the driver itself, without a Spark job.

The row is on the driver already, in the statement's local relation. Spark's write job for it
costs several times the write itself: a Python worker for the bucket column, a shuffle, a Python
worker for the data file, and one more for the commit (issue 46: a one-row INSERT took 0.33 s
against paimon-spark's 0.22 s). So the row is taken as Arrow. Spark evaluates its casts and
checks as the job would, and the same converters make the batch a write task gets. Then the same
:class:`~paimon_sql.spark.writer.PaimonWriter` a Spark write uses writes and commits it here:
same file, same snapshot.

Only a single row is taken: it makes one data file whoever writes it. A Spark job writes several
rows as one file per task, or per bucket, and paimon-spark's layout is the reference
(tests/differential). An append table without buckets, whose rows Spark's own Parquet writer
writes (:mod:`~paimon_sql.spark.native_write`), gets its one row from our Arrow writer, as Paimon's
writer writes it, like any other table.

    row = one_row(df)        # None: not a single row on the driver
    if row is not None:
        write(table, row, overwrite=False, partition_spec=None, dynamic=False)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional

import pyarrow as pa
from pyspark.sql import DataFrame

from paimon_sql.spark.writer import PaimonWriter

if TYPE_CHECKING:
    from paimon_sql.table.table import FileStoreTable


def one_row(df: DataFrame) -> Optional[pa.Table]:
    """``df``'s row when its optimized plan is a local relation of one row."""
    plan = df._jdf.queryExecution().optimizedPlan()
    if plan.getClass().getSimpleName() != "LocalRelation" or plan.data().size() != 1:
        return None
    return df.toArrow()


def write(table: FileStoreTable, rows: pa.Table, overwrite: bool, partition_spec: Optional[dict],
          dynamic: bool) -> None:
    """``rows`` written into ``table`` as one snapshot (its data file deleted again on failure)."""
    writer = PaimonWriter(table, overwrite, partition_spec, dynamic)
    writer.commit([writer.write(iter(rows.to_batches()))])
