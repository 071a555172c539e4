"""Java Apache Paimon 2.0's RESTCatalog (``metastore = rest``, real Java Paimon from Maven, driven by
tests/interop/java/RestCatalogClientDriver.java through oracles/paimon_rest_client.py) creates, writes,
upserts, reads, evolves, tags, rolls back, branches and drops tables through a REST catalog server,
and paimon-sql's SQL (itself a REST client of the same server) sees each change; Java reads what our
SQL wrote, and both commit to one table at once.

Each case runs against two servers (module-scoped ``server``, one after the other) unless it says
otherwise:

- ``paimon``: Apache Paimon's own REST test server (oracles/paimon_rest.py), which proves the driver
  and our REST client against Paimon's reading of the API;
- ``ours``: paimon-sql-server ``--rest-port P --rest-token-file F`` (issue 48), where our SQL through its
  Thrift port sees the changes too, and a user without a grant is refused (Java's
  TableNoPermissionException / DatabaseNoPermissionException over the server's 403).

One JVM for the module (both servers' clients).
"""

import contextlib
import json
import threading
from types import SimpleNamespace

import pytest
from oracles.paimon_rest import TOKEN, WAREHOUSE, rest_server
from oracles.paimon_rest_client import JavaRestClient
from support import free_port

import paimon_sql

pytestmark = pytest.mark.interop

TOKENS = {"alice": "tok-alice", "bob": "tok-bob"}
POLICY = {"admins": ["alice"], "grants": [{"to": ["bob"], "read": ["ro", "rd"]}]}  # bob reads databases ro, rd


@pytest.fixture(scope="module")
def jvm():
    with JavaRestClient({}) as client:
        yield client


@contextlib.contextmanager
def paimons_server(root):
    with rest_server(root / "data") as uri:
        yield SimpleNamespace(uri=uri, warehouse=WAREHOUSE, token=TOKEN, thrift=None)


@contextlib.contextmanager
def our_server(root):
    from e2e.server_support import start_server
    tokens, policy = root / "tokens", root / "policy.json"
    tokens.write_text("".join(f"{t} {u}\n" for u, t in TOKENS.items()))
    policy.write_text(json.dumps(POLICY))
    warehouse, rest_port = str(root / "warehouse"), free_port()
    with start_server(warehouse, "--auth", "none", "--policy-file", str(policy),
                      "--rest-port", str(rest_port), "--rest-token-file", str(tokens)) as port:
        yield SimpleNamespace(uri=f"http://127.0.0.1:{rest_port}", warehouse=warehouse, token=TOKENS["alice"],
                              thrift=port)


@pytest.fixture(scope="module", params=["paimon", "ours"])
def server(request, tmp_path_factory, jvm, spark):
    """The server (uri, warehouse, token; ``thrift``: our server's SQL port, else None), with ``java``
    (Java's RESTCatalog on it) and ``session`` (paimon-sql connected to it as a REST client)."""
    start = paimons_server if request.param == "paimon" else our_server
    with start(tmp_path_factory.mktemp(f"rest-{request.param}")) as s:
        rest = {"uri": s.uri, "token.provider": "bear", "token": s.token}
        s.java = jvm.on(warehouse=s.warehouse, **rest)
        s.session = paimon_sql.connect(s.warehouse, spark=spark, catalog_options={"metastore": "rest", **rest})
        yield s


def seen(server, text):
    """The sorted rows of ``text`` in our SQL: paimon-sql as the server's REST client, and, on our
    server, through its Thrift port as well (which must agree)."""
    rows = sorted(tuple(r) for r in server.session.sql(text).collect())
    if server.thrift is not None:
        from pyhive import hive
        with contextlib.closing(hive.connect("127.0.0.1", server.thrift, username="alice")) as conn:
            cursor = conn.cursor()
            cursor.execute(text)
            assert sorted(tuple(r) for r in cursor.fetchall()) == rows, text
    return rows


def users_table(java, db):
    """``db`` with a primary-key table ``users`` (id, v; bucket 1) and an append table ``events``."""
    java("create_database", database=db)
    java("create_table", table=f"{db}.users", columns=[["id", "BIGINT NOT NULL"], ["v", "STRING"]],
         primary_keys=["id"], options={"bucket": "1"})
    java("create_table", table=f"{db}.events", columns=[["id", "BIGINT"], ["name", "STRING"]])


def test_java_creates_writes_upserts_and_reads(server):
    java = server.java
    users_table(java, "w")
    assert "w" in java("databases") and java("tables", database="w") == ["events", "users"]
    assert java("schema", table="w.users")["columns"] == [["id", "BIGINT NOT NULL"], ["v", "STRING"]]
    assert java("write", table="w.events", rows=[[1, "a"], [2, "b"]]) == 1
    assert java("write", table="w.events", rows=[[2, "b"]]) == 2  # an append table keeps both
    assert java("write", table="w.users", rows=[[1, "one"], [2, "two"], [3, "three"]]) == 1
    assert java("write", table="w.users", rows=[[1, "uno"], [3, "three"]], kinds=["+I", "-D"]) == 2  # upsert, delete
    assert sorted(java("read", table="w.users")) == [[1, "uno"], [2, "two"]]
    assert sorted(java("read", table="w.events")) == [[1, "a"], [2, "b"], [2, "b"]]
    latest = java("snapshot", table="w.users")
    assert (latest["id"], latest["schema_id"]) == (2, 0)

    assert seen(server, "SELECT * FROM w.users") == [(1, "uno"), (2, "two")]
    assert seen(server, "SELECT * FROM w.events") == [(1, "a"), (2, "b"), (2, "b")]
    assert seen(server, "SELECT * FROM w.users VERSION AS OF 1") == [(1, "one"), (2, "two"), (3, "three")]
    assert seen(server, "SELECT snapshot_id, commit_kind FROM w.`users$snapshots`") == [(1, "APPEND"), (2, "APPEND")]
    assert seen(server, "SHOW TABLES IN w") == [("w", "events", False), ("w", "users", False)]


def test_java_evolves_tags_and_rolls_back(server):
    java = server.java
    users_table(java, "t")
    java("write", table="t.users", rows=[[1, "one"], [2, "two"]])
    java("write", table="t.users", rows=[[1, "uno"]])
    java("alter", table="t.users", changes=[{"add_column": "score", "type": "BIGINT"},
                                            {"set_option": "snapshot.num-retained.max", "value": "50"}])
    schema = java("schema", table="t.users")
    assert schema["columns"][-1] == ["score", "BIGINT"] and schema["schema_id"] == 1
    assert schema["options"]["snapshot.num-retained.max"] == "50"
    assert java("write", table="t.users", rows=[[3, "three", 30]]) == 3
    assert seen(server, "SELECT * FROM t.users") == [(1, "uno", None), (2, "two", None), (3, "three", 30)]

    java("create_tag", table="t.users", tag="v1", snapshot=1)                # Table.createTag
    java("create_tag", table="t.users", tag="v3", via="catalog")             # the server's tag endpoint
    assert java("tags", table="t.users") == {"v1": 1, "v3": 3}
    assert sorted(java("read", table="t.users", tag="v1")) == [[1, "one"], [2, "two"]]  # as of the tag's schema
    assert seen(server, "SELECT tag_name, snapshot_id FROM t.`users$tags`") == [("v1", 1), ("v3", 3)]
    assert seen(server, "SELECT id, v FROM t.users VERSION AS OF 'v1'") == [(1, "one"), (2, "two")]

    java("rollback", table="t.users", snapshot=2)
    assert java("snapshot", table="t.users")["id"] == 2
    assert seen(server, "SELECT id, v, score FROM t.users") == [(1, "uno", None), (2, "two", None)]
    java("rollback", table="t.users", tag="v1")
    assert java("snapshot", table="t.users")["id"] == 1
    assert sorted(java("read", table="t.users")) == [[1, "one", None], [2, "two", None]]
    assert seen(server, "SELECT id, v FROM t.users") == [(1, "one"), (2, "two")]
    assert seen(server, "SELECT snapshot_id FROM t.`users$snapshots`") == [(1,)]
    java("delete_tag", table="t.users", tag="v3")
    assert seen(server, "SELECT tag_name FROM t.`users$tags`") == [("v1",)]
    assert java("write", table="t.users", rows=[[4, "four", 40]]) == 2  # the next id after the rollback
    assert seen(server, "SELECT id, score FROM t.users") == [(1, None), (2, None), (4, 40)]


def test_java_reads_what_our_sql_wrote(server):
    java, session = server.java, server.session
    users_table(java, "s")
    java("write", table="s.users", rows=[[1, "one"]])
    session.sql("INSERT INTO s.users VALUES (1, 'uno'), (2, 'two')")  # an upsert of key 1
    assert sorted(java("read", table="s.users")) == [[1, "uno"], [2, "two"]]
    assert java("snapshot", table="s.users")["id"] == 2
    session.sql("ALTER TABLE s.users ADD COLUMN score INT")
    session.sql("INSERT INTO s.users VALUES (3, 'three', 30)")
    assert java("schema", table="s.users")["columns"] == [["id", "BIGINT NOT NULL"], ["v", "STRING"], ["score", "INT"]]
    assert sorted(java("read", table="s.users")) == [[1, "uno", None], [2, "two", None], [3, "three", 30]]
    session.sql("CALL sys.create_tag(table => 's.users', tag => 'sql_tag', snapshot => 2)")
    assert java("tags", table="s.users") == {"sql_tag": 2}
    assert sorted(java("read", table="s.users", tag="sql_tag")) == [[1, "uno"], [2, "two"]]

    session.sql("CREATE TABLE s.made (k INT, v STRING) TBLPROPERTIES ('primary-key' = 'k', 'bucket' = '2')")
    session.sql("INSERT INTO s.made VALUES (1, 'x'), (2, 'y'), (3, 'z')")
    assert java("tables", database="s") == ["events", "made", "users"]
    made = java("schema", table="s.made")
    assert (made["primary_keys"], made["options"]["bucket"]) == (["k"], "2")
    assert sorted(java("read", table="s.made")) == [[1, "x"], [2, "y"], [3, "z"]]
    assert java("write", table="s.made", rows=[[2, "Y"]]) == 2  # Java writes on into the buckets our SQL chose
    assert seen(server, "SELECT * FROM s.made") == [(1, "x"), (2, "Y"), (3, "z")]


def test_java_drops_tables_and_databases(server):
    java = server.java
    users_table(java, "d")
    java("write", table="d.events", rows=[[1, "a"]])
    assert seen(server, "SELECT * FROM d.events") == [(1, "a")]
    java("drop_table", table="d.events")
    assert java("tables", database="d") == ["users"]
    assert seen(server, "SHOW TABLES IN d") == [("d", "users", False)]
    assert "TableNotExistException" in java.fails("read", table="d.events").error
    assert "DatabaseNotEmptyException" in java.fails("drop_database", database="d").error
    java("drop_database", database="d", cascade=True)
    assert "d" not in java("databases")
    assert ("d",) not in seen(server, "SHOW DATABASES")
    assert "DatabaseNotExistException" in java.fails("tables", database="d").error


@pytest.mark.parametrize("server", ["ours"], indirect=True)  # Paimon's test server knows one token, no grants
def test_refused_without_grant(server):
    """Our server only: bob may read database ro; Java's commit,
    DDL and tags as bob are refused with 403, which Java's RESTCatalog reports as its NoPermission
    exceptions (but createTable, which passes the ForbiddenException on in a RuntimeException), and
    nothing changes."""
    java, bob = server.java, server.java.on(token=TOKENS["bob"])
    users_table(java, "ro")
    java("write", table="ro.users", rows=[[1, "one"]])
    assert bob("read", table="ro.users") == [[1, "one"]]
    refused = {  # op: (command, the class Java reports; its last cause is the ForbiddenException of the 403)
        "write": ({"table": "ro.users", "rows": [[2, "two"]]}, "TableNoPermissionException"),  # wrapped: Java
        # retries a commit that threw (10 times), then reports its outcome unknown
        "create_table": ({"table": "ro.new", "columns": [["a", "INT"]]}, "RuntimeException"),  # Java maps no 403 here
        "alter": ({"table": "ro.users", "changes": [{"add_column": "x", "type": "INT"}]}, "TableNoPermissionException"),
        "create_tag": ({"table": "ro.users", "tag": "b", "via": "catalog"}, "TableNoPermissionException"),
        "drop_table": ({"table": "ro.users"}, "TableNoPermissionException"),
        "create_database": ({"database": "bobs"}, "DatabaseNoPermissionException"),
    }
    for op, (args, reported) in refused.items():
        e = bob.fails(op, **args)
        assert reported + ": " in e.chain, (op, e.chain)
        assert e.causes[-1].startswith("ForbiddenException: Forbidden: permission denied") and "'bob'" in e.causes[-1]
    java("create_database", database="other")
    java("create_table", table="other.t", columns=[["a", "INT"]])
    assert "NoPermissionException" in bob.fails("read", table="other.t").error  # no grant on it at all
    assert java("snapshot", table="ro.users")["id"] == 1
    assert java("tables", database="ro") == ["events", "users"] and java("tags", table="ro.users") == {}
    assert seen(server, "SELECT * FROM ro.users") == [(1, "one")]


def test_partitions_and_branches_of_both_writers(server):
    java, session = server.java, server.session
    java("create_database", database="p")
    java("create_table", table="p.logs", columns=[["id", "INT"], ["dt", "STRING"]], partition_keys=["dt"])
    java("write", table="p.logs", rows=[[1, "a"], [2, "b"]])
    session.sql("INSERT INTO p.logs VALUES (3, 'c'), (4, 'a')")
    assert [(p["spec"], p["record_count"]) for p in java("partitions", table="p.logs")] == [
        ({"dt": "a"}, 2), ({"dt": "b"}, 1), ({"dt": "c"}, 1)]
    assert seen(server, "SHOW PARTITIONS p.logs") == [("dt=a",), ("dt=b",), ("dt=c",)]
    assert sorted(java("read", table="p.logs")) == [[1, "a"], [2, "b"], [3, "c"], [4, "a"]]

    java("create_table", table="p.kv", columns=[["k", "INT NOT NULL"], ["v", "STRING"]], primary_keys=["k"],
         options={"bucket": "1"})
    java("write", table="p.kv", rows=[[1, "one"]])
    java("create_tag", table="p.kv", tag="t1", snapshot=1)
    java("create_branch", table="p.kv", branch="b1", tag="t1")
    assert java("write", table="p.kv$branch_b1", rows=[[2, "two"]]) == 2
    session.sql("INSERT INTO p.`kv$branch_b1` VALUES (1, 'uno')")
    session.sql("CALL sys.create_branch(table => 'p.kv', branch => 'b2')")
    assert sorted(java("branches", table="p.kv")) == ["b1", "b2"]
    assert sorted(java("read", table="p.kv$branch_b1")) == [[1, "uno"], [2, "two"]]
    assert seen(server, "SELECT * FROM p.`kv$branch_b1`") == [(1, "uno"), (2, "two")]
    assert seen(server, "SELECT * FROM p.kv") == [(1, "one")] and java("read", table="p.kv") == [[1, "one"]]


def test_java_and_our_sql_commit_at_once(server):
    """Java commits 8 times while our SQL commits 5 (a write-only table: neither compacts, so no commit
    conflicts on files, only on the snapshot id, which the server's compare-and-set settles): nothing lost."""
    java, session = server.java, server.session
    java("create_database", database="cc")
    java("create_table", table="cc.t", columns=[["id", "INT NOT NULL"], ["who", "STRING"]], primary_keys=["id"],
         options={"bucket": "1", "write-only": "true"})
    errors = []

    def java_writes():
        try:
            for i in range(8):
                java("write", table="cc.t", rows=[[100 + i, "java"]])
        except Exception as e:  # reported below
            errors.append(e)
    writer = threading.Thread(target=java_writes)
    writer.start()
    for i in range(5):
        session.sql(f"INSERT INTO cc.t VALUES ({i}, 'sql')")
    writer.join()
    assert not errors
    assert java("snapshot", table="cc.t")["id"] == 13
    assert seen(server, "SELECT who, count(*) FROM cc.t GROUP BY who") == [("java", 8), ("sql", 5)]
    assert len(java("read", table="cc.t")) == 13


@pytest.mark.parametrize("server", ["ours"], indirect=True)
def test_java_renames_a_table(server):
    """Our server only: Paimon's test server moves a renamed table's directory but goes on answering its
    old path, so neither Java nor we can read a table renamed there."""
    java, session = server.java, server.session
    users_table(java, "rn")
    java("write", table="rn.users", rows=[[1, "one"]])
    java("rename_table", table="rn.users", to="rn.people")
    assert java("tables", database="rn") == ["events", "people"]
    assert seen(server, "SELECT * FROM rn.people") == [(1, "one")]
    session.sql("INSERT INTO rn.people VALUES (2, 'two')")
    session.sql("ALTER TABLE rn.events RENAME TO rn.happenings")
    assert java("tables", database="rn") == ["happenings", "people"]
    assert sorted(java("read", table="rn.people")) == [[1, "one"], [2, "two"]]
    assert java("snapshot", table="rn.people")["id"] == 2


def test_server_counts_what_our_sql_committed(server):
    """The server's own count of a table's rows (Catalog.loadSnapshot: TableSnapshot.recordCount), which
    Paimon's server sums from the per-partition statistics each commit sends: Java's and ours alike."""
    server.java("create_database", database="st")
    server.session.sql("CREATE TABLE st.t (id INT, v STRING)")
    server.session.sql("INSERT INTO st.t VALUES (1, 'a'), (2, 'b')")
    server.java("write", table="st.t", rows=[[3, "c"]])
    latest = server.java("snapshot", table="st.t")
    assert (latest["id"], latest["record_count"]) == (2, 3)


@pytest.mark.parametrize("server", ["ours"], indirect=True)
def test_our_sql_as_a_reader_of_what_java_wrote(server, spark):
    java = server.java
    java("create_database", database="rd")
    java("create_table", table="rd.t", columns=[["id", "INT"]])
    java("write", table="rd.t", rows=[[1]])
    reader = paimon_sql.connect(server.warehouse, spark=spark, catalog_options={
        "metastore": "rest", "uri": server.uri, "token.provider": "bear", "token": TOKENS["bob"]})
    assert sorted(tuple(r) for r in reader.sql("SELECT * FROM rd.t").collect()) == [(1,)]
