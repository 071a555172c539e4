"""Object tables ('type' = 'object-table') as Paimon 2.0 defines them: created with 2.0's columns, their rows
the 1,000 files written under the table's directory, listed anew at each read (count, filters, files come and
go without a refresh); no snapshots, no time travel, and never written."""

import os

import pyarrow.fs as pafs
import pytest

from paimon_sql.exceptions import PaimonError
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
def thousand(session):
    """``db.files``: an object table over 1,000 files in 10 directories under it; returns its directory."""
    session.sql("CREATE DATABASE db")
    session.sql("CREATE TABLE db.files WITH ('type' = 'object-table')")
    location = session.catalog.get_table("db.files").path.removeprefix("file:")
    fill(location, [f"d{i % 10}/file-{i:04d}.{'png' if i % 4 == 0 else 'txt'}" for i in range(1000)])
    return location


def test_a_thousand_files_answer_count_and_filters_as_they_are_now(session, thousand):
    s, location = session, thousand
    assert rows(s, "SELECT count(*) FROM db.files WHERE path LIKE 'd%'") == [(1000,)]
    assert rows(s, "SELECT count(*) FROM db.files") == [(1000,)]  # not the table's own schema/schema-0
    assert rows(s, "SELECT count(*), sum(length) FROM db.files WHERE name LIKE '%.png'") == \
        [(250, sum(i % 50 for i in range(0, 1000, 4)))]
    assert rows(s, "SELECT count(*) FROM db.files WHERE length >= 40 AND path LIKE 'd3/%'") == \
        [(sum(1 for i in range(3, 1000, 10) if i % 50 >= 40),)]
    mtime = os.stat(f"{location}/d7/file-0007.txt").st_mtime_ns // 1_000_000
    assert rows(s, "SELECT path, name, length, mtime, atime, owner FROM db.files WHERE name = 'file-0007.txt'") == \
        [("d7/file-0007.txt", "file-0007.txt", 7, mtime, 0, None)]

    for i in range(0, 1000, 100):  # 10 files go, 5 come: the next read lists them, no refresh
        os.remove(f"{location}/d{i % 10}/file-{i:04d}.png")
    fill(location, [f"new/n{i}.bin" for i in range(5)], size=lambda i: 1000)
    assert rows(s, "SELECT count(*), count_if(path LIKE 'new/%') FROM db.files") == [(995, 5)]
    assert rows(s, "SELECT count(*) FROM db.files WHERE name = 'file-0100.png'") == [(0,)]
    assert rows(s, "SELECT count(*) FROM db.`files$snapshots`") == [(0,)]  # nothing was ever committed
    for travel in ("VERSION AS OF 1", "/*+ OPTIONS('scan.snapshot-id' = '1') */"):
        with pytest.raises(PaimonError, match=r"^object table db\.files has no snapshots to travel to"):
            s.sql(f"SELECT count(*) FROM db.files {travel}")


def test_columns_are_paimon_2_0s(session):
    session.sql("CREATE DATABASE db")
    session.sql("CREATE TABLE db.o TBLPROPERTIES ('type' = 'object-table')")
    table = session.catalog.get_table("db.o")
    assert [(f.id, f.name, str(f.type)) for f in table.schema.fields] == [
        (0, "path", "STRING NOT NULL"), (1, "name", "STRING NOT NULL"), (2, "length", "BIGINT NOT NULL"),
        (3, "mtime", "BIGINT NOT NULL"), (4, "atime", "BIGINT NOT NULL"), (5, "owner", "STRING")]
    assert table.schema.highest_field_id == 5
    assert table.schema.options == {"type": "object-table", "owner": session.spark.sparkContext.sparkUser()}
    assert rows(session, "DESCRIBE db.o")[0] == ("path", "string", "Relative path of object")
    # the same columns given through the catalog API are accepted; an empty directory lists nothing (its
    # schema file is the table's, no object), a user's file under schema/ is listed
    session.catalog.create_table("db.o2", TableSchema.create(FIELDS, options={"type": "object-table"}))
    assert rows(session, "SELECT path FROM db.o2") == []
    location = session.catalog.get_table("db.o2").path.removeprefix("file:")
    fill(location, ["schema/schema-0.png", "schema/schema-x"])
    assert rows(session, "SELECT path FROM db.o2 ORDER BY path") == [("schema/schema-0.png",), ("schema/schema-x",)]


def test_show_create_table_gives_the_statement_back(session):
    session.sql("CREATE DATABASE db")
    session.sql("CREATE TABLE db.o WITH ('type' = 'object-table')")
    shown = rows(session, "SHOW CREATE TABLE db.o")[0][0]
    path = session.catalog.get_table("db.o").path
    assert shown == (f"CREATE TABLE paimon.db.o USING paimon\nLOCATION '{path}'\nTBLPROPERTIES (\n  'path' = '{path}',\n"
                     f"  'type' = 'object-table')\n")
    session.sql("DROP TABLE db.o")
    session.sql(shown)
    assert session.catalog.get_table("db.o").schema.fields == FIELDS


def test_alter_changes_options_not_columns(session):
    session.sql("CREATE DATABASE db")
    session.sql("CREATE TABLE db.o WITH ('type' = 'object-table')")
    with pytest.raises(PaimonError, match=r"ALTER TABLE on the columns of object table db\.o is not supported"):
        session.sql("ALTER TABLE db.o ADD COLUMN extra INT")
    session.sql("ALTER TABLE db.o SET TBLPROPERTIES ('comment' = 'pictures')")
    assert session.catalog.get_table("db.o").schema.comment == "pictures"
    assert rows(session, "SELECT count(*) FROM db.o") == [(0,)]  # schema-0 and schema-1 are not objects


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
                                          r"under .*db\.db/files, listed at each read$"):
        session.sql(statement)
    assert rows(session, "SELECT count(*) FROM db.files") == [(1000,)]
    assert session.catalog.get_table("db.files").snapshot_manager.latest_id() is None


def test_dataframe_reads_list_and_writes_are_refused(session, thousand):
    df = session.spark.read.format("paimon").option("warehouse", session.warehouse).load("db.files")
    assert df.count() == 1000
    with pytest.raises(Exception, match=r"object table db\.files does not support write"):
        df.write.format("paimon").option("warehouse", session.warehouse).mode("append").save("db.files")
    assert session.catalog.get_table("db.files").snapshot_manager.latest_id() is None


@pytest.mark.parametrize("create, error", [
    ("CREATE TABLE db.o (a INT) WITH ('type' = 'object-table')",
     r"object table db\.o: its columns are Paimon's \(path, name, .*\); give no columns or exactly those"),
    ("CREATE TABLE db.o WITH ('type' = 'object-table', 'object-location' = '/tmp')",
     r"option 'object-location' is not supported by paimon-sql \(since Paimon 2\.0 an object table lists its own "
     r"directory\)"),
    ("CREATE TABLE db.o WITH ('type' = 'object-table', 'primary-key' = 'path')",
     r"object table db\.o cannot have primary or partition keys"),
    ("CREATE TABLE db.o WITH ('type' = 'object-table', 'partition' = 'name')",
     r"object table db\.o cannot have primary or partition keys"),
])
def test_creation_is_checked(session, create, error):
    session.sql("CREATE DATABASE db")
    with pytest.raises(PaimonError, match=error):
        session.sql(create)
    assert not session.catalog.table_exists("db.o")


def test_refresh_is_refused(session, thousand):
    with pytest.raises(PaimonError, match=r"^CALL sys\.refresh_object_table: not supported by paimon-sql: it needs "
                                          r"Paimon 1\.0's object tables; since Paimon 2\.0 an object table lists the "
                                          r"files under its directory at each read, so there is nothing to refresh"):
        session.sql("CALL sys.refresh_object_table('db.files')")


def test_an_object_table_on_s3(spark, s3_server):
    import paimon_sql
    from spark.conftest import release
    endpoint = s3_server["s3.endpoint"].split("//")[1]
    fs = pafs.S3FileSystem(access_key="test", secret_key="test", endpoint_override=endpoint, scheme="http",
                           allow_bucket_creation=True)
    fs.create_dir("objects")
    s = paimon_sql.connect("s3://objects/wh", spark=spark, catalog_options=s3_server)
    try:
        s.sql("CREATE DATABASE db")
        s.sql("CREATE TABLE db.o WITH ('type' = 'object-table')")
        for name, data in [("a/1.txt", b"one"), ("a/b/2.txt", b"two!"), ("3.txt", b"")]:
            with fs.open_output_stream(f"objects/wh/db.db/o/pics/{name}") as f:
                f.write(data)
        assert rows(s, "SELECT path, name, length FROM db.o WHERE path LIKE 'pics/%' ORDER BY path") == [
            ("pics/3.txt", "3.txt", 0), ("pics/a/1.txt", "1.txt", 3), ("pics/a/b/2.txt", "2.txt", 4)]
        assert rows(s, "SELECT count(*) FROM db.o WHERE mtime > 0") == [(3,)]  # the schema file is not an object
    finally:
        release(s)
