"""Compaction as a Spark job, as paimon-spark's CompactProcedure runs it: the driver plans the
buckets (:func:`~paimon_sql.compact.merge_tree_compact.plan_units`), each bucket is compacted by one Spark task
on an executor, and the driver commits the returned messages as ONE COMPACT snapshot.

A task never fails the job: it returns its bucket's message or its error (a failing bucket first
deletes what it wrote), so the driver always gets every finished bucket's files back and, when any
bucket failed, deletes them all before raising — a failed compaction leaves the table as it was.
The job is described as ``paimon compact <table>`` (Spark's UI, status API and event log show it).
"""

from __future__ import annotations

from functools import partial
from typing import Optional, Sequence

from paimon_sql.commit.table_commit import LAST_SAFE_SNAPSHOT
from paimon_sql.compact.data_evolution_compact import materialize_unit
from paimon_sql.compact.merge_tree_compact import compact_unit, plan_units
from paimon_sql.compact.postpone_compact import postpone_messages
from paimon_sql.data.predicate import Predicate
from paimon_sql.exceptions import PaimonError
from paimon_sql.read.postpone import postpone_table
from paimon_sql.spark.tasks import guarded, run_tasks


def compact(spark, table, partition_predicate: Optional[Predicate] = None, full: bool = False,
            buckets: Optional[Sequence[tuple]] = None) -> Optional[int]:
    """Compact the table's buckets (as :func:`~paimon_sql.compact.merge_tree_compact.plan_units` chooses them)
    in Spark tasks, one per bucket; returns the COMPACT snapshot's id, None when nothing changed.
    A postpone table (``bucket = -2``) is compacted by :func:`compact_postpone`."""
    if postpone_table(table):
        return compact_postpone(spark, table)
    return _run(spark, table, plan_units(table, partition_predicate, buckets), partial(compact_unit, table, full=full),
                "compact", "compaction")


def materialize_deletion_vectors(spark, table, partition_predicate: Optional[Predicate] = None) -> Optional[int]:
    """A data-evolution table's row id groups with deleted rows rewritten without them, as new rows
    (:func:`~paimon_sql.compact.data_evolution_compact.materialize_unit`), one task per bucket, one
    COMPACT snapshot; None when no group had deleted rows."""
    return _run(spark, table, plan_units(table, partition_predicate), partial(materialize_unit, table),
                "materialize_deletion_vectors", "materializing deletion vectors")


def _run(spark, table, units, fn, job: str, what: str) -> Optional[int]:
    if not units:
        return None
    outcomes = run_tasks(spark, f"paimon {job} {table.name}", partial(guarded, fn), units)
    messages = [m for ok, m in outcomes if ok and m is not None]
    errors = [f"bucket {u.bucket}: {m}" for u, (ok, m) in zip(units, outcomes) if not ok]
    commit = table.new_commit()
    if errors:
        commit.abort(messages)
        raise PaimonError(f"{what} of table {table.name} failed, nothing committed: {errors[0]}")
    return commit.commit_or_abort(messages)


def compact_postpone(spark, table) -> Optional[int]:
    """A postpone table's compaction (:mod:`paimon_sql.compact.postpone_compact`), on the driver: its
    postpone files' rows into real buckets (a new partition gets ``postpone.default-bucket-num``
    buckets, else Spark's default parallelism, as paimon-spark), one COMPACT snapshot, committed
    only if no other writer committed since the snapshot it read (Paimon's strict mode)."""
    base, messages = postpone_messages(table, spark.sparkContext.defaultParallelism)
    if not messages:
        return None
    return table.copy({LAST_SAFE_SNAPSHOT: str(base)}).new_commit().commit_or_abort(messages)
