"""Statements that wrap a query over Paimon tables (issue 12): temporary views read the table as
of each query, CACHE / UNCACHE / REFRESH TABLE, EXPLAIN of any statement, ``spark.sql`` and
``spark.table`` after ``connect()``, and queries inside INSERT / CREATE TABLE AS SELECT reaching
Spark as written. Where Spark has the same statement, the answer is compared with plain Spark's
over a Spark table holding the same rows."""

import pytest

from paimon_sql.exceptions import PaimonError


def rows(df):
    return sorted(tuple(r) for r in df.collect())


@pytest.fixture
def pair(session, tmp_path):
    """The same rows in Paimon table ``p`` and Spark parquet table ``s`` (written alike)."""
    session.sql("CREATE TABLE p (id INT, name STRING) TBLPROPERTIES ('primary-key'='id', 'bucket'='1')")
    session.sql(f"CREATE TABLE s (id INT, name STRING) USING parquet LOCATION '{tmp_path}/s'")
    for t in ("p", "s"):
        session.sql(f"INSERT INTO {t} VALUES (1, 'a'), (2, 'b'), (3, 'c')")
    yield
    session.spark_sql("DROP TABLE IF EXISTS default.s")


def both(session, template):
    return rows(session.sql(template.format(t="p"))), rows(session.sql(template.format(t="s")))


def test_temp_view_reads_the_table_as_of_each_query(session, pair):
    for t in ("p", "s"):
        session.sql(f"CREATE TEMP VIEW v_{t} AS SELECT id, upper(name) AS n FROM {t} WHERE id > 1")
    assert rows(session.sql("SELECT * FROM v_p")) == rows(session.sql("SELECT * FROM v_s")) == [(2, "B"), (3, "C")]
    for t in ("p", "s"):
        session.sql(f"INSERT INTO {t} VALUES (4, 'd')")
    assert rows(session.sql("SELECT * FROM v_p")) == rows(session.sql("SELECT * FROM v_s")) \
        == [(2, "B"), (3, "C"), (4, "D")]
    assert rows(session.spark.table("v_p")) == [(2, "B"), (3, "C"), (4, "D")]  # spark.table after connect()


def test_views_over_views_column_lists_and_use(session, pair):
    session.sql("CREATE DATABASE other")
    session.sql("CREATE OR REPLACE TEMPORARY VIEW v1 (k, label) AS SELECT id, name FROM p")
    session.sql("CREATE TEMP VIEW v2 AS SELECT k FROM v1 WHERE label <> 'a'")
    session.sql("USE other")  # the view keeps reading default.p, as Spark's views do
    assert rows(session.sql("SELECT * FROM v2")) == [(2,), (3,)]
    assert [r.col_name for r in session.sql("DESCRIBE v1").collect()] == ["k", "label"]
    session.sql("USE default")
    session.sql("INSERT INTO p VALUES (9, 'z')")
    assert rows(session.sql("SELECT x.k FROM v2 x JOIN v1 ON x.k = v1.k")) == [(2,), (3,), (9,)]


def test_view_errors_and_drop(session, pair):
    session.sql("CREATE TEMP VIEW v AS SELECT * FROM p")
    with pytest.raises(PaimonError, match="TEMP_TABLE_OR_VIEW_ALREADY_EXISTS"):
        session.sql("CREATE TEMP VIEW v AS SELECT * FROM p")
    session.sql("CREATE TEMP VIEW IF NOT EXISTS v AS SELECT id FROM p")
    assert len(session.sql("SELECT * FROM v").columns) == 2
    # SHOW VIEWS of a warehouse database lists no temporary view (as paimon-spark); SHOW TABLE EXTENDED does
    assert [r.tableName for r in session.sql("SHOW TABLE EXTENDED LIKE 'v'").collect()] == ["v"]
    session.sql("DROP VIEW v")
    assert not session.views and not session.sql("SHOW TABLE EXTENDED LIKE 'v'").collect()


def test_global_temp_view(session, pair):
    session.sql("CREATE GLOBAL TEMPORARY VIEW g AS SELECT count(*) AS c FROM p")
    session.sql("INSERT INTO p VALUES (5, 'e')")
    assert rows(session.sql("SELECT c FROM global_temp.g")) == [(4,)]
    session.sql("DROP VIEW global_temp.g")


def test_cache_table_serves_queries_and_follows_commits(session, pair):
    session.sql("CACHE TABLE p")
    plan = "\n".join(r[0] for r in session.sql("EXPLAIN SELECT name FROM p WHERE id = 2").collect())
    assert "InMemoryTableScan" in plan
    assert rows(session.sql("SELECT name FROM p WHERE id = 2")) == [("b",)]
    session.sql("INSERT INTO p VALUES (2, 'B')")  # a commit after CACHE: never the cached old row
    assert rows(session.sql("SELECT name FROM p WHERE id = 2")) == [("B",)]
    session.sql("UNCACHE TABLE p")
    session.sql("UNCACHE TABLE IF EXISTS p")
    assert not session.cached_tables
    plan = "\n".join(r[0] for r in session.sql("EXPLAIN SELECT name FROM p WHERE id = 2").collect())
    assert "InMemoryTableScan" not in plan


def test_cache_lazy_with_storage_level_and_refresh(session, pair):
    session.sql("CACHE LAZY TABLE p OPTIONS ('storageLevel' 'DISK_ONLY')")
    assert session.cached_tables and rows(session.sql("SELECT count(*) FROM p")) == [(3,)]
    session.sql("REFRESH TABLE p")
    assert rows(session.sql("SELECT count(*) FROM p")) == [(3,)]
    session.sql("CLEAR CACHE")
    assert rows(session.sql("SELECT count(*) FROM p")) == [(3,)] and not session.cached_tables
    with pytest.raises(PaimonError, match="storageLevel"):
        session.sql("CACHE TABLE p OPTIONS ('storageLevel' 'NOWHERE')")


def test_cache_table_as_select_follows_writes_like_spark(session, pair):
    for t in ("p", "s"):
        session.sql(f"CACHE TABLE c_{t} AS SELECT id FROM {t} WHERE id < 3")
    assert rows(session.sql("SELECT * FROM c_p")) == rows(session.sql("SELECT * FROM c_s")) == [(1,), (2,)]
    for t in ("p", "s"):
        session.sql(f"INSERT INTO {t} VALUES (0, 'zero')")
    assert rows(session.sql("SELECT * FROM c_p")) == rows(session.sql("SELECT * FROM c_s")) == [(0,), (1,), (2,)]
    assert session.spark.catalog.isCached("c_p")
    assert "InMemoryRelation" in "\n".join(r[0] for r in session.sql("EXPLAIN SELECT * FROM c_p").collect())


def test_explain_any_statement_writes_nothing(session, pair):
    before = rows(session.sql("SELECT * FROM p"))
    snapshots = rows(session.sql("SELECT snapshot_id FROM `p$snapshots`"))
    for statement, header in [
        ("INSERT INTO p SELECT id + 10, name FROM p WHERE id < 3", "write append to paimon table default.p"),
        ("INSERT OVERWRITE p SELECT * FROM p", "write overwrite to paimon table default.p"),
        ("UPDATE p SET name = 'x' WHERE id = 1", "update rows of paimon table default.p"),
        ("DELETE FROM p WHERE id = 1", "delete rows of paimon table default.p"),
        ("MERGE INTO p USING s ON p.id = s.id WHEN MATCHED THEN DELETE", "merge into paimon table default.p"),
        ("CREATE TABLE q AS SELECT * FROM p", "create paimon table q and write"),
    ]:
        plan = [r[0] for r in session.sql(f"EXPLAIN {statement}").collect()]
        assert plan[0] == "== Paimon write ==" and plan[1].startswith(header), statement
        assert "paimon table default.p @ snapshot" in "\n".join(plan)
    assert rows(session.sql("SELECT * FROM p")) == before
    assert rows(session.sql("SELECT snapshot_id FROM `p$snapshots`")) == snapshots
    assert not session.catalog.table_exists(session.identifier_text("q"))
    extended = "\n".join(r[0] for r in session.sql("EXPLAIN EXTENDED INSERT INTO s SELECT * FROM p").collect())
    assert "== Analyzed Logical Plan ==" in extended


def test_spark_sql_after_connect(session, pair):
    spark = session.spark
    assert rows(spark.sql("SELECT name FROM p WHERE id = 3")) == [("c",)]
    spark.sql("INSERT INTO p VALUES (7, 'g')")
    assert rows(spark.table("default.p")) == rows(session.sql("SELECT * FROM p"))
    assert rows(spark.sql("SELECT :x + 1 AS y", args={"x": 1})) == [(2,)]  # parameters: Spark's own
    from pyspark.errors import AnalysisException
    with pytest.raises(AnalysisException):  # Spark's errors stay Spark's exceptions there
        spark.sql("SELECT no_such_column FROM s")


def test_queries_inside_insert_reach_spark_as_written(session, pair):
    """Spark reads 'it''s' as it's; sqlglot regenerates it as CONCAT('it', 's')."""
    for t in ("p", "s"):
        session.sql(f"INSERT INTO {t} SELECT 10, 'it''s' || \"\\u00e9\" FROM {t} LIMIT 1")
        session.sql(f"INSERT INTO {t} (id, name) SELECT id + 20, CAST(id AS STRING) FROM range(2)")
    p, s = both(session, "SELECT * FROM {t}")
    assert p == s
    assert (10, "it's\u00e9") in p


def test_time_travel_by_expression_and_table_function(session, pair):
    session.sql("INSERT INTO p VALUES (4, 'd')")
    assert rows(session.sql("SELECT count(*) FROM p VERSION AS OF 1 + 0")) == [(3,)]
    assert rows(session.sql("SELECT count(*) FROM p FOR TIMESTAMP AS OF current_timestamp() + INTERVAL 1 DAY "
                            "WHERE id > 0")) == [(4,)]
    got = rows(session.sql("SELECT id FROM paimon_incremental_query('p', 1, 2) AS x WHERE x.id > 0"))
    assert got == [(4,)]


def test_session_options_apply_to_writes(session, pair):
    session.sql("SET `spark.paimon.*.default.p.file.format`=orc")
    try:
        session.sql("INSERT INTO p VALUES (8, 'h')")
    finally:
        session.sql("RESET `spark.paimon.*.default.p.file.format`")
    formats = {r[0] for r in session.sql("SELECT file_format FROM `p$files`").collect()}
    assert formats == {"parquet", "orc"}
    assert rows(session.sql("SELECT name FROM p WHERE id = 8")) == [("h",)]


def test_three_part_column_names(session, pair):
    p, s = both(session, "SELECT default.{t}.id, spark_catalog.default.{t}.name FROM default.{t} "
                         "WHERE default.{t}.id > 1")
    assert p == s == [(2, "b"), (3, "c")]
    p, s = both(session, "SELECT default.{t}.id FROM {t} JOIN range(2) r ON default.{t}.id = r.id")
    assert p == s == [(1,)]
