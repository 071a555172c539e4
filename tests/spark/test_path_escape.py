"""A hostile user with SQL, the DataFrame API and streams: no name or option ever makes us create,
read, rename or delete a file outside the warehouse. Next to the warehouse sits another one
(``other/sec.db/secret``, see the ``outside`` fixture); every attack must fail with a one-line
error naming the bad name, and afterwards that tree is byte-identical and nothing new appeared
beside the warehouse."""

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from paimon_sql.exceptions import InvalidIdentifierError
from spark.conftest import rows

SECRET = "../../other/sec.db/secret"  # from <warehouse>/db.db/


@pytest.fixture
def r(session):
    """db.r with one row, tag 'mine' and a table-relative view of the escape names."""
    session.sql("CREATE DATABASE db")
    session.sql("CREATE TABLE db.r (id BIGINT)")
    session.sql("INSERT INTO db.r VALUES (1)")
    session.sql("ALTER TABLE db.r CREATE TAG mine")
    return session.catalog.get_table("db.r")


def _attack(session, text):
    with pytest.raises(InvalidIdentifierError, match=r"^invalid (database|table|tag|branch|consumer) name") as err:
        session.sql(text).collect()
    assert "\n" not in str(err.value)


def test_names_in_sql_never_leave_the_warehouse(session, r, outside):
    for text in [
        "ALTER TABLE db.r RENAME TO db.`../../x`",
        "ALTER TABLE db.r RENAME TO `../x`.r",
        f"SELECT * FROM db.`{SECRET}$files`",
        f"SELECT * FROM db.`{SECRET}$snapshots`",
        f"SELECT * FROM db.`{SECRET}$tags`",
        f"SELECT * FROM db.`{SECRET}$consumers`",
        f"SELECT * FROM db.`{SECRET}$branch_b1`",
        f"SELECT * FROM db.`{SECRET}`",
        "SELECT * FROM `../other/sec`.secret",
        "SELECT * FROM `../other/sec`.`secret$files`",
        f"SELECT * FROM paimon_incremental_query('db.`{SECRET}`', 0, 1)",
        f"INSERT INTO db.`{SECRET}` VALUES (7)",
        f"DROP TABLE db.`{SECRET}`",
        f"DROP TABLE IF EXISTS db.`{SECRET}`",
        "DROP DATABASE `../other/sec` CASCADE",
        "CREATE DATABASE `../evil`",
        "CREATE TABLE db.`../../evil` (id INT)",
        f"CREATE TABLE db.copy LIKE db.`{SECRET}`",
        f"DESCRIBE db.`{SECRET}`",
        f"SHOW TAGS db.`{SECRET}`",
        f"SHOW CREATE TABLE db.`{SECRET}`",
        "CREATE TABLE db.`t$files` (id INT)",
    ]:
        _attack(session, text)
    assert rows(session, "SELECT * FROM db.r") == [(1,)]
    assert session.catalog.list_tables("db") == ["r"]
    outside.assert_untouched()
    session.sql("ALTER TABLE db.r RENAME TO db.r2")  # the legitimate forms still work
    assert rows(session, "SELECT * FROM db.r2") == [(1,)]
    session.sql("CREATE DATABASE gone")
    session.sql("DROP DATABASE gone CASCADE")
    assert session.catalog.list_databases() == ["db", "default"]


def test_tag_names_never_leave_the_table(session, r, outside):
    steal = outside.escape(f"{r.path}/tag/tag-", "other/sec.db/secret/tag/tag-keep")
    plant = outside.escape(f"{r.path}/tag/tag-", "planted")
    for text in [
        f"ALTER TABLE db.r CREATE TAG `{plant}`",
        f"ALTER TABLE db.r CREATE OR REPLACE TAG `{plant}`",
        f"ALTER TABLE db.r DELETE TAG `{steal}`",
        f"ALTER TABLE db.r DELETE TAG IF EXISTS `{steal}`",
        f"ALTER TABLE db.r RENAME TAG `{steal}` TO stolen",
        f"ALTER TABLE db.r RENAME TAG mine TO `{plant}`",
        f"SELECT * FROM db.r VERSION AS OF '{steal}'",
        f"SELECT * FROM db.r /*+ OPTIONS('scan.tag-name' = '{steal}') */",
        f"SELECT * FROM paimon_incremental_query('db.r', '{steal}', 'mine')",
    ]:
        _attack(session, text)
    assert rows(session, "SELECT tag_name FROM db.r$tags") == [("mine",)]
    outside.assert_untouched()


def test_branch_names_never_leave_the_table(session, r, outside):
    steal = outside.escape(f"{r.path}/branch/branch-", "other/sec.db/secret")
    for text in [f"SELECT * FROM db.`r$branch_{steal}`", f"SELECT * FROM db.`r$branch_{steal}$snapshots`",
                 f"INSERT INTO db.`r$branch_{steal}` VALUES (7)"]:
        _attack(session, text)
    reader = session.spark.read.format("paimon").option("warehouse", session.warehouse)
    for load in [lambda: reader.option("branch", steal).load("db.r"), lambda: reader.load(f"db.r$branch_{steal}"),
                 lambda: reader.load(f"db.`{SECRET}`")]:
        with pytest.raises(Exception, match="invalid (branch|table) name"):
            load().collect()
    outside.assert_untouched()


def test_stream_consumer_id_never_leaves_the_table(session, r, outside, tmp_path_factory):
    """``consumer-id`` names the file the stream records its progress in: a name that would read
    another table's consumer or write beside the warehouse stops the query before either."""
    for target in ["other/sec.db/secret/consumer/consumer-c1", "planted"]:
        consumer = outside.escape(f"{r.path}/consumer/consumer-", target)
        stream = (session.spark.readStream.format("paimon").option("warehouse", session.warehouse)
                  .option("consumer-id", consumer).load("db.r"))
        query = (stream.writeStream.format("memory").queryName("paimon_escape_out")
                 .option("checkpointLocation", str(tmp_path_factory.mktemp("checkpoint"))).start())
        try:
            with pytest.raises(Exception, match="invalid consumer name"):
                query.processAllAvailable()
        finally:
            query.stop()
    assert r.consumer_manager.consumers() == {}
    outside.assert_untouched()


def test_spark_file_tables_are_still_spark_s(session, tmp_path_factory):
    """``parquet.`/some/file``` is Spark's path-based table, not a name in our warehouse."""
    path = str(tmp_path_factory.mktemp("files") / "x.parquet")
    pq.write_table(pa.table({"id": [5]}), path)
    assert rows(session, f"SELECT * FROM parquet.`{path}`") == [(5,)]
