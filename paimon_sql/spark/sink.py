"""Structured Streaming into a Paimon table, each micro-batch committed exactly once.

Spark replays a micro-batch with its original id when a query stops after the sink committed the
batch but before Spark recorded it in the checkpoint's commit log (``commits/<id>``). Paimon's
rule makes that replay harmless (its ``filterCommitted``): a writer commits under a commit user
that is stable across its restarts, each commit carrying an increasing commit identifier; before
committing, it looks up the newest snapshot of its user and skips every identifier up to that
snapshot's. Here the identifier is the micro-batch id and the user is derived from the query id
Spark keeps in the checkpoint (``<checkpointLocation>/metadata``): the same for every run of a
query resumed from its checkpoint, new when the checkpoint is recreated (whose batch ids start
at 0 again), whatever the location is called. A skipped replay's files are deleted.

Append output mode appends each batch; complete mode overwrites the table with each batch
(as paimon-spark's sink does). Update mode is refused by Spark for this sink.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from typing import Iterator, List, Optional

import pyarrow as pa
from pyspark.sql.datasource import DataSourceStreamArrowWriter

from paimon_sql.exceptions import PaimonError
from paimon_sql.io import FileIO
from paimon_sql.spark.writer import PaimonCommitMessage, committing_table, flat_messages, write_task

QUERY_ID_PROPERTY = "sql.streaming.queryId"  # the local property Spark gives a streaming query's tasks


def name_uuid(text: str) -> str:
    """Java's ``UUID.nameUUIDFromBytes`` (an MD5 name UUID), which paimon-spark derives its streaming
    commit user with: the same query gets the same user from either writer."""
    digest = bytearray(hashlib.md5(text.encode("utf-8")).digest())
    digest[6] = (digest[6] & 0x0F) | 0x30
    digest[8] = (digest[8] & 0x3F) | 0x80
    return str(uuid.UUID(bytes=bytes(digest)))


def commit_user(query_id: str) -> str:
    return f"spark-query-{name_uuid(query_id)}"


def _task_query_id() -> Optional[str]:
    from pyspark import TaskContext
    context = TaskContext.get()
    return context.getLocalProperty(QUERY_ID_PROPERTY) if context is not None else None


class PaimonStreamWriter(DataSourceStreamArrowWriter):
    def __init__(self, table, overwrite: bool, checkpoint: Optional[str], store_options: dict,
                 catalog: Optional[tuple] = None):
        self.table = table
        self.overwrite = overwrite
        self.checkpoint = checkpoint
        self.store_options = store_options
        self.catalog = catalog  # (warehouse, catalog options): see committing_table

    def write(self, iterator: Iterator[pa.RecordBatch]) -> PaimonCommitMessage:
        return PaimonCommitMessage(write_task(self.table, self.overwrite, iterator, batch=False), _task_query_id())

    def commit(self, messages: List[Optional[PaimonCommitMessage]], batchId: int) -> None:
        flat = flat_messages(messages)
        if not self.overwrite and all(m.is_empty() for m in flat):
            return  # no rows: no snapshot (an empty append makes none in Paimon either)
        user = None
        try:
            user = commit_user(self._query_id(messages))
            if self._committed(user, batchId):
                self.table.new_commit().abort(flat)  # a replay of a batch this query committed: drop its files
                return
            commit = committing_table(self.table, self.catalog).new_commit(user)
            commit.with_operation("OVERWRITE" if self.overwrite else "WRITE")
            if self.overwrite:
                commit.overwrite(flat, commit_identifier=batchId)
            else:
                commit.commit(flat, commit_identifier=batchId)
        except BaseException:
            if user is None or not self._committed(user, batchId):  # its data may be in though compaction failed
                self.table.new_commit().abort(flat)
            raise

    def abort(self, messages: List[Optional[PaimonCommitMessage]], batchId: int) -> None:
        self.table.new_commit().abort(flat_messages(messages))

    def _committed(self, user: str, batch_id: int) -> bool:
        """Whether ``user`` already committed batch ``batch_id`` (or a later one)."""
        latest = self.table.snapshot_manager.latest_of_user(user)
        return latest is not None and batch_id <= latest.commit_identifier

    def _query_id(self, messages) -> str:
        """The streaming query's id: as its tasks saw it, else as its checkpoint records it."""
        ids = {m.query_id for m in messages if m is not None and m.query_id}
        if len(ids) == 1:
            return ids.pop()
        if self.checkpoint:
            path = f"{self.checkpoint.rstrip('/')}/metadata"
            io = FileIO.for_path(path, self.store_options)
            if io.exists(path):
                return json.loads(io.read_text(path))["id"]
        raise PaimonError(f"streaming write to {self.table.name}: no query id from the tasks or the checkpoint, so "
                          "a replayed micro-batch could not be recognised; nothing was committed")
