"""Per-file and per-bucket work of procedures as Spark tasks: the driver plans, executors do the
work, the driver gathers the results (and commits). A job carries a description
(``paimon <procedure> <table>``) that Spark's UI, status API and event log show."""

from __future__ import annotations

from typing import Callable, Optional

JOB_DESCRIPTION = "spark.job.description"


def run_tasks(spark, description: str, fn: Callable, items: list, slices: Optional[int] = None) -> list:
    """``[fn(item) for item in items]``, computed by ``slices`` Spark tasks (default and at most:
    one per item)."""
    if not items:
        return []
    sc = spark.sparkContext
    slices = min(len(items), slices or len(items))
    previous = sc.getLocalProperty(JOB_DESCRIPTION)
    sc.setJobDescription(description)
    try:
        return sc.parallelize(items, slices).map(fn).collect()
    finally:
        sc.setLocalProperty(JOB_DESCRIPTION, previous)


def guarded(fn: Callable, item):
    """One task's outcome: ``(True, fn(item))``, or ``(False, the error in one line)``. A failing task
    then never fails the job, so the driver gets every other task's result back and can delete what
    they wrote before it reports the failure."""
    try:
        return True, fn(item)
    except Exception as e:
        text = str(e).strip()
        return False, f"{type(e).__name__}: {text.splitlines()[0] if text else ''}"
