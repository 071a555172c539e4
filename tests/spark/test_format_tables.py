"""Format tables ('type' = 'format-table') under SQL: each of csv, parquet, orc and json is read and written
by Spark's own file sources, so a table written by us is read by plain ``spark.read`` and files Spark
writes into the directory are read through the table; the same statements on a plain Spark ``USING <fmt>``
table give the same rows; what needs snapshots is refused naming the table."""

import datetime
import os

import pytest

from paimon_sql.exceptions import PaimonError

from spark.conftest import rows

FORMATS = ["csv", "parquet", "orc", "json"]
SCHEMA = "id INT, name STRING, dt STRING"


def _create(session, name, fmt, partitioned=True, extra=""):
    session.sql(f"CREATE TABLE {name} ({SCHEMA}){' PARTITIONED BY (dt)' if partitioned else ''} "
                f"TBLPROPERTIES ('type' = 'format-table', 'file.format' = '{fmt}'{extra})")
    return session.catalog.get_table(f"default.{name}")


def _sorted(df):
    return sorted(tuple(r) for r in df.collect())


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("partitioned", [True, False])
def test_written_by_us_read_by_plain_spark_and_back(session, spark, fmt, partitioned):
    table = _create(session, "t", fmt, partitioned)
    session.sql("INSERT INTO t VALUES (1, 'a', 'd1'), (2, NULL, 'd2')")
    plain = spark.read.format(fmt).schema(SCHEMA).load(table.path)
    assert _sorted(plain.select("id", "name", "dt")) == [(1, "a", "d1"), (2, None, "d2")]
    if partitioned:
        assert sorted(n for n in os.listdir(table.path) if not n.startswith("_")) == ["dt=d1", "dt=d2"]
        spark.createDataFrame([(3, "c", "d3")], SCHEMA).write.mode("append").format(fmt) \
            .partitionBy("dt").save(table.path)
    else:
        spark.createDataFrame([(3, "c", "d3")], SCHEMA).write.mode("append").format(fmt).save(table.path)
    assert rows(session, "SELECT * FROM t ORDER BY id") == [(1, "a", "d1"), (2, None, "d2"), (3, "c", "d3")]
    assert not os.path.exists(f"{table.path}/snapshot")  # no snapshots: the files are the table


@pytest.mark.parametrize("fmt", FORMATS)
def test_same_statements_as_plain_spark_table(session, spark, tmp_path, fmt):
    """Differential: INSERT, static and dynamic partition overwrite, whole-table overwrite, TRUNCATE
    PARTITION and filtered reads agree with a Spark ``USING <fmt>`` table."""
    _create(session, "ours", fmt)
    session.spark_sql(f"CREATE DATABASE sp LOCATION '{tmp_path}/sp'")  # Spark's own, managed tables
    session.spark_sql(f"CREATE TABLE sp.theirs ({SCHEMA}) USING {fmt} PARTITIONED BY (dt)")
    statements = [
        "INSERT INTO {t} VALUES (1, 'a', 'd1'), (2, 'b', 'd2'), (3, 'c', 'd3')",
        "INSERT INTO {t} PARTITION (dt = 'd1') VALUES (4, 'd')",
        "INSERT OVERWRITE {t} PARTITION (dt = 'd2') VALUES (5, 'e')",
        "INSERT OVERWRITE {t} PARTITION (dt = 'd9') SELECT id * 10, name FROM VALUES (1, 'a'), (2, NULL) v(id, name)",
        "SET spark.sql.sources.partitionOverwriteMode = dynamic",
        "INSERT OVERWRITE {t} VALUES (6, 'f', 'd3'), (7, 'g', 'd4')",
        "SET spark.sql.sources.partitionOverwriteMode = static",
        "TRUNCATE TABLE {t} PARTITION (dt = 'd4')",
    ]
    queries = ["SELECT * FROM {t}", "SELECT dt, count(*), max(id) FROM {t} WHERE dt >= 'd2' GROUP BY dt",
               "SHOW PARTITIONS {t}"]
    try:
        for text in statements:
            for t in ("ours", "sp.theirs"):
                session.sql(text.format(t=t))
            for q in queries:
                assert _sorted(session.sql(q.format(t="ours"))) == _sorted(spark.sql(q.format(t="sp.theirs"))), text
        # Spark refuses to overwrite its table while reading it (UNSUPPORTED_OVERWRITE.TABLE); ours reads
        # the table before the files move in, as a Paimon table does
        session.sql("INSERT OVERWRITE ours SELECT * FROM ours WHERE dt = 'd1'")
        assert _sorted(session.sql("SELECT * FROM ours")) == [(1, "a", "d1"), (4, "d", "d1")]
    finally:
        session.spark_sql("DROP DATABASE sp CASCADE")


def test_partition_filter_prunes_directories(session):
    _create(session, "t", "parquet")
    session.sql("INSERT INTO t VALUES (1, 'a', 'd1'), (2, 'b', 'd2')")
    plan = session.sql("SELECT * FROM t WHERE dt = 'd2'")._jdf.queryExecution().executedPlan().toString()
    assert "PartitionFilters: [isnotnull(dt" in plan and "(dt#" in plan
    assert rows(session, "SELECT id FROM t WHERE dt = 'd2'") == [(2,)]


def test_csv_options_are_spark_options(session, spark):
    table = _create(session, "t", "csv", extra=", 'field-delimiter' = '|', 'csv.include-header' = 'true', "
                                               "'csv.null-literal' = 'NULL', 'file.compression' = 'gzip'")
    session.sql("INSERT INTO t VALUES (1, NULL, 'd1')")
    (name,) = os.listdir(f"{table.path}/dt=d1")
    assert name.endswith(".csv.gz")
    import gzip
    with gzip.open(f"{table.path}/dt=d1/{name}", "rt") as f:
        assert f.read() == "id|name\n1|NULL\n"
    plain = spark.read.options(sep="|", header="true", nullValue="NULL").schema(SCHEMA).csv(table.path)
    assert _sorted(plain.select("id", "name", "dt")) == [(1, None, "d1")]


def test_insert_failing_leaves_table_as_it_was(session):
    table = _create(session, "t", "json")
    session.sql("INSERT INTO t VALUES (1, 'a', 'd1')")
    with pytest.raises(PaimonError):
        session.sql("INSERT OVERWRITE t SELECT raise_error('boom'), 'x', 'd1'")
    assert rows(session, "SELECT * FROM t") == [(1, "a", "d1")]
    assert sorted(os.listdir(table.path)) == ["_schema", "dt=d1"]  # no staging directory left


def test_create_table_as_select_show_create_describe(session):
    session.sql("CREATE TABLE src (a INT, b STRING)")
    session.sql("INSERT INTO src VALUES (1, 'x'), (2, 'y')")
    session.sql("CREATE TABLE c TBLPROPERTIES ('type' = 'format-table', 'file.format' = 'orc') AS SELECT * FROM src")
    assert rows(session, "SELECT * FROM c ORDER BY a") == [(1, "x"), (2, "y")]
    text = rows(session, "SHOW CREATE TABLE c")[0][0]
    assert "'type' = 'format-table'" in text and "'file.format' = 'orc'" in text
    session.sql("DROP TABLE c")
    session.sql(text)  # SHOW CREATE TABLE's statement makes the table again
    assert session.catalog.get_table("default.c").format == "orc"
    assert [r[:2] for r in rows(session, "DESCRIBE c")] == [("a", "int"), ("b", "string")]
    assert {"c", "src"} <= {r[1] for r in rows(session, "SHOW TABLES")}


def test_alter_table_options_and_add_column(session):
    _create(session, "t", "parquet")
    session.sql("INSERT INTO t VALUES (1, 'a', 'd1')")
    session.sql("ALTER TABLE t SET TBLPROPERTIES ('file.compression' = 'gzip')")
    session.sql("ALTER TABLE t ADD COLUMNS (score DOUBLE)")
    session.sql("INSERT INTO t VALUES (2, 'b', 'd1', 0.5)")
    assert rows(session, "SELECT * FROM t ORDER BY id") == [(1, "a", "d1", None), (2, "b", "d1", 0.5)]
    with pytest.raises(PaimonError, match="RenameColumn"):
        session.sql("ALTER TABLE t RENAME COLUMN name TO n")
    with pytest.raises(PaimonError, match="SetOption"):
        session.sql("ALTER TABLE t SET TBLPROPERTIES ('file.format' = 'csv')")


@pytest.mark.parametrize("text, message", [
    ("SELECT * FROM t VERSION AS OF 1", "format table default.t has no snapshots"),
    ("SELECT * FROM `t$snapshots`", "format table default.t: system table t\\$snapshots is not supported"),
    ("SELECT * FROM `t$branch_b`", "format table default.t has no branches"),
    ("UPDATE t SET name = 'z'", "format table default.t: UPDATE is not supported"),
    ("DELETE FROM t WHERE id = 1", "format table default.t: DELETE is not supported"),
    ("MERGE INTO t USING t AS s ON t.id = s.id WHEN MATCHED THEN DELETE", "format table default.t"),
    ("CALL sys.create_tag(table => 'default.t', tag => 'x')",
     "CALL sys.create_tag: table 'default.t' is a format table \\(plain csv files"),
    ("CALL sys.compact(table => 'default.t')", "CALL sys.compact: table 'default.t' is a format table"),
    ("ANALYZE TABLE t COMPUTE STATISTICS", "format table default.t: ANALYZE TABLE is not supported"),
    ("ALTER TABLE t DROP PARTITION (dt = 'd1')", "format table default.t: ALTER TABLE ... DROP PARTITION is not"),
    ("INSERT INTO t REPLACE WHERE dt = 'd1' SELECT 9, 'r', 'd1'",
     "Table default.t does not support INSERT INTO ... REPLACE WHERE"),
    ("CALL sys.expire_partitions(table => 'default.t', expiration_time => '1 d')",
     "CALL sys.expire_partitions: table 'default.t' is a format table"),
])
def test_what_needs_snapshots_is_refused(session, text, message):
    _create(session, "t", "csv")
    with pytest.raises(PaimonError, match=message) as e:
        session.sql(text)
    assert "\n" not in str(e.value)


def test_dataframe_api_writes(session, spark):
    """save / writeTo write a format table as INSERT does (by column name); what needs snapshots is refused."""
    from pyspark.sql import functions as F
    _create(session, "t", "csv")
    df = spark.createDataFrame([(1, "a", "d1")], SCHEMA)
    df.select("dt", "name", "id").write.format("paimon").mode("append").save("default.t")
    df.withColumn("id", F.lit(2)).writeTo("default.t").append()
    assert rows(session, "SELECT * FROM t ORDER BY id") == [(1, "a", "d1"), (2, "a", "d1")]
    df.withColumn("id", F.lit(3)).write.format("paimon").mode("overwrite").save("default.t")
    assert rows(session, "SELECT * FROM t") == [(3, "a", "d1")]
    with pytest.raises(PaimonError, match="'write.merge-schema' is not supported by format table default.t"):
        df.withColumn("z", F.lit(1)).write.format("paimon").option("write.merge-schema", "true") \
            .mode("append").save("default.t")
    stream = spark.readStream.format("rate").load().selectExpr("CAST(value AS INT) id", "'s' name", "'d' dt")
    with pytest.raises(PaimonError, match="format table default.t: a streaming write is not supported"):
        stream.writeStream.format("paimon").option("checkpointLocation", "/nonexistent/ck").start("default.t")
    assert rows(session, "SELECT * FROM t") == [(3, "a", "d1")]


def test_cache_table_lasts_until_a_write_or_refresh(session):
    """As Spark's cache of its own file tables: kept over files added behind its back, renewed by a
    write through the session and by REFRESH TABLE."""
    table = _create(session, "t", "json")
    session.sql("INSERT INTO t VALUES (1, 'a', 'd1')")
    session.sql("CACHE TABLE t")
    assert "InMemoryRelation" in "\n".join(r[0] for r in rows(session, "EXPLAIN SELECT * FROM t"))
    session.sql("INSERT INTO t VALUES (2, 'b', 'd1')")
    assert rows(session, "SELECT count(*) FROM t") == [(2,)]
    os.makedirs(os.path.join(table.path, "dt=d9"))
    with open(os.path.join(table.path, "dt=d9", "by-hand.json"), "w") as f:
        f.write('{"id": 9, "name": "h"}\n')
    assert rows(session, "SELECT count(*) FROM t") == [(2,)]
    session.sql("REFRESH TABLE t")
    assert rows(session, "SELECT count(*) FROM t") == [(3,)]
    session.sql("TRUNCATE TABLE t")
    assert rows(session, "SELECT count(*) FROM t") == [(0,)]
    session.sql("UNCACHE TABLE t")
    assert "InMemoryRelation" not in "\n".join(r[0] for r in rows(session, "EXPLAIN SELECT * FROM t"))


def test_database_wide_procedures_pass_format_tables_by(session):
    """A database's format tables are neither compacted (not counted, as Paimon's compact_database)
    nor searched for orphans: every file in their directories is the user's."""
    table = _create(session, "t", "csv")
    session.sql("INSERT INTO t VALUES (1, 'a', 'd1')")
    with open(os.path.join(table.path, "dt=d1", "by-hand.csv"), "w") as f:
        f.write("9,z\n")  # a file no snapshot names: the user's, not an orphan
    session.sql("CREATE TABLE p (a INT)")
    session.sql("INSERT INTO p VALUES (1)")
    stray = os.path.join(session.catalog.get_table("default.p").path, "bucket-0", "data-stray.parquet")
    with open(stray, "wb") as f:
        f.write(b"12345")
    assert rows(session, "CALL sys.compact_database(including_databases => 'default')") == \
        [("Compact database finished. Success: 1, Failed: 0",)]
    now = datetime.datetime.now().isoformat(sep=" ")
    assert rows(session, f"CALL sys.remove_orphan_files(table => 'default.*', older_than => '{now}')") == [(1, 5)]
    assert not os.path.exists(stray)
    assert rows(session, "CALL sys.repair('default')") == [(True,)]
    assert rows(session, "SELECT * FROM t ORDER BY id") == [(1, "a", "d1"), (9, "z", "d1")]
    assert rows(session, "SELECT * FROM p") == [(1,)]


@pytest.mark.parametrize("props, message", [
    (", 'bucket' = '2'", "option 'bucket' is not supported by a csv format table"),
    (", 'json.line-delimiter' = ';'", "option 'json.line-delimiter' is not supported by a csv format table"),
    (", 'csv.quote-character' = 'ab'", "must be one character"),
    (", 'csv.mode' = 'LENIENT'", "csv.mode"),
    (", 'file.compression' = 'brotli'", "compression 'brotli' is not supported for csv"),
])
def test_options_spark_cannot_honour_are_refused(session, props, message):
    with pytest.raises(PaimonError, match=message):
        _create(session, "t", "csv", extra=props)
    assert session.catalog.list_tables("default") == []


def test_file_format_csv_still_refused_for_data_tables(session):
    with pytest.raises(PaimonError, match="file.format"):
        session.sql("CREATE TABLE d (a INT) TBLPROPERTIES ('file.format' = 'csv')")
    with pytest.raises(PaimonError, match="csv format table cannot hold column"):
        session.sql("CREATE TABLE n (a ARRAY<INT>) TBLPROPERTIES ('type' = 'format-table', 'file.format' = 'csv')")
