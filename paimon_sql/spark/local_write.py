"""Small local rows written by the driver itself.

An ``INSERT ... VALUES`` (or any write whose rows Spark's optimizer folds into one local relation)
has its rows on the driver already. Spark's write job for them — tasks, a shuffle by bucket,
Python workers for the bucket column and the data files, one more for the commit — costs several
times the write itself (issue 46: a one-row INSERT took 0.29 s against paimon-spark's 0.155 s). Such
rows are taken as Arrow, Spark evaluating their casts and checks as the job would (the same
converters make the batches a write task gets), then written and committed here by the same
:class:`~paimon_sql.spark.writer.PaimonWriter` a Spark write uses: same files, same snapshot.

    rows = local_rows(df)        # None: not local, or more than LOCAL_ROWS rows
    if rows is not None:
        write(table, rows, overwrite=False, partition_spec=None, dynamic=False)
"""

from __future__ import annotations

from typing import Optional

import pyarrow as pa
from pyspark.sql import DataFrame

from paimon_sql.spark.writer import PaimonWriter

LOCAL_ROWS = 10_000  # beyond this many rows the tasks' parallel writes pay for the job


def local_rows(df: DataFrame) -> Optional[pa.Table]:
    """``df``'s rows when its optimized plan is one local relation of at most :data:`LOCAL_ROWS`."""
    plan = df._jdf.queryExecution().optimizedPlan()
    if plan.getClass().getSimpleName() != "LocalRelation" or plan.data().size() > LOCAL_ROWS:
        return None
    return df.toArrow()


def write(table, rows: pa.Table, overwrite: bool, partition_spec: Optional[dict], dynamic: bool) -> None:
    """``rows`` written into ``table`` as one snapshot (its data files deleted again on failure)."""
    writer = PaimonWriter(table, overwrite, partition_spec, dynamic)
    writer.commit([writer.write(iter(rows.to_batches()))])
