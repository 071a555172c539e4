"""Grants (paimon_sql/access/): every kind of statement checked against a policy before it runs.

A session is given the grants of one user as the server gives them; each statement either runs
or is refused with a line naming the user, the privilege and the table, and then nothing changed
(the tables' snapshots are compared).
"""

import json

import pytest
from spark.conftest import release, rows, spark  # noqa: F401

import paimon_sql
from paimon_sql.access.control import AccessControl
from paimon_sql.access.policy import PolicyFile, Principal
from paimon_sql.access.policy import parse
from paimon_sql.exceptions import AccessDeniedError, PolicyError

POLICY = {
    "admins": ["root", "group:dba"],
    "grants": [
        {"to": ["bob", "group:analysts"], "read": ["sales"]},
        {"to": ["bob"], "write": ["sales.orders"], "admin": ["scratch"]},
        {"to": ["*"], "read": ["pub.*"]},
        {"to": ["group:eu"], "read": ["sales"], "write": ["sales.orders"]},
    ],
    "row_filters": [{"to": ["group:eu"], "table": "sales.orders", "where": "id = 1"}],
    "column_masks": [{"to": ["group:eu"], "table": "sales.orders", "column": "amount", "mask": "-1"},
                     {"to": ["group:eu"], "table": "hr.salaries", "column": "pay", "mask": "pay * 0"}],
}


def _world(spark, warehouse, policy_path):
    """Tables as an administrator made them, and a function giving a session with a user's grants."""
    admin = paimon_sql.connect(warehouse, spark=spark)
    for stmt in ["CREATE DATABASE sales", "CREATE DATABASE hr", "CREATE DATABASE scratch", "CREATE DATABASE pub",
                 "CREATE TABLE sales.orders (id INT, amount INT)", "CREATE TABLE sales.items (id INT, name STRING)",
                 "CREATE TABLE hr.salaries (id INT, pay INT)", "CREATE TABLE pub.notes (n STRING)",
                 "INSERT INTO sales.orders VALUES (1, 10), (2, 20)", "INSERT INTO sales.items VALUES (1, 'a')",
                 "INSERT INTO hr.salaries VALUES (1, 100)", "INSERT INTO pub.notes VALUES ('hi')",
                 "CREATE VIEW sales.big AS SELECT * FROM hr.salaries WHERE pay > 50"]:
        admin.sql(stmt)
    release(admin)
    policy_path.write_text(json.dumps(POLICY))
    opened = []

    def as_user(user, groups=()):
        s = paimon_sql.connect(warehouse, spark=_own_session(spark))
        s.access = AccessControl(Principal(user, frozenset(groups)), PolicyFile(str(policy_path)))
        opened.append(s)
        return s
    return as_user, admin, policy_path, opened


@pytest.fixture
def world(spark, warehouse, tmp_path):
    as_user, admin, path, opened = _world(spark, warehouse, tmp_path / "policy.json")
    yield as_user, admin, path
    for s in opened:
        s.release()


@pytest.fixture(scope="module")
def bob(spark, tmp_path_factory):
    """One user's session over one warehouse for the refusals, which change nothing."""
    root = tmp_path_factory.mktemp("access")
    as_user, admin, _, opened = _world(spark, str(root / "warehouse"), root / "policy.json")
    yield as_user("bob"), admin
    for s in opened:
        s.release()


def _own_session(spark):
    """A session of the run's Spark as the server opens one for a client (the JVM's active session)."""
    own = spark.newSession()
    own._jvm.SparkSession.setActiveSession(own._jsparkSession)
    return own


def _snapshots(admin):
    return {t: admin.catalog.get_table(admin.identifier_text(t)).snapshot_manager.latest_id()
            for t in ("sales.orders", "sales.items", "hr.salaries", "pub.notes")}


def _denied(session, admin, text, *words):
    before = _snapshots(admin)
    with pytest.raises(AccessDeniedError) as e:
        session.sql(text).collect()
    message = str(e.value)
    assert "\n" not in message and message.startswith("permission denied"), message
    for w in words:
        assert w in message, (text, message)
    assert _snapshots(admin) == before, text
    return message


@pytest.mark.parametrize("text, words", [
    ("SELECT * FROM hr.salaries", ("bob", "READ", "hr.salaries")),
    ("SELECT * FROM sales.orders o JOIN hr.salaries s ON o.id = s.id", ("READ", "hr.salaries")),
    ("SELECT * FROM sales.orders WHERE id IN (SELECT id FROM hr.salaries)", ("hr.salaries",)),
    ("WITH x AS (SELECT * FROM hr.salaries) SELECT * FROM x", ("hr.salaries",)),
    ("WITH a AS (SELECT * FROM salaries), salaries AS (SELECT 1 AS id) SELECT * FROM a", ("default.salaries",)),
    ("SELECT * FROM `hr`.`salaries$files`", ("hr.salaries",)),
    ("SELECT * FROM hr.`salaries$snapshots`", ("hr.salaries",)),
    ("SELECT * FROM sys.tables", ("READ", "everything")),
    ("SELECT * FROM paimon_incremental_query('hr.salaries', 0, 1)", ("hr.salaries",)),
    ("SELECT * FROM parquet.`/etc`", ("SQL on files", "admins")),
    ("SELECT reflect('java.lang.System', 'exit', 0)", ("reflect",)),
    ("INSERT INTO sales.items VALUES (9, 'z')", ("WRITE", "sales.items")),
    ("INSERT INTO sales.orders SELECT * FROM hr.salaries", ("READ", "hr.salaries")),
    ("INSERT OVERWRITE sales.items SELECT * FROM sales.items", ("WRITE", "sales.items")),
    ("UPDATE hr.salaries SET pay = 0", ("hr.salaries",)),
    ("DELETE FROM sales.items", ("WRITE", "sales.items")),
    ("MERGE INTO sales.orders t USING hr.salaries s ON t.id = s.id WHEN MATCHED THEN DELETE", ("hr.salaries",)),
    ("TRUNCATE TABLE sales.items", ("WRITE", "sales.items")),
    ("CREATE TABLE sales.t2 (a INT)", ("ADMIN", "database sales")),
    ("CREATE TABLE scratch.t3 AS SELECT * FROM hr.salaries", ("READ", "hr.salaries")),
    ("DROP TABLE sales.orders", ("ADMIN", "sales.orders")),
    ("ALTER TABLE sales.orders ADD COLUMNS (c INT)", ("ADMIN", "sales.orders")),
    ("ALTER TABLE sales.orders SET TBLPROPERTIES ('snapshot.num-retained.max' = '3')", ("ADMIN",)),
    ("CREATE DATABASE d9", ("CREATE DATABASE", "admins")),
    ("DROP DATABASE hr CASCADE", ("DROP DATABASE", "admins")),
    ("CALL sys.create_tag(table => 'sales.orders', tag => 't1')", ("ADMIN", "sales.orders")),
    ("CALL sys.compact('hr.salaries')", ("ADMIN", "hr.salaries")),
    ("CALL sys.compact_database()", ("compact_database", "admins")),
    ("CALL sys.remove_orphan_files(table => 'sales.*')", ("admins",)),
    ("DESCRIBE hr.salaries", ("READ", "hr.salaries")),
    ("SHOW CREATE TABLE hr.salaries", ("READ", "hr.salaries")),
    ("SHOW TBLPROPERTIES hr.salaries", ("hr.salaries",)),
    ("SHOW PARTITIONS hr.salaries", ("hr.salaries",)),
    ("SHOW TAGS hr.salaries", ("hr.salaries",)),
    ("EXPLAIN SELECT * FROM hr.salaries", ("hr.salaries",)),
    ("CREATE TEMPORARY VIEW v AS SELECT * FROM hr.salaries", ("hr.salaries",)),
    ("CREATE TEMPORARY VIEW f USING parquet OPTIONS (path '/etc')", ("admins",)),
    ("CREATE GLOBAL TEMPORARY VIEW g AS SELECT * FROM sales.orders", ("admins",)),
    ("CACHE TABLE c AS SELECT * FROM hr.salaries", ("hr.salaries",)),
    ("INSERT OVERWRITE DIRECTORY '/tmp/x' SELECT 1", ("INSERT OVERWRITE DIRECTORY",)),
    ("ADD JAR /tmp/x.jar", ("ADD", "admins")),
    ("SET spark.sql.catalog.x = org.apache.spark.sql.execution.datasources.v2.jdbc.JDBCTableCatalog", ("setting",)),
    ("SET spark.sql.runSQLOnFiles = true", ("setting",)),
    ("SELECT * FROM other_catalog.db.t", ("catalog other_catalog",)),
    ("SELECT * FROM IDENTIFIER('hr.salaries')", ("identifier",)),
    ("INSERT INTO IDENTIFIER('hr.salaries') VALUES (1, 1)", ("IDENTIFIER",)),
    ("SELECT * FROM read_parquet('/etc')", ("table function read_parquet",)),
    ("GRANT SELECT ON sales.orders TO bob", ("GRANT", "--policy-file")),
])
def test_statements_past_a_grant_are_refused_and_change_nothing(bob, text, words):
    session, admin = bob
    _denied(session, admin, text, *words)


def test_what_a_grant_covers_runs(world):
    as_user, admin, _ = world
    bob = as_user("bob")
    assert rows(bob, "SELECT count(*) FROM sales.orders o JOIN sales.items i ON o.id = i.id") == [(1,)]
    assert rows(bob, "SELECT count(*) FROM pub.notes") == [(1,)]  # '*' is every user
    bob.sql("INSERT INTO sales.orders SELECT id, 5 FROM sales.items")
    bob.sql("UPDATE sales.orders SET amount = 0 WHERE id = 2")
    assert rows(bob, "SELECT * FROM sales.orders ORDER BY id, amount") == [(1, 5), (1, 10), (2, 0)]
    assert rows(bob, "SELECT count(*) FROM sales.`orders$snapshots`")[0][0] >= 3
    bob.sql("CREATE TABLE scratch.mine AS SELECT * FROM sales.items")
    bob.sql("CALL sys.create_tag(table => 'scratch.mine', tag => 't1')")
    bob.sql("DROP TABLE scratch.mine")
    bob.sql("CREATE TEMPORARY VIEW recent AS SELECT * FROM sales.orders WHERE id = 1")
    assert rows(bob, "SELECT count(*) FROM recent") == [(2,)]
    assert rows(bob, "SELECT count(*) FROM range(3) JOIN explode(array(1, 2))") == [(6,)]
    bob.sql("SET spark.sql.shuffle.partitions = 3")
    bob.sql("USE sales")
    assert rows(bob, "SELECT count(*) FROM items") == [(1,)]
    assert rows(bob, "SELECT count(*) FROM big") == [(1,)]  # a view is read as itself
    assert bob.last_access.reads == ["sales.big"]
    assert {r[1] for r in rows(bob, "SHOW TABLES")} >= {"orders", "items"}


def test_groups_admins_and_the_file_read_again(world):
    as_user, admin, path = world
    analyst = as_user("ann", groups=["analysts"])
    assert rows(analyst, "SELECT count(*) FROM sales.orders") == [(2,)]
    _denied(analyst, admin, "INSERT INTO sales.orders VALUES (3, 3)", "ann", "WRITE", "sales.orders")
    dba = as_user("dan", groups=["dba"])
    assert rows(dba, "SELECT count(*) FROM hr.salaries") == [(1,)]
    dba.sql("CALL sys.create_tag(table => 'hr.salaries', tag => 'x')")
    nobody = as_user("eve")
    _denied(nobody, admin, "SELECT * FROM sales.orders", "eve", "READ", "sales.orders")
    # the administrator changes the file: the next statement sees the new grants
    path.write_text(json.dumps({**POLICY, "grants": POLICY["grants"] + [{"to": ["eve"], "read": ["hr.salaries"]}]}))
    assert rows(nobody, "SELECT count(*) FROM hr.salaries") == [(1,)]
    # a broken file refuses everything until it is fixed
    path.write_text("{not json")
    with pytest.raises(PolicyError, match="not JSON"):
        nobody.sql("SELECT count(*) FROM pub.notes")


def test_a_session_without_a_policy_file_records_what_it_reads_and_writes(world, warehouse, spark):
    s = paimon_sql.connect(warehouse, spark=_own_session(spark))
    try:
        s.access = AccessControl(Principal("anyone"))
        s.sql("INSERT INTO sales.orders SELECT id, pay FROM hr.salaries")
        assert (s.last_access.reads, s.last_access.writes) == (["hr.salaries"], ["sales.orders"])
    finally:
        s.release()


def test_row_filters_and_column_masks_hold_for_every_read_of_the_table(world):
    as_user, admin, _ = world
    eu = as_user("rita", groups=["eu"])
    assert rows(eu, "SELECT id, amount FROM sales.orders") == [(1, -1)]
    assert rows(eu, "SELECT count(*) FROM sales.orders") == [(1,)]
    # a predicate on a masked column sees the mask, never the value behind it
    assert rows(eu, "SELECT count(*) FROM sales.orders WHERE amount = 10") == [(0,)]
    assert rows(eu, "SELECT count(*) FROM sales.orders WHERE amount = -1") == [(1,)]
    assert rows(eu, "SELECT o.id, i.name FROM sales.orders o JOIN sales.items i ON o.id = i.id") == [(1, "a")]
    assert rows(eu, "SELECT id, amount FROM sales.orders VERSION AS OF 1") == [(1, -1)]
    # through a view the mask of hr.salaries holds too: the view's `pay > 50` sees pay masked to 0
    assert rows(eu, "SELECT * FROM sales.big") == []
    assert rows(as_user("bob"), "SELECT * FROM sales.big") == [(1, 100)]
    eu.sql("INSERT INTO sales.orders VALUES (3, 30)")
    assert rows(admin, "SELECT count(*) FROM sales.orders") == [(3,)]
    assert rows(eu, "SELECT count(*) FROM sales.orders") == [(1,)]
    for text, what in [("UPDATE sales.orders SET amount = 0", "UPDATE reads every row"),
                       ("DELETE FROM sales.orders WHERE amount > 15", "DELETE reads every row"),
                       ("CACHE TABLE sales.orders", "CACHE TABLE reads every row"),
                       ("SELECT * FROM sales.`orders$files`", "system table sales.orders$files")]:
        _denied(eu, admin, text, what, "rita")
    assert rows(as_user("bob"), "SELECT count(*) FROM sales.orders") == [(3,)]  # rules name their users only


@pytest.mark.parametrize("text, error", [
    ('[]', "JSON object"),
    ('{"grants": [{"read": ["x"]}]}', "grant #1"),
    ('{"grants": [{"to": ["a"], "select": ["x"]}]}', "grant #1"),
    ('{"grants": [{"to": ["a"], "read": ["a.b.c"]}]}', "'a.b.c' is not a resource"),
    ('{"admins": ["group:"]}', "not a user name"),
    ('{"owners": []}', "unknown key"),
    ('{"row_filters": [{"to": ["a"], "table": "db.*", "where": "x = 1"}]}', "must name one table"),
    ('{"row_filters": [{"to": ["a"], "table": "db.t", "where": "x = ("}]}', "not a Spark SQL expression"),
    ('{"column_masks": [{"to": ["a"], "table": "db.t", "mask": "NULL"}]}', "column mask #1 must be"),
])
def test_a_malformed_policy_is_refused_naming_the_entry(text, error):
    with pytest.raises(PolicyError, match=error):
        parse(text, "policy file p.json")
