"""Differential: the same query over a Paimon table and over a plain Spark view of the same rows
gives the same answer (issue 12). The user's text reaches Spark as written but for the table
reference, and Spark's own plan decides which columns and filters the scan gets."""

import pytest

ROWS = [(1, "a", (1, "x"), [(10,), (11,)], "2024-01-01"), (2, "it's", (2, None), [], "2024-01-02"),
        (3, None, None, None, "2024-01-02"), (4, "d", (4, "w"), [(40,)], "2024-01-03")]
DDL = "id INT, name STRING, v STRUCT<a: INT, b: STRING>, arr ARRAY<STRUCT<x: INT>>, dt STRING"

QUERIES = [
    "SELECT id, 'it''s' AS q, \"dq\" AS r FROM {t} ORDER BY id",
    "SELECT v.a, v.b FROM {t} ORDER BY v.a",
    "SELECT id FROM {t} WHERE v.a = 2",
    "SELECT id, arr.x FROM {t} ORDER BY id",
    "SELECT id FROM {t} WHERE id = 1 OR name = 'd' ORDER BY id",
    "SELECT id FROM {t} WHERE NOT (id > 1 AND name IS NOT NULL) ORDER BY id",
    "SELECT id FROM {t} WHERE name LIKE 'it%' OR dt IN ('2024-01-03')",
    "SELECT count(*), count(name), max(dt) FROM {t}",
    "SELECT r.id, t.name FROM range(6) r LEFT JOIN {t} t ON r.id = t.id WHERE t.name IS NULL ORDER BY r.id",
    "SELECT a.id FROM {t} a WHERE EXISTS (SELECT 1 FROM {t} b WHERE b.id = a.id + 1 AND b.name IS NOT NULL) ORDER BY 1",
    "WITH c AS (SELECT id, name FROM {t} WHERE id < 4) SELECT x.id, y.name FROM c x JOIN c y ON x.id = y.id ORDER BY 1",
    "SELECT id, rank() OVER (PARTITION BY dt ORDER BY id DESC) FROM {t} ORDER BY id",
    "SELECT dt, collect_list(id) FROM {t} GROUP BY dt HAVING count(*) > 1 ORDER BY dt",
    "SELECT * FROM {t} WHERE id IN (SELECT id + 1 FROM {t} WHERE dt = '2024-01-01') ORDER BY id",
    "SELECT t.* FROM {t} AS t ORDER BY t.id",
    "SELECT id FROM {t} ORDER BY id LIMIT 2",
    "SELECT r.id FROM range(5) r WHERE r.id IN (SELECT v.a FROM {t} WHERE name IS NOT NULL) ORDER BY 1",
    "SELECT (SELECT max(name) FROM {t} WHERE dt > '2024-01-01') AS m",
]


@pytest.fixture
def tables(session):
    session.sql("CREATE DATABASE IF NOT EXISTS db")
    session.sql(f"CREATE TABLE db.f ({DDL})")
    session.spark.createDataFrame(ROWS, DDL).createOrReplaceTempView("plain_f")
    session.spark.createDataFrame(ROWS, DDL).write.format("paimon") \
        .option("warehouse", session.warehouse).mode("append").save("db.f")
    yield
    session.spark.catalog.dropTempView("plain_f")


def result(df):
    return [tuple(r) for r in df.collect()]


@pytest.mark.parametrize("text", QUERIES)
def test_same_answer_as_spark(session, tables, text):
    expected = result(session.spark.sql(text.format(t="plain_f")))
    got = result(session.sql(text.format(t="db.f")))
    assert got == expected if "ORDER BY" in text else sorted(map(repr, got)) == sorted(map(repr, expected))


def test_queries_leave_no_views_behind(session, tables):
    before = {v.name for v in session.spark.catalog.listTables() if v.isTemporary}
    session.sql("SELECT count(*) FROM db.f").collect()
    session.sql("SELECT * FROM db.f a JOIN db.f b ON a.id = b.id").collect()
    after = {v.name for v in session.spark.catalog.listTables() if v.isTemporary}
    assert after == before
    assert not [r for r in session.sql("SHOW VIEWS").collect() if r.viewName.startswith("__paimon")]


def test_filters_spark_pushes_prune_the_scan(session, tables):
    plan = "\n".join(r[0] for r in session.sql(
        "EXPLAIN SELECT name FROM db.f WHERE (id = 1 OR id = 4) AND v.a > 0").collect())
    assert "  columns: id, name, v" in plan and "pushed filter: (id = 1 OR id = 4)" in plan


def test_use_moves_sparks_current_database(session, tables):
    session.sql("USE db")
    assert session.sql("SELECT current_database()").collect()[0][0] == "db"
    assert session.spark.catalog.currentDatabase() == "db"
    assert session.sql("SELECT count(*) FROM f").collect()[0][0] == len(ROWS)  # unqualified: db.f


def test_names_are_case_insensitive_as_in_spark(session, tables):
    assert session.sql("SELECT count(*) FROM DB.F").collect()[0][0] == len(ROWS)
    session.spark.conf.set("spark.sql.caseSensitive", "true")
    try:
        with pytest.raises(Exception, match="(?i)not found|cannot be found"):
            session.sql("SELECT count(*) FROM DB.F").collect()
    finally:
        session.spark.conf.unset("spark.sql.caseSensitive")


def test_char_columns_compare_as_in_spark(session):
    session.sql("CREATE DATABASE IF NOT EXISTS db")
    session.sql("CREATE TABLE db.c (a VARCHAR(3), b CHAR(4))")
    session.sql("INSERT INTO db.c VALUES ('x', 'ab')")
    assert result(session.sql("SELECT a, b FROM db.c WHERE b = 'ab'")) == [("x", "ab  ")]


def test_session_options_as_paimon_spark_reads_them(session):
    session.sql("CREATE DATABASE IF NOT EXISTS db")
    session.sql("CREATE TABLE db.s (id INT)")
    session.sql("INSERT INTO db.s VALUES (1)")
    session.sql("INSERT INTO db.s VALUES (2)")
    ids = lambda: sorted(r[0] for r in session.sql("SELECT id FROM db.s").collect())  # noqa: E731
    try:
        session.sql("SET `spark.paimon.scan.snapshot-id`=1")
        assert ids() == [1]
        session.sql("SET `spark.paimon.*.db.s.scan.snapshot-id`=2")  # the per-table form wins
        assert ids() == [1, 2]
        session.sql("RESET `spark.paimon.*.db.s.scan.snapshot-id`")
        assert ids() == [1]
        assert result(session.sql("SELECT id FROM db.s VERSION AS OF 2 ORDER BY id")) == [(1,), (2,)]
    finally:
        session.sql("RESET `spark.paimon.scan.snapshot-id`")
        session.sql("RESET `spark.paimon.*.db.s.scan.snapshot-id`")
    assert ids() == [1, 2]
    session.sql("RESET spark.sql.caseSensitive")  # Spark's RESET, which sqlglot cannot read, is Spark's
