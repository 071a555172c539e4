"""CALL sys.migrate_table / sys.migrate_database: Spark Parquet/ORC tables and Hive-layout directories
become Paimon append tables whose data files are the source's own files, moved (same inode), not copied."""

import os
import uuid

import pytest

from paimon_sql.exceptions import PaimonError
from tests.spark.conftest import rows

MIGRATE = ("sys.migrate_table(source_type STRING, table STRING, [options STRING], [delete_origin BOOLEAN], "
           "[target_table STRING], [options_map MAP<STRING,STRING>], [parallelism INT])")
DATA = [(i, f"s{i}", i / 3, i % 3 if i % 4 else None, "a" if i < 12 else "b") for i in range(30)]
SCHEMA = "id INT, name STRING, v DOUBLE, p INT, q STRING"


@pytest.fixture
def name(spark):
    """A fresh Spark table name (Spark's warehouse is shared by the run); dropped afterwards."""
    n = "mig_" + uuid.uuid4().hex[:8]
    yield n
    spark.sql(f"DROP TABLE IF EXISTS {n}")


def data_files(root):
    """{file name: (inode, bytes)} of the data files under ``root``."""
    out = {}
    for d, _, names in os.walk(root):
        for n in names:
            if n.endswith((".parquet", ".orc")):
                p = os.path.join(d, n)
                with open(p, "rb") as f:
                    out[n] = (os.stat(p).st_ino, f.read())
    return out


def location(spark, table):
    info = {r[0]: r[1] for r in spark.sql(f"DESCRIBE TABLE EXTENDED {table}").collect()}
    return info["Location"].replace("file:", "", 1)


def spark_table(spark, name, fmt="parquet", partitions=("p",)):
    spark.createDataFrame(DATA, SCHEMA).write.format(fmt).partitionBy(*partitions).saveAsTable(name)
    return spark_rows(spark, name)


def spark_rows(spark, name):
    return sorted(tuple(r) for r in spark.table(name).select("id", "name", "v", "p", "q").collect())


def table_rows(session, name):
    return sorted(rows(session, f"SELECT id, name, v, p, q FROM {name}"))


@pytest.mark.parametrize("partitions", [("p",), ("q", "p"), ()])
def test_saved_parquet_table_becomes_a_paimon_table_of_the_same_files(session, spark, name, partitions):
    before = spark_table(spark, name, partitions=partitions)
    src = location(spark, name)
    files = data_files(src)
    assert rows(session, f"CALL sys.migrate_table(source_type => 'hive', table => '{name}')") == [(True,)]
    assert not spark.catalog.tableExists(name)  # delete_origin defaults to true, as Java
    assert table_rows(session, name) == before
    assert data_files(src) == {}
    table = session.catalog.get_table(f"default.{name}")
    assert data_files(table.paths.root) == files  # same names, same inodes, same bytes
    assert rows(session, f"SELECT commit_kind FROM {name}$snapshots") == [("APPEND",)]
    assert table.schema.partition_keys == list(partitions)
    assert table.options.bucket == -1 and not table.schema.is_primary_key_table
    # a Paimon table like any other: it takes writes, queries filter on partition columns
    session.sql(f"INSERT INTO {name} (id, name, v, p, q) VALUES (100, 'new', 1.5, 7, 'c')")
    assert rows(session, f"SELECT id FROM {name} WHERE p = 7 OR (p IS NULL AND q = 'b') ORDER BY id") == \
        sorted([(r[0],) for r in before if r[3] is None and r[4] == "b"] + [(100,)])


def test_orc_table_into_a_target_keeping_the_source(session, spark, name):
    before = spark_table(spark, name, fmt="orc")
    assert rows(session, f"CALL sys.migrate_table('orc', '{name}', 'file.format=orc', false, 'moved')") == [(True,)]
    assert spark.catalog.tableExists(name)  # delete_origin => false: registered, its files gone
    assert data_files(location(spark, name)) == {}
    assert table_rows(session, "moved") == before
    assert all(f.endswith(".orc") for (f,) in rows(session, "SELECT file_path FROM moved$files"))


def test_hive_layout_directory_by_path(session, spark, tmp_path):
    path = str(tmp_path / "dir")
    spark.createDataFrame(DATA, SCHEMA).write.partitionBy("q", "p").parquet(path)
    before = sorted(tuple(r) for r in spark.read.parquet(path).select("id", "name", "v", "p", "q").collect())
    files = data_files(path)
    session.sql(f"CALL sys.migrate_table(source_type => 'parquet', table => '{path}', target_table => 'fromdir', "
                "options_map => map('file.compression', 'zstd'), parallelism => 2)")
    table = session.catalog.get_table("default.fromdir")
    assert table.schema.partition_keys == ["q", "p"]
    assert str(table.schema.field("p").type) == "INT"  # as Spark infers the directory's partition column
    assert table.options.get("file.compression") == "zstd"
    assert table_rows(session, "fromdir") == before
    assert data_files(table.paths.root) == files and data_files(path) == {}


def test_migrate_database_moves_every_table(session, spark):
    db = "migdb_" + uuid.uuid4().hex[:6]
    session.spark_sql(f"CREATE DATABASE {db}")
    try:
        a = spark_table(spark, f"{db}.a")
        b = spark_table(spark, f"{db}.b", fmt="orc", partitions=())
        session.spark_sql(f"CREATE VIEW {db}.v AS SELECT 1 AS x")  # no files: left as it is
        assert rows(session, f"CALL sys.migrate_database('hive', '{db}', 'write-only=true')") == [(True,)]
        assert [t.name for t in spark.catalog.listTables(db)] == ["v"]
        assert table_rows(session, f"{db}.a") == a and table_rows(session, f"{db}.b") == b
        assert session.catalog.get_table(f"{db}.b").schema.options["write-only"] == "true"
    finally:
        session.spark_sql(f"DROP DATABASE IF EXISTS {db} CASCADE")


def test_a_failed_commit_moves_every_file_back(session, spark, name):
    before = spark_table(spark, name)
    src = location(spark, name)
    files = data_files(src)
    session.sql("CREATE TABLE target (id INT, name STRING, v DOUBLE, p INT, q STRING) PARTITIONED BY (p) "
                "TBLPROPERTIES ('bucket' = '-1')")
    table = session.catalog.get_table("default.target")
    open(table.paths.root + "/manifest", "w").close()  # a file where the commit writes its manifests
    with pytest.raises(PaimonError, match=r"table 'default.target' exists: options \(file.compression\) apply only"):
        session.sql(f"CALL sys.migrate_table('hive', '{name}', 'file.compression=zstd', true, 'target')")
    with pytest.raises(PaimonError, match="every file was moved back"):
        session.sql(f"CALL sys.migrate_table(source_type => 'hive', table => '{name}', target_table => 'target')")
    assert data_files(src) == files
    assert spark.catalog.tableExists(name) and spark_rows(spark, name) == before
    assert rows(session, "SELECT count(*) FROM target") == [(0,)]


@pytest.mark.parametrize("call, problem", [
    ("'iceberg', '{n}'", "source_type must be one of hive, parquet, orc, got 'iceberg'"),
    ("'orc', '{n}'", "table '{n}' is stored as parquet, not orc"),
    ("'hive', 'nosuch_table'", "'nosuch_table' is not a table of Spark's session catalog"),
    ("'hive', '{n}', NULL, false", "delete_origin => false keeps the source under its name: give target_table"),
    ("'hive', '{n}', 'bucket=4'", "bucket = 4: migrated files are adopted as they are"),
    ("'hive', '{n}', 'primary-key=id'", "a migrated table is an append table"),
    ("'hive', '{n}', 'file.format=avro2'", "table 'default.{n}' cannot be created"),
    ("'hive', '{n}', NULL, NULL, NULL, NULL, 0", "parallelism must be a positive number of threads, got 0"),
    ("'hive', '/tmp/x'", "a path source ('/tmp/x') needs target_table"),
    ("'hive', '/tmp/x', NULL, NULL, 'y'", "source_type 'hive' names a table of Spark's catalog, not a path"),
])
def test_bad_calls_fail_in_one_line_and_change_nothing(session, spark, name, call, problem):
    before = spark_table(spark, name)
    files = data_files(location(spark, name))
    with pytest.raises(PaimonError) as e:
        session.sql(f"CALL sys.migrate_table({call.format(n=name)})")
    message = str(e.value)
    assert "\n" not in message and message.startswith("CALL sys.migrate_table: ")
    assert problem.format(n=name) in message
    assert spark.catalog.tableExists(name) and data_files(location(spark, name)) == files
    assert spark_rows(spark, name) == before
    assert session.catalog.list_tables("default") == []


def test_a_directory_off_the_hive_layout_or_an_unreadable_file_is_refused(session, spark, tmp_path):
    path = str(tmp_path / "dir")
    spark.createDataFrame(DATA, SCHEMA).write.partitionBy("p").parquet(path)
    files = data_files(path)
    with open(os.path.join(path, "stray.parquet"), "wb") as f:
        f.write(b"not parquet")
    with pytest.raises(PaimonError, match="stray.parquet is not a 'p=<value>' partition directory"):
        session.sql(f"CALL sys.migrate_table('parquet', '{path}', NULL, NULL, 't1')")
    os.rename(os.path.join(path, "stray.parquet"), os.path.join(path, "p=1", "stray.parquet"))
    with pytest.raises(PaimonError, match="stray.parquet is not a readable parquet file"):
        session.sql(f"CALL sys.migrate_table('parquet', '{path}', NULL, NULL, 't1')")
    assert session.catalog.list_tables("default") == []
    assert {k: v for k, v in data_files(path).items() if k != "stray.parquet"} == files


COPY = "sys.copy(source_table STRING, target_table STRING, [where STRING])"


def copy_source(session):
    """Partitioned primary-key table, 2 buckets, three commits (updates in the later ones)."""
    session.sql("CREATE TABLE src (id INT, v STRING, dt STRING) PARTITIONED BY (dt) "
                "TBLPROPERTIES ('primary-key' = 'id,dt', 'bucket' = '2')")
    session.sql("INSERT INTO src SELECT id, concat('v', id), IF(id % 3 = 0, 'a', 'b') FROM range(30) AS r(id)")
    session.sql("ALTER TABLE src ADD COLUMN w INT")  # files of two schema versions
    session.sql("INSERT INTO src SELECT id, 'new', IF(id % 3 = 0, 'a', 'b'), id FROM range(20, 40) AS r(id)")


def test_copy_makes_an_independent_table_of_the_latest_files(session):
    copy_source(session)
    before = rows(session, "SELECT * FROM src ORDER BY dt, id")
    assert rows(session, "CALL sys.copy(source_table => 'src', target_table => 'dst')") == [(True,)]
    assert rows(session, "SELECT * FROM dst ORDER BY dt, id") == before
    assert rows(session, "SELECT commit_kind FROM dst$snapshots") == [("OVERWRITE",)]
    src, dst = (session.catalog.get_table(f"default.{n}") for n in ("src", "dst"))
    copied = data_files(dst.paths.root)
    assert copied.keys() == data_files(src.paths.root).keys()
    assert all(copied[n][0] != ino and copied[n][1] == b for n, (ino, b) in data_files(src.paths.root).items())
    session.sql("INSERT INTO dst VALUES (1, 'only in dst', 'b', 1)")
    assert rows(session, "SELECT * FROM src ORDER BY dt, id") == before


def test_copy_over_an_existing_compatible_table_replaces_it(session):
    """As paimon-spark: the files are copied under new names and overwrite the whole target."""
    session.sql("CREATE TABLE s (id INT, v STRING) TBLPROPERTIES ('bucket' = '1', 'bucket-key' = 'id')")
    session.sql("CREATE TABLE d (id INT, v STRING) TBLPROPERTIES ('bucket' = '1', 'bucket-key' = 'id')")
    session.sql("INSERT INTO s VALUES (1, 'a'), (2, 'b')")
    session.sql("INSERT INTO d VALUES (9, 'old')")
    assert rows(session, "CALL sys.copy('s', 'd')") == [(True,)]
    session.sql("INSERT INTO s VALUES (3, 'c')")
    assert rows(session, "CALL sys.copy('s', 'd')") == [(True,)]
    assert rows(session, "SELECT * FROM d ORDER BY id") == [(1, "a"), (2, "b"), (3, "c")]
    assert rows(session, "SELECT commit_kind FROM d$snapshots ORDER BY snapshot_id") == \
        [("APPEND",), ("OVERWRITE",), ("OVERWRITE",)]
    assert not set(rows(session, "SELECT file_path FROM d$files")) & set(rows(session, "SELECT file_path FROM s$files"))


def test_copy_where_takes_the_chosen_partitions(session):
    copy_source(session)
    session.sql("CALL sys.copy('src', 'db2.dst', 'dt = \"a\"')")
    wanted = rows(session, "SELECT * FROM src WHERE dt = 'a' ORDER BY id")
    assert rows(session, "SELECT * FROM db2.dst ORDER BY id") == wanted


@pytest.mark.parametrize("setup, call, problem", [
    ("CREATE TABLE dst (id INT)", "'src', 'dst'", "source table default.src bucket is not compatible with "
     "the existing table default.dst"),
    ("CREATE TABLE dst (id INT, v STRING, dt STRING, w INT) PARTITIONED BY (dt) TBLPROPERTIES "
     "('primary-key' = 'id,dt', 'bucket' = '2')", "'src', 'dst'", "was written with columns other than default.dst's"),
    ("CREATE TABLE u (id INT)", "'u', 'dst', 'id = 1'",
     "table 'default.u' is not partitioned: partitions/where select nothing"),
    ("CREATE TABLE dyn (id INT, dt STRING) PARTITIONED BY (dt) TBLPROPERTIES ('primary-key' = 'id,dt', "
     "'bucket' = '-1'); INSERT INTO dyn VALUES (1, 'a')", "'dyn', 'dst'",
     "has index files (deletion vectors or a dynamic-bucket index)"),
    ("", "'nosuch', 'dst'", "table 'nosuch' not found"),
])
def test_bad_copies_fail_in_one_line_and_create_nothing(session, setup, call, problem):
    copy_source(session)
    for statement in filter(None, setup.split("; ")):
        session.sql(statement)
    tables = session.catalog.list_tables("default")
    with pytest.raises(PaimonError) as e:
        session.sql(f"CALL sys.copy({call})")
    assert problem in str(e.value) and "\n" not in str(e.value)
    assert session.catalog.list_tables("default") == tables
