"""Client sessions' lifecycle in the server (paimon_sql/server/lifecycle.py): limits on sessions per
user and per address, idle sessions and operations closed, called on the handler in this process
with the idle check's clock given (the checker thread calls the same ``reap``)."""

import time
from types import SimpleNamespace

import pytest
from TCLIService import ttypes

from paimon_sql.server import lifecycle, service, transport

V10 = ttypes.TProtocolVersion.HIVE_CLI_SERVICE_PROTOCOL_V10
ERROR = ttypes.TStatusCode.ERROR_STATUS


@pytest.fixture
def make(session):
    handlers = []

    def build(**limits):
        h = service.TCLIServiceHandler(session, service.ServerOptions(limits=lifecycle.Limits(**limits)))
        handlers.append(h)
        return h
    yield build
    for h in handlers:
        h.shutdown()


def open_session(h, user="alice"):
    return h.OpenSession(ttypes.TOpenSessionReq(client_protocol=V10, username=user))


def execute(h, resp, sql, run_async=False):
    return h.ExecuteStatement(ttypes.TExecuteStatementReq(sessionHandle=resp.sessionHandle, statement=sql,
                                                          runAsync=run_async))


def alive(h, resp) -> bool:
    info = h.GetInfo(ttypes.TGetInfoReq(sessionHandle=resp.sessionHandle,
                                        infoType=ttypes.TGetInfoType.CLI_SERVER_NAME))
    return info.status.statusCode != ERROR


def client_of(h, resp):
    return h._sessions[resp.sessionHandle.sessionId.guid]


def test_sessions_per_user_are_limited(make):
    h = make(max_sessions_per_user=2)
    first, second = open_session(h), open_session(h)
    assert first.status.statusCode != ERROR and second.status.statusCode != ERROR
    third = open_session(h)
    assert third.status.statusCode == ERROR
    assert third.status.errorMessage == "Connection limit per user reached (user: alice limit: 2)"
    assert open_session(h, "bob").status.statusCode != ERROR  # another user's count is their own
    h.CloseSession(ttypes.TCloseSessionReq(sessionHandle=first.sessionHandle))
    assert open_session(h).status.statusCode != ERROR  # a closed session gives its place back


def test_sessions_per_address_are_limited(make, monkeypatch):
    h = make(max_sessions_per_ip=1)
    where = {"address": "10.0.0.7:50001"}
    monkeypatch.setattr(transport, "current", lambda: SimpleNamespace(user=None, address=where["address"]))
    assert open_session(h, "alice").status.statusCode != ERROR
    where["address"] = "10.0.0.7:50002"  # another connection from the same host
    refused = open_session(h, "bob")
    assert refused.status.errorMessage == "Connection limit per ipaddress reached (ipaddress: 10.0.0.7 limit: 1)"
    where["address"] = "[::1]:50003"
    assert open_session(h, "bob").status.statusCode != ERROR


def test_an_idle_session_is_closed_with_its_views_cache_and_running_statement(make, session):
    session.sql("CREATE DATABASE IF NOT EXISTS life")
    session.sql("CREATE TABLE IF NOT EXISTS life.t (id INT)")
    session.sql("INSERT INTO life.t VALUES (1), (2)")
    h = make(idle_session_timeout=60)
    resp = open_session(h)
    execute(h, resp, "CREATE TEMPORARY VIEW mine AS SELECT 1 AS one")
    execute(h, resp, "CACHE TABLE life.t")
    client = client_of(h, resp)
    assert client.session.cached_tables
    # a statement running in the background that no client polls any more
    running = execute(h, resp, "SELECT count(*) FROM range(100000000000) a", run_async=True)
    op = h._operations[running.operationHandle.operationId.guid][1]
    deadline = time.monotonic() + 60
    while op.state != ttypes.TOperationState.RUNNING_STATE and time.monotonic() < deadline:
        time.sleep(0.05)
    h.reap(client.touched + 59)
    assert alive(h, resp)  # within the timeout (and the call above touched it again)
    h.reap(client.touched + 61)
    assert not alive(h, resp)
    assert op.state in (ttypes.TOperationState.CANCELED_STATE, ttypes.TOperationState.CLOSED_STATE)
    assert not client.session.cached_tables  # uncached with the session
    tracker = session.spark.sparkContext.statusTracker()
    deadline = time.monotonic() + 60
    while tracker.getActiveJobsIds() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not tracker.getActiveJobsIds()  # its Spark job cancelled


def test_a_session_in_a_synchronous_statement_is_not_idle(make):
    h = make(idle_session_timeout=60)
    resp = open_session(h)
    client = client_of(h, resp)
    client.busy = 1  # what ExecuteStatement holds while the statement runs in its call
    h.reap(client.touched + 3600)
    assert alive(h, resp)


def test_an_ended_operation_left_unfetched_is_closed(make):
    h = make(idle_operation_timeout=60)
    resp = open_session(h)
    done = execute(h, resp, "SELECT 1 AS one")
    op = h._operations[done.operationHandle.operationId.guid][1]
    h.reap(op.touched + 59)
    fetch = ttypes.TFetchResultsReq(operationHandle=done.operationHandle, orientation=0, maxRows=10)
    assert h.FetchResults(fetch).status.statusCode != ERROR
    h.reap(op.touched + 61)
    gone = h.FetchResults(fetch)
    assert gone.status.statusCode == ERROR and "invalid operation handle" in gone.status.errorMessage
    assert alive(h, resp)  # the session itself is kept


def test_a_running_operation_is_not_an_idle_one(make):
    h = make(idle_operation_timeout=1)
    resp = open_session(h)
    running = execute(h, resp, "SELECT count(*) FROM range(100000000000) a", run_async=True)
    op = h._operations[running.operationHandle.operationId.guid][1]
    h.reap(op.touched + 3600)
    assert op.key in h._operations and not op.ended()
    h.CancelOperation(ttypes.TCancelOperationReq(operationHandle=running.operationHandle))


def test_durations_addresses_and_the_check_interval():
    assert [lifecycle.duration(t) for t in ("0", "90", "30s", "5m", "6h", "1.5d")] == [0, 90, 30, 300, 21600, 129600]
    with pytest.raises(ValueError, match="'soon' is not a duration"):
        lifecycle.duration("soon")
    assert [lifecycle.host_of(a) for a in ("10.1.2.3:5", "[::1]:7", "")] == ["10.1.2.3", "::1", ""]
    assert lifecycle.Limits().check_interval() == 60
    assert lifecycle.Limits(idle_session_timeout=2, idle_operation_timeout=0).check_interval() == 0.5
    assert lifecycle.Limits(idle_session_timeout=0, idle_operation_timeout=0).check_interval() is None


def test_the_servers_jvm_hands_idle_heap_back(session):
    """G1's periodic collection (off by default) is turned on in the running JVM and the free heap
    it keeps lowered, so heap a load grew is given back once the server idles; a value the JVM was
    launched with is kept."""
    from paimon_sql.server import main
    jvm = session.spark._jvm
    bean = jvm.java.lang.management.ManagementFactory.getPlatformMXBean(
        jvm.java.lang.Class.forName("com.sun.management.HotSpotDiagnosticMXBean"))
    flags = ["G1PeriodicGCInterval", "MinHeapFreeRatio", "MaxHeapFreeRatio"]
    launched = {f: bean.getVMOption(f) for f in flags}
    main._returns_idle_heap(session.spark)
    try:
        for flag, want in zip(flags, ["60000", "10", "30"]):
            now = bean.getVMOption(flag)
            if launched[flag].getOrigin().toString() == "DEFAULT":
                assert (now.getValue(), now.getOrigin().toString()) == (want, "MANAGEMENT"), flag
            else:
                assert now.getValue() == launched[flag].getValue(), flag
    finally:  # the suite's JVM as it was: Max back up before Min
        for flag in ["G1PeriodicGCInterval", "MaxHeapFreeRatio", "MinHeapFreeRatio"]:
            bean.setVMOption(flag, launched[flag].getValue())