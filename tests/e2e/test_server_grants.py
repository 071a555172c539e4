"""Grants over the wire (issue 33): one server with ``--policy-file``, users signing in by name
(``--auth none``: SASL PLAIN, any password; LDAP sign-in is tests/e2e/test_server_ldap.py's), and
the four clients. A denied statement says which grant is missing and changes nothing; two users'
sessions at once keep their own views, settings, database and ``current_user()``; a service
account acts for a user only where the policy says so; listings show only what the user may read.
"""

import json
import threading
import time

import pytest
import sqlalchemy
from impala import dbapi as impala_dbapi
from pyhive import exc, hive

from e2e.server_support import beeline, beeline_rows, start_server

POLICY = {
    "admins": ["root"],
    "grants": [{"to": ["bob", "alice"], "read": ["sales"]}, {"to": ["bob"], "write": ["sales.orders"]}],
    "proxy": {"svc": ["bob"]},
}


@pytest.fixture(scope="module")
def port(tmp_path_factory):
    root = tmp_path_factory.mktemp("grants")
    policy = root / "policy.json"
    policy.write_text(json.dumps(POLICY))
    with start_server(str(root / "warehouse"), "--auth", "none", "--policy-file", str(policy),
                      "--audit-log", str(AUDIT_LOG.setdefault("path", str(root / "audit.jsonl")))) as p:
        admin = _cursor(p, "root")
        for stmt in ["CREATE DATABASE sales", "CREATE DATABASE hr", "CREATE TABLE sales.orders (id INT, amount INT)",
                     "CREATE TABLE hr.salaries (id INT, pay INT)", "INSERT INTO sales.orders VALUES (1, 10)",
                     "INSERT INTO hr.salaries VALUES (1, 100)"]:
            admin.execute(stmt)
        yield p


AUDIT_LOG = {}  # the module server's audit log


def _cursor(port, user, configuration=None):
    return hive.connect("127.0.0.1", port, username=user, configuration=configuration).cursor()


def _rows(cursor, text):
    cursor.execute(text)
    return [tuple(r) for r in cursor.fetchall()]


def _salaries(port):
    return _rows(_cursor(port, "root"), "SELECT * FROM hr.salaries ORDER BY id")


@pytest.mark.parametrize("text, missing", [
    ("SELECT * FROM hr.salaries", "READ grant on table hr.salaries"),
    ("INSERT INTO hr.salaries VALUES (2, 1)", "WRITE grant on table hr.salaries"),
    ("INSERT INTO sales.orders SELECT * FROM hr.salaries", "READ grant on table hr.salaries"),
    ("DELETE FROM hr.salaries", "hr.salaries"),
    ("DROP TABLE hr.salaries", "ADMIN grant on table hr.salaries"),
    ("CALL sys.create_tag(table => 'hr.salaries', tag => 't')", "ADMIN grant on table hr.salaries"),
    ("SELECT * FROM hr.`salaries$files`", "READ grant on table hr.salaries"),
    ("SELECT * FROM parquet.`/etc`", "SQL on files"),
])
def test_pyhive_a_denied_statement_names_the_grant_and_changes_nothing(port, text, missing):
    before = _salaries(port)
    with pytest.raises(exc.OperationalError) as e:
        _cursor(port, "bob").execute(text)
    message = str(e.value)
    assert "permission denied: " in message and missing in message, message
    assert "42000" in message  # HiveServer2's SQLSTATE for authorization
    assert _salaries(port) == before == [(1, 100)]
    deadline = time.monotonic() + 30
    while True:  # the refusal's audit line: its user, outcome, tables and the grant it lacked
        with open(AUDIT_LOG["path"], encoding="utf-8") as f:
            found = [r for r in map(json.loads, f) if r["statement"] == text and r["user"] == "bob"]
        if found or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert found and found[-1]["outcome"] == "error" and missing in found[-1]["error"], found
    assert set(found[-1]["tables_read"] + found[-1]["tables_written"]) >= \
        ({"hr.salaries"} if "hr.salaries" in missing else set())


def test_pyhive_what_the_grants_cover_runs(port):
    bob = _cursor(port, "bob")
    bob.execute("INSERT INTO sales.orders VALUES (2, 20)")
    assert _rows(bob, "SELECT count(*) FROM sales.orders") == [(2,)]
    alice = _cursor(port, "alice")
    with pytest.raises(exc.OperationalError, match="user 'alice' has no WRITE grant on table sales.orders"):
        alice.execute("INSERT INTO sales.orders VALUES (3, 30)")
    assert _rows(alice, "SELECT count(*) FROM sales.orders") == [(2,)]


def test_beeline_impyla_and_sqlalchemy_are_held_to_the_same_grants(port):
    done = beeline(port, "SELECT count(*) AS n FROM sales.orders;", params="", user="bob", password="x")
    assert done.returncode == 0, done.stderr
    assert beeline_rows(done)[0] == ["n"]
    done = beeline(port, "SELECT * FROM hr.salaries;", params="", user="bob", password="x")
    assert done.returncode != 0 and "no READ grant on table hr.salaries" in done.stderr, done.stderr
    cursor = impala_dbapi.connect("127.0.0.1", port, auth_mechanism="PLAIN", user="alice", password="x").cursor()
    with pytest.raises(Exception, match="no READ grant on table hr.salaries"):
        cursor.execute("SELECT pay FROM hr.salaries")
    cursor.execute("SELECT count(*) FROM sales.orders")
    assert cursor.fetchall()[0][0] >= 1
    engine = sqlalchemy.create_engine(f"hive://alice@127.0.0.1:{port}/sales")
    with engine.connect() as conn:
        assert conn.execute(sqlalchemy.text("SELECT count(*) FROM sales.orders")).scalar() >= 1
        with pytest.raises(sqlalchemy.exc.DBAPIError, match="no READ grant on table hr.salaries"):
            conn.execute(sqlalchemy.text("SELECT * FROM hr.salaries"))
    engine.dispose()


def test_listings_show_only_what_the_user_may_read(port):
    bob = _cursor(port, "bob")
    assert [r[1] for r in _rows(bob, "SHOW TABLES IN hr")] == []
    assert [r[1] for r in _rows(bob, "SHOW TABLES IN sales")] == ["orders"]
    assert [r[1] for r in _rows(_cursor(port, "root"), "SHOW TABLES IN hr")] == ["salaries"]
    cursor = impala_dbapi.connect("127.0.0.1", port, auth_mechanism="PLAIN", user="bob", password="x").cursor()
    cursor.get_tables(database_name="%")
    names = {(r[1], r[2]) for r in cursor.fetchall()}
    assert ("sales", "orders") in names and ("hr", "salaries") not in names


def test_two_users_at_once_keep_their_own_sessions(port):
    """Each client's temporary views, settings, database and current_user() are its own, while both run."""
    results, errors, ready = {}, [], threading.Barrier(2)

    def run(user, db, partitions):
        try:
            c = _cursor(port, user)
            c.execute(f"USE {db}")
            c.execute(f"SET spark.sql.shuffle.partitions={partitions}")
            c.execute(f"CREATE TEMPORARY VIEW mine_{user} AS SELECT '{user}' AS who")
            ready.wait(60)
            other = "alice" if user == "bob" else "bob"
            try:
                c.execute(f"SELECT * FROM mine_{other}")
                leaked = c.fetchall()
            except exc.OperationalError:
                leaked = None
            results[user] = (_rows(c, "SELECT current_user(), current_database()")[0],
                             _rows(c, "SET spark.sql.shuffle.partitions")[0][1],
                             _rows(c, f"SELECT who FROM mine_{user}")[0][0], leaked)
        except Exception as e:  # reported below
            errors.append(e)
    threads = [threading.Thread(target=run, args=a) for a in (("bob", "sales", 3), ("alice", "default", 5))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(300)
    assert not errors, errors
    assert results["bob"] == (("bob", "sales"), "3", "bob", None)
    assert results["alice"] == (("alice", "default"), "5", "alice", None)


def test_a_service_account_acts_for_a_user_only_where_the_policy_says(port):
    svc = _cursor(port, "svc", {"hive.server2.proxy.user": "bob"})
    assert _rows(svc, "SELECT current_user()") == [("bob",)]
    svc.execute("INSERT INTO sales.orders VALUES (9, 9)")  # bob's grant, not svc's
    with pytest.raises(exc.OperationalError, match="no READ grant on table hr.salaries"):
        svc.execute("SELECT * FROM hr.salaries")
    with pytest.raises(exc.OperationalError, match="user 'svc' may not act for 'root'"):
        _cursor(port, "svc", {"hive.server2.proxy.user": "root"})
    with pytest.raises(exc.OperationalError, match="user 'bob' may not act for 'alice'"):
        _cursor(port, "bob", {"hive.server2.proxy.user": "alice"})


def test_a_setting_past_the_grants_refuses_the_session_or_the_statement(port):
    with pytest.raises(exc.OperationalError, match="setting spark.sql.catalog.x is for the policy's admins"):
        _cursor(port, "bob", {"spark.sql.catalog.x": "org.example.Catalog"})
    bob = _cursor(port, "bob")
    with pytest.raises(exc.OperationalError, match="spark.sql.runSQLOnFiles is for the policy's admins"):
        bob.execute("SET spark.sql.runSQLOnFiles=true")
    with pytest.raises(exc.OperationalError, match="function reflect is for the policy's admins"):
        bob.execute("SELECT reflect('java.lang.System', 'exit', 0)")
    assert _rows(bob, "SELECT 1") == [(1,)]  # the server is still up


# -- LDAP groups as grants ---------------------------------------------------------------------------------

GROUP_POLICY = {"admins": ["alice"],
                "grants": [{"to": ["group:analysts"], "read": ["sales"]}, {"to": ["group:staff"], "read": ["pub"]}]}


def _ldap_cursor(port, user, password):
    return hive.connect("127.0.0.1", port, auth="LDAP", username=user, password=password).cursor()


@pytest.fixture(scope="module")
def ldap_port(tmp_path_factory):
    """A server signing users in against a real slapd (searched as cn=reader, which also finds their
    groups) under a policy granting by group; the tables made by alice, its admin."""
    from e2e.ldap_support import slapd
    root = tmp_path_factory.mktemp("ldap-grants")
    policy = root / "policy.json"
    policy.write_text(json.dumps(GROUP_POLICY))
    with slapd(root / "slapd") as d, \
            start_server(str(root / "warehouse"), "--auth", "ldap", "--ldap-url", d.ldap_url,
                         "--ldap-base-dn", d.base_dn, "--ldap-bind-dn", d.reader_dn,
                         "--ldap-bind-password-file", d.reader_password_file, "--policy-file", str(policy)) as p:
        alice = _ldap_cursor(p, "alice", "alice-pw")
        for stmt in ["CREATE DATABASE sales", "CREATE DATABASE pub", "CREATE TABLE sales.s (a INT)",
                     "CREATE TABLE pub.p (a INT)", "INSERT INTO sales.s VALUES (1)", "INSERT INTO pub.p VALUES (2)"]:
            alice.execute(stmt)
        yield p


def test_ldap_groups_are_the_grants_of_their_members(ldap_port):
    dan = _ldap_cursor(ldap_port, "dan, jr", "dan-pw")  # group analysts
    assert _rows(dan, "SELECT current_user(), a FROM sales.s") == [("dan, jr", 1)]
    with pytest.raises(exc.OperationalError, match="user 'dan, jr' has no READ grant on table pub.p"):
        dan.execute("SELECT * FROM pub.p")
    bob = _ldap_cursor(ldap_port, "bob", "bob-pw")  # group staff
    assert _rows(bob, "SELECT a FROM pub.p") == [(2,)]
    with pytest.raises(exc.OperationalError, match="user 'bob' has no READ grant on table sales.s"):
        bob.execute("SELECT * FROM sales.s")
    with pytest.raises(exc.OperationalError, match="CREATE DATABASE is for the policy's admins"):
        bob.execute("CREATE DATABASE mine")
    done = beeline(ldap_port, "SELECT * FROM sales.s;", params="", user="erin", password="erin-pw")
    assert done.returncode != 0 and "user 'erin' has no READ grant on table sales.s" in done.stderr, done.stderr
    done = beeline(ldap_port, "SELECT a FROM pub.p;", params="", user="erin", password="erin-pw")
    assert done.returncode == 0 and beeline_rows(done) == [["a"], ["2"]], done.stderr


def test_a_statements_own_settings_are_held_to_the_grants(port):
    from TCLIService import ttypes

    from e2e.server_support import thrift_client
    client = thrift_client(port, user="bob", password="x")
    session = client.OpenSession(ttypes.TOpenSessionReq(username="bob", password="x")).sessionHandle
    resp = client.ExecuteStatement(ttypes.TExecuteStatementReq(
        sessionHandle=session, statement="SELECT 1", confOverlay={"spark.sql.catalog.x": "org.example.Catalog"}))
    assert resp.status.statusCode == ttypes.TStatusCode.ERROR_STATUS
    assert "setting spark.sql.catalog.x is for the policy's admins" in resp.status.errorMessage
    resp = client.ExecuteStatement(ttypes.TExecuteStatementReq(
        sessionHandle=session, statement="SELECT 1", confOverlay={"spark.sql.shuffle.partitions": "3"}))
    assert resp.status.statusCode == ttypes.TStatusCode.SUCCESS_STATUS
    client.CloseSession(ttypes.TCloseSessionReq(sessionHandle=session))
