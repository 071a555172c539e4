"""Catalog statements on Paimon tables give Spark's answers (issue 12): each statement runs on a
Paimon table in warehouse database ``p`` and on a Spark table of the same shape in Spark's own
database ``s`` (``USING parquet``), and the results — column names, types, rows — are compared
with the database names swapped. Where paimon-spark answers for a Paimon table otherwise than
Spark for its own (Spark's v2 shapes of DESCRIBE EXTENDED, SHOW COLUMNS, SHOW TABLE EXTENDED,
DESCRIBE DATABASE; the properties SHOW TBLPROPERTIES lists), paimon-spark's answer is asserted
(tests/differential/test_ddl*.py compare them with paimon-spark's own). Paimon-only behaviour
(CREATE OR REPLACE keeping history, nested schema evolution read back from old files) is checked
against rows Spark computes."""

import re

import pytest
from sqlglot import exp

from paimon_sql.exceptions import PaimonError
from paimon_sql.sql import execute, parse
from paimon_sql.table.statistics import write_statistics

COLUMNS = ("id INT, name STRING COMMENT 'the name', st STRUCT<a: INT, b: STRING>, d DECIMAL(10,2), ts TIMESTAMP, "
           "tn TIMESTAMP_NTZ, m MAP<STRING, INT>, arr ARRAY<BIGINT>, c CHAR(3), v VARCHAR(5), bin BINARY, "
           "dt STRING, h INT")
SHAPE = f"({COLUMNS}) PARTITIONED BY (dt, h) COMMENT 'tc' TBLPROPERTIES ('k1' = 'v1')"
ROWS = ("(1, 'a', named_struct('a', 1, 'b', 'x'), 1.5, NULL, NULL, map('k', 1), array(1), 'ab', 'x', NULL, "
        "'2024-01-01', 1), (2, NULL, NULL, 2.25, NULL, NULL, NULL, NULL, NULL, NULL, NULL, '2024-01-02', 2)")


def result(df):
    return df.schema.simpleString(), [tuple(r) for r in df.collect()]


def swapped(answer, old="s", new="p"):
    """Spark's answer with database ``old`` named ``new``, as the Paimon side names it."""
    schema, rows = answer
    pattern = re.compile(rf"(?<![\w]){old}(?![\w])")
    return schema, [tuple(new if v == old else pattern.sub(new, v) if isinstance(v, str) and "`" in v else v
                          for v in r) for r in rows]


@pytest.fixture(scope="module")
def both(spark, tmp_path_factory):
    """Database ``s`` in Spark and ``p`` in the warehouse, each with table t of SHAPE and its rows,
    and tables t_1, tx1, abc and k; shared by the tests that only read them (and set properties)."""
    import paimon_sql
    session = paimon_sql.connect(str(tmp_path_factory.mktemp("catalog") / "warehouse"), spark=spark)
    session.spark_sql("CREATE DATABASE IF NOT EXISTS s")
    session.spark_sql(f"CREATE TABLE s.t {SHAPE.replace('PARTITIONED', 'USING parquet PARTITIONED')}")
    session.sql("CREATE DATABASE p")
    session.sql(f"CREATE TABLE p.t {SHAPE}")
    for db in ("s", "p"):
        session.sql(f"INSERT INTO {db}.t VALUES {ROWS}")
        for t in ("t_1", "tx1", "abc"):
            session.sql(f"CREATE TABLE {db}.{t} (a INT)" + (" USING parquet" if db == "s" else ""))
    session.sql("CREATE TABLE s.k (id INT, v STRING) USING parquet")
    session.sql("CREATE TABLE p.k (id INT, v STRING) TBLPROPERTIES ('primary-key' = 'id', 'bucket' = '2')")
    yield session
    paimon_sql.session.route(spark, None)
    session.spark_sql("DROP DATABASE IF EXISTS s CASCADE")
    session.spark_sql("DROP DATABASE IF EXISTS p CASCADE")


@pytest.fixture
def views(both):
    """Temporary views zz, aa, tv and one named as the front layer's internal views."""
    names = ("zz", "aa", "tv", "__paimon_scan_1")
    for view in names:
        both.spark.range(1).createOrReplaceTempView(view)
    yield names
    for view in names:
        both.spark.catalog.dropTempView(view)
    both.spark.catalog.setCurrentDatabase("default")


def both_ways(session, text):
    """(Spark's answer on s, with s named p; ours on p)."""
    return swapped(result(session.spark_sql(text.format(db="s")))), result(session.sql(text.format(db="p")))


def test_describe_names_types_as_spark(both):
    spark, ours = both_ways(both, "DESCRIBE {db}.t")
    assert ours == spark
    assert ("st", "struct<a:int,b:string>", None) in ours[1] and ("c", "char(3)", None) in ours[1]
    spark, ours = both_ways(both, "DESCRIBE TABLE EXTENDED {db}.t")
    cut = spark[1].index(("", "", ""))
    assert ours[0] == spark[0] and ours[1][:cut + 1] == spark[1][:cut + 1]  # columns and partitioning as Spark
    rest = ours[1][cut:]  # paimon-spark's: its metadata columns, then Spark's v2 details
    assert rest[1:6] == [("# Metadata Columns", "", ""), ("__paimon_file_path", "string", ""),
                         ("__paimon_row_index", "bigint", ""),
                         ("__paimon_partition", "struct<dt:string,h:int>", ""), ("__paimon_bucket", "int", "")]
    detail = {r[0]: r[1] for r in rest[rest.index(("# Detailed Table Information", "", "")):]}
    path = both.catalog.get_table("p.t").path
    assert (detail["Name"], detail["Type"], detail["Comment"], detail["Location"], detail["Provider"]) == \
        ("p.t", "MANAGED", "tc", path, "paimon")
    assert detail["Table Properties"] == f"[k1=v1,path={path}]" and detail["Owner"] == both.spark.sparkContext.sparkUser()
    # 2 rows of (4 + 20 + 24 + 8 + 8 + 8 + 24 + 8 + 3 + 5 + 20 + 20 + 4) bytes, as Paimon estimates
    assert rest[-1] == ("Statistics", "312 bytes, 2 rows", None)


def _describe_column(session, table, column, style=None):
    """DESCRIBE [EXTENDED] t col as the parser hands it over (sqlglot cannot read this form yet)."""
    node = exp.Describe(this=parse.table_reference(table), style=style, expressions=[parse.parse(
        f"SELECT {column}").expressions[0]])
    return result(execute.execute(session, node))


def test_describe_column_as_spark(both):
    for column in ("name", "st"):
        assert _describe_column(both, "p.t", column) == result(both.spark_sql(f"DESCRIBE s.t {column}"))
    stats = {"id": {"colId": 0, "min": "1", "max": "2", "nullCount": 0}}
    write_statistics(both.catalog.get_table("p.t"), 2, None, stats)
    # Spark's v2 DESCRIBE of a column shows no statistics, EXTENDED or not, as paimon-spark's
    assert _describe_column(both, "p.t", "id", "EXTENDED") == result(both.spark_sql("DESCRIBE s.t id"))
    with pytest.raises(PaimonError, match="does not support nested column: st.a"):
        _describe_column(both, "p.t", "st.a")


def test_describe_column_statement(both):
    assert result(both.sql("DESCRIBE p.t name")) == result(both.spark_sql("DESCRIBE s.t name"))


def test_describe_database_and_its_properties(both):
    both.sql("CREATE NAMESPACE pc COMMENT 'a comment'")
    assert result(both.sql("DESCRIBE NAMESPACE pc"))[1] == [("Catalog Name", "paimon"), ("Namespace Name", "pc"),
                                                             ("Comment", "a comment")]
    with pytest.raises(PaimonError, match="cannot have a LOCATION"):
        both.sql("CREATE DATABASE pl LOCATION '/tmp/elsewhere'")
    for db in ("s", "p"):
        both.sql(f"ALTER DATABASE {db} SET DBPROPERTIES ('b' = '2', 'a' = '1')")
        both.sql(f"ALTER SCHEMA {db} SET PROPERTIES ('c' = 'x y')")
    spark, ours = both_ways(both, "DESCRIBE DATABASE EXTENDED {db}")
    assert ours[0] == spark[0] and dict(ours[1])["Properties"] == dict(spark[1])["Properties"] == "((a,1), (b,2), (c,x y))"
    assert [r[0] for r in ours[1]] == ["Catalog Name", "Namespace Name", "Properties"]  # Spark's v2 rows, as paimon-spark
    with pytest.raises(PaimonError, match="comment is a reserved namespace property"):
        both.sql("ALTER DATABASE p SET DBPROPERTIES ('comment' = 'no')")


def test_show_tables_and_views_as_spark(both, views):
    for text in ["SHOW TABLES IN {db}", "SHOW TABLES FROM {db} LIKE 't.1'", "SHOW TABLES IN {db} 'T*'",
                 "SHOW TABLES IN {db} LIKE '[ab]*|t_1'", "SHOW TABLES IN {db} LIKE 'a* | t_1'",
                 "SHOW VIEWS IN {db}", "SHOW VIEWS FROM {db} LIKE 'z*|__*'"]:
        spark, ours = both_ways(both, text)
        # a warehouse database lists no temporary views, as paimon-spark's catalog lists none
        assert ours == (spark[0], [r for r in spark[1] if not r[2]]), text
    both.sql("USE p")
    assert [r[1] for r in both.sql("SHOW TABLES").collect()] == ["abc", "k", "t", "t_1", "tx1"]
    assert both.sql("SHOW VIEWS").collect() == []
    both.sql("USE s")  # Spark's own database: Spark's listing, its temporary views too
    assert [r[1] for r in both.sql("SHOW VIEWS").collect()] == ["aa", "tv", "zz"]


def test_show_columns_and_tblproperties_as_spark(both):
    for text in ["SHOW COLUMNS IN {db}.t", "SHOW COLUMNS FROM t IN {db}", "SHOW COLUMNS IN {db}.t FROM {db}"]:
        spark, ours = both_ways(both, text)
        assert ours == (spark[0].replace("col_name", "column"), spark[1]), text  # paimon-spark's column name
    spark, ours = both_ways(both, "SHOW TBLPROPERTIES {db}.t ('k1')")
    assert ours == spark
    path = both.catalog.get_table("p.t").path
    assert result(both.sql("SHOW TBLPROPERTIES p.t"))[1] == [("k1", "v1"), ("path", path)]  # not the owner
    missing = both.sql("SHOW TBLPROPERTIES p.t ('nope')").collect()[0]
    assert missing.value == "Table paimon.p.t does not have property: nope"
    with pytest.raises(PaimonError, match=r"^\[SHOW_COLUMNS_WITH_CONFLICT_NAMESPACE\]"):
        both.sql("SHOW COLUMNS IN p.t IN other")
    path = both.catalog.get_table("p.k").path
    assert result(both.sql("SHOW TBLPROPERTIES p.k"))[1] == [("bucket", "2"), ("path", path), ("primary-key", "id")]


def test_show_partitions_as_spark(both):
    for text in ["SHOW PARTITIONS {db}.t", "SHOW PARTITIONS {db}.t PARTITION (dt = '2024-01-01')",
                 "SHOW PARTITIONS {db}.t PARTITION (h = 02)", "SHOW PARTITIONS {db}.t PARTITION (h = 3)"]:
        spark, ours = both_ways(both, text)
        assert ours == spark, text
    errors = []
    for db in ("s", "p"):
        with pytest.raises(PaimonError) as e:
            both.sql(f"SHOW PARTITIONS {db}.t PARTITION (x = 1)")
        errors.append(str(e.value).split(" SQLSTATE")[0].replace("`s`", "`p`").replace("spark_catalog", "paimon"))
    assert errors[0] == errors[1] and errors[0].startswith("[PARTITIONS_NOT_FOUND] The partition(s) `x`")
    with pytest.raises(PaimonError, match=r"^\[INVALID_PARTITION_OPERATION.PARTITION_SCHEMA_IS_EMPTY\] "
                                          r"The partition command is invalid. Table `paimon`.`p`.`abc`"):
        both.sql("SHOW PARTITIONS p.abc")


def test_show_table_extended_as_paimon_spark(both, views):
    spark, ours = both_ways(both, "SHOW TABLE EXTENDED IN {db} LIKE 't*'")
    assert ours[0] == spark[0] and [r[:3] for r in ours[1]] == [r[:3] for r in spark[1]]  # its temporary views too
    path = both.catalog.get_table("p.t").path
    lines = ours[1][0][3].split("\n")
    assert lines[:10] == ["Catalog: paimon", "Namespace: p", "Table: t", "Type: MANAGED", "Comment: tc",
                          f"Location: {path}", "Provider: paimon", f"Owner: {both.spark.sparkContext.sparkUser()}",
                          f"Table Properties: [k1=v1, path={path}]", "Partition Provider: Catalog"]
    parquet = spark[1][0][3].split("\n")
    parquet = parquet[parquet.index("Partition Columns: [`dt`, `h`]"):]  # the same schema, CHAR and VARCHAR kept
    assert lines[10:] == [ln.replace("c: string", "c: char(3)").replace("v: string", "v: varchar(5)") for ln in parquet]
    ours = result(both.sql("SHOW TABLE EXTENDED IN p LIKE 't' PARTITION (dt = '2024-01-01', h = 1)"))[1][0]
    assert ours[:3] == ("p", "t", False) and re.fullmatch(
        r"Partition Values: \[dt=2024-01-01, h=1\]\nPartition Parameters: \{recordCount=1, fileSizeInBytes=(\d+), "
        r"fileCount=1, lastFileCreationTime=\d+\}\nPartition Statistics: 1 rows, \1 bytes\n", ours[3])


def test_drop_database_every_form(session):
    session.spark_sql("CREATE DATABASE IF NOT EXISTS sd")
    session.sql("CREATE DATABASE pd")
    for db in ("sd", "pd"):
        session.sql(f"CREATE TABLE {db}.t (a INT)" + (" USING parquet" if db == "sd" else ""))
    errors = []
    for text in ("DROP DATABASE {db}", "DROP SCHEMA {db} RESTRICT"):
        for db in ("sd", "pd"):
            with pytest.raises(PaimonError) as e:
                session.sql(text.format(db=db))
            errors.append(str(e.value).split(" Use ")[0].split(" SQLSTATE")[0].replace("`sd`", "`pd`"))
    assert len(set(errors)) == 1 and errors[0].startswith("[SCHEMA_NOT_EMPTY] Cannot drop a schema `pd`")
    session.sql("DROP DATABASE pd CASCADE")
    session.spark_sql("DROP DATABASE sd CASCADE")
    assert not session.catalog.database_exists("pd")
    for text in ("DROP DATABASE IF EXISTS {db}", "DROP DATABASE IF EXISTS {db} CASCADE"):
        assert result(session.sql(text.format(db="pd"))) == result(session.spark_sql(text.format(db="sd")))
    with pytest.raises(PaimonError, match=r"^\[SCHEMA_NOT_FOUND\]"):
        session.sql("DROP DATABASE pd")
    session.sql("CREATE DATABASE q")
    session.sql("USE q")  # Spark now holds a database q too, with a table of its own
    session.spark_sql("CREATE TABLE q.own (a INT) USING parquet")
    with pytest.raises(PaimonError, match=r"^\[SCHEMA_NOT_EMPTY\]"):
        session.sql("DROP DATABASE q")
    session.sql("USE default")
    session.sql("DROP SCHEMA q CASCADE")
    assert not session.catalog.database_exists("q") and not session.spark.catalog.databaseExists("q")
    with pytest.raises(PaimonError, match="default"):
        session.sql("DROP DATABASE default")


def test_create_or_replace_keeps_the_location_and_history(session):
    session.sql("CREATE TABLE r (id BIGINT, data STRING) TBLPROPERTIES ('primary-key' = 'id', 'bucket' = '2')")
    session.sql("INSERT INTO r VALUES (1, 'old')")
    before = session.catalog.get_table("default.r")
    old_snapshot = before.snapshot_manager.latest().id
    session.sql("CREATE OR REPLACE TABLE r (id STRING, amount INT COMMENT 'n') TBLPROPERTIES ('bucket' = '-1')")
    after = session.catalog.get_table("default.r")
    assert after.path == before.path and after.schema.id == before.schema.id + 1
    assert after.schema.options == {"bucket": "-1", "owner": session.spark.sparkContext.sparkUser()}
    assert after.schema.primary_keys == []
    session.spark_sql("CREATE TABLE spark_r (id STRING, amount INT COMMENT 'n') USING parquet")
    try:
        assert result(session.sql("DESCRIBE r")) == result(session.spark_sql("DESCRIBE spark_r"))
    finally:
        session.spark_sql("DROP TABLE spark_r")
    assert result(session.sql("SELECT * FROM r"))[1] == []
    assert result(session.sql(f"SELECT * FROM r VERSION AS OF {old_snapshot}"))[1] == [(1, "old")]
    session.sql("INSERT INTO r VALUES ('2', 20)")
    session.sql("CREATE OR REPLACE TABLE r PARTITIONED BY (p) WITH ('bucket' = '-1') "
                "AS SELECT id, amount + 1 AS amount, 'x' AS p FROM r")  # reads r before emptying it
    assert result(session.sql("SELECT * FROM r")) == ("struct<id:string,amount:int,p:string>", [("2", 21, "x")])
    session.sql("CREATE OR REPLACE TABLE fresh AS SELECT 1 AS one")
    with pytest.raises(PaimonError):
        session.sql("CREATE OR REPLACE TABLE fresh (a INT) TBLPROPERTIES ('bucket' = 'x')")
    assert session.catalog.get_table("default.fresh").to_arrow().to_pylist() == [{"one": 1}]  # refused: unchanged


NESTED = "id INT, s STRUCT<f1: INT, f2: STRING>, c INT NOT NULL"
NESTED_ROWS = "(1, named_struct('f1', 1, 'f2', 'a'), 10), (2, NULL, 20), (3, named_struct('f1', NULL, 'f2', 'c'), 30)"


@pytest.mark.parametrize("props", ["", " TBLPROPERTIES ('primary-key' = 'id', 'bucket' = '1')"])
def test_nested_columns_evolve_and_old_files_read_back(session, props):
    session.sql(f"CREATE TABLE n ({NESTED}){props}")
    session.sql(f"INSERT INTO n VALUES {NESTED_ROWS}")
    session.sql("ALTER TABLE n ADD COLUMN s.f3 INT")
    session.sql("INSERT INTO n VALUES (4, named_struct('f1', 4, 'f2', 'd', 'f3', 44), 40)")
    session.sql("ALTER TABLE n RENAME COLUMN s.f2 TO g")
    session.sql("ALTER TABLE n ALTER COLUMN s.f1 TYPE BIGINT")
    session.sql("ALTER TABLE n ALTER COLUMN c DROP NOT NULL")
    expected = session.spark_sql(f"SELECT id, CAST(IF(s IS NULL, NULL, named_struct('f1', s.f1, 'g', s.f2, 'f3', "
                                 f"CAST(NULL AS INT))) AS STRUCT<f1: BIGINT, g: STRING, f3: INT>) AS s, c "
                                 f"FROM VALUES {NESTED_ROWS} AS v(id, s, c) UNION ALL SELECT 4, named_struct("
                                 f"'f1', 4L, 'g', 'd', 'f3', 44), 40 ORDER BY id")
    assert result(session.sql("SELECT * FROM n ORDER BY id")) == result(expected)
    session.sql("ALTER TABLE n DROP COLUMN s.f3")
    assert result(session.sql("SELECT s FROM n WHERE id = 4"))[1][0][0].asDict() == {"f1": 4, "g": "d"}
    fields = session.catalog.get_table("default.n").schema.fields
    assert [(f.id, f.name) for f in fields[1].type.fields] == [(2, "f1"), (3, "g")]
    assert fields[2].type.nullable and session.catalog.get_table("default.n").schema.highest_field_id == 5
    assert result(session.sql("DESCRIBE n"))[1][:3] == [("id", "int", None), ("s", "struct<f1:bigint,g:string>",
                                                                                    None), ("c", "int", None)]


def test_nested_alter_errors_name_the_column(session):
    session.sql(f"CREATE TABLE n ({NESTED})")
    for text, message in [("ALTER TABLE n ADD COLUMN s.f1 INT", "column 's.f1' already exists"),
                          ("ALTER TABLE n ADD COLUMN nope.x INT", "column 'nope' does not exist"),
                          ("ALTER TABLE n ADD COLUMN c.x INT", "column 'c.x': 'c' is INT NOT NULL, not a struct"),
                          ("ALTER TABLE n RENAME COLUMN s.nope TO x", "column 's.nope' does not exist"),
                          ("ALTER TABLE n ALTER COLUMN s.f2 TYPE INT", "cannot change column 's.f2'"),
                          ("ALTER TABLE n ALTER COLUMN c SET NOT NULL", "cannot change column 'c' to NOT NULL")]:
        with pytest.raises(PaimonError, match=re.escape(message)):
            session.sql(text)
    assert session.catalog.get_table("default.n").schema.id == 0  # nothing was committed
    session.sql("ALTER TABLE n ADD COLUMNS (s.f0 INT FIRST, s.n STRUCT<x: INT, y: INT>)")
    s = session.catalog.get_table("default.n").schema.fields[1].type
    # as Java's SchemaManager: the new column's id, then its nested fields'
    assert [(f.id, f.name) for f in s.fields] == [(5, "f0"), (2, "f1"), (3, "f2"), (6, "n")]
    assert [f.id for f in s.fields[3].type.fields] == [7, 8]


@pytest.mark.parametrize("props", ["", " TBLPROPERTIES ('primary-key' = 'id', 'bucket' = '1')"])
def test_update_struct_field_as_spark(session, props):
    session.sql(f"CREATE TABLE u ({NESTED}){props}")
    session.sql(f"INSERT INTO u VALUES {NESTED_ROWS}")
    session.spark_sql(f"CREATE OR REPLACE TEMPORARY VIEW plain_u AS SELECT * FROM VALUES {NESTED_ROWS} AS v(id, s, c)")
    session.sql("UPDATE u SET s.f2 = upper(s.f2), c = c + 1 WHERE id > 1")
    session.sql("UPDATE u AS x SET x.s.f1 = 100 WHERE s.f1 = 1")
    expected = session.spark_sql(
        "SELECT id, IF(id > 1, named_struct('f1', s.f1, 'f2', upper(s.f2)), IF(s.f1 = 1, named_struct("
        "'f1', 100, 'f2', s.f2), s)) AS s, IF(id > 1, c + 1, c) AS c FROM plain_u ORDER BY id")
    assert result(session.sql("SELECT * FROM u ORDER BY id")) == result(expected)
    for text, message in [("UPDATE u SET s.f2 = 'x', s = NULL", "Conflicting assignments for 's'"),
                          ("UPDATE u SET s.f2 = 'x', s.f2 = 'y'", "Multiple assignments for 's.f2'"),
                          ("UPDATE u SET s.nope = 1", "No such struct field `nope` in `s`"),
                          ("UPDATE u SET c.x = 1", "only supported for StructType but 'c' is of type int")]:
        with pytest.raises(PaimonError, match=re.escape(message)):
            session.sql(text)


def test_alter_table_drop_partition(session):
    session.sql("CREATE TABLE dp (id INT, p STRING, q INT) PARTITIONED BY (p, q)")
    session.sql("INSERT INTO dp VALUES (1, 'x', 1), (2, 'y', 1), (3, 'y', 2), (4, 'z', 3)")
    table = session.catalog.get_table("default.dp")
    session.sql("ALTER TABLE dp DROP PARTITION (p = 'y', Q = 1), PARTITION (p = 'z', q = 3)")
    assert sorted(r[0] for r in session.sql("SELECT id FROM dp").collect()) == [1, 3]
    snapshot = table.snapshot_manager.latest()
    assert (snapshot.id, snapshot.commit_kind) == (2, "OVERWRITE")  # both partitions in one snapshot
    with pytest.raises(PaimonError, match=r"PARTITIONS_NOT_FOUND.*p = y, q = 1"):
        session.sql("ALTER TABLE dp DROP PARTITION (p = 'y', q = 1)")
    session.sql("ALTER TABLE dp DROP IF EXISTS PARTITION (p = 'y', q = 1)")
    session.sql("ALTER TABLE dp DROP PARTITION (p = 'x')")  # some partition columns: all it matches, as paimon-spark
    session.sql("ALTER TABLE dp DROP PARTITION (p = 'nope')")  # ... or none
    assert table.snapshot_manager.latest().id == 4 and [r[0] for r in session.sql("SELECT id FROM dp ORDER BY id")
                                                         .collect()] == [3]


def test_catalog_option_warehouse_is_the_warehouse_when_none_is_given(spark, tmp_path):
    """Paimon's catalog option ``warehouse`` (a properties file's, say) names the warehouse."""
    import paimon_sql
    s = paimon_sql.connect(spark=spark, catalog_options={"warehouse": str(tmp_path / "wh")})
    try:
        s.sql("CREATE TABLE w (id INT)")
        assert s.warehouse == str(tmp_path / "wh") and (tmp_path / "wh" / "default.db" / "w" / "schema").is_dir()
    finally:
        paimon_sql.session.route(spark, None)
        paimon_sql.session.hooks.uninstall(spark)
