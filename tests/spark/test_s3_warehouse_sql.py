"""SQL on a warehouse in S3 (moto_server on 127.0.0.1): the s3.* catalog options reach every read and
write, the driver's and the executors' (the paimon source reads through pyarrow there)."""

import pyarrow.fs as pafs
import pytest

import paimon_sql
from paimon_sql.exceptions import InvalidOptionError
from spark.conftest import rows


@pytest.fixture
def s3_session(spark, s3_server):
    endpoint = s3_server["s3.endpoint"].split("//")[1]
    pafs.S3FileSystem(access_key="test", secret_key="test", endpoint_override=endpoint, scheme="http",
                      allow_bucket_creation=True).create_dir("sqllake")
    s = paimon_sql.connect("s3://sqllake/wh", spark=spark,
                           catalog_options={**s3_server, "catalog-options-table.enabled": "true"})
    yield s
    paimon_sql.session.route(spark, None)
    paimon_sql.session.hooks.uninstall(spark)
    spark.catalog.setCurrentDatabase("default")


def test_sql_create_insert_select_time_travel_update_compact_on_s3(s3_session):
    s = s3_session
    s.sql("CREATE DATABASE db")
    s.sql("CREATE TABLE db.t (id BIGINT, name STRING, dt STRING) PARTITIONED BY (dt) "
          "TBLPROPERTIES ('primary-key' = 'id,dt', 'bucket' = '2')")
    s.sql("CREATE TABLE db.a (id BIGINT, v STRING)")  # append-only: Spark's own Parquet writer/reader where local
    s.sql("INSERT INTO db.t VALUES (1, 'a', 'x'), (2, 'b', 'x'), (3, 'c', 'y')")
    s.sql("INSERT INTO db.t VALUES (2, 'B', 'x'), (4, 'd', 'y')")
    s.sql("INSERT INTO db.a VALUES (1, 'p'), (2, 'q')")
    assert rows(s, "SELECT id, name FROM db.t ORDER BY id") == [(1, "a"), (2, "B"), (3, "c"), (4, "d")]
    assert rows(s, "SELECT name FROM db.t VERSION AS OF 1 WHERE id = 2") == [("b",)]
    s.sql("UPDATE db.t SET name = 'C' WHERE id = 3")
    s.sql("DELETE FROM db.a WHERE id = 1")
    assert rows(s, "SELECT id, v FROM db.a") == [(2, "q")]
    assert rows(s, "SELECT name FROM db.t WHERE id = 3") == [("C",)]
    s.sql("CALL sys.compact(table => 'db.t')")
    table = s.catalog.get_table("db.t")
    assert table.snapshot_manager.latest().commit_kind == "COMPACT"
    assert table.snapshot_manager.listed_ids() == list(range(1, table.snapshot_manager.latest_id() + 1))
    assert rows(s, "SELECT id, name, dt FROM db.t ORDER BY id") == [
        (1, "a", "x"), (2, "B", "x"), (3, "C", "y"), (4, "d", "y")]
    assert sorted(r[1] for r in rows(s, "SHOW TABLES IN db")) == ["a", "t"]
    shown = dict(rows(s, "SELECT key, value FROM sys.catalog_options"))
    assert shown["warehouse"] == "s3://sqllake/wh" and shown["s3.endpoint"].startswith("http://127.0.0.1")
    assert shown["s3.access-key"] == shown["s3.secret-key"] == "******"


def test_an_unknown_s3_option_is_refused(spark, s3_server):
    with pytest.raises(InvalidOptionError, match="'s3.no-such-thing' is not supported"):
        paimon_sql.connect("s3://sqllake/wh", spark=spark, catalog_options={**s3_server, "s3.no-such-thing": "1"})
