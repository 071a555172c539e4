"""SQL through real clients (pyhive, impyla) against one paimon-sql-server (the process's, conftest.py):
statements the shell runs, typed results, per-connection USE/SET, 16 concurrent clients, cancel, timeout,
errors, batched fetch."""

import datetime
import decimal
import threading
import time

import pytest
from impala import dbapi as impala_dbapi
from pyhive import hive
from TCLIService import ttypes

S = ttypes.TOperationState
# A task on one core of the server's local[2] for hours, which a cancel interrupts (Thread.sleep; a
# cross join's generated loop never looks at the interrupt: its task would run on after a cancel).
LONG_QUERY = ("SELECT count(*) FROM range(0, 100000, 1, 1) "
              "WHERE java_method('java.lang.Thread', 'sleep', 100L) IS NULL")


@pytest.fixture(scope="module")
def port(server_port):
    return server_port


def pyhive_cursor(port, **kwargs):
    return hive.connect("127.0.0.1", port, auth="NOSASL", **kwargs).cursor()


def rows(cursor, sql):
    cursor.execute(sql)
    return cursor.fetchall()


def test_statements_the_shell_runs(port):
    cur = pyhive_cursor(port)
    cur.execute("CREATE TABLE orders (id INT, amount DECIMAL(10,2), PRIMARY KEY (id) NOT ENFORCED) "
                "WITH ('bucket' = '1')")
    cur.execute("CREATE TABLE updates (id INT, amount DECIMAL(10,2)) TBLPROPERTIES ('bucket' = '-1')")
    assert cur.description is None  # DDL has no result set
    cur.execute("INSERT INTO orders VALUES (1, 10.50), (2, 20.00)")
    cur.execute("INSERT INTO updates VALUES (2, 25.00), (3, 30.25)")
    cur.execute("MERGE INTO orders o USING updates u ON o.id = u.id "
                "WHEN MATCHED THEN UPDATE SET amount = u.amount WHEN NOT MATCHED THEN INSERT *")
    assert rows(cur, "SELECT id, amount FROM orders ORDER BY id") == [
        (1, decimal.Decimal("10.50")), (2, decimal.Decimal("25.00")), (3, decimal.Decimal("30.25"))]
    assert rows(cur, "SELECT id, amount FROM orders VERSION AS OF 1 ORDER BY id") == [
        (1, decimal.Decimal("10.50")), (2, decimal.Decimal("20.00"))]
    snapshots = rows(cur, "SELECT snapshot_id, commit_kind FROM `orders$snapshots` ORDER BY snapshot_id")
    assert [s[0] for s in snapshots] == [1, 2]
    assert [d[0] for d in cur.description] == ["snapshot_id", "commit_kind"]
    assert rows(cur, "CALL sys.create_tag(`table` => 'default.orders', tag => 'first', snapshot => 1)") == [(True,)]
    assert rows(cur, "SELECT count(*) FROM orders VERSION AS OF 'first'") == [(2,)]
    assert ("first",) in [r[:1] for r in rows(cur, "SELECT tag_name FROM `orders$tags`")]


def test_async_statements(port):
    cur = pyhive_cursor(port)
    cur.execute("CREATE TABLE async_t (id INT) WITH ('bucket' = '-1')")
    cur.execute("INSERT INTO async_t VALUES (1), (2)", async_=True)
    assert _wait(cur.poll, lambda s: s.operationState == S.FINISHED_STATE).hasResultSet is False
    assert cur.description is None
    cur.execute("-- a comment first\nSELECT sum(id) FROM async_t", async_=True)
    assert _wait(cur.poll, lambda s: s.operationState == S.FINISHED_STATE).hasResultSet is True
    assert cur.fetchall() == [(3,)]


def test_typed_results_pyhive_and_impyla(port):
    sql = ("SELECT CAST(1.50 AS DECIMAL(5,2)) d, DATE '2024-02-29' dt, TIMESTAMP '2024-01-02 03:04:05.120' ts, "
           "array(1, NULL) a, map('b', 2, 'a', 1) m, named_struct('x', 1, 'y', 'q') st, CAST(NULL AS INT) n, "
           "CAST(0.1 AS FLOAT) f, CAST(7 AS TINYINT) t, true b, X'6869' bin, 'text' s, parse_json('[1,{\"k\":2}]') v")
    cur = pyhive_cursor(port)
    assert rows(cur, sql) == [(decimal.Decimal("1.50"), "2024-02-29", datetime.datetime(2024, 1, 2, 3, 4, 5, 120000),
                               "[1,null]", '{"a":1,"b":2}', '{"x":1,"y":"q"}', None, 0.1, 7, True, b"hi", "text",
                               '[1,{"k":2}]')]
    assert [d[1] for d in cur.description] == [
        "DECIMAL_TYPE", "DATE_TYPE", "TIMESTAMP_TYPE", "STRING_TYPE", "STRING_TYPE", "STRING_TYPE", "INT_TYPE",
        "FLOAT_TYPE", "TINYINT_TYPE", "BOOLEAN_TYPE", "BINARY_TYPE", "STRING_TYPE", "STRING_TYPE"]

    # Java's texts inside complex values (doubles, plain decimals, sorted map entries, nested NULLs),
    # intervals as Hive writes them
    assert rows(cur, "SELECT array(1e10D, 0.5D, 1D), array(CAST(0.0000001 AS DECIMAL(10,7))), "
                     "map(2, array('b', NULL), 1, NULL), named_struct('t', TIMESTAMP '2024-01-02 03:04:05'), "
                     "INTERVAL '1 02:03:04.5' DAY TO SECOND, -INTERVAL '1-2' YEAR TO MONTH") == [
        ("[1.0E10,0.5,1.0]", "[0.0000001]", '{1:null,2:["b",null]}', '{"t":2024-01-02 03:04:05}',
         "1 02:03:04.500000000", "-1-2")]

    conn = impala_dbapi.connect("127.0.0.1", port, auth_mechanism="NOSASL")
    icur = conn.cursor()
    icur.execute(sql)
    got = icur.fetchall()[0]
    assert decimal.Decimal(str(got[0])) == decimal.Decimal("1.50")
    assert got[3:7] == ("[1,null]", '{"a":1,"b":2}', '{"x":1,"y":"q"}', None)  # text, not bytes
    assert str(got[1]) == "2024-02-29" and str(got[2]).startswith("2024-01-02 03:04:05.12")
    icur.execute("SELECT id, CASE WHEN id % 2 = 0 THEN NULL ELSE id END v FROM range(5)")
    assert icur.fetchall() == [(0, None), (1, 1), (2, None), (3, 3), (4, None)]
    icur.close()  # now: at garbage collection, after the server stops, impyla would try to reconnect
    conn.close()


def test_use_and_set_stick_per_connection(port):
    first, second = pyhive_cursor(port, username="alice"), pyhive_cursor(port, username="bob")
    assert rows(first, "SELECT current_user()") == [("alice",)]  # the client's user, as Spark's Thrift Server
    assert rows(second, "SELECT current_user()") == [("bob",)]
    first.execute("CREATE DATABASE IF NOT EXISTS sales")
    first.execute("USE sales")
    first.execute("SET spark.sql.session.timeZone=America/New_York")
    assert rows(first, "SELECT current_database()") == [("sales",)]
    assert rows(second, "SELECT current_database()") == [("default",)]
    assert rows(first, "SELECT CAST(TIMESTAMP '2024-01-01 00:00:00 UTC' AS STRING)") == [("2023-12-31 19:00:00",)]
    assert rows(second, "SELECT CAST(TIMESTAMP '2024-01-01 00:00:00 UTC' AS STRING)") != [("2023-12-31 19:00:00",)]
    # timestamps are sent in the session's time zone
    assert rows(first, "SELECT TIMESTAMP '2024-01-01 00:00:00 UTC'") == [(datetime.datetime(2023, 12, 31, 19, 0),)]
    # the session configuration a client opens with: use:database and hiveconf
    third = pyhive_cursor(port, database="sales", configuration={"spark.sql.shuffle.partitions": "3"})
    assert rows(third, "SELECT current_database()") == [("sales",)]
    assert rows(third, "SET spark.sql.shuffle.partitions") == [("spark.sql.shuffle.partitions", "3")]


def test_sixteen_concurrent_clients(port):
    setup = pyhive_cursor(port)
    setup.execute("CREATE TABLE events (client INT, n INT) WITH ('bucket' = '-1')")
    setup.execute("CREATE DATABASE IF NOT EXISTS other")
    failures, seen = [], {}

    def client(i):
        try:
            cur = pyhive_cursor(port)
            cur.execute("USE other" if i % 2 else "USE default")
            cur.execute(f"SET paimon.test.client={i}")
            for n in range(2):
                cur.execute(f"INSERT INTO default.events VALUES ({i}, {n})")
            count = rows(cur, f"SELECT count(*) FROM default.events WHERE client = {i}")[0][0]
            seen[i] = (count, rows(cur, "SELECT current_database()")[0][0],
                       rows(cur, "SET paimon.test.client")[0][1])
        except Exception as e:  # noqa: BLE001 - reported below, by client
            failures.append((i, e))

    threads = [threading.Thread(target=client, args=(i,)) for i in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(240)
    assert not failures
    assert seen == {i: (2, "other" if i % 2 else "default", str(i)) for i in range(16)}
    assert rows(setup, "SELECT count(*), count(DISTINCT client) FROM events") == [(32, 16)]


def test_cancel_stops_the_job_and_others_are_served(port):
    first, second, other = pyhive_cursor(port), pyhive_cursor(port), pyhive_cursor(port)
    first.execute(LONG_QUERY, async_=True)
    _wait_running_task(first)
    assert rows(other, "SELECT count(*) FROM range(1000)") == [(1000,)]  # served on the other core
    second.execute(LONG_QUERY, async_=True)
    _wait_running_task(second)
    other.execute("CREATE TABLE served_while_busy (id INT)")  # every core is taken: served all the same
    first.cancel()
    assert first.poll().operationState == S.CANCELED_STATE
    second.close()  # CloseOperation while the statement still makes its first rows: its job stops too
    started = time.monotonic()  # a query needs a core: only stopped tasks give them back
    assert rows(other, "SELECT count(*) FROM range(0, 1000, 1, 2)") == [(1000,)]
    assert time.monotonic() - started < 30


def _wait_running_task(cur):
    status = _wait(lambda: cur.poll(get_progress_update=True),
                   lambda s: s.progressUpdateResponse and any(int(r[5]) for r in s.progressUpdateResponse.rows))
    assert status.operationState == S.RUNNING_STATE


def test_query_timeout(port):
    cur = pyhive_cursor(port)
    cur.execute("SET spark.sql.thriftServer.queryTimeout=2s")
    started = time.monotonic()
    with pytest.raises(hive.OperationalError) as failed:
        cur.execute(LONG_QUERY)
    assert "timed out after 2 s" in str(failed.value)
    assert time.monotonic() - started < 30
    cur.execute("SET spark.sql.thriftServer.queryTimeout=0")
    assert rows(cur, "SELECT 1") == [(1,)]


def test_failing_statement_is_one_line_and_the_connection_lives(port):
    cur = pyhive_cursor(port)
    for sql in ("SELECT * FROM no_such_table", "SELEC 1", "SELECT assert_true(id < 2) FROM range(0, 3, 1, 1)",
                "SELECT assert_true(id < 5000) FROM range(0, 10000, 1, 2)"):  # a task of a later partition fails
        with pytest.raises(hive.OperationalError) as failed:
            rows(cur, sql)
        status = failed.value.args[0].status
        assert status.statusCode == ttypes.TStatusCode.ERROR_STATUS
        assert "\n" not in status.errorMessage and "\tat " not in status.errorMessage
        assert "Traceback" not in status.errorMessage and status.sqlState
    assert "no_such_table" in _error(cur, "SELECT * FROM no_such_table")
    assert "is not true" in _error(cur, "SELECT assert_true(id < 2) FROM range(0, 3, 1, 1)")
    assert rows(cur, "SELECT 2") == [(2,)]


def test_a_10_mb_statement_and_a_deeply_nested_one_are_answered(port):
    """Hostile sizes (issue 47): each gets its answer or one line, and the server serves on."""
    cur = pyhive_cursor(port)
    cur.execute("SELECT 1 AS one /* " + "x" * (10 << 20) + " */")
    assert cur.fetchall() == [(1,)]
    for depth in (200, 5000):
        try:
            cur.execute("SELECT " + "(" * depth + "1" + ")" * depth + " AS x")
            assert cur.fetchall() == [(1,)]
        except Exception as e:  # too deep for a parser: refused in one line, not a dropped connection
            message = str(e)
            assert depth == 5000 and "Traceback" not in message, message
    cur = pyhive_cursor(port)
    cur.execute("SELECT 2")
    assert cur.fetchall() == [(2,)]


def test_fetch_in_batches_returns_every_row(port):
    cur = pyhive_cursor(port)
    cur.arraysize = 7000
    cur.execute("SELECT id, CAST(id AS STRING) s FROM range(200000)")
    fetched = []
    while True:
        batch = cur.fetchmany(7000)
        if not batch:
            break
        assert len(batch) <= 7000
        fetched.extend(batch)
    assert len(fetched) == 200000
    assert [r[0] for r in fetched] == list(range(200000)) and fetched[123456] == (123456, "123456")


def test_raw_calls_beeline_and_odbc_drivers_make(port):
    """GetInfo, the operation log (GetLog, FetchResults fetchType=1), an unserved call and an
    unsupported fetch orientation: answers, never a dropped connection."""
    conn = hive.connect("127.0.0.1", port, auth="NOSASL")
    client, session = conn.client, conn.sessionHandle
    info = client.GetInfo(ttypes.TGetInfoReq(sessionHandle=session, infoType=ttypes.TGetInfoType.CLI_DBMS_NAME))
    assert info.infoValue.stringValue == "Apache Paimon"
    op = client.ExecuteStatement(ttypes.TExecuteStatementReq(sessionHandle=session, statement="SELECT 1 x"))
    handle = op.operationHandle
    log = client.FetchResults(ttypes.TFetchResultsReq(operationHandle=handle, orientation=0, maxRows=100, fetchType=1))
    assert log.status.statusCode == ttypes.TStatusCode.SUCCESS_STATUS
    assert client.GetLog(ttypes.TGetLogReq(operationHandle=handle)).status.statusCode == 0
    token = client.GetDelegationToken(ttypes.TGetDelegationTokenReq(sessionHandle=session, owner="a", renewer="b"))
    assert token.status.statusCode == ttypes.TStatusCode.ERROR_STATUS
    prior = client.FetchResults(ttypes.TFetchResultsReq(operationHandle=handle, orientation=1, maxRows=10))
    assert "FETCH_PRIOR" in prior.status.errorMessage
    for _ in range(2):  # FETCH_FIRST starts again
        first = client.FetchResults(ttypes.TFetchResultsReq(operationHandle=handle, orientation=4, maxRows=10))
        assert first.results.columns[0].i32Val.values == [1]
    client.CloseOperation(ttypes.TCloseOperationReq(operationHandle=handle))
    gone = client.GetOperationStatus(ttypes.TGetOperationStatusReq(operationHandle=handle))
    assert gone.status.statusCode == ttypes.TStatusCode.ERROR_STATUS
    conn.close()


def _error(cur, sql) -> str:
    with pytest.raises(hive.OperationalError) as failed:
        cur.execute(sql)
    return failed.value.args[0].status.errorMessage


def _wait(poll, done, timeout=300):
    deadline = time.monotonic() + timeout
    while True:
        status = poll()
        if done(status) or time.monotonic() > deadline:
            assert done(status), status
            return status
        time.sleep(0.3)
