"""Materialized tables: a table that holds its query's result, refreshed incrementally where the
query allows (new snapshots of an append-only source) and fully otherwise, always equal to the query."""

import pytest

from paimon_sql.catalog import Identifier
from paimon_sql.data.types import paimon_type_from_sql
from paimon_sql.exceptions import PaimonError, SchemaError
from paimon_sql.schema.schema_change import AddColumn, SetOption
from paimon_sql.sql.materialized_table import refresh_lapsed
from paimon_sql.table import materialized_table as mt
from tests.spark.conftest import rows


def same(session, table: str, query: str) -> list:
    def key(row):
        return [(v is None, v) for v in row]
    got, want = sorted(rows(session, f"SELECT * FROM {table}"), key=key), sorted(rows(session, query), key=key)
    assert got == want
    return got


def refresh(session, table: str, partition: str = "") -> tuple:
    return rows(session, f"ALTER MATERIALIZED TABLE {table} REFRESH {partition}")[0]


def table(session, name: str):
    return session.catalog.get_table(Identifier("default", name))


FILTER = "SELECT k, v * 2 AS v2, p FROM src WHERE v > 6"
AGGREGATE = "SELECT k, sum(v) AS s, count(*) AS c, min(v) AS lo, max(v) AS hi FROM src GROUP BY k"


@pytest.fixture
def src(session):
    session.sql("CREATE TABLE src (k INT NOT NULL, v INT, p STRING)")
    session.sql("INSERT INTO src VALUES (1, 10, 'a'), (2, 20, 'b'), (1, 5, 'a'), (3, NULL, 'b')")
    return session


def test_create_stores_the_definition_as_paimon_options(src):
    src.sql(f"CREATE MATERIALIZED TABLE mf FRESHNESS = INTERVAL '5' MINUTE AS {FILTER}")
    o = table(src, "mf").schema.options
    assert o["type"] == "materialized-table"
    assert o["materialized-table.definition-query"] == FILTER.replace("FROM src", "FROM `default`.src")
    assert (o["materialized-table.interval-freshness"], o["materialized-table.interval-freshness.time-unit"]) == \
        ("5", "MINUTE")
    assert o["materialized-table.logical-refresh-mode"] == "AUTOMATIC"
    assert o["materialized-table.refresh-mode"] == "FULL"
    assert o["materialized-table.refresh-status"] == "ACTIVATED"
    assert [f.name for f in table(src, "mf").schema.fields] == ["k", "v2", "p"]
    same(src, "mf", FILTER)  # filled at CREATE
    src.sql(f"CREATE MATERIALIZED TABLE IF NOT EXISTS mf FRESHNESS = INTERVAL '1' SECOND AS {AGGREGATE}")
    assert table(src, "mf").schema.options["materialized-table.interval-freshness"] == "5"


def test_projection_over_append_table_refreshes_only_new_rows(src):
    src.sql(f"CREATE MATERIALIZED TABLE mf FRESHNESS = INTERVAL '1' HOUR AS {FILTER}")
    src.sql("INSERT INTO src VALUES (4, 40, 'a'), (5, 1, 'b')")
    src.sql("INSERT INTO src VALUES (6, 60, 'c')")
    kind, snapshot_id, added = refresh(src, "mf")
    assert (kind, added) == ("incremental", 2)  # the rows of the two new snapshots passing the filter
    snap = table(src, "mf").snapshot_manager.snapshot(snapshot_id)
    assert snap.commit_kind == "APPEND" and snap.delta_record_count == 2
    same(src, "mf", FILTER)
    assert refresh(src, "mf") == ("unchanged", None, 0)
    # UPDATE and DELETE of the source are not appends: the next refresh is full
    src.sql("UPDATE src SET v = 100 WHERE k = 2")
    assert refresh(src, "mf")[0] == "full"
    same(src, "mf", FILTER)
    src.sql("DELETE FROM src WHERE k = 1")
    assert refresh(src, "mf")[0] == "full"
    same(src, "mf", FILTER)
    src.sql("INSERT INTO src VALUES (7, 70, 'a')")  # incremental again from the full refresh on
    assert refresh(src, "mf")[:1] + refresh(src, "mf")[:1] == ("incremental", "unchanged")
    same(src, "mf", FILTER)


def test_aggregation_is_merged_by_the_aggregation_merge_engine(src):
    src.sql(f"CREATE MATERIALIZED TABLE ma FRESHNESS = INTERVAL '1' HOUR AS {AGGREGATE}")
    schema = table(src, "ma").schema
    assert schema.primary_keys == ["k"] and schema.options["merge-engine"] == "aggregation"
    assert {k: v for k, v in schema.options.items() if k.startswith("fields.")} == {
        "fields.s.aggregate-function": "sum", "fields.c.aggregate-function": "sum",
        "fields.lo.aggregate-function": "min", "fields.hi.aggregate-function": "max"}
    same(src, "ma", AGGREGATE)
    src.sql("INSERT INTO src VALUES (1, 1, 'a'), (1, 50, 'a'), (9, NULL, 'c')")
    kind, _, added = refresh(src, "ma")
    assert (kind, added) == ("incremental", 2)  # partial aggregates of the new rows: groups 1 and 9
    same(src, "ma", AGGREGATE)
    src.sql("INSERT INTO src VALUES (3, 3, 'b')")  # a group whose sum was NULL
    assert refresh(src, "ma")[0] == "incremental"
    same(src, "ma", AGGREGATE)
    src.sql("DELETE FROM src WHERE v = 50")  # the max of group 1 goes back: only a full refresh knows
    assert refresh(src, "ma")[0] == "full"
    assert same(src, "ma", AGGREGATE)[0] == (1, 16, 3, 1, 10)


def test_aggregation_over_nullable_keys_is_refreshed_fully(session):
    session.sql("CREATE TABLE src (k INT, v INT)")
    session.sql("INSERT INTO src VALUES (1, 1), (NULL, 2)")
    query = "SELECT k, sum(v) AS s FROM src GROUP BY k"
    session.sql(f"CREATE MATERIALIZED TABLE ma FRESHNESS = INTERVAL '1' HOUR AS {query}")
    assert table(session, "ma").schema.primary_keys == []
    session.sql("INSERT INTO src VALUES (NULL, 3)")
    assert refresh(session, "ma")[0] == "full"
    same(session, "ma", query)


@pytest.mark.parametrize("query", [
    "SELECT k, v FROM pk WHERE v IS NOT NULL",
    "SELECT v, count(*) AS n FROM pk GROUP BY v",
    "SELECT a.k, a.v, b.v AS w FROM pk a JOIN pk b ON a.k = b.k + 1",
])
def test_over_primary_key_table_stays_equal_to_its_query(session, query):
    session.sql("CREATE TABLE pk (k INT NOT NULL, v INT, PRIMARY KEY (k) NOT ENFORCED)")
    session.sql("INSERT INTO pk VALUES (1, 1), (2, 2), (3, 3)")
    session.sql(f"CREATE MATERIALIZED TABLE m FRESHNESS = INTERVAL '1' DAY AS {query}")
    same(session, "m", query)
    for change in ["INSERT INTO pk VALUES (4, 4), (1, 10)", "UPDATE pk SET v = 20 WHERE k = 2",
                   "DELETE FROM pk WHERE k = 3"]:
        session.sql(change)
        assert refresh(session, "m")[0] == "full"
        same(session, "m", query)


def test_alter_as_adds_columns_and_refreshes(src):
    src.sql(f"CREATE MATERIALIZED TABLE ma FRESHNESS = INTERVAL '1' HOUR AS {AGGREGATE}")
    query = AGGREGATE.replace(" FROM src", ", sum(v * 2) AS s2, avg(v) AS mean FROM src")
    src.sql(f"ALTER MATERIALIZED TABLE ma AS {query}")
    schema = table(src, "ma").schema
    assert schema.field_names == ["k", "s", "c", "lo", "hi", "s2", "mean"]
    assert schema.options["materialized-table.definition-query"] == query.replace("FROM src", "FROM `default`.src")
    same(src, "ma", query)
    src.sql("INSERT INTO src VALUES (1, 7, 'a')")
    assert refresh(src, "ma")[0] == "full"  # avg: not merged incrementally
    same(src, "ma", query)
    narrower = AGGREGATE.replace(" FROM src", ", sum(v * 2) AS s2 FROM src")
    src.sql(f"CREATE MATERIALIZED TABLE mb FRESHNESS = INTERVAL '1' HOUR AS {narrower}")
    src.sql(f"ALTER MATERIALIZED TABLE mb AS {query.replace(', avg(v) AS mean', ', max(v * 3) AS hi3')}")
    assert table(src, "mb").schema.options["fields.hi3.aggregate-function"] == "max"
    src.sql("INSERT INTO src VALUES (1, 8, 'a'), (4, 1, 'b')")
    assert refresh(src, "mb")[0] == "incremental"  # the new column's aggregate merges as the others
    same(src, "mb", query.replace(", avg(v) AS mean", ", max(v * 3) AS hi3"))
    for bad, message in [("SELECT k, count(*) AS c FROM src GROUP BY k", "column 2 is c BIGINT"),
                         (AGGREGATE.replace("sum(v) AS s", "sum(v) AS total"), "column 2 is total BIGINT"),
                         ("SELECT k, sum(v) AS s FROM src GROUP BY k", "column 3 is no column")]:
        with pytest.raises(SchemaError, match=r"must keep its columns \(k INT, s BIGINT, c BIGINT, lo INT, hi INT, "
                                              r"s2 BIGINT, mean DOUBLE\) in order .*: " + message):
            src.sql(f"ALTER MATERIALIZED TABLE ma AS {bad}")
    assert table(src, "ma").schema.field_names == schema.field_names
    assert refresh(src, "ma")[0] == "full"
    same(src, "ma", query)


def test_a_refresh_made_under_another_definition_is_not_continued(src):
    """Had ALTER ... AS failed after its schema change, the rows are the old query's: the next
    refresh is full, though the source only appended."""
    src.sql(f"CREATE MATERIALIZED TABLE mf FRESHNESS = INTERVAL '1' HOUR AS {FILTER}")
    query = FILTER.replace(" FROM src", ", v AS raw FROM src")
    table(src, "mf").schema_manager.commit_changes(
        [AddColumn("raw", paimon_type_from_sql("INT")), SetOption(mt.DEFINITION_QUERY, query)])
    src.sql("INSERT INTO src VALUES (4, 40, 'a')")
    assert refresh(src, "mf")[0] == "full"
    same(src, "mf", query)


def test_over_a_format_table_and_its_options(session):
    """A format table has no snapshots: a query over one is refreshed fully. ALTER TABLE may set
    the materialized table's options (not its columns)."""
    session.sql("CREATE TABLE f (id INT, dt STRING) TBLPROPERTIES ('type' = 'format-table', 'file.format' = 'csv')")
    session.sql("INSERT INTO f VALUES (1, 'x'), (2, 'y')")
    query = "SELECT dt, count(*) AS n FROM f GROUP BY dt"
    session.sql(f"CREATE MATERIALIZED TABLE mf FRESHNESS = INTERVAL '1' HOUR AS {query}")
    session.sql("INSERT INTO f VALUES (3, 'x')")
    assert refresh(session, "mf")[0] == "full"
    same(session, "mf", query)
    session.sql("ALTER TABLE mf SET TBLPROPERTIES ('snapshot.num-retained.max' = '5')")
    assert table(session, "mf").schema.options["snapshot.num-retained.max"] == "5"


def test_source_schema_change_makes_a_full_refresh(src):
    src.sql(f"CREATE MATERIALIZED TABLE mf FRESHNESS = INTERVAL '1' HOUR AS {FILTER}")
    src.sql("ALTER TABLE src ADD COLUMN extra INT")
    src.sql("INSERT INTO src VALUES (8, 80, 'a', 1)")
    assert refresh(src, "mf")[0] == "full"
    same(src, "mf", FILTER)


def test_refresh_of_one_partition(src):
    src.sql(f"CREATE MATERIALIZED TABLE mp PARTITIONED BY (p) FRESHNESS = INTERVAL '1' HOUR AS {FILTER}")
    assert table(src, "mp").schema.partition_keys == ["p"]
    src.sql("INSERT INTO src VALUES (4, 40, 'a'), (5, 50, 'b')")
    assert refresh(src, "mp", "PARTITION (p = 'a')")[0] == "partition"
    assert sorted(rows(src, "SELECT k FROM mp")) == [(1,), (2,), (4,)]  # b is not refreshed
    assert refresh(src, "mp")[0] == "full"  # what the partition refresh read is not recorded
    same(src, "mp", FILTER)
    with pytest.raises(PaimonError, match="partition columns"):
        refresh(src, "mp", "PARTITION (k = 1)")


def test_suspend_resume_and_the_refresh_runner(src):
    src.sql(f"CREATE MATERIALIZED TABLE fresh FRESHNESS = INTERVAL '1' HOUR AS {FILTER}")
    src.sql(f"CREATE MATERIALIZED TABLE lapsed FRESHNESS = INTERVAL '1' SECOND AS {FILTER}")
    src.sql(f"CREATE MATERIALIZED TABLE paused FRESHNESS = INTERVAL '1' SECOND AS {FILTER}")
    src.sql("ALTER MATERIALIZED TABLE paused SUSPEND")
    assert table(src, "paused").schema.options["materialized-table.refresh-status"] == "SUSPENDED"
    src.sql("INSERT INTO src VALUES (4, 40, 'a')")
    later = table(src, "lapsed").snapshot_manager.latest().time_millis + 60_000  # a minute on
    done = {name: (action, detail) for name, action, detail in refresh_lapsed(src, later)}
    assert done == {"default.fresh": ("skipped", "fresh"),
                    "default.lapsed": ("refreshed", "incremental, 1 row(s) added"),
                    "default.paused": ("skipped", "suspended")}
    same(src, "lapsed", FILTER)
    assert sorted(rows(src, "SELECT k FROM fresh")) == [(1,), (2,)]
    assert sorted(rows(src, "SELECT k FROM paused")) == [(1,), (2,)]
    src.sql("ALTER MATERIALIZED TABLE paused RESUME")
    assert mt.definition(table(src, "paused")).status == "ACTIVATED"
    assert mt.is_lapsed(table(src, "paused"), later) and not mt.is_lapsed(table(src, "fresh"), later)


def test_queries_time_travel_and_system_tables(src):
    src.sql(f"CREATE MATERIALIZED TABLE mf FRESHNESS = INTERVAL '1' HOUR AS {FILTER}")
    src.sql("INSERT INTO src VALUES (4, 40, 'a')")
    refresh(src, "mf")
    assert rows(src, "SELECT count(*) FROM mf VERSION AS OF 1") == [(2,)]
    assert rows(src, "SELECT count(*) FROM mf") == [(3,)]
    assert rows(src, "SELECT snapshot_id, commit_kind FROM `mf$snapshots` ORDER BY 1") == \
        [(1, "OVERWRITE"), (2, "APPEND")]


def test_drop(src):
    src.sql(f"CREATE MATERIALIZED TABLE mf FRESHNESS = INTERVAL '1' HOUR AS {FILTER}")
    with pytest.raises(PaimonError, match="use DROP MATERIALIZED TABLE"):
        src.sql("DROP TABLE mf")
    with pytest.raises(PaimonError, match="not a materialized table"):
        src.sql("DROP MATERIALIZED TABLE src")
    src.sql("DROP MATERIALIZED TABLE mf")
    assert not src.catalog.table_exists(Identifier("default", "mf"))
    src.sql("DROP MATERIALIZED TABLE IF EXISTS mf")
    with pytest.raises(PaimonError, match="does not exist"):
        src.sql("DROP MATERIALIZED TABLE mf")


@pytest.mark.parametrize("create", [
    "CREATE MATERIALIZED TABLE m COMMENT 'the big ones' PARTITIONED BY (p) WITH ('bucket' = '2', 'bucket-key' = "
    f"'k', 's3.secret-key' = 'hidden') FRESHNESS = INTERVAL '5' MINUTE AS {FILTER}",
    f"CREATE MATERIALIZED TABLE m FRESHNESS = INTERVAL '1' DAY REFRESH_MODE = FULL AS {AGGREGATE}",
    "CREATE MATERIALIZED TABLE m (PRIMARY KEY (k) NOT ENFORCED) WITH ('bucket' = '1') FRESHNESS = INTERVAL '1' "
    "HOUR AS SELECT k, max(v) AS top FROM src GROUP BY k",
])
def test_show_create_table_makes_it_again(src, create):
    src.sql(create)
    shown, before = rows(src, "SHOW CREATE TABLE m")[0][0], table(src, "m").schema
    assert shown.startswith("CREATE MATERIALIZED TABLE default.m") and "hidden" not in shown
    src.sql("DROP MATERIALIZED TABLE m")
    src.sql(shown.replace("'******'", "'hidden'"))  # secrets are masked in the listing
    after = table(src, "m").schema
    assert (after.options, after.primary_keys, after.partition_keys, after.comment, after.fields) == \
        (before.options, before.primary_keys, before.partition_keys, before.comment, before.fields)


def test_comments_naming_the_statements_are_not_read_as_them(src):
    src.sql(f"-- CREATE MATERIALIZED TABLE x\n/* DROP MATERIALIZED TABLE y */ CREATE MATERIALIZED TABLE mf "
            f"FRESHNESS = INTERVAL '1' HOUR AS {FILTER}")
    assert rows(src, "-- CREATE MATERIALIZED TABLE ... AS <the query>\nSELECT count(*) FROM mf") == [(2,)]
    src.sql("/* a CREATE MATERIALIZED TABLE */ ALTER MATERIALIZED TABLE mf SUSPEND")
    assert mt.definition(table(src, "mf")).status == "SUSPENDED"


def test_dataframe_api_writes_are_refused(src, tmp_path):
    src.sql(f"CREATE MATERIALIZED TABLE mf FRESHNESS = INTERVAL '1' HOUR AS {FILTER}")
    spark, before = src.spark, table(src, "mf").snapshot_manager.latest_id()
    df = spark.createDataFrame([(7, 70, "z")], "k INT, v2 INT, p STRING")
    with pytest.raises(PaimonError, match=r"a DataFrame write on materialized table default\.mf is not supported"):
        df.write.format("paimon").mode("append").save("default.mf")
    with pytest.raises(PaimonError, match="a DataFrame write on materialized table default.mf"):
        df.writeTo("default.mf").append()
    (tmp_path / "in").mkdir()
    stream = spark.readStream.schema("k INT, v2 INT, p STRING").json(str(tmp_path / "in"))
    with pytest.raises(PaimonError, match="a streaming write on materialized table default.mf"):
        stream.writeStream.format("paimon").option("checkpointLocation", str(tmp_path / "cp")).start("default.mf")
    assert table(src, "mf").snapshot_manager.latest_id() == before
    same(src, "mf", FILTER)


@pytest.mark.parametrize("statement,message", [
    ("INSERT INTO mf VALUES (1, 2, 'a')", "INSERT on materialized table default.mf is not supported"),
    ("INSERT OVERWRITE mf SELECT 1, 2, 'a'", "INSERT on materialized table"),
    ("UPDATE mf SET v2 = 0", "UPDATE on materialized table"),
    ("DELETE FROM mf WHERE k = 1", "DELETE on materialized table"),
    ("TRUNCATE TABLE mf", "TRUNCATE on materialized table"),
    ("MERGE INTO mf USING src ON mf.k = src.k WHEN MATCHED THEN DELETE", "MERGE on materialized table"),
    ("ALTER MATERIALIZED TABLE src REFRESH", "not a materialized table"),
    ("ALTER TABLE mf ADD COLUMN z INT", "ALTER TABLE on the columns of materialized table default.mf is not supported"),
    ("ALTER TABLE mf RENAME COLUMN k TO kk", "use ALTER MATERIALIZED TABLE ... AS"),
    ("ALTER TABLE mf ALTER COLUMN v2 FIRST", "columns of materialized table default.mf"),
    ("CREATE MATERIALIZED TABLE m2 FRESHNESS = INTERVAL '1' MINUTE REFRESH_MODE = CONTINUOUS AS SELECT 1 AS a",
     "CONTINUOUS needs a streaming job"),
    ("CREATE MATERIALIZED TABLE m2 FRESHNESS = INTERVAL '1' WEEK AS SELECT 1 AS a", "FRESHNESS unit"),
    ("CREATE MATERIALIZED TABLE m2 AS SELECT 1 AS a", "cannot read CREATE MATERIALIZED TABLE"),
    ("CREATE MATERIALIZED TABLE mf FRESHNESS = INTERVAL '1' MINUTE AS SELECT 1 AS a", "already exists"),
    ("CREATE MATERIALIZED TABLE m2 FRESHNESS = INTERVAL '1' MINUTE AS SELECT * FROM tv", "reads temporary view tv"),
    # the definition is the MATERIALIZED TABLE statements' alone
    ("ALTER TABLE mf SET TBLPROPERTIES ('materialized-table.definition-query' = 'SELECT 1 AS k')",
     "option 'materialized-table.definition-query' of materialized table default.mf is not supported"),
    ("ALTER TABLE mf SET TBLPROPERTIES ('materialized-table.refresh-status' = 'SUSPENDED')", "SUSPEND \\| RESUME"),
    ("ALTER TABLE mf UNSET TBLPROPERTIES ('materialized-table.interval-freshness')", "ALTER TABLE on option"),
    ("ALTER TABLE mf SET TBLPROPERTIES ('type' = 'table')", "ALTER TABLE on option 'type' of materialized"),
    ("ALTER TABLE src SET TBLPROPERTIES ('type' = 'materialized-table')", "option 'type' cannot be changed"),
    ("ALTER TABLE src SET TBLPROPERTIES ('type' = 'format-table')", "option 'type' cannot be changed"),
    ("CREATE TABLE m2 (a INT) TBLPROPERTIES ('type' = 'materialized-table')",
     "is made by CREATE MATERIALIZED TABLE ... FRESHNESS"),
    ("CREATE TABLE m2 TBLPROPERTIES ('type' = 'materialized-table') AS SELECT 1 AS a", "is made by CREATE MATERIALIZED"),
    ("CREATE MATERIALIZED TABLE m2 WITH ('type' = 'table') FRESHNESS = INTERVAL '1' HOUR AS SELECT 1 AS a",
     "option 'type' is the statement's own"),
    ("CREATE MATERIALIZED TABLE m2 WITH ('materialized-table.refresh-status' = 'SUSPENDED') "
     "FRESHNESS = INTERVAL '1' HOUR AS SELECT 1 AS a", "option 'materialized-table.refresh-status' is the statement"),
])
def test_refusals(src, statement, message):
    src.sql(f"CREATE MATERIALIZED TABLE mf FRESHNESS = INTERVAL '1' HOUR AS {FILTER}")
    src.sql("CREATE TEMPORARY VIEW tv AS SELECT 1 AS a")
    with pytest.raises(PaimonError, match=message):
        src.sql(statement)
    same(src, "mf", FILTER)
    assert not src.catalog.table_exists(Identifier("default", "m2"))
    assert mt.is_materialized(table(src, "mf")) and not mt.is_materialized(table(src, "src"))
    assert mt.definition(table(src, "mf")) == mt.Definition(FILTER.replace("FROM src", "FROM `default`.src"), 3600,
                                                           mt.ACTIVATED)


def test_names_resolve_in_the_database_current_at_create(src):
    src.sql("CREATE DATABASE other")
    src.sql("CREATE TABLE other.src (k INT NOT NULL, v INT, p STRING)")  # a namesake the query must not read
    src.sql(f"CREATE MATERIALIZED TABLE other.mf FRESHNESS = INTERVAL '1' HOUR AS {FILTER}")
    src.sql("USE other")
    src.sql("INSERT INTO default.src VALUES (4, 40, 'a')")
    assert refresh(src, "mf")[0] == "incremental"
    assert len(same(src, "mf", FILTER.replace("FROM src", "FROM default.src"))) == 3
