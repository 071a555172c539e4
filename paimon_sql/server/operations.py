"""HiveServer2 operations: a statement (run now or in the background) or a metadata call, its state,
and its rows, fetched in the client's batch size.

A query's rows stream from Spark as Arrow batches one partition at a time (Spark's
``toLocalIterator`` over ``Dataset.toArrowBatchRdd``, the next partition computed while the client
reads this one): the server holds a partition or two, never the whole result. Running the
statement pulls the first batch, so a query's failure (a task's error, a timeout) is mostly the
statement's, reported by GetOperationStatus before any row is fetched; a task of a later partition
that fails while the client fetches puts the operation in ERROR state then.

Each statement runs in its own Spark job group (interrupting tasks on cancel): CancelOperation,
CloseOperation, a timeout or the client's CloseSession cancel that group and nothing else.
"""

from __future__ import annotations

import re
import threading
import time
import uuid
from typing import Callable, Dict, Iterable, Iterator, List, Optional, Tuple

import pyarrow as pa
from pyspark.serializers import NoOpSerializer
from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.util import _load_from_socket, _local_iterator_from_socket
from TCLIService import ttypes

from paimon_sql.exceptions import GENERAL_SQL_STATE, OperationError, PaimonError, SparkSqlError
from paimon_sql.options.core_options import scrub
from paimon_sql.server import rowset
from paimon_sql.server.admission import Admission, needs_place
from paimon_sql.server.oplog import OperationLog
from paimon_sql.spark import jvm_classes
from paimon_sql.spark.types import jvm_arrow_schema
from paimon_sql.session import spark_error

S = ttypes.TOperationState
_TERMINAL = {S.FINISHED_STATE, S.CANCELED_STATE, S.CLOSED_STATE, S.ERROR_STATE, S.TIMEDOUT_STATE}
_STOPPED = {S.CANCELED_STATE, S.CLOSED_STATE, S.TIMEDOUT_STATE}  # by the client or the timeout, not by an error


def new_handle_id() -> ttypes.THandleIdentifier:
    return ttypes.THandleIdentifier(guid=uuid.uuid4().bytes, secret=uuid.uuid4().bytes)


class Operation:
    """State and rows of one operation. ``rows()`` gives a fresh iterator of Arrow record batches
    (FETCH_FIRST starts it again); ``schema`` None means the operation has no result set.

    For the audit log: ``kind`` (the call: ExecuteStatement, GetTables...), ``text`` (the statement, or
    the metadata call's arguments), ``tables_read``/``tables_written`` ("db.table"), ``rows_sent``,
    ``ended_as`` (the state it ended in, CLOSED only when closed before it ended) and ``audited``
    (its line is written). ``log``: its operation log."""

    def __init__(self, op_type: int, time_zone: str = "UTC", kind: str = "", text: str = ""):
        self.handle = ttypes.TOperationHandle(operationId=new_handle_id(), operationType=op_type,
                                              hasResultSet=False)
        self.state = S.INITIALIZED_STATE
        self.error: Optional[OperationError] = None
        self.started = int(time.time() * 1000)
        self.completed = 0
        self.schema: Optional[pa.Schema] = None
        self.time_zone = time_zone
        self._rows: Optional[Callable[[], Iterator[pa.RecordBatch]]] = None
        self._batches: Optional[Iterator[pa.RecordBatch]] = None
        self._head: Optional[pa.RecordBatch] = None
        self._offset = 0
        self._lock = threading.RLock()  # state changes
        self._fetching = threading.Lock()
        self._done = threading.Event()
        self.kind, self.text = kind, text
        self.tables_read: List[str] = []
        self.tables_written: List[str] = []
        self.rows_sent = 0
        self.ended_as: Optional[int] = None
        self.audited = False
        self.log = OperationLog()
        self.touched = time.monotonic()  # the client's last call on it (idle operations are closed)

    def ended(self) -> bool:
        """Whether it has finished, failed or been stopped (it holds rows or an error, no work)."""
        return self.state in _TERMINAL

    @property
    def key(self) -> bytes:
        return self.handle.operationId.guid

    def _set_state(self, state: int, error: Optional[OperationError] = None) -> bool:
        """Move to ``state`` unless the operation has already been stopped; True when it moved."""
        with self._lock:
            if self.state in _STOPPED or (self.state in _TERMINAL and state not in _STOPPED):
                return False
            self.state, self.error = state, error or self.error
            if state in _TERMINAL:
                self.completed = int(time.time() * 1000)
                self._done.set()
                self._ended(state)
            return True

    def _ended(self, state: int) -> None:
        if state != S.CLOSED_STATE or self.ended_as is None:
            self.ended_as = state

    def _serve(self, schema: Optional[pa.Schema], rows: Optional[Callable[[], Iterator[pa.RecordBatch]]]) -> None:
        """Serve these rows; the first batch is made now (a close meanwhile waits for it)."""
        with self._fetching:
            self.schema, self._rows = schema, rows
            self.handle.hasResultSet = schema is not None
            if rows is not None:
                self._batches = rows()
                self._head = next(self._batches, None)

    # -- fetching -----------------------------------------------------------------------------------

    def result_schema(self) -> Optional[pa.Schema]:
        """The schema of the rows, once the operation has finished (None: it has no rows)."""
        self._finished()
        return self.schema

    def _finished(self) -> None:
        self._done.wait()
        if self.state != S.FINISHED_STATE:
            raise self.error or OperationError(f"the operation is {S._VALUES_TO_NAMES[self.state]}: it has no rows")

    def fetch(self, max_rows: int, first: bool) -> Tuple[ttypes.TRowSet, int]:
        """The next ``max_rows`` rows (from the first row again when ``first``), and how many."""
        self._finished()
        with self._fetching:
            self._finished()
            if self.schema is None:
                return ttypes.TRowSet(startRowOffset=0, rows=[], columns=[]), 0
            if first:
                self._restart()
            start = self._offset
            try:
                table = self._take(max(int(max_rows), 1))
            except Exception as e:  # a task failed while it made these rows: the operation failed
                error = self._failure(e)
                if self.state == S.FINISHED_STATE:
                    self._stop(S.ERROR_STATE, error)
                raise error from None
            self._offset += table.num_rows
            self.rows_sent += table.num_rows
            return rowset.row_set(table, start, self.time_zone), table.num_rows

    def _restart(self) -> None:
        self._close_rows()
        self._offset = 0
        if self._rows is not None:
            self._batches = self._rows()
            self._head = next(self._batches, None)

    def _take(self, n: int) -> pa.Table:
        out, have = [], 0
        while have < n and self._head is not None:
            batch = self._head
            k = min(n - have, batch.num_rows)
            out.append(batch.slice(0, k))
            have += k
            self._head = batch.slice(k) if k < batch.num_rows else next(self._batches, None)
        return pa.Table.from_batches(out, self.schema)

    def _failure(self, e: BaseException) -> OperationError:
        if self.state in _STOPPED:
            return self.error or OperationError("the operation was cancelled")
        return as_operation_error(e, "")

    # -- ending -------------------------------------------------------------------------------------

    def cancel(self) -> None:
        self._stop(S.CANCELED_STATE, OperationError("the operation was cancelled", "HY008"))

    def close(self) -> None:
        self._stop(S.CLOSED_STATE, None)
        with self._fetching:
            self._close_rows()

    def _stop(self, state: int, error: Optional[OperationError]) -> None:
        with self._lock:
            self.state, self.error = state, error or self.error
            self.completed = self.completed or int(time.time() * 1000)
            self._done.set()
            self._ended(state)

    def _close_rows(self) -> None:
        close = getattr(self._batches, "close", None)
        self._batches, self._head = None, None
        if close is not None:
            close()

    def progress(self) -> Optional[ttypes.TProgressUpdateResp]:
        return None

    def log_lines(self, first: bool) -> List[str]:
        """The operation log's lines since the previous read (all of them when ``first``)."""
        return self.log.read(first)


class MetadataOperation(Operation):
    """A metadata call's rows (an Arrow table made at once): a finished operation; or, without a
    table, the call's ``error``."""

    def __init__(self, op_type: int, table: Optional[pa.Table], kind: str = "", text: str = "",
                 error: Optional[OperationError] = None):
        super().__init__(op_type, kind=kind, text=text)
        if table is not None:
            self._serve(table.schema, lambda: iter(table.to_batches()))
        self._set_state(S.FINISHED_STATE if error is None else S.ERROR_STATE, error)


class StatementOperation(Operation):
    """One statement of a client session, run through the session's front layer."""

    def __init__(self, client, text: str, timeout: float, overlay: Dict[str, str],
                 admission: Optional[Admission] = None):
        super().__init__(ttypes.TOperationType.EXECUTE_STATEMENT, client.time_zone(), "ExecuteStatement", text)
        self.client = client
        self.timeout = timeout
        self.overlay = overlay  # Spark conf for this statement only
        self.admission = admission or Admission(0)  # places for the front layer's part
        self.group = f"paimon-sql-server-{uuid.UUID(bytes=self.key)}"
        self.state = S.PENDING_STATE
        self._ran = threading.Event()  # run() is over: no job of the statement can start any more
        self._cancelling = False

    def run(self) -> None:
        """Run the statement in this thread (in the client's turn: one statement of a session at a
        time); the timeout counts from now."""
        try:
            self._run()
        finally:
            self._ran.set()

    def _run(self) -> None:
        spark = self.client.session.spark
        timer = threading.Timer(self.timeout, self._time_out) if self.timeout > 0 else None
        if timer:
            timer.daemon = True
            timer.start()
        with self.client.turn:
            if not self._set_state(S.RUNNING_STATE):
                return
            self.client.activate()
            spark.sparkContext.setJobGroup(self.group, self.text[:200], interruptOnCancel=True)
            before = {k: spark.conf.get(k, None) for k in self.overlay}
            self.log.add(f"Executing statement: {scrub(self.text, self.text)}")
            try:
                for k, v in self.overlay.items():
                    spark.conf.set(k, v)
                session = self.client.session
                session.scan_reports = scans = []  # what planning did, for the operation log
                try:
                    admission = self.admission if needs_place(self.text) else Admission(0)
                    with admission.place(lambda: self.state in _STOPPED) as admitted:
                        df = session.execute(self.text) if admitted else None
                finally:
                    session.scan_reports = None
                    self._note_access()
                for line in paimon_lines(session, scans, self.tables_written, self.started):
                    self.log.add(line)
                df = served_dataframe(hive_listing(spark, self.text, df)) if df is not None else None
                self.time_zone = self.client.time_zone()
                if self.state not in _STOPPED:  # a cancel while the statement ran: no query for its rows
                    self._serve(None if df is None else _arrow_schema(df, self.time_zone),
                                None if df is None else (lambda: arrow_batches(df, self.time_zone)))
                if not self._end(S.FINISHED_STATE):  # stopped meanwhile
                    self._cancel_jobs()
                    with self._fetching:
                        self._close_rows()
            except Exception as e:
                self._end(S.ERROR_STATE, as_operation_error(e, self.text))
            finally:
                if timer:
                    timer.cancel()
                self._log_end(self.state, self.error)  # stopped by a cancel, a close or the timeout
                for k, v in before.items():
                    spark.conf.unset(k) if v is None else spark.conf.set(k, v)
                spark.sparkContext._jsc.sc().clearJobGroup()

    def _note_access(self) -> None:
        """The tables the statement read and wrote, as the session's statement analysis saw them
        (``last_access``: None, or ``reads`` and ``writes`` lists of "db.table"); taken, then cleared."""
        access = getattr(self.client.session, "last_access", None)
        if access is not None:
            self.tables_read = list(getattr(access, "reads", None) or [])
            self.tables_written = list(getattr(access, "writes", None) or [])
            self.client.session.last_access = None

    def _end(self, state: int, error: Optional[OperationError] = None) -> bool:
        """Move to ``state`` (FINISHED or ERROR), the operation log's last line written first: a
        client that sees the state finds the line."""
        if self.state not in _STOPPED:
            self._log_end(state, error)
        return self._set_state(state, error)

    def _log_end(self, state: int, error: Optional[OperationError]) -> None:
        """The operation log's last line (nothing when it has one), after the stages' last counts,
        both written when the log is next read (:meth:`OperationLog.finish`)."""
        seconds = (int(time.time() * 1000) - self.started) / 1000
        if state == S.FINISHED_STATE:
            self.log.finish(self._stages, f"Completed in {seconds:.1f} s")
        else:
            ended = {S.ERROR_STATE: "Failed", S.TIMEDOUT_STATE: "Timed out"}.get(state, "Cancelled")
            detail = f": {scrub(str(error), self.text)}" if error is not None else ""
            level = "ERROR" if state == S.ERROR_STATE else "INFO"
            self.log.finish(self._stages, f"{ended} after {seconds:.1f} s{detail}", level)

    def log_lines(self, first: bool) -> List[str]:
        if self.state == S.RUNNING_STATE:
            self.log.poll(self._stages)
        return super().log_lines(first)

    def _time_out(self) -> None:
        with self._lock:
            if self.state in _TERMINAL:
                return
            self._stop(S.TIMEDOUT_STATE, OperationError(f"the statement timed out after {self.timeout:g} s",
                                                        "HYT00"))
        self._cancel_jobs()

    def _stop(self, state: int, error: Optional[OperationError]) -> None:
        super()._stop(state, error)
        self._cancel_jobs()
        with self._lock:
            if self._ran.is_set() or self._cancelling:
                return
            self._cancelling = True
        # Spark cancels a group's running jobs only: a job the statement starts after this (its
        # planning was under way) is cancelled by this thread, until the statement has left run()
        threading.Thread(target=self._keep_cancelling, name=f"{self.group}-cancel", daemon=True).start()

    def _keep_cancelling(self) -> None:
        while not self._ran.wait(0.5):
            self._cancel_jobs()

    def _cancel_jobs(self) -> None:
        self.client.session.spark.sparkContext.cancelJobGroup(self.group)

    def _stage_infos(self) -> Iterator:
        """Spark's status of the statement's jobs' stages (SparkStageInfo), oldest job first."""
        tracker = self.client.session.spark.sparkContext.statusTracker()
        for job in sorted(tracker.getJobIdsForGroup(self.group)):
            info = tracker.getJobInfo(job)
            for stage_id in (info.stageIds if info else []):
                stage = tracker.getStageInfo(stage_id)
                if stage is not None:
                    yield stage

    def _stages(self) -> Iterable[Tuple[int, int, int, int]]:
        return [(s.stageId, s.numTasks, s.numCompletedTasks, s.numActiveTasks) for s in self._stage_infos()]

    def progress(self) -> ttypes.TProgressUpdateResp:
        """The running jobs' stages as Spark's status tracker counts their tasks, in the columns of
        Hive's progress (beeline formats exactly nine: it fails on fewer)."""
        rows, total, done = [], 0, 0
        for stage in self._stage_infos():
            total += stage.numTasks
            done += stage.numCompletedTasks
            pending = stage.numTasks - stage.numCompletedTasks - stage.numActiveTasks
            status = ("SUCCEEDED" if stage.numCompletedTasks >= stage.numTasks
                      else "RUNNING" if stage.numActiveTasks or stage.numCompletedTasks else "PENDING")
            rows.append([f"Stage-{stage.stageId}", "spark", status, str(stage.numTasks), str(stage.numCompletedTasks),
                         str(stage.numActiveTasks), str(max(pending, 0)), str(stage.numFailedTasks), "0"])
        status = (ttypes.TJobExecutionStatus.COMPLETE if self.state in _TERMINAL
                  else ttypes.TJobExecutionStatus.IN_PROGRESS if rows else ttypes.TJobExecutionStatus.NOT_AVAILABLE)
        share = 1.0 if self.state == S.FINISHED_STATE else (done / total if total else 0.0)
        return ttypes.TProgressUpdateResp(
            headerNames=["STAGES", "MODE", "STATUS", "TOTAL", "COMPLETED", "RUNNING", "PENDING", "FAILED", "KILLED"],
            rows=rows,
            progressedPercentage=share, status=status, footerSummary=f"{done}/{total} tasks",
            startTime=self.started)


def paimon_lines(session, scans: list, written: List[str], since_ms: int) -> List[str]:
    """The operation log's lines of what a statement did to Paimon tables: each scan's files (as
    EXPLAIN counts them), and each written table's commit of this statement (its latest snapshot,
    when made since ``since_ms``) with the records it wrote."""
    lines = [f"Paimon scan of {r.table} @ snapshot {r.snapshot_id}: {r.stats.files_planned} of "
             f"{r.stats.files_total} files planned" for r in scans]
    for name in written:
        try:
            table = session.catalog.get_table(session.identifier_text(name))
        except (PaimonError, LookupError):  # dropped by the statement, or not a Paimon table
            continue
        snap = getattr(table, "snapshot_manager", None) and table.snapshot_manager.latest()
        if snap is not None and snap.time_millis >= since_ms:
            records = "" if snap.delta_record_count is None else f", {snap.delta_record_count} records written"
            lines.append(f"Paimon commit to {name}: snapshot {snap.id} ({snap.commit_kind}){records}")
    return lines


def _day_time_text(c: str, dtype) -> str:
    """Spark's Thrift Server's (Hive's) text of a day-time interval: ``-1 02:03:04.500000000``."""
    us = f"unix_micros(TIMESTAMP '1970-01-01 00:00:00 UTC' + {c})"
    return (f"CASE WHEN {c} IS NOT NULL THEN format_string('%s%d %02d:%02d:%02d.%09d', IF({us} < 0, '-', ''), "
            f"abs({us}) div 86400000000, abs({us}) div 3600000000 % 24, abs({us}) div 60000000 % 60, "
            f"abs({us}) div 1000000 % 60, abs({us}) % 1000000 * 1000) END")


def _year_month_text(c: str, dtype) -> str:
    """Spark's Thrift Server's (Hive's) text of a year-month interval: ``-1-2``."""
    m = f"(CAST({c} AS BIGINT) * {12 if dtype.endField == dtype.YEAR else 1})"  # in months
    return (f"CASE WHEN {c} IS NOT NULL THEN format_string('%s%d-%d', IF({m} < 0, '-', ''), abs({m}) div 12, "
            f"abs({m}) % 12) END")


# Spark's types with no Arrow form (or one that is not their text): sent as Spark's Thrift Server
# writes them; a variant as its JSON (Spark's cast to STRING).
_AS_TEXT = {"DayTimeIntervalType": _day_time_text, "YearMonthIntervalType": _year_month_text,
            "VariantType": lambda c, _: f"CAST({c} AS STRING)",
            "CalendarIntervalType": lambda c, _: f"CAST({c} AS STRING)"}


def served_dataframe(df: DataFrame) -> DataFrame:
    """``df`` with each top-level column of a type in ``_AS_TEXT`` as its text."""
    if not any(type(f.dataType).__name__ in _AS_TEXT for f in df.schema.fields):
        return df

    def column(field):
        name = "`" + field.name.replace("`", "``") + "`"
        text = _AS_TEXT.get(type(field.dataType).__name__)
        return F.expr(text(name, field.dataType)).alias(field.name) if text else F.col(name)
    return df.select(*[column(f) for f in df.schema.fields])


HIVE_LISTINGS = "paimon.server.hiveListings"
_LISTING = re.compile(r"\s*SHOW\s+(TABLES|VIEWS)\b", re.I)


def hive_listing(spark, text: str, df: DataFrame) -> DataFrame:
    """``SHOW TABLES`` / ``SHOW VIEWS`` as HiveServer2 answers them (one column ``tab_name``, the
    session's temporary views left out) when the session sets ``paimon.server.hiveListings``;
    else Spark's rows (namespace, name, isTemporary), as Spark's Thrift Server answers. Clients
    written for Hive read the first column as the name: pyhive's ``hive://`` SQLAlchemy dialect
    (so Superset) lists databases' names as tables' without it (PyHive#150)."""
    if not _LISTING.match(text) or spark.conf.get(HIVE_LISTINGS, "false").lower() != "true":
        return df
    namespace, name = df.columns[0], df.columns[1]
    return df.where(F.col(namespace) != "").select(F.col(name).alias("tab_name"))


def _arrow_schema(df: DataFrame, time_zone: str) -> pa.Schema:
    return jvm_arrow_schema(df.schema, time_zone)


def arrow_batches(df: DataFrame, time_zone: str) -> Iterator[pa.RecordBatch]:
    """The rows of ``df`` as Arrow record batches, one partition at a time (the next one computed
    meanwhile): Spark's ``toLocalIterator``, in Arrow; a result bounded to a few rows in one
    piece (:data:`_ONE_PIECE_ROWS`), a small one in one job (:data:`_ONE_JOB_PARTITIONS`). Small
    string types always (the schema read with is :func:`_arrow_schema`'s, whatever
    ``useLargeVarTypes`` says), repeated struct field names kept as Spark's Thrift Server shows them."""
    schema = _arrow_schema(df, time_zone)
    spark = df.sparkSession
    per_batch = int(spark.conf.get("spark.sql.execution.arrow.maxRecordsPerBatch", "10000"))
    per_batch = per_batch if per_batch > 0 else 10000
    local = jvm_classes.local_batches(spark, df, schema, time_zone, per_batch)
    if local is not None:  # rows the driver holds (a VALUES, a small read done on the driver): no job
        yield from local
        return
    if _bounded(df, _ONE_PIECE_ROWS):
        try:
            batches = df.toArrow().cast(schema).to_batches()
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError, ValueError):
            batches = None  # a struct with repeated field names: Arrow cannot cast it, the stream keeps them
        if batches is not None:
            yield from batches
            return
    jvm = spark.sparkContext._jvm
    rdd = df._jdf.toArrowBatchRdd(per_batch, time_zone, False, False)
    partitions = rdd.getNumPartitions()
    if 0 < partitions <= _ONE_JOB_PARTITIONS:
        capped = jvm_classes.capped_batches(spark, rdd, _ONE_JOB_BYTES // partitions)
        if capped is not None:
            messages = _collected(jvm.PythonRDD.collectAndServe(capped.rdd()))
            if _TOO_BIG not in messages:
                for message in messages:
                    yield pa.ipc.read_record_batch(pa.py_buffer(message), schema)
                return
    served = jvm.PythonRDD.toLocalIteratorAndServe(rdd, True)
    for message in _local_iterator_from_socket(served, NoOpSerializer()):
        yield pa.ipc.read_record_batch(pa.py_buffer(message), schema)


# a result Spark's optimizer bounds to this many rows (a LIMIT, a global aggregate, VALUES) is
# collected in one piece: streaming costs a job per partition, a socket and a prefetch, which is most
# of a small query's time (BI tools' counts, LIMIT samples, SELECT 1)
_ONE_PIECE_ROWS = 10_000
# Any other result of at most this many partitions is first run as one job in which each partition
# gives its Arrow batches whole while they come to its share of _ONE_JOB_BYTES (CappedBatches in
# paimon-sql's jar); a partition over its share stops there and the result is streamed instead. A
# point query, two partitions: streamed 0.11-0.17 s, in one job 0.03-0.06 s. The server then holds
# at most _ONE_JOB_BYTES of a result, as the stream holds two partitions.
_ONE_JOB_PARTITIONS = 64
_ONE_JOB_BYTES = 64 << 20
_TOO_BIG = b"\0"


def _collected(served) -> List[bytes]:
    """The messages an RDD collected and served on a local socket (PySpark 4.3 reads the socket in
    a context manager, 4.1 in a plain iterator)."""
    loaded = _load_from_socket(served, NoOpSerializer())
    if hasattr(loaded, "__enter__"):
        with loaded as stream:
            return list(stream)
    return list(loaded)


def _bounded(df: DataFrame, rows: int) -> bool:
    """Whether the optimized plan says ``df`` has at most ``rows`` rows (Spark's ``maxRows``)."""
    bound = df._jdf.queryExecution().optimizedPlan().maxRows()
    return bool(bound.isDefined()) and bound.get() <= rows


def as_operation_error(e: BaseException, text: str) -> OperationError:
    """Any failure as one line for the client, with Spark's SQLSTATE where it gave one. A failure
    Spark raised while it served rows (a task's error) is told by its root cause: the exceptions
    around it only say where it was rethrown (``Exception thrown in awaitResult:``)."""
    if isinstance(e, OperationError):
        return e
    root = _java_root(e) if not isinstance(e, PaimonError) else None
    if root is not None:
        error, state = spark_error(Exception(root.toString()), text), _sql_state(root)
    else:
        error = spark_error(e, text)
        state = getattr(e, "sql_state", None) or _sql_state(e.__cause__ if isinstance(e, SparkSqlError) else e)
    return OperationError(str(error).splitlines()[0] if str(error) else type(e).__name__, state)


def _java_root(e: BaseException):
    """The innermost cause of the Java exception behind ``e`` (py4j's or PySpark's), if any; but a
    FAILED_READ_FILE on the way, which names the damaged file its cause (a decoder's) does not."""
    java = getattr(e, "java_exception", None) or getattr(e, "_origin", None)
    for _ in range(20):
        if java is not None and _condition(java).startswith("FAILED_READ_FILE"):
            break
        cause = java.getCause() if java is not None else None
        if cause is None:
            break
        java = cause
    return java


def _condition(java) -> str:
    try:
        return java.getCondition() or ""
    except Exception:  # not a SparkThrowable
        return ""


def _sql_state(error) -> str:
    try:
        return error.getSqlState() or GENERAL_SQL_STATE
    except Exception:  # not a SparkThrowable
        return GENERAL_SQL_STATE
