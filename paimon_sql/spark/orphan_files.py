"""remove_orphan_files as a Spark job (paimon-spark's distributed mode): the table's folders are
listed, and the orphans deleted, by Spark tasks on executors; the driver walks the references in
between (:func:`paimon_sql.maintenance.remove_orphan_files.remove_orphan_files` keeps the order that makes it
safe: list first, then read what is referenced)."""

from __future__ import annotations

from functools import partial
from typing import Optional, Tuple

from paimon_sql.maintenance.remove_orphan_files import remove_orphan_files as remove_locally
from paimon_sql.spark.tasks import run_tasks


def remove_orphan_files(spark, table, older_than_millis: Optional[int] = None, dry_run: bool = False,
                        parallelism: Optional[int] = None) -> Tuple[int, int]:
    slices = parallelism or spark.sparkContext.defaultParallelism
    tasks = partial(run_tasks, spark, f"paimon remove_orphan_files {table.name}", slices=slices)
    return remove_locally(table, older_than_millis, dry_run, tasks)
