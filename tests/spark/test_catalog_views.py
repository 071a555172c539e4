"""Persistent views (CREATE VIEW in a warehouse database): kept in the catalog as Paimon's ViewSchema,
read through their stored query at each query; the statements answer as Spark answers them for its own
views (differential against the same view over a plain Spark table in a Spark-only session)."""

import json
import re

import pytest

from paimon_sql.exceptions import PaimonError
from spark.conftest import rows


@pytest.fixture
def t(session):
    session.sql("CREATE TABLE t (id INT, c STRING) TBLPROPERTIES ('primary-key' = 'id', 'bucket' = '1')")
    session.sql("INSERT INTO t VALUES (1, 'a'), (2, 'b')")
    return session


@pytest.fixture
def plain(spark, tmp_path):
    """A Spark database with the same table as Spark's own (parquet), for the differential checks."""
    from paimon_sql.session import _SPARK_SQL
    db = f"plain_{abs(hash(str(tmp_path))) % 10**8}"
    _SPARK_SQL(spark, f"CREATE DATABASE {db} LOCATION '{tmp_path}/plain'")
    _SPARK_SQL(spark, f"CREATE TABLE {db}.t (id INT, c STRING) USING parquet")
    _SPARK_SQL(spark, f"INSERT INTO {db}.t VALUES (1, 'a'), (2, 'b')")
    yield db
    _SPARK_SQL(spark, f"DROP DATABASE {db} CASCADE")


def _spark(spark, db, text):
    """``text`` run by Spark itself in database ``db`` (the session's routing bypassed)."""
    from paimon_sql.session import _SPARK_SQL
    current = spark.catalog.currentDatabase()
    spark.catalog.setCurrentDatabase(db)
    try:
        return [tuple(r) for r in _SPARK_SQL(spark, text).collect()]
    finally:
        spark.catalog.setCurrentDatabase(current)


CREATE = ("CREATE VIEW v (x COMMENT 'the x', y) COMMENT 'test comment' TBLPROPERTIES ('k1' = 'v1') "
          "AS SELECT * FROM t WHERE id > 0")


def test_view_is_stored_as_paimons_view_schema(t, warehouse):
    t.sql(CREATE)
    stored = json.loads(open(f"{warehouse}/default.db/$views/v.json").read())
    assert stored == {"fields": [{"id": 0, "name": "x", "type": "INT", "description": "the x"},
                                 {"id": 1, "name": "y", "type": "STRING"}],
                      "query": "SELECT * FROM t WHERE id > 0",
                      "dialects": {"spark": "SELECT * FROM t WHERE id > 0"},
                      "comment": "test comment", "options": {"k1": "v1"}}
    t.sql("CREATE VIEW w AS SELECT 1 AS one")
    assert "comment" not in json.loads(open(f"{warehouse}/default.db/$views/w.json").read())
    assert t.catalog.list_tables("default") == ["t"]  # a view is not a table


def test_reads_latest_snapshot_each_time(t):
    t.sql(CREATE)
    assert rows(t, "SELECT * FROM v ORDER BY x") == [(1, "a"), (2, "b")]
    t.sql("INSERT INTO t VALUES (3, 'c'), (1, 'A')")
    assert rows(t, "SELECT x, y FROM v ORDER BY x") == [(1, "A"), (2, "b"), (3, "c")]
    assert rows(t, "SELECT v.y FROM v WHERE v.x = 3") == [("c",)]
    assert rows(t, "SELECT count(*) FROM v a JOIN v b ON a.x = b.x") == [(3,)]


def test_time_travel_and_system_tables_inside(t):
    t.sql("INSERT INTO t VALUES (3, 'c')")
    t.sql("CREATE VIEW first AS SELECT * FROM t VERSION AS OF 1")
    t.sql("CREATE VIEW snaps AS SELECT snapshot_id, commit_kind FROM t$snapshots")
    assert rows(t, "SELECT count(*) FROM first") == [(2,)]
    assert rows(t, "SELECT max(snapshot_id) FROM snaps") == [(2,)]
    t.sql("INSERT INTO t VALUES (4, 'd')")
    assert rows(t, "SELECT max(snapshot_id) FROM snaps") == [(3,)]


def test_names_resolve_in_the_views_database(t):
    t.sql("CREATE DATABASE other")
    t.sql("CREATE TABLE other.t (id INT, c STRING)")
    t.sql("INSERT INTO other.t VALUES (9, 'z')")
    t.sql("CREATE VIEW other.v AS SELECT id FROM t")
    t.sql("CREATE VIEW over AS SELECT * FROM other.v UNION ALL SELECT id FROM t")  # a view over a view
    assert rows(t, "SELECT * FROM other.v") == [(9,)]
    t.sql("USE other")
    assert rows(t, "SELECT * FROM default.over ORDER BY id") == [(1,), (2,), (9,)]
    assert rows(t, "SELECT * FROM v") == [(9,)]


def test_temp_view_shadows_and_persistent_view_cannot_read_temp(t):
    t.sql("CREATE VIEW v AS SELECT id FROM t")
    t.sql("CREATE TEMPORARY VIEW v AS SELECT 42 AS id")
    assert rows(t, "SELECT * FROM v") == [(42,)]
    assert rows(t, "SELECT count(*) FROM default.v") == [(2,)]
    with pytest.raises(PaimonError, match="INVALID_TEMP_OBJ_REFERENCE"):
        t.sql("CREATE VIEW p AS SELECT * FROM v")
    t.sql("DROP VIEW v")  # the temporary one, as in Spark
    assert t.catalog.list_views("default") == ["v"]
    t.sql("CREATE TEMPORARY VIEW tv AS SELECT * FROM v")  # a temporary view over a stored one
    t.sql("INSERT INTO t VALUES (5, 'e')")
    assert rows(t, "SELECT count(*) FROM tv") == [(3,)]


def test_create_replace_if_not_exists_and_errors(t):
    t.sql("CREATE VIEW v AS SELECT id FROM t WHERE id > 1")
    with pytest.raises(PaimonError, match="TABLE_OR_VIEW_ALREADY_EXISTS"):
        t.sql("CREATE VIEW v AS SELECT 1")
    t.sql("CREATE VIEW IF NOT EXISTS v AS SELECT nothing_here FROM nowhere")
    assert rows(t, "SELECT * FROM v") == [(2,)]
    t.sql("CREATE OR REPLACE VIEW v AS SELECT id FROM t WHERE id < 2")
    assert rows(t, "SELECT * FROM v") == [(1,)]
    with pytest.raises(PaimonError, match="CREATE_VIEW_WITH_IF_NOT_EXISTS_AND_REPLACE"):
        t.sql("CREATE OR REPLACE VIEW IF NOT EXISTS v AS SELECT 1")
    with pytest.raises(PaimonError, match="CREATE_VIEW_COLUMN_ARITY_MISMATCH"):
        t.sql("CREATE VIEW w (a) AS SELECT 1, 2")
    with pytest.raises(PaimonError, match="TABLE_OR_VIEW_ALREADY_EXISTS"):
        t.sql("CREATE VIEW t AS SELECT 1")
    with pytest.raises(PaimonError, match="a view of that name exists"):
        t.sql("CREATE TABLE v (a INT)")
    with pytest.raises(PaimonError):
        t.sql("CREATE VIEW bad AS SELECT * FROM no_such_table")
    with pytest.raises(PaimonError, match="EXPECT_TABLE_NOT_VIEW"):
        t.sql("INSERT INTO v VALUES (5)")
    assert t.catalog.list_views("default") == ["v"]


def test_alter_view(t):
    t.sql("CREATE VIEW v COMMENT 'kept' AS SELECT id FROM t")
    t.sql("ALTER VIEW v AS SELECT c, id FROM t WHERE id = 2")
    assert rows(t, "SELECT * FROM v") == [("b", 2)]
    assert t.catalog.get_view("default.v").comment == "kept"
    t.sql("ALTER VIEW v SET TBLPROPERTIES ('k' = 'v')")
    assert t.catalog.get_view("default.v").options == {"k": "v"}
    t.sql("ALTER VIEW v RENAME TO w")
    assert t.catalog.list_views("default") == ["w"] and rows(t, "SELECT id FROM w") == [(2,)]
    with pytest.raises(PaimonError):
        t.sql("SELECT * FROM v")


def test_drop_view_and_table_and_database(t):
    t.sql("CREATE VIEW v AS SELECT id FROM t")
    t.sql("CREATE VIEW w AS SELECT id FROM t")
    t.sql("DROP VIEW v")
    t.sql("DROP TABLE w")  # Spark drops a view by DROP TABLE too
    t.sql("DROP VIEW IF EXISTS v")
    assert t.catalog.list_views("default") == []
    t.sql("CREATE DATABASE d")
    t.sql("CREATE VIEW d.v AS SELECT 1 AS one")
    with pytest.raises(PaimonError, match="SCHEMA_NOT_EMPTY"):
        t.sql("DROP DATABASE d")
    t.sql("DROP DATABASE d CASCADE")
    assert "d" not in t.catalog.list_databases()


def test_statements_agree_with_spark(t, spark, plain):
    for db in ("default", plain):
        run = (lambda q: rows(t, q)) if db == "default" else (lambda q: _spark(spark, plain, q))
        run(CREATE)
        run("CREATE VIEW w AS SELECT c FROM t")
    for statement in ["SELECT * FROM v ORDER BY x", "DESCRIBE v", "SHOW VIEWS LIKE 'v|w'", "SHOW TABLES",
                      "SHOW VIEWS", "SELECT y, count(*) FROM v GROUP BY y ORDER BY y", "SHOW TBLPROPERTIES v",
                      "SHOW TBLPROPERTIES v ('k1')", "SHOW COLUMNS IN v"]:
        ours, theirs = rows(t, statement), _spark(spark, plain, statement)
        assert [tuple(plain if x == "default" else x for x in r) for r in ours] == theirs, statement
    ours = rows(t, "SHOW CREATE TABLE v")[0][0]
    theirs = _spark(spark, plain, "SHOW CREATE TABLE v")[0][0]
    assert ours == theirs.replace(plain, "default").replace("WITH SCHEMA COMPENSATION\n", "")
    extended = dict((r[0], r[1]) for r in rows(t, "DESCRIBE EXTENDED v"))
    spark_extended = dict((r[0], r[1]) for r in _spark(spark, plain, "DESCRIBE EXTENDED v"))
    for key in ("Type", "Comment", "View Text", "View Original Text", "Table Properties"):
        assert extended[key] == spark_extended[key], key
    assert (extended["Catalog"], extended["View Catalog and Namespace"]) == ("paimon", "paimon.default")


@pytest.mark.parametrize("statement", [
    "ALTER VIEW v AS SELECT * FROM w",                              # v -> w -> v
    "CREATE OR REPLACE VIEW v AS SELECT * FROM v",                  # v -> v
    "ALTER VIEW v AS WITH x AS (SELECT * FROM w) SELECT * FROM x",  # through a CTE
    "DROP VIEW t",                                                  # a table
])
def test_refusals_agree_with_spark(t, spark, plain, statement):
    """The same error condition as Spark's for its own views, raised when the statement runs and
    leaving the views as they were."""
    for db in ("default", plain):
        run = (lambda q: rows(t, q)) if db == "default" else (lambda q: _spark(spark, plain, q))
        run("CREATE VIEW v AS SELECT id FROM t")
        run("CREATE VIEW w AS SELECT * FROM v")
    with pytest.raises(Exception) as theirs:
        _spark(spark, plain, statement)
    with pytest.raises(PaimonError) as ours:
        t.sql(statement)
    condition = re.match(r"\[[A-Z_.]+\]", str(theirs.value)).group(0)
    assert str(ours.value).startswith(condition) and "\n" not in str(ours.value), (str(ours.value), condition)
    assert rows(t, "SELECT * FROM w ORDER BY id") == [(1,), (2,)]


def test_view_names_ignore_case(t):
    t.sql("CREATE VIEW MyView AS SELECT id FROM t")
    assert t.catalog.list_views("default") == ["myview"]
    assert rows(t, "SELECT count(*) FROM MYVIEW") == [(2,)]
    assert re.match(r"CREATE VIEW default\.myview", rows(t, "SHOW CREATE TABLE myView")[0][0])


def test_sys_tables_lists_views(t):
    t.sql("CREATE VIEW v AS SELECT id FROM t")
    assert rows(t, "SELECT table_name, table_type FROM sys.tables ORDER BY table_name") == \
        [("t", "table"), ("v", "view")]
