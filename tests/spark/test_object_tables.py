"""Object tables ('type' = 'object-table'): created with Paimon's columns, refreshed from a directory of
1,000 files written here, queried (count, filters), travelled back to the listing before a refresh,
and never written by anything but the refresh."""

import os

import pyarrow.fs as pafs
import pytest

from paimon_sql.data.types import paimon_type_from_sql
from paimon_sql.exceptions import PaimonError
from paimon_sql.schema.schema_change import AddColumn
from paimon_sql.schema.table_schema import TableSchema
from paimon_sql.table.object_table import FIELDS
from spark.conftest import rows


def fill(location, names, size=lambda i: i % 50):
    """Files of ``size(i)`` bytes at the relative ``names``."""
    for i, name in enumerate(names):
        path = os.path.join(location, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(b"x" * size(i))


@pytest.fixture
def thousand(session, tmp_path):
    """``db.files``: an object table over 1,000 files in 10 directories, refreshed once."""
    location = str(tmp_path / "objects")
    fill(location, [f"d{i % 10}/file-{i:04d}.{'png' if i % 4 == 0 else 'txt'}" for i in range(1000)])
    session.sql("CREATE DATABASE db")
    session.sql(f"CREATE TABLE db.files WITH ('type' = 'object-table', 'object-location' = '{location}')")
    assert rows(session, "CALL sys.refresh_object_table(table => 'db.files')") == [(1000,)]
    return location


def test_a_thousand_files_refresh_and_answer_count_filters_and_time_travel(session, thousand):
    s, location = session, thousand
    assert rows(s, "SELECT count(*) FROM db.files") == [(1000,)]
    assert rows(s, "SELECT count(*), sum(length) FROM db.files WHERE name LIKE '%.png'") == \
        [(250, sum(i % 50 for i in range(0, 1000, 4)))]
    assert rows(s, "SELECT count(*) FROM db.files WHERE length >= 40 AND parent_path LIKE '%/d3'") == \
        [(sum(1 for i in range(3, 1000, 10) if i % 50 >= 40),)]
    assert rows(s, "SELECT path, parent_path, name, length, owner, metadata FROM db.files WHERE name = 'file-0007.txt'") \
        == [(f"file:{location}/d7/file-0007.txt", f"file:{location}/d7", "file-0007.txt", 7, None, {})]
    mtime = os.stat(f"{location}/d7/file-0007.txt").st_mtime_ns // 1_000_000
    assert rows(s, "SELECT unix_millis(mtime), unix_millis(atime) FROM db.files WHERE name = 'file-0007.txt'") == \
        [(mtime, 0)]

    for i in range(0, 1000, 100):  # 10 files go, 5 come
        os.remove(f"{location}/d{i % 10}/file-{i:04d}.png")
    fill(location, [f"new/n{i}.bin" for i in range(5)], size=lambda i: 1000)
    assert rows(s, "CALL sys.refresh_object_table('db.files')") == [(995,)]
    assert rows(s, "SELECT count(*), count_if(parent_path LIKE '%/new') FROM db.files") == [(995, 5)]
    assert rows(s, "SELECT count(*) FROM db.files VERSION AS OF 1") == [(1000,)]
    assert rows(s, "SELECT count(*) FROM db.files /*+ OPTIONS('scan.snapshot-id' = '1') */") == [(1000,)]
    assert rows(s, "SELECT count(*) FROM db.files VERSION AS OF 1 WHERE name = 'file-0100.png'") == [(1,)]
    assert rows(s, "SELECT count(*) FROM db.files WHERE name = 'file-0100.png'") == [(0,)]
    assert rows(s, "SELECT snapshot_id, commit_kind FROM db.`files$snapshots` ORDER BY snapshot_id") == \
        [(1, "OVERWRITE"), (2, "OVERWRITE")]
    assert rows(s, "SELECT sum(record_count) FROM db.`files$files`") == [(995,)]


def test_columns_are_paimons(session, tmp_path):
    session.sql("CREATE DATABASE db")
    session.sql(f"CREATE TABLE db.o TBLPROPERTIES ('type' = 'object-table', 'object-location' = '{tmp_path}')")
    table = session.catalog.get_table("db.o")
    assert [(f.id, f.name, str(f.type)) for f in table.schema.fields] == [
        (0, "path", "STRING NOT NULL"), (1, "parent_path", "STRING NOT NULL"), (2, "name", "STRING NOT NULL"),
        (3, "length", "BIGINT NOT NULL"), (4, "mtime", "TIMESTAMP(3) WITH LOCAL TIME ZONE"),
        (5, "atime", "TIMESTAMP(3) WITH LOCAL TIME ZONE"), (6, "owner", "STRING"), (7, "generation", "INT"),
        (8, "content_type", "STRING"), (9, "storage_class", "STRING"), (10, "md5_hash", "STRING"),
        (11, "metadata_mtime", "TIMESTAMP(3) WITH LOCAL TIME ZONE"), (12, "metadata", "MAP<STRING, STRING>")]
    assert table.schema.highest_field_id == 12 and table.schema.options["type"] == "object-table"
    # the same columns given explicitly are accepted (Spark SQL's TIMESTAMP is precision 6, so only the
    # catalog API can name them); an empty location lists nothing (one empty snapshot)
    session.catalog.create_table("db.o2", TableSchema.create(FIELDS, options={
        "type": "object-table", "object-location": f"{tmp_path}/nothing-here"}))
    assert rows(session, "CALL sys.refresh_object_table('db.o2')") == [(0,)]
    assert rows(session, "SELECT count(*) FROM db.o2") == [(0,)]


def test_show_create_table_gives_the_statement_back(session, tmp_path):
    session.sql("CREATE DATABASE db")
    session.sql(f"CREATE TABLE db.o WITH ('type' = 'object-table', 'object-location' = '{tmp_path}')")
    shown = rows(session, "SHOW CREATE TABLE db.o")[0][0]
    assert shown == f"CREATE TABLE db.o\nWITH (\n  'object-location' = '{tmp_path}',\n  'type' = 'object-table'\n)"
    session.sql("DROP TABLE db.o")
    session.sql(shown)
    assert session.catalog.get_table("db.o").schema.fields == FIELDS


def test_an_altered_object_table_is_not_refreshed(session, tmp_path):
    session.sql("CREATE DATABASE db")
    session.sql(f"CREATE TABLE db.o WITH ('type' = 'object-table', 'object-location' = '{tmp_path}')")
    with pytest.raises(PaimonError, match=r"ALTER TABLE on the columns of object table db\.o is not supported"):
        session.sql("ALTER TABLE db.o ADD COLUMN extra INT")
    session.sql("ALTER TABLE db.o SET TBLPROPERTIES ('object-location' = '/elsewhere')")  # options may change
    # a column added by another engine: the table is not refreshed
    session.catalog.get_table("db.o").schema_manager.commit_changes([AddColumn("extra", paimon_type_from_sql("INT"))])
    with pytest.raises(PaimonError, match=r"object table db\.o: its columns are Paimon's .*extra INT"):
        session.sql("CALL sys.refresh_object_table('db.o')")


def test_a_relative_object_location_is_the_warehouses(session, tmp_path):
    session.sql("CREATE DATABASE db")
    session.sql("CREATE TABLE db.data (id INT)")
    session.sql("INSERT INTO db.data VALUES (1), (2)")
    session.sql("CREATE TABLE db.o WITH ('type' = 'object-table', 'object-location' = 'db.db/data/bucket-0')")
    location = session.catalog.get_table("db.o").schema.options["object-location"]
    assert location == os.path.join(session.warehouse, "db.db", "data", "bucket-0")
    files = os.listdir(location)
    assert rows(session, "CALL sys.refresh_object_table('db.o')") == [(len(files),)] and files
    assert rows(session, "SELECT count_if(name LIKE 'data-%.parquet') FROM db.o") == [(len(files),)]


@pytest.mark.parametrize("statement", [
    "INSERT INTO db.files SELECT * FROM db.files",
    "INSERT OVERWRITE db.files SELECT * FROM db.files",
    "UPDATE db.files SET owner = 'me'",
    "DELETE FROM db.files WHERE length > 10",
    "DELETE FROM db.files",
    "TRUNCATE TABLE db.files",
    "MERGE INTO db.files t USING db.files s ON t.path = s.path WHEN MATCHED THEN DELETE",
    "CALL sys.compact(table => 'db.files')",
])
def test_writes_are_refused_naming_the_table(session, thousand, statement):
    with pytest.raises(PaimonError, match=r"^object table db\.files does not support write: its rows are the files "
                                          r"under .*refresh_object_table"):
        session.sql(statement)
    assert rows(session, "SELECT count(*) FROM db.files") == [(1000,)]
    assert session.catalog.get_table("db.files").snapshot_manager.latest_id() == 1


def test_dataframe_writes_are_refused(session, thousand):
    df = session.spark.read.format("paimon").option("warehouse", session.warehouse).load("db.files")
    assert df.count() == 1000
    with pytest.raises(Exception, match=r"object table db\.files does not support write"):
        df.write.format("paimon").option("warehouse", session.warehouse).mode("append").save("db.files")
    table = session.catalog.get_table("db.files")
    assert table.snapshot_manager.latest_id() == 1 and len(os.listdir(f"{table.path}/bucket-0")) == 1


@pytest.mark.parametrize("create, error", [
    ("CREATE TABLE db.o (a INT) WITH ('type' = 'object-table', 'object-location' = '/tmp')",
     r"object table db\.o: its columns are Paimon's \(path, parent_path, .*\); give no columns or exactly those"),
    ("CREATE TABLE db.o (path STRING NOT NULL, parent_path STRING NOT NULL, name STRING NOT NULL, length BIGINT NOT "
     "NULL, mtime TIMESTAMP, atime TIMESTAMP, owner STRING, generation INT, content_type STRING, storage_class "
     "STRING, md5_hash STRING, metadata_mtime TIMESTAMP, metadata MAP<STRING, STRING>) WITH ('type' = "
     "'object-table', 'object-location' = '/tmp')", r"not \(.*mtime TIMESTAMP\(6\) WITH LOCAL TIME ZONE"),
    ("CREATE TABLE db.o WITH ('type' = 'object-table')", r"object table db\.o needs the option 'object-location'"),
    ("CREATE TABLE db.o WITH ('type' = 'object-table', 'object-location' = '/tmp', 'primary-key' = 'path')",
     r"object table db\.o cannot have primary or partition keys"),
    ("CREATE TABLE db.o WITH ('type' = 'object-table', 'object-location' = '/tmp', 'partition' = 'name')",
     r"object table db\.o cannot have primary or partition keys"),
])
def test_creation_is_checked(session, create, error):
    session.sql("CREATE DATABASE db")
    with pytest.raises(PaimonError, match=error):
        session.sql(create)
    assert not session.catalog.table_exists("db.o")


def test_refresh_of_a_data_table_is_refused(session):
    session.sql("CREATE DATABASE db")
    session.sql("CREATE TABLE db.t (id INT)")
    with pytest.raises(PaimonError, match=r"CALL sys\.refresh_object_table: table 'db\.t' is not an object table"):
        session.sql("CALL sys.refresh_object_table('db.t')")


def test_an_object_location_on_s3(spark, tmp_path, s3_server):
    import paimon_sql
    from spark.conftest import release
    endpoint = s3_server["s3.endpoint"].split("//")[1]
    fs = pafs.S3FileSystem(access_key="test", secret_key="test", endpoint_override=endpoint, scheme="http",
                           allow_bucket_creation=True)
    fs.create_dir("objects")
    for name, data in [("a/1.txt", b"one"), ("a/b/2.txt", b"two!"), ("3.txt", b"")]:
        with fs.open_output_stream(f"objects/pics/{name}") as f:
            f.write(data)
    s = paimon_sql.connect(str(tmp_path / "wh"), spark=spark, catalog_options=s3_server)
    try:
        s.sql("CREATE DATABASE db")
        s.sql("CREATE TABLE db.o WITH ('type' = 'object-table', 'object-location' = 's3://objects/pics/')")
        assert rows(s, "CALL sys.refresh_object_table('db.o')") == [(3,)]
        assert rows(s, "SELECT path, parent_path, name, length FROM db.o ORDER BY path") == [
            ("s3://objects/pics/3.txt", "s3://objects/pics", "3.txt", 0),
            ("s3://objects/pics/a/1.txt", "s3://objects/pics/a", "1.txt", 3),
            ("s3://objects/pics/a/b/2.txt", "s3://objects/pics/a/b", "2.txt", 4)]
        assert rows(s, "SELECT count(*) FROM db.o WHERE mtime IS NULL") == [(0,)]
    finally:
        release(s)
