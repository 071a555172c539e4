"""The write side of the ``paimon`` data source: each Spark task writes data files with
:class:`~paimon_sql.write.table_write.TableWrite` and returns its commit messages; the driver
commits them as one snapshot after every task succeeded, or deletes their files when the job
aborts. The streaming sink (:mod:`paimon_sql.spark.sink`) commits micro-batches with the same parts.
"""

from __future__ import annotations

from typing import Iterator, List, Optional

import pyarrow as pa
from pyspark.sql.datasource import DataSourceArrowWriter, WriterCommitMessage

from paimon_sql.catalog import load_catalog
from paimon_sql.spark.columns import BUCKET_COLUMN, ROWKIND_COLUMN


class PaimonCommitMessage(WriterCommitMessage):
    def __init__(self, messages, query_id: Optional[str] = None):
        self.messages = messages
        self.query_id = query_id  # a streaming write's query (its commit user is derived from it)


def flat_messages(messages: List[Optional[PaimonCommitMessage]]) -> list:
    """The table commit messages of every task (a failed task's is None)."""
    return [m for msg in messages if msg is not None for m in msg.messages]


def committing_table(table, catalog: Optional[tuple]):
    """``table`` with its catalog's environment (commit lock, metastore callbacks): Spark runs a
    writer's ``commit`` in a Python worker of its own, where the pickled table has none. ``catalog``:
    (warehouse, catalog options) of a table loaded by name; None for one loaded by location."""
    if catalog is None:
        return table
    fresh = load_catalog(*catalog).get_table(table.name)
    return fresh.with_schema(table.schema, table.branch).copy(table.dynamic_options)


def write_task(table, overwrite: bool, iterator: Iterator[pa.RecordBatch], batch: bool = True) -> list:
    """One task's rows written as data files (the planner's bucket column dropped, its row-kind
    column as the rows' kinds); returns the commit messages, or deletes the files on failure.
    ``batch``: a batch write (not a micro-batch of a stream), compacted as paimon-spark's."""
    write = table.new_write(overwrite)
    write.batch = batch
    try:
        for batch in iterator:
            if BUCKET_COLUMN in batch.schema.names:
                batch = batch.drop_columns([BUCKET_COLUMN])
            kinds = None
            if ROWKIND_COLUMN in batch.schema.names:
                kinds = batch.column(ROWKIND_COLUMN).cast(pa.int8())
                batch = batch.drop_columns([ROWKIND_COLUMN])
            write.write_arrow(batch, row_kinds=kinds)
        return write.prepare_commit()
    except BaseException:
        write.abort()
        raise


class PaimonWriter(DataSourceArrowWriter):
    def __init__(self, table, overwrite: bool, partition_spec: Optional[dict], dynamic: bool,
                 catalog: Optional[tuple] = None):
        self.table = table
        self.overwrite = overwrite
        self.partition_spec = partition_spec
        self.dynamic = dynamic
        self.catalog = catalog  # (warehouse, catalog options) of a table loaded by name


    def write(self, iterator: Iterator[pa.RecordBatch]) -> PaimonCommitMessage:
        return PaimonCommitMessage(write_task(self.table, self.overwrite, iterator))

    def commit(self, messages: List[PaimonCommitMessage]) -> None:
        flat = flat_messages(messages)
        commit = committing_table(self.table, self.catalog).new_commit()
        commit.with_operation("OVERWRITE" if self.overwrite else "WRITE")  # the statement's own, if it set one
        try:
            if self.overwrite:
                dynamic = self.dynamic and not self.partition_spec and bool(self.table.schema.partition_keys)
                commit.overwrite(flat, partition=self.partition_spec, dynamic=dynamic)
            else:
                commit.commit(flat)
        except BaseException:
            commit.abort(flat)
            raise

    def abort(self, messages: List[PaimonCommitMessage]) -> None:
        self.table.new_commit().abort(flat_messages(messages))
