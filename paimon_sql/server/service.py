"""The HiveServer2 service (``TCLIService.Iface``): client sessions, statements, fetches, metadata.

Every OpenSession gets its own paimon-sql :class:`~paimon_sql.session.Session` over
``spark.newSession()`` of the server's one Spark: its own current database (``USE`` sticks), SQL
conf (``SET``), temporary views. Statements go through that session's ``execute`` exactly as
``Session.sql``; one statement of a session runs at a time, sessions run side by side. The session
``configuration`` a client opens with is applied as HiveServer2 does: ``use:database`` switches the
database, ``set:hiveconf:k`` / ``set:hivevar:k`` / a plain ``k`` set Spark conf ``k`` of the session.

Every failure reaches the client as one line in an ERROR status, never a dropped connection; calls
the server does not serve (delegation tokens, a fetch orientation other than NEXT/FIRST) say so.
"""

from __future__ import annotations

import functools
import logging
import re
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Dict, FrozenSet, Optional

import pyarrow as pa
from TCLIService import TCLIService, ttypes

import paimon_sql
from paimon_sql.access.control import AccessControl
from paimon_sql.access.policy import PolicyFile, Principal
from paimon_sql.exceptions import AccessDeniedError, PaimonError
from paimon_sql.server import lifecycle, metadata, rowset, transport
from paimon_sql.server.admission import Admission
from paimon_sql.server.operations import (
    MetadataOperation,
    Operation,
    OperationError,
    StatementOperation,
    as_operation_error,
    new_handle_id,
)
from paimon_sql.session import Session, connect

if TYPE_CHECKING:
    from paimon_sql.server.audit import AuditLog

log = logging.getLogger("paimon_sql.server")

V = ttypes.TProtocolVersion
OK = ttypes.TStatus(statusCode=ttypes.TStatusCode.SUCCESS_STATUS)
SERVER_NAME, DBMS_NAME = "paimon-sql", "Apache Paimon"
PROXY_USER_KEYS = ("hive.server2.proxy.user", "set:hiveconf:hive.server2.proxy.user")  # HiveServer2's impersonation
_QUERY_TIMEOUT = "spark.sql.thriftServer.queryTimeout"  # Spark's Thrift Server's own setting, honoured here
# Statements that return rows, by their first word (after comments): an async statement's handle says
# whether it has a result set before it runs; GetOperationStatus says for sure afterwards.
_ROWS_FIRST = re.compile(r"(?:\s|--[^\n]*(?:\n|$)|/\*.*?\*/)*\(*\s*"
                         r"(SELECT|WITH|SHOW|DESC|DESCRIBE|EXPLAIN|CALL|VALUES|TABLE|FROM|SET)\b", re.I | re.S)
_INFO = {
    ttypes.TGetInfoType.CLI_SERVER_NAME: ttypes.TGetInfoValue(stringValue=SERVER_NAME),
    ttypes.TGetInfoType.CLI_DBMS_NAME: ttypes.TGetInfoValue(stringValue=DBMS_NAME),
    ttypes.TGetInfoType.CLI_DBMS_VER: ttypes.TGetInfoValue(stringValue=paimon_sql.__version__),
    ttypes.TGetInfoType.CLI_MAX_COLUMN_NAME_LEN: ttypes.TGetInfoValue(lenValue=128),
    ttypes.TGetInfoType.CLI_MAX_SCHEMA_NAME_LEN: ttypes.TGetInfoValue(lenValue=128),
    ttypes.TGetInfoType.CLI_MAX_TABLE_NAME_LEN: ttypes.TGetInfoValue(lenValue=128),
    ttypes.TGetInfoType.CLI_TXN_CAPABLE: ttypes.TGetInfoValue(lenValue=0),
}


def _no_groups(user: str) -> FrozenSet[str]:
    return frozenset()


@dataclass
class ServerOptions:
    """``query_timeout``: seconds a statement may run before it is cancelled (0: no limit; a
    client's ``queryTimeout`` or the session's ``spark.sql.thriftServer.queryTimeout`` may set a
    shorter one). ``async_threads``: statements run in the background at once. ``policy``: the
    grants (``--policy-file``; None: every user administers everything). ``groups``: a user's
    directory groups, as the sign-in found them (the grants of ``group:<name>``). ``audit``: the
    audit log every operation's line goes to, when there is one. ``limits``: sessions per user and
    address, idle timeouts (:mod:`paimon_sql.server.lifecycle`). ``admission``: how many statements
    are in their driver-side part at once (:mod:`paimon_sql.server.admission`)."""
    query_timeout: float = 0.0
    async_threads: int = 64
    policy: Optional[PolicyFile] = None
    groups: Callable[[str], FrozenSet[str]] = _no_groups
    audit: Optional[AuditLog] = None
    limits: lifecycle.Limits = field(default_factory=lifecycle.Limits)
    admission: Admission = field(default_factory=Admission.per_core)


class ClientSession:
    """One client's session: its paimon-sql session, and its operations by handle. ``user``: the
    user the transport authenticated, else the one the client named; ``address``: the client's
    ``ip:port`` when it opened the session."""

    def __init__(self, session: Session, user: str, protocol: int, address: str = ""):
        self.session = session
        self.user = user
        self.address = address
        self.protocol = protocol
        self.handle = ttypes.TSessionHandle(sessionId=new_handle_id())
        self.connection = threading.get_ident()  # the thread serving the connection that opened it
        self.operations: Dict[bytes, Operation] = {}
        self.turn = threading.Lock()  # one statement of the session at a time
        self.touched = time.monotonic()  # the client's last call on it or its operations
        self.busy = 0  # calls of its running now (a statement run synchronously): not idle meanwhile

    def activate(self) -> None:
        _activate(self.session.spark, self.user)

    def time_zone(self) -> str:
        return self.session.spark.conf.get("spark.sql.session.timeZone")

    def configure(self, configuration: Dict[str, str]) -> None:
        """The OpenSession configuration, as HiveServer2 applies it; a setting the user's grants
        do not allow (``spark.sql.catalog.*``, ...) refuses the session, as ``SET`` would be refused."""
        for key, value in configuration.items():
            if key in PROXY_USER_KEYS:
                continue  # the user the session acts for: OpenSession's
            if key == "use:database":
                if value:
                    self.session.execute(f"USE `{value.replace('`', '``')}`")
                continue
            name = key[4:] if key.startswith("set:") else key
            scope, _, rest = name.partition(":")
            if scope in ("hiveconf", "hivevar"):
                name = rest
            elif rest and scope in ("system", "env"):
                raise OperationError(f"session configuration '{key}' cannot be set: the server's "
                                     f"{scope} properties are not a client's")
            self.session.access.check_setting(name)
            self.session.spark.conf.set(name, value)

    def close(self) -> None:
        for op in list(self.operations.values()):
            op.close()
        self.operations.clear()
        self.session.release()


def _activate(spark, user: Optional[str] = None) -> None:
    """Make ``spark`` the JVM's active session of this thread: Spark finds a session's Python data
    sources (``paimon``) through the active session, not the session a plan belongs to. ``user``
    becomes ``current_user()`` of this thread's statements, as Spark's Thrift Server sets it."""
    session_class, current_user = _jvm_handles(spark._jvm)
    session_class.setActiveSession(spark._jsparkSession)
    if user is not None:
        current_user.set(user)


@functools.lru_cache(maxsize=None)
def _jvm_handles(jvm):
    """(Spark's SparkSession class, the JVM's ``current_user()`` thread-local), looked up once: each
    lookup is a py4j round trip, and every statement needs both."""
    context = jvm.java.lang.Class.forName("org.apache.spark.sql.catalyst.CurrentUserContext$")
    return jvm.SparkSession, context.getField("MODULE$").get(None).CURRENT_USER()


def _error_status(error: OperationError) -> ttypes.TStatus:
    return ttypes.TStatus(statusCode=ttypes.TStatusCode.ERROR_STATUS, errorMessage=str(error),
                          sqlState=error.sql_state, errorCode=0)


def _answer(response, name: str, call):
    """``call()``, or ``response(status=...)`` holding its failure as one line, whatever it is."""
    try:
        return call()
    except Exception as e:
        if not isinstance(e, PaimonError):
            log.exception("%s failed", name)
        return response(status=_error_status(as_operation_error(e, "")))


def _answers(response):
    def wrap(method):
        @functools.wraps(method)
        def call(self, req):
            return _answer(response, method.__name__, lambda: method(self, req))
        return call
    return wrap


def _tell(line: str) -> None:
    sys.stderr.write(f"paimon-sql-server: {line}\n")
    sys.stderr.flush()


def _seconds(text: str) -> float:
    """A Spark time setting (``30``, ``30s``, ``500ms``, ``2min``) in seconds; seconds by default."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*(ms|s|m|min|h)?\s*", text or "0")
    if m is None:
        raise OperationError(f"{_QUERY_TIMEOUT}: '{text}' is not a duration")
    return float(m.group(1)) * {"ms": 0.001, "m": 60, "min": 60, "h": 3600}.get(m.group(2), 1)


class TCLIServiceHandler(TCLIService.Iface):
    def __init__(self, base_session: Session, options: ServerOptions = None):
        self.base = base_session
        self.options = options or ServerOptions()
        self._sessions: Dict[bytes, ClientSession] = {}
        self._operations: Dict[bytes, tuple] = {}  # operation guid -> (client session, operation)
        self._lock = threading.Lock()
        self._pool = ThreadPoolExecutor(self.options.async_threads, thread_name_prefix="paimon-sql-statement")
        self._stop = threading.Event()
        lifecycle.start_checker(self.options.limits, self.reap, self._stop)

    # -- sessions -----------------------------------------------------------------------------------

    @_answers(ttypes.TOpenSessionResp)
    def OpenSession(self, req):
        protocol = min(req.client_protocol, V.HIVE_CLI_SERVICE_PROTOCOL_V10)
        if protocol < V.HIVE_CLI_SERVICE_PROTOCOL_V6:
            raise OperationError(f"client protocol {V._VALUES_TO_NAMES.get(protocol, protocol)} is too old: "
                                 "paimon-sql-server sends column-based results (HIVE_CLI_SERVICE_PROTOCOL_V6 or later)")
        connection = transport.current()
        signed_in = connection.user if connection is not None and connection.user else req.username or "anonymous"
        access = self._access(signed_in, req.configuration or {})
        address = connection.address if connection is not None else ""
        lifecycle.check_open(self.options.limits, list(self._sessions.values()), access.principal.user, address)
        spark = self.base.spark.newSession()
        _activate(spark)
        session = connect(self.base.warehouse, spark=spark, catalog_options=self.base.catalog_options)
        session.access = access
        if self.options.policy is not None:  # SQL on files is for the policy's admins (they may SET it back)
            spark.conf.set("spark.sql.runSQLOnFiles", "false")
        client = ClientSession(session, access.principal.user, protocol, address)
        try:
            client.configure(req.configuration or {})
            with self._lock:  # again, now that no other OpenSession can slip in between
                lifecycle.check_open(self.options.limits, self._sessions.values(), client.user, address)
                self._sessions[client.handle.sessionId.guid] = client
        except Exception:
            client.close()
            raise
        return ttypes.TOpenSessionResp(status=OK, serverProtocolVersion=protocol, sessionHandle=client.handle,
                                       configuration={})

    def _access(self, signed_in: str, configuration: Dict[str, str]) -> AccessControl:
        """The grants of a new session: the signed-in user's, or those of the user it acts for
        (``hive.server2.proxy.user``) when the policy's ``proxy`` entries let it."""
        access = AccessControl(Principal(signed_in, self.options.groups(signed_in)), self.options.policy)
        proxy = next((v for k, v in configuration.items() if k in PROXY_USER_KEYS and v), None)
        if proxy is None or proxy == signed_in:
            return access
        groups = self.options.groups(proxy)
        if self.options.policy is None or not access.may_act_for(proxy, groups):
            raise AccessDeniedError(f"permission denied: user '{signed_in}' may not act for '{proxy}' "
                                    f"(hive.server2.proxy.user): no 'proxy' entry of the policy file allows it")
        return AccessControl(Principal(proxy, groups), self.options.policy)

    @_answers(ttypes.TCloseSessionResp)
    def CloseSession(self, req):
        self._close(self._client(req.sessionHandle))
        return ttypes.TCloseSessionResp(status=OK)

    def connection_closed(self) -> None:
        """The transport's word that the connection this thread served is gone: the sessions opened
        on it (a client that never sent CloseSession) are closed, their statements cancelled."""
        me = threading.get_ident()
        for client in [c for c in list(self._sessions.values()) if c.connection == me]:
            self._close(client)

    def _close(self, client: ClientSession) -> None:
        with self._lock:
            if self._sessions.pop(client.handle.sessionId.guid, None) is None:
                return
            for key in client.operations:
                self._operations.pop(key, None)
        for op in list(client.operations.values()):
            self._end(client, op)
        client.close()

    def _end(self, client: ClientSession, op: Operation) -> None:
        """Close ``op`` for good and write its audit line."""
        op.close()
        if self.options.audit is not None:
            self.options.audit.operation(client, op)

    def shutdown(self) -> None:
        """The server stops: every session is closed (its running statements cancelled, every
        operation's audit line written)."""
        self._stop.set()
        for client in list(self._sessions.values()):
            self._close(client)

    def status(self) -> str:
        """What the server holds now, in one line (``main`` tells it on SIGUSR1): its client sessions
        (each its own Spark session), the users and addresses they belong to, their operations (those
        still running apart: a statement run synchronously is one until it answers), Spark's jobs
        running, and the statements in their driver-side part or waiting for a place in it."""
        with self._lock:
            clients = list(self._sessions.values())
            ops = [op for _, op in self._operations.values()]
        hosts = {lifecycle.host_of(c.address) for c in clients}
        inside = sum(c.busy for c in clients)  # synchronous statements, registered once they answer
        running = inside + sum(1 for op in ops if not op.ended())
        jobs = len(self.base.spark.sparkContext.statusTracker().getActiveJobsIds())
        return (f"{len(clients)} sessions ({len({c.user for c in clients})} users, {len(hosts)} addresses), "
                f"{len(ops) + inside} operations ({running} running), {jobs} Spark jobs running, "
                f"{self.options.admission.status()}")

    def reap(self, now: float) -> None:
        """Close the sessions and operations their clients left idle past the timeouts (at
        ``now``, ``time.monotonic()``'s clock), each told on stderr."""
        limits = self.options.limits
        with self._lock:
            sessions = [c for c in self._sessions.values() if lifecycle.idle(limits, c, now)]
            gone = {c.handle.sessionId.guid for c in sessions}
            ops = [(c, op) for c, op in self._operations.values()
                   if c.handle.sessionId.guid not in gone and lifecycle.idle_operation(limits, op, now)]
        for client in sessions:
            self._close(client)
            _tell(f"closed the session of {client.user}{' at ' + client.address if client.address else ''}: "
                  f"idle for {now - client.touched:.0f} s (--idle-session-timeout)")
        for client, op in ops:
            if self._forget(op) is not None:
                self._end(client, op)
                _tell(f"closed an operation of {client.user} ({op.kind}): idle for {now - op.touched:.0f} s "
                      f"(--idle-operation-timeout)")
        if not self._sessions:  # no one connected: Arrow's pool hands back what reads on the driver left
            pa.default_memory_pool().release_unused()

    @_answers(ttypes.TGetInfoResp)
    def GetInfo(self, req):
        self._client(req.sessionHandle)
        if req.infoType not in _INFO:
            name = ttypes.TGetInfoType._VALUES_TO_NAMES.get(req.infoType, req.infoType)
            raise OperationError(f"GetInfo {name} is not answered by paimon-sql-server")
        return ttypes.TGetInfoResp(status=OK, infoValue=_INFO[req.infoType])

    def _client(self, handle) -> ClientSession:
        client = self._sessions.get(handle.sessionId.guid) if handle and handle.sessionId else None
        if client is None:
            raise OperationError("invalid session handle (the session is closed or was never opened)")
        client.touched = time.monotonic()
        return client

    # -- statements ---------------------------------------------------------------------------------

    @_answers(ttypes.TExecuteStatementResp)
    def ExecuteStatement(self, req):
        client = self._client(req.sessionHandle)
        for key in req.confOverlay or {}:  # a statement's own settings, held to the grants as SET is
            client.session.access.check_setting(key)
        op = StatementOperation(client, req.statement, self._timeout(client, req.queryTimeout),
                                dict(req.confOverlay or {}), self.options.admission)
        op.handle.hasResultSet = bool(_ROWS_FIRST.match(req.statement))
        if req.runAsync:
            self._register(client, op)
            self._pool.submit(op.run)
        else:
            client.busy += 1
            try:
                op.run()
            finally:
                client.busy -= 1
                client.touched = time.monotonic()
            if op.error is not None:
                self._end(client, op)
                raise op.error
            self._register(client, op)
        return ttypes.TExecuteStatementResp(status=OK, operationHandle=op.handle)

    def _timeout(self, client: ClientSession, requested) -> float:
        """The shortest of the client's, the session's and the server's timeouts that are set."""
        session = _seconds(client.session.spark.conf.get(_QUERY_TIMEOUT, "0"))
        limits = [t for t in (requested or 0, session, self.options.query_timeout) if t > 0]
        return min(limits) if limits else 0.0

    def _register(self, client: ClientSession, op: Operation) -> None:
        with self._lock:
            client.operations[op.key] = op
            self._operations[op.key] = (client, op)

    def _operation(self, handle) -> Operation:
        found = self._operations.get(handle.operationId.guid) if handle and handle.operationId else None
        if found is None:
            raise OperationError("invalid operation handle (the operation is closed or was never started)")
        client, op = found
        op.touched = client.touched = time.monotonic()
        return op

    def _forget(self, op: Operation) -> Optional[ClientSession]:
        """Take ``op`` off the books; its session, or None when it was gone already."""
        with self._lock:
            found = self._operations.pop(op.key, None)
            if found is not None:
                found[0].operations.pop(op.key, None)
        return found[0] if found is not None else None

    @_answers(ttypes.TGetOperationStatusResp)
    def GetOperationStatus(self, req):
        op = self._operation(req.operationHandle)
        resp = ttypes.TGetOperationStatusResp(status=OK, operationState=op.state, operationStarted=op.started,
                                              operationCompleted=op.completed, hasResultSet=op.handle.hasResultSet)
        if op.error is not None:
            resp.errorMessage, resp.sqlState, resp.errorCode = str(op.error), op.error.sql_state, 0
        if req.getProgressUpdate:
            resp.progressUpdateResponse = op.progress()
        return resp

    @_answers(ttypes.TCancelOperationResp)
    def CancelOperation(self, req):
        self._operation(req.operationHandle).cancel()
        return ttypes.TCancelOperationResp(status=OK)

    @_answers(ttypes.TCloseOperationResp)
    def CloseOperation(self, req):
        op = self._operation(req.operationHandle)
        client = self._forget(op)
        if client is None:  # closed meanwhile (the idle check, the session's close)
            raise OperationError("invalid operation handle (the operation is closed or was never started)")
        self._end(client, op)
        return ttypes.TCloseOperationResp(status=OK)

    @_answers(ttypes.TGetResultSetMetadataResp)
    def GetResultSetMetadata(self, req):
        schema = self._operation(req.operationHandle).result_schema()
        return ttypes.TGetResultSetMetadataResp(
            status=OK, schema=rowset.table_schema(schema) if schema is not None else ttypes.TTableSchema(columns=[]))

    @_answers(ttypes.TFetchResultsResp)
    def FetchResults(self, req):
        op = self._operation(req.operationHandle)
        orientation = req.orientation or ttypes.TFetchOrientation.FETCH_NEXT
        if orientation not in (ttypes.TFetchOrientation.FETCH_NEXT, ttypes.TFetchOrientation.FETCH_FIRST):
            name = ttypes.TFetchOrientation._VALUES_TO_NAMES.get(orientation, orientation)
            raise OperationError(f"fetch orientation {name} is not supported (FETCH_NEXT and FETCH_FIRST are)")
        if req.fetchType == 1:  # the operation log (beeline reads it while the statement runs)
            lines = op.log_lines(orientation == ttypes.TFetchOrientation.FETCH_FIRST)
            log_column = ttypes.TColumn(stringVal=ttypes.TStringColumn(values=lines, nulls=b""))
            return ttypes.TFetchResultsResp(status=OK, hasMoreRows=False,
                                            results=ttypes.TRowSet(startRowOffset=0, rows=[], columns=[log_column]))
        max_rows = req.maxRows if req.maxRows and req.maxRows > 0 else 1000
        rows, count = op.fetch(max_rows, orientation == ttypes.TFetchOrientation.FETCH_FIRST)
        return ttypes.TFetchResultsResp(status=OK, hasMoreRows=count == max_rows, results=rows)

    @_answers(ttypes.TGetLogResp)
    def GetLog(self, req):
        return ttypes.TGetLogResp(status=OK, log=self._operation(req.operationHandle).log.text())

    # -- metadata -----------------------------------------------------------------------------------

    def _metadata(self, req, function, op_type: int, response):
        kind = type(req).__name__[1:-3]  # TGetTablesReq: GetTables
        arguments = (f"{k}={v!r}" for k, v in vars(req).items() if k != "sessionHandle" and v is not None)
        text = f"{kind}({', '.join(arguments)})"  # the audit log's statement

        def call():
            client = self._client(req.sessionHandle)
            client.activate()
            try:
                table = function(client.session, req)
            except Exception as e:
                self._end(client, MetadataOperation(op_type, None, kind, text, as_operation_error(e, "")))
                raise
            op = MetadataOperation(op_type, table, kind, text)
            self._register(client, op)
            return response(status=OK, operationHandle=op.handle)
        return _answer(response, function.__name__, call)

    # -- delegation tokens (Kerberos): not served ---------------------------------------------------

    def _no_tokens(self, response):
        return response(status=_error_status(OperationError(
            "delegation tokens are not supported by paimon-sql-server (it has no Kerberos)")))

    def GetDelegationToken(self, req):
        return self._no_tokens(ttypes.TGetDelegationTokenResp)

    def CancelDelegationToken(self, req):
        return self._no_tokens(ttypes.TCancelDelegationTokenResp)

    def RenewDelegationToken(self, req):
        return self._no_tokens(ttypes.TRenewDelegationTokenResp)


# the metadata calls, by name: what answers them, the operation type they report, their response
_METADATA_CALLS = {
    "GetCatalogs": (metadata.get_catalogs, ttypes.TOperationType.GET_CATALOGS, ttypes.TGetCatalogsResp),
    "GetSchemas": (metadata.get_schemas, ttypes.TOperationType.GET_SCHEMAS, ttypes.TGetSchemasResp),
    "GetTables": (metadata.get_tables, ttypes.TOperationType.GET_TABLES, ttypes.TGetTablesResp),
    "GetTableTypes": (metadata.get_table_types, ttypes.TOperationType.GET_TABLE_TYPES, ttypes.TGetTableTypesResp),
    "GetColumns": (metadata.get_columns, ttypes.TOperationType.GET_COLUMNS, ttypes.TGetColumnsResp),
    "GetTypeInfo": (metadata.get_type_info, ttypes.TOperationType.GET_TYPE_INFO, ttypes.TGetTypeInfoResp),
    "GetFunctions": (metadata.get_functions, ttypes.TOperationType.GET_FUNCTIONS, ttypes.TGetFunctionsResp),
    "GetPrimaryKeys": (metadata.get_primary_keys, ttypes.TOperationType.UNKNOWN, ttypes.TGetPrimaryKeysResp),
    "GetCrossReference": (metadata.get_cross_reference, ttypes.TOperationType.UNKNOWN, ttypes.TGetCrossReferenceResp),
}
for _name, (_function, _op_type, _response) in _METADATA_CALLS.items():
    setattr(TCLIServiceHandler, _name,
            lambda self, req, f=_function, t=_op_type, r=_response: self._metadata(req, f, t, r))
del _name, _function, _op_type, _response
