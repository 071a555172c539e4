"""End to end through Session.sql: DDL in both forms, INSERT, queries, time travel, errors."""

import os
from decimal import Decimal

import pytest

from paimon_sql.data import predicate as P
from paimon_sql.exceptions import PaimonError, SchemaError, SqlSyntaxError, TableNotFoundError
from spark.conftest import rows

FLINK_DDL = ("CREATE TABLE db.t (id BIGINT, name STRING, v DOUBLE, dt STRING, PRIMARY KEY (id, dt) NOT ENFORCED) "
             "PARTITIONED BY (dt) WITH ('bucket' = '2', 'file.format' = 'parquet')")
SPARK_DDL = ("CREATE TABLE db.t (id BIGINT, name STRING, v DOUBLE, dt STRING) PARTITIONED BY (dt) "
             "TBLPROPERTIES ('primary-key' = 'id,dt', 'bucket' = '2')")


@pytest.mark.parametrize("ddl", [FLINK_DDL, SPARK_DDL])
def test_both_create_forms_make_the_same_table(session, ddl):
    session.sql("CREATE DATABASE db")
    session.sql(ddl)
    t = session.catalog.get_table("db.t")
    assert t.schema.primary_keys == ["id", "dt"] and t.schema.partition_keys == ["dt"]
    assert t.schema.options["bucket"] == "2" and "primary-key" not in t.schema.options
    described = dict((r[0], r[1]) for r in rows(session, "DESCRIBE EXTENDED db.t"))
    assert described["id"] == "bigint" and "primary-key=id,dt" in described["Table Properties"]  # Spark's type names
    assert not t.schema.fields[0].type.nullable  # a primary key column is NOT NULL


def test_insert_upsert_query_and_time_travel(session):
    session.sql("CREATE DATABASE db")
    session.sql(FLINK_DDL)
    session.sql("INSERT INTO db.t VALUES (1, 'a', 1.0, 'x'), (2, 'b', 2.0, 'x'), (3, 'c', 3.0, 'y')")
    session.sql("INSERT INTO db.t SELECT 2, 'B', 20.0, 'x' UNION ALL SELECT 4, 'd', 4.0, 'y'")
    assert rows(session, "SELECT id, name FROM db.t ORDER BY id") == [(1, "a"), (2, "B"), (3, "c"), (4, "d")]
    assert rows(session, "SELECT dt, count(*), sum(v) FROM db.t WHERE dt = 'x' GROUP BY dt") == [("x", 2, 21.0)]
    assert rows(session, "SELECT name FROM db.t VERSION AS OF 1 WHERE id = 2") == [("b",)]
    snap1 = session.catalog.get_table("db.t").snapshot_manager.snapshot(1)
    assert rows(session, f"SELECT count(*) FROM db.t TIMESTAMP AS OF {snap1.time_millis / 1000}") == [(3,)]
    # joins, CTEs, subqueries and window functions over Paimon tables
    session.sql("CREATE TABLE db.names (id BIGINT, label STRING) TBLPROPERTIES ('primary-key'='id', 'bucket'='1')")
    session.sql("INSERT INTO db.names VALUES (1, 'one'), (4, 'four')")
    assert rows(session, "WITH x AS (SELECT id, name FROM db.t WHERE v > 1) "
                         "SELECT x.id, n.label FROM x JOIN db.names n ON x.id = n.id ORDER BY x.id") == [(4, "four")]
    assert rows(session, "SELECT id, rank() OVER (PARTITION BY dt ORDER BY v DESC) r FROM db.t "
                         "WHERE id IN (SELECT id FROM db.names) ORDER BY id") == [(1, 1), (4, 1)]


def test_insert_overwrite_static_dynamic_and_whole(session):
    session.sql("CREATE TABLE p (id INT, dt STRING) PARTITIONED BY (dt)")
    session.sql("INSERT INTO p VALUES (1, 'x'), (2, 'y'), (3, 'z')")
    session.sql("INSERT OVERWRITE p PARTITION (dt = 'x') SELECT 10")
    assert rows(session, "SELECT id, dt FROM p ORDER BY id") == [(2, "y"), (3, "z"), (10, "x")]
    session.spark.conf.set("spark.sql.sources.partitionOverwriteMode", "dynamic")
    session.sql("INSERT OVERWRITE p VALUES (20, 'y')")
    assert rows(session, "SELECT id, dt FROM p ORDER BY id") == [(3, "z"), (10, "x"), (20, "y")]
    session.spark.conf.set("spark.sql.sources.partitionOverwriteMode", "static")
    session.sql("INSERT OVERWRITE p VALUES (30, 'w')")
    assert rows(session, "SELECT id, dt FROM p") == [(30, "w")]


def test_insert_by_name_column_list_and_casts(session):
    session.sql("CREATE TABLE t (a INT, b STRING, c DOUBLE)")
    session.sql("INSERT INTO t BY NAME SELECT 'x' AS b, 1 AS a, 2 AS c")
    session.sql("INSERT INTO t (c, a) VALUES (5.5, 2)")
    assert rows(session, "SELECT a, b, c FROM t ORDER BY a") == [(1, "x", 2.0), (2, None, 5.5)]


def test_ctas_like_show_use_drop(session):
    session.sql("CREATE DATABASE d2")
    session.sql("USE d2")
    session.sql("CREATE TABLE src (id INT, v STRING) TBLPROPERTIES ('primary-key'='id', 'bucket'='1')")
    session.sql("INSERT INTO src VALUES (1, 'a'), (2, 'b')")
    session.sql("CREATE TABLE copy AS SELECT id, upper(v) AS v FROM src WHERE id > 1")
    assert rows(session, "SELECT * FROM copy") == [(2, "B")]
    session.sql("CREATE TABLE shape LIKE src")
    assert session.catalog.get_table("d2.shape").schema.primary_keys == ["id"]
    assert [r[1] for r in rows(session, "SHOW TABLES")] == ["copy", "shape", "src"]
    assert ("d2",) in rows(session, "SHOW DATABASES")
    assert "'primary-key' = 'id'" in rows(session, "SHOW CREATE TABLE src")[0][0]
    session.sql("DROP TABLE copy")
    assert [r[1] for r in rows(session, "SHOW TABLES IN d2")] == ["shape", "src"]


def test_temp_view_shadows_table_and_spark_statements_pass_through(session):
    session.sql("CREATE TABLE t (a INT)")
    session.sql("INSERT INTO t VALUES (1)")
    session.spark.createDataFrame([(42,)], "a INT").createOrReplaceTempView("t")
    assert rows(session, "SELECT a FROM t") == [(42,)]
    session.spark.catalog.dropTempView("t")
    assert rows(session, "SELECT a FROM t") == [(1,)]
    assert rows(session, "SELECT count(*) FROM range(5)") == [(5,)]


def test_errors_are_clear_and_commit_nothing(session):
    session.sql("CREATE TABLE t (id INT NOT NULL, v INT) TBLPROPERTIES ('primary-key'='id', 'bucket'='1')")
    session.sql("INSERT INTO t VALUES (1, 1)")
    with pytest.raises(SqlSyntaxError, match="line 1, column"):
        session.sql("SELEC 1")
    with pytest.raises(PaimonError, match="nope"):
        session.sql("SELECT * FROM nope")
    with pytest.raises(PaimonError, match="NOT NULL"):
        session.sql("INSERT INTO t VALUES (NULL, 2)")
    with pytest.raises(PaimonError):
        session.sql("INSERT INTO t VALUES ('not a number', 2)")
    with pytest.raises(SchemaError, match="expects 2"):
        session.sql("INSERT INTO t VALUES (1)")
    with pytest.raises(TableNotFoundError, match="default.missing"):
        session.catalog.get_table("default.missing")
    assert session.catalog.get_table("default.t").snapshot_manager.latest_id() == 1
    assert rows(session, "SELECT * FROM t") == [(1, 1)]


def test_dataframe_api(session, spark, warehouse):
    session.sql("CREATE TABLE t (id BIGINT, v STRING) TBLPROPERTIES ('primary-key'='id', 'bucket'='2')")
    df = spark.createDataFrame([(1, "a"), (2, "b")], "id BIGINT, v STRING")
    df.write.format("paimon").option("warehouse", warehouse).mode("append").save("default.t")
    spark.createDataFrame([(2, "B")], "id BIGINT, v STRING").write.format("paimon") \
        .option("warehouse", warehouse).mode("append").save("default.t")
    got = spark.read.format("paimon").option("warehouse", warehouse).load("default.t")
    assert sorted(tuple(r) for r in got.collect()) == [(1, "a"), (2, "B")]


def test_sql_script(session):
    out = session.sql_script("CREATE TABLE s (a INT); INSERT INTO s VALUES (1), (2); SELECT sum(a) FROM s;")
    assert len(out) == 3 and out[2].collect()[0][0] == 3


def test_explain_shows_pruning(session):
    session.sql("CREATE TABLE a (id BIGINT, v STRING, dt STRING) PARTITIONED BY (dt)")
    for d in "xyz":
        session.sql(f"INSERT INTO a VALUES (1, 'v', '{d}')")
    session.sql("SET paimon.sql.driverReadBytes = 0")  # not read on the driver (spark/driver_read.py)
    plan = [r[0] for r in session.sql("EXPLAIN SELECT v FROM a WHERE dt = 'x'").collect()]
    assert plan[0] == "== Paimon scans =="
    assert "  manifests read: 1 of 3" in plan and "  pushed filter: dt = 'x'" in plan
    assert any("FileScan parquet" in line for line in plan)  # no merge needed: Spark's own reader


def test_row_kinds_are_filtered_only_where_a_file_holds_retractions(session):
    """A primary-key file whose meta counts no -U/-D rows (Paimon's deleteRowCount) holds none: its
    native read filters no row kinds (nor reads them); once a DELETE writes one, the kinds are
    filtered and the deleted key stays gone."""
    session.sql("CREATE TABLE k (id BIGINT, v STRING) TBLPROPERTIES ('primary-key' = 'id', 'bucket' = '2')")
    session.sql("INSERT INTO k VALUES (1, 'a'), (2, 'b'), (3, 'c')")
    session.sql("SET paimon.sql.driverReadBytes = 0")  # not read on the driver (spark/driver_read.py)
    plan = "\n".join(r[0] for r in session.sql("EXPLAIN SELECT count(*), max(v) FROM k").collect())
    assert "FileScan parquet" in plan and "_VALUE_KIND" not in plan
    session.sql("DELETE FROM k WHERE id = 2")
    assert {r[0] for r in rows(session, "SELECT deleteRowCount FROM `k$files`")} >= {1}
    plan = "\n".join(r[0] for r in session.sql("EXPLAIN SELECT count(*), max(v) FROM k").collect())
    assert "_VALUE_KIND" in plan
    assert rows(session, "SELECT id, v FROM k ORDER BY id") == [(1, "a"), (3, "c")]


def test_filters_on_the_outer_side_of_a_join_are_not_pushed(session):
    # b's rows must not be pruned by `b.v IS NULL`: that would turn matched rows into NULL-extended ones
    session.sql("CREATE TABLE a (k INT) TBLPROPERTIES ('primary-key'='k', 'bucket'='1')")
    session.sql("CREATE TABLE b (k INT, v INT) TBLPROPERTIES ('primary-key'='k', 'bucket'='1')")
    session.sql("INSERT INTO a VALUES (1), (2)")
    session.sql("INSERT INTO b VALUES (1, 5)")
    session.sql("INSERT INTO b VALUES (1, 6)")  # overlapping files: read through the merging reader
    got = rows(session, "SELECT a.k FROM a LEFT JOIN b ON a.k = b.k WHERE b.v IS NULL ORDER BY a.k")
    assert got == [(2,)]


def test_append_insert_by_spark_parquet_writer(session):
    session.sql("CREATE TABLE a (id BIGINT NOT NULL, v STRING, d DECIMAL(10, 2), dt STRING) PARTITIONED BY (dt)")
    session.sql("INSERT INTO a VALUES (1, 'x', 1.50, 'p'), (2, NULL, NULL, 'p'), (3, 'z', 3.25, 'q'), "
                "(4, 'w', 4.00, NULL)")
    session.sql("INSERT INTO a SELECT id + 10, v, d, dt FROM a WHERE dt = 'p'")
    t = session.catalog.get_table("default.a")
    entries = t.new_scan().plan_entries()
    assert all(e.file.file_name.startswith("data-") and e.bucket == 0 for e in entries)
    assert not [d for d in os.listdir(t.path) if d.startswith(".staging")]
    assert rows(session, "SELECT id, v, d, dt FROM a WHERE dt = 'p' ORDER BY id") == [
        (1, "x", Decimal("1.50"), "p"), (2, None, None, "p"), (11, "x", Decimal("1.50"), "p"),
        (12, None, None, "p")]
    assert rows(session, "SELECT count(*) FROM a WHERE dt IS NULL") == [(1,)]
    # footer stats are real stats: a filter on id prunes files
    assert len(t.new_scan().filter(P.greater_than("id", 10)).plan_entries()) < len(entries)
    # each write counts from 0, as Java's unaware-bucket append writer (it ignores earlier files)
    assert sum(e.file.row_count for e in entries) == 6
    assert all((e.file.min_sequence_number, e.file.max_sequence_number) == (0, e.file.row_count - 1)
               for e in entries)
    with pytest.raises(PaimonError, match="column 'id' is NOT NULL"):
        session.sql("INSERT INTO a VALUES (NULL, 'n', 1, 'p')")
    assert t.snapshot_manager.latest_id() == 2


def test_connect_takes_catalog_options(spark, warehouse):
    import paimon_sql
    s = paimon_sql.connect(warehouse, spark=spark, catalog_options={"metastore": "filesystem", "s3.region": "x"})
    assert s.catalog_options["s3.region"] == "x"
    with pytest.raises(PaimonError, match="metastore"):
        paimon_sql.connect(warehouse, spark=spark, catalog_options={"metastore": "no-such-metastore"})


def test_a_repeated_query_is_planned_over_stand_ins_once(session, monkeypatch):
    """What a query needs of its tables is remembered for its text outside the references and the
    tables' columns: the same query again, or read at another snapshot, skips the stand-in planning;
    after ALTER TABLE the columns differ and it is planned anew, and the rows are the table's as they are now."""
    from paimon_sql.spark import pushdown
    planned = []
    needs_of = pushdown.needs_of
    monkeypatch.setattr(pushdown, "needs_of", lambda *a, **k: planned.append(1) or needs_of(*a, **k))
    session.sql("CREATE TABLE rq (id INT, v STRING)")
    session.sql("INSERT INTO rq VALUES (1, 'a'), (2, 'b')")
    query = "SELECT v FROM rq WHERE id > 1"
    assert rows(session, query) == [("b",)] and rows(session, query) == [("b",)] and len(planned) == 1
    session.sql("INSERT INTO rq VALUES (3, 'c')")
    assert rows(session, query + " ORDER BY v") == [("b",), ("c",)] and len(planned) == 2
    assert rows(session, query + " ORDER BY v") == [("b",), ("c",)] and len(planned) == 2
    # the reference's hint or time travel picks rows, not columns: the same needs, the rows read anew
    assert rows(session, "SELECT v FROM rq VERSION AS OF 1 WHERE id > 1") == [("b",)] and len(planned) == 2
    assert rows(session, "SELECT v FROM rq /*+ OPTIONS('scan.snapshot-id' = '1') */ WHERE id > 1 ORDER BY v") == \
        [("b",)] and len(planned) == 2
    assert rows(session, "SELECT v FROM rq VERSION AS OF 1 WHERE id > 0 ORDER BY v") == [("a",), ("b",)]
    assert len(planned) == 3  # another filter
    session.sql("ALTER TABLE rq ADD COLUMN w INT")
    assert rows(session, query + " ORDER BY v") == [("b",), ("c",)] and len(planned) == 4


def test_repeated_queries_reuse_the_scan_until_the_table_changes(session):
    """A query's scan DataFrame is reused for the same snapshot, columns and filter; a commit, or a
    table dropped and made again with other types at the same place, is read anew."""
    session.sql("CREATE TABLE r (id INT, v STRING)")
    assert session.sql("SELECT id FROM r").schema.simpleString() == "struct<id:int>"
    assert rows(session, "SELECT count(*) FROM r WHERE id < 5") == [(0,)]
    session.sql("INSERT INTO r VALUES (1, 'a'), (7, 'b')")
    for _ in range(3):
        assert rows(session, "SELECT count(*) FROM r WHERE id < 5") == [(1,)]
    reads = [k for k in session.scans if k[0].endswith("/r")]
    assert len(reads) == 3  # the empty table's two scans, and one for snapshot 1 (reused twice)
    session.sql("INSERT INTO r VALUES (2, 'c')")
    assert rows(session, "SELECT count(*) FROM r WHERE id < 5") == [(2,)]
    session.sql("DROP TABLE r")
    session.sql("CREATE TABLE r (id STRING, v STRING)")
    assert session.sql("SELECT id FROM r").schema.simpleString() == "struct<id:string>"
