"""remove_orphan_files as a Spark job (paimon-spark's distributed mode): the table's folders are
listed, and the orphans deleted, by Spark tasks on executors; the driver walks the references in
between (:func:`paimon_sql.table.orphan_files.remove_orphan_files` keeps the order that makes it
safe: list first, then read what is referenced). The jobs are described as
``paimon remove_orphan_files <table>``."""

from __future__ import annotations

from typing import Callable, Optional, Tuple

from paimon_sql.table.orphan_files import remove_orphan_files as remove_locally

JOB_DESCRIPTION = "spark.job.description"


def remove_orphan_files(spark, table, older_than_millis: Optional[int] = None, dry_run: bool = False,
                        parallelism: Optional[int] = None) -> Tuple[int, int]:
    sc = spark.sparkContext

    def map_tasks(fn: Callable, items: list) -> list:
        if not items:
            return []
        slices = min(len(items), parallelism or sc.defaultParallelism)
        return sc.parallelize(items, slices).map(fn).collect()

    previous = sc.getLocalProperty(JOB_DESCRIPTION)
    sc.setJobDescription(f"paimon remove_orphan_files {table.name}")
    try:
        return remove_locally(table, older_than_millis, dry_run, map_tasks)
    finally:
        sc.setLocalProperty(JOB_DESCRIPTION, previous)
