"""A real paimon-sql-server's idle check and session limits, against real clients: an http client
that vanishes without CloseSession has its session closed by the server's checker thread within the
timeout; a user's sessions beyond the limit are refused with HiveServer2's line (the in-process
cases: tests/spark/test_server_lifecycle.py)."""

import time

import pytest
from e2e.server_support import start_server, thrift_client
from pyhive import exc, hive
from TCLIService import ttypes

IDLE = 2  # seconds: the checker looks every 0.5 s


@pytest.fixture(scope="module")
def port(tmp_path_factory):
    with start_server(str(tmp_path_factory.mktemp("warehouse")), "--transport", "http",
                      "--idle-session-timeout", f"{IDLE}s", "--max-sessions-per-user", "2") as port:
        yield port


def test_a_vanished_http_client_loses_its_session_within_the_timeout(port):
    gone = hive.connect("127.0.0.1", port, scheme="http", username="carol")
    cursor = gone.cursor()
    cursor.execute("CREATE TEMPORARY VIEW mine AS SELECT 1 AS one")
    cursor.execute("SELECT one FROM mine")
    assert cursor.fetchall() == [(1,)]
    handle = gone.sessionHandle  # the client now vanishes: no CloseSession, no more calls
    raw = thrift_client(port, http_path="cliservice")
    info = ttypes.TGetInfoReq(sessionHandle=handle, infoType=ttypes.TGetInfoType.CLI_SERVER_NAME)
    assert raw.GetInfo(info).status.statusCode == ttypes.TStatusCode.SUCCESS_STATUS  # still open now
    time.sleep(IDLE * 1.1 + 1.0)  # the timeout, a tenth of it, the check's interval and slack
    answer = raw.GetInfo(info)
    assert answer.status.statusCode == ttypes.TStatusCode.ERROR_STATUS
    assert "invalid session handle" in answer.status.errorMessage


def test_a_busy_session_outlives_the_timeout(port):
    conn = hive.connect("127.0.0.1", port, scheme="http", username="dave")
    cursor = conn.cursor()
    for _ in range(3):  # calls more often than the timeout keep it
        cursor.execute("SELECT 1")
        assert cursor.fetchall() == [(1,)]
        time.sleep(IDLE / 2)
    cursor.execute("SELECT 2")
    assert cursor.fetchall() == [(2,)]
    conn.close()


def test_sessions_beyond_the_users_limit_are_refused(port):
    first = hive.connect("127.0.0.1", port, scheme="http", username="erin")
    second = hive.connect("127.0.0.1", port, scheme="http", username="erin")
    with pytest.raises(exc.OperationalError, match=r"Connection limit per user reached \(user: erin limit: 2\)"):
        hive.connect("127.0.0.1", port, scheme="http", username="erin")
    other = hive.connect("127.0.0.1", port, scheme="http", username="frank")  # another user's own count
    first.close()
    third = hive.connect("127.0.0.1", port, scheme="http", username="erin")  # a place was given back
    for c in (second, other, third):
        c.close()
