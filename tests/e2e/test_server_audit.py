"""The audit log (``--audit-log``) and operation logs (FetchResults ``fetchType=1``, GetLog, beeline's
progress lines) of one paimon-sql-server started for this module with a small ``--audit-log-max-bytes``.

Every kind of statement leaves exactly one line (query with its rows, INSERT, DDL, a failure, a cancel,
a timeout, a metadata call), also when its client drops the connection without closing anything and
when the server is stopped (SIGTERM, the module's last test); two clients at once get their own user and
address; the file rotates keeping K backups, 0600; no credential of test_security.SECRETS reaches it
(this module holds the "audit log holds no secret" check of tests/reliability/test_security.py).
"""

import contextlib
import glob
import json
import os
import re
import socket
import stat
import subprocess
import sys
import threading
import time

import pytest
from pyhive import hive
from TCLIService import TCLIService, ttypes
from thrift.protocol.TBinaryProtocol import TBinaryProtocol
from thrift.transport import TSocket, TTransport

from e2e.server_support import beeline, start_server
from paimon_sql.options.core_options import MASK
from reliability.test_security import SECRETS, URI_SECRETS, VALUES, _options_clause

S = ttypes.TOperationState
MAX_BYTES, BACKUPS = 40_000, 3
LONG_QUERY = ("SELECT count(*) FROM range(0, 100000, 1, 1) "
              "WHERE java_method('java.lang.Thread', 'sleep', 100L) IS NULL")
SHUFFLE_QUERY = ("SELECT a.k, count(*) AS n FROM (SELECT id % 7 AS k FROM range(0, 200000, 1, 4)) a "
                 "JOIN (SELECT id AS k FROM range(0, 7, 1, 2)) b ON a.k = b.k GROUP BY a.k ORDER BY a.k")


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """The module's server: ``port``, ``log`` (the audit log's path) and ``stop()`` (SIGTERM)."""
    base = tmp_path_factory.mktemp("audit-server")
    log = str(base / "audit.jsonl")
    stack = contextlib.ExitStack()
    port = stack.enter_context(start_server(
        str(base / "warehouse"), "--conf", f"spark.sql.warehouse.dir={base / 'spark-warehouse'}",
        "--audit-log", log, "--audit-log-max-bytes", str(MAX_BYTES), "--audit-log-backups", str(BACKUPS)))
    server = type("Server", (), {"port": port, "log": log, "stop": stack.close})
    with stack:
        yield server


class Client:
    """A raw TCLIService client on its own connection (NOSASL), whose local address is known."""

    def __init__(self, port: int, user: str = "auditor"):
        self.sock = TSocket.TSocket("127.0.0.1", port)
        self.sock.setTimeout(180_000)  # a call that hangs fails the test instead
        self.trans = TTransport.TBufferedTransport(self.sock)
        self.trans.open()
        host, local_port = self.sock.handle.getsockname()[:2]
        self.address = f"{host}:{local_port}"
        self.rpc = TCLIService.Client(TBinaryProtocol(self.trans))
        resp = self.rpc.OpenSession(ttypes.TOpenSessionReq(
            client_protocol=ttypes.TProtocolVersion.HIVE_CLI_SERVICE_PROTOCOL_V10, username=user))
        self.session = resp.sessionHandle
        self.session_id = self.session.sessionId.guid.hex()

    def execute(self, text: str, run_async: bool = True, timeout: int = 0):
        resp = self.rpc.ExecuteStatement(ttypes.TExecuteStatementReq(
            sessionHandle=self.session, statement=text, runAsync=run_async, queryTimeout=timeout))
        assert resp.status.statusCode == ttypes.TStatusCode.SUCCESS_STATUS, resp.status.errorMessage
        return resp.operationHandle

    def wait(self, op, seconds: float = 120):
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            state = self.rpc.GetOperationStatus(ttypes.TGetOperationStatusReq(operationHandle=op)).operationState
            if state not in (S.INITIALIZED_STATE, S.PENDING_STATE, S.RUNNING_STATE):
                return state
            time.sleep(0.1)
        raise AssertionError("the operation did not end")

    def fetch(self, op, fetch_type: int = 0, first: bool = False, max_rows: int = 1000):
        resp = self.rpc.FetchResults(ttypes.TFetchResultsReq(
            operationHandle=op, maxRows=max_rows, fetchType=fetch_type,
            orientation=ttypes.TFetchOrientation.FETCH_FIRST if first else ttypes.TFetchOrientation.FETCH_NEXT))
        assert resp.status.statusCode == ttypes.TStatusCode.SUCCESS_STATUS, resp.status.errorMessage
        return resp.results.columns[0] if resp.results.columns else None

    def log_lines(self, op, first: bool = False):
        return list(self.fetch(op, 1, first).stringVal.values)

    def close_op(self, op):
        self.rpc.CloseOperation(ttypes.TCloseOperationReq(operationHandle=op))

    def close(self):
        self.rpc.CloseSession(ttypes.TCloseSessionReq(sessionHandle=self.session))
        self.trans.close()


def records(server):
    """Every line of the audit log and its backups, oldest first."""
    files = sorted(glob.glob(server.log + ".*"), key=lambda f: -int(f.rsplit(".", 1)[1])) + [server.log]
    out = []
    for f in files:
        with open(f, encoding="utf-8") as fh:
            out += [json.loads(line) for line in fh]
    return out


def lines_of(server, statement: str, count: int = 1, seconds: float = 30):
    """The audit lines of ``statement`` (exactly ``count`` of them, waited for)."""
    deadline = time.monotonic() + seconds
    while True:
        found = [r for r in records(server) if r["statement"] == statement]
        if len(found) >= count or time.monotonic() > deadline:
            assert len(found) == count, (statement, found)
            return found
        time.sleep(0.2)


def test_every_kind_of_statement_leaves_one_line(server):
    client = Client(server.port, "alice")
    fields = {"time", "user", "client", "session", "operation", "kind", "statement", "tables_read",
              "tables_written", "rows", "duration_ms", "outcome"}
    for text in ("CREATE TABLE audited (id INT, name STRING) WITH ('bucket' = '-1')",
                 "INSERT INTO audited VALUES (1, 'a'), (2, 'b'), (3, 'c')"):
        op = client.execute(text, run_async=False)
        client.close_op(op)
        [line] = lines_of(server, text)
        assert set(line) == fields and line["outcome"] == "ok" and line["rows"] is None, line
        assert line["user"] == "alice" and line["client"] == client.address and line["session"] == client.session_id
        assert line["kind"] == "ExecuteStatement" and re.fullmatch(r"[0-9a-f]{32}", line["operation"])
        assert op.operationId.guid.hex() == line["operation"]
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", line["time"]) and line["duration_ms"] >= 0
        assert (line["tables_read"], line["tables_written"]) == ([], ["default.audited"]), line

    query = "SELECT id FROM audited ORDER BY id"
    op = client.execute(query)
    assert client.wait(op) == S.FINISHED_STATE
    assert list(client.fetch(op, max_rows=2).i32Val.values) == [1, 2]
    assert list(client.fetch(op, max_rows=2).i32Val.values) == [3]
    client.close_op(op)
    [line] = lines_of(server, query)
    assert (line["rows"], line["tables_read"], line["tables_written"]) == (3, ["default.audited"], [])

    failing = "SELECT nope FROM audited"
    resp = client.rpc.ExecuteStatement(ttypes.TExecuteStatementReq(sessionHandle=client.session, statement=failing))
    assert resp.status.statusCode == ttypes.TStatusCode.ERROR_STATUS  # a sync failure: no handle to close
    [line] = lines_of(server, failing)
    assert line["outcome"] == "error" and line["error"] == resp.status.errorMessage and line["rows"] is None
    assert line["tables_read"] == ["default.audited"]

    op = client.execute(LONG_QUERY + " AND 'cancelled' = 'cancelled'")
    time.sleep(1)
    client.rpc.CancelOperation(ttypes.TCancelOperationReq(operationHandle=op))
    client.close_op(op)
    [line] = lines_of(server, LONG_QUERY + " AND 'cancelled' = 'cancelled'")
    assert line["outcome"] == "cancelled" and line["error"] == "the operation was cancelled"

    op = client.execute(LONG_QUERY + " AND 'timeout' = 'timeout'", timeout=1)
    assert client.wait(op) == S.TIMEDOUT_STATE
    client.close_op(op)
    [line] = lines_of(server, LONG_QUERY + " AND 'timeout' = 'timeout'")
    assert line["outcome"] == "timed out" and "timed out after 1 s" in line["error"] and line["duration_ms"] >= 900

    resp = client.rpc.GetTables(ttypes.TGetTablesReq(sessionHandle=client.session, schemaName="default",
                                                     tableName="audit%"))
    client.fetch(resp.operationHandle)
    client.close_op(resp.operationHandle)
    [line] = lines_of(server, "GetTables(schemaName='default', tableName='audit%')")
    assert line["kind"] == "GetTables" and line["rows"] == 1 and line["outcome"] == "ok"
    client.close()
    assert len([r for r in records(server) if r["session"] == client.session_id]) == 7


def test_two_clients_at_once_have_their_own_user_and_address(server):
    clients = {user: Client(server.port, user) for user in ("carol", "dave")}
    errors = []

    def run(user: str):
        try:
            for i in range(3):
                op = clients[user].execute(f"SELECT '{user}-{i}' AS who, count(*) FROM range(1000)")
                clients[user].wait(op)
                clients[user].fetch(op)
                clients[user].close_op(op)
        except Exception as e:  # the assertion below names it
            errors.append(e)
    threads = [threading.Thread(target=run, args=(u,)) for u in clients]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    for user, client in clients.items():
        for i in range(3):
            [line] = lines_of(server, f"SELECT '{user}-{i}' AS who, count(*) FROM range(1000)")
            assert (line["user"], line["client"], line["session"], line["rows"]) == (
                user, client.address, client.session_id, 1)
        client.close()
    assert clients["carol"].address != clients["dave"].address


def test_a_client_that_drops_its_connection_still_gets_its_lines(server):
    client = Client(server.port, "erin")
    done = client.execute("SELECT 'left open' AS x")
    client.wait(done)
    client.fetch(done)
    running = client.execute(LONG_QUERY + " AND 'dropped' = 'dropped'")
    time.sleep(1)
    client.trans.close()  # no CloseOperation, no CloseSession
    [line] = lines_of(server, "SELECT 'left open' AS x")
    assert (line["outcome"], line["rows"], line["user"]) == ("ok", 1, "erin")
    [line] = lines_of(server, LONG_QUERY + " AND 'dropped' = 'dropped'")
    assert line["outcome"] == "cancelled" and line["error"] and line["rows"] is None


def _secret_statements() -> list:
    """Statements writing every credential of test_security: in WITH, TBLPROPERTIES, OPTIONS hints,
    SET k=v, a CALL's options (string and map), a catalog's options; some of them failing."""
    opts = _options_clause()
    pairs = {**SECRETS, **{k: v for k, (v, _) in URI_SECRETS.items()}}
    as_map = ", ".join(f"'{k}', '{v}'" for k, v in pairs.items())
    return ([f"CREATE TABLE sec (id INT) WITH ({opts})",
             f"ALTER TABLE sec SET TBLPROPERTIES ({opts})",
             f"SELECT * FROM sec /*+ OPTIONS({opts}) */",
             f"CREATE TABLE sec_bad (id INT) WITH ({opts}",  # a syntax error
             f"CALL sys.compact(`table` => 'default.sec', options => map({as_map}))",
             "CALL sys.compact(`table` => 'default.sec', options => '"
             + ",".join(f"{k}={v}" for k, v in SECRETS.items() if " " not in v) + "')",
             f"CREATE CATALOG other WITH ('type' = 'paimon', {opts})"]
            + [f"SET {k}={v}" for k, v in pairs.items()] + [f"SET {k} = {v};" for k, v in pairs.items()])


def test_no_secret_reaches_the_audit_log_or_the_operation_log(server):
    client = Client(server.port)
    logged = []
    for text in _secret_statements():
        resp = client.rpc.ExecuteStatement(ttypes.TExecuteStatementReq(
            sessionHandle=client.session, statement=text, runAsync=True))
        if resp.operationHandle is not None:
            client.wait(resp.operationHandle)
            logged += client.log_lines(resp.operationHandle, first=True)
            client.close_op(resp.operationHandle)
    client.close()
    lines = [r for r in records(server) if r["session"] == client.session_id]
    assert len(lines) == len(_secret_statements())
    text = "\n".join(open(f, encoding="utf-8").read() for f in glob.glob(server.log + "*"))
    assert [v for v in VALUES if v in text] == []
    assert [v for v in VALUES if v in "\n".join(logged)] == []
    assert all(MASK in r["statement"] for r in lines), [r["statement"] for r in lines if MASK not in r["statement"]]
    assert any(line.startswith("INFO  : Executing statement: SET fs.s3a.secret.key=" + MASK) for line in logged)


def test_operation_log_gives_each_line_once(server):
    client = Client(server.port)
    op = client.execute(SHUFFLE_QUERY)
    read, deadline = [], time.monotonic() + 120
    while time.monotonic() < deadline:
        read += client.log_lines(op)
        state = client.rpc.GetOperationStatus(ttypes.TGetOperationStatusReq(operationHandle=op)).operationState
        if state not in (S.PENDING_STATE, S.RUNNING_STATE):
            break
        time.sleep(0.2)
    read += client.log_lines(op)
    assert client.log_lines(op) == []  # nothing new: nothing again
    assert read[0] == "INFO  : Executing statement: " + SHUFFLE_QUERY
    assert re.fullmatch(r"INFO  : Completed in \d+\.\d s", read[-1]), read
    stages = [line for line in read if re.fullmatch(r"INFO  : Stage-\d+: \d+/\d+ tasks \(\d+ running\)", line)]
    assert stages and len(stages) == len(read) - 2, read
    assert len(set(read)) == len(read)
    assert client.log_lines(op, first=True) == read  # FETCH_FIRST: all of them again
    log = client.rpc.GetLog(ttypes.TGetLogReq(operationHandle=op)).log
    assert log == "\n".join(read)
    assert len(client.fetch(op).i64Val.values) == 7
    client.close_op(op)
    client.close()


def test_operation_log_tells_the_paimon_scans_and_commits(server):
    client = Client(server.port)
    for text in ("CREATE TABLE logged (id INT, p STRING) PARTITIONED BY (p) WITH ('bucket' = '-1')",
                 "INSERT INTO logged VALUES (1, 'a'), (2, 'b'), (3, 'b')"):
        op = client.execute(text, run_async=False)
        lines = client.log_lines(op)
        client.close_op(op)
    assert any(re.fullmatch(r"INFO  : Paimon commit to default\.logged: snapshot 1 \(APPEND\), 3 records written",
                            line) for line in lines), lines
    op = client.execute("SELECT count(*) FROM logged WHERE p = 'b'")
    assert client.wait(op) == S.FINISHED_STATE
    lines = client.log_lines(op)
    assert "INFO  : Paimon scan of default.logged @ snapshot 1: 1 of 2 files planned" in lines, lines
    client.close_op(op)
    client.close()


def test_beeline_prints_the_progress_lines(server):
    values = ", ".join(f"({i}, 'r{i % 3}'), ({i + 100}, 'r{(i + 1) % 3}')" for i in range(4))
    with contextlib.closing(hive.connect("127.0.0.1", server.port, auth="NOSASL")) as conn:
        cursor = conn.cursor()
        cursor.execute("CREATE TABLE sales (id INT, region STRING) PARTITIONED BY (region) WITH ('bucket' = '-1')")
        cursor.execute(f"INSERT INTO sales VALUES {values}")
    query = "SELECT region, count(*) FROM sales s JOIN range(0, 200) r ON s.id = r.id GROUP BY region"
    insert = "INSERT INTO sales SELECT id + 1000, region FROM sales"
    done = beeline(server.port, f"{insert}; {query}", silent=False)
    assert done.returncode == 0, done.stderr
    shown = [line for line in done.stderr.splitlines() if line.startswith(("INFO  :", "ERROR :"))]
    assert shown[0] == f"INFO  : Executing statement: {insert}", done.stderr
    ends = [i for i, line in enumerate(shown) if re.fullmatch(r"INFO  : Completed in \d+\.\d s", line)]
    assert len(ends) == 2 and shown[ends[0] + 1] == f"INFO  : Executing statement: {query}", shown  # one each
    assert any(re.fullmatch(r"INFO  : Stage-\d+: \d+/\d+ tasks \(\d+ running\)", line)
               for line in shown[ends[0]:]), shown  # the query's stages


def test_rotation_keeps_k_private_backups(server):
    client = Client(server.port)
    # words, not one long one: the server's credential scan of a statement is quadratic in a word's length
    padding = "x " * 4500
    for i in range(20):  # 20 lines of ~9.2 kB (4 a file): 184 kB, past (1 + BACKUPS) files of MAX_BYTES
        op = client.execute(f"SELECT {i} AS n -- {padding}", run_async=False)
        client.close_op(op)
    client.close()
    files = sorted(glob.glob(server.log + "*"))
    assert files == [server.log] + [f"{server.log}.{i}" for i in range(1, BACKUPS + 1)]
    for f in files:
        assert stat.S_IMODE(os.stat(f).st_mode) == 0o600
        assert os.path.getsize(f) <= MAX_BYTES
    assert lines_of(server, f"SELECT 19 AS n -- {padding}")  # the newest line is kept


def test_bad_audit_flags_are_refused(tmp_path):
    base = [sys.executable, "-m", "paimon_sql.server", "--warehouse", str(tmp_path / "w")]
    for args, message in [(["--audit-log-backups", "3"], "--audit-log-max-bytes and --audit-log-backups need "
                                                         "--audit-log"),
                          (["--audit-log", str(tmp_path / "a"), "--audit-log-backups", "0"],
                           "--audit-log-backups must be 1 or more"),
                          (["--audit-log", str(tmp_path / "a"), "--audit-log-max-bytes", "0"],
                           "--audit-log-max-bytes must be 1 or more"),
                          (["--audit-log", str(tmp_path / "missing" / "a")], "cannot write --audit-log")]:
        done = subprocess.run(base + args, capture_output=True, text=True, timeout=60)
        assert done.returncode == 2 and done.stderr.startswith("Error: " + message), done.stderr
        assert len(done.stderr.splitlines()) == 1


def test_server_stop_writes_the_lines_of_running_statements(server):
    """The module's last test: it stops the server (SIGTERM, as start_server does)."""
    client = Client(server.port, "frank")
    op = client.execute(LONG_QUERY + " AND 'sigterm' = 'sigterm'")
    time.sleep(1)
    assert client.rpc.GetOperationStatus(ttypes.TGetOperationStatusReq(operationHandle=op)).operationState == \
        S.RUNNING_STATE
    server.stop()
    [line] = lines_of(server, LONG_QUERY + " AND 'sigterm' = 'sigterm'", seconds=0)
    assert (line["user"], line["outcome"]) == ("frank", "cancelled")
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", server.port), timeout=5).close()
