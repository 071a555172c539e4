"""The same table on an S3-compatible server (moto_server started by the fixture)."""

import pyarrow as pa
import pyarrow.fs as pafs
from support import SCHEMA

from paimon_sql.catalog import load_catalog
from paimon_sql.io.object_stores import S3Config


def test_catalog_write_read_time_travel_on_s3(s3_server):
    endpoint = s3_server["s3.endpoint"].split("//")[1]
    pafs.S3FileSystem(access_key="test", secret_key="test", endpoint_override=endpoint, scheme="http",
                      allow_bucket_creation=True).create_dir("lake")
    cat = load_catalog("s3://lake/warehouse", s3_server)
    cat.create_database("db", ignore_if_exists=True)
    t = cat.create_table_from_arrow("db.p", SCHEMA, partition_keys=["dt"], primary_keys=["id", "dt"],
                                    options={"bucket": "2"})
    t.write_arrow(pa.table({"id": [1, 2], "name": ["a", "b"], "value": [1.0, 2.0], "dt": ["x", "y"]}, schema=SCHEMA))
    t.write_arrow(pa.table({"id": [1], "name": ["A"], "value": [10.0], "dt": ["x"]}, schema=SCHEMA))
    again = load_catalog("s3://lake/warehouse", s3_server)
    assert again.list_tables("db") == ["p"]
    rows = sorted(again.get_table("db.p").new_scan().to_arrow().to_pylist(), key=lambda r: r["id"])
    assert [(r["id"], r["name"]) for r in rows] == [(1, "A"), (2, "b")]
    first = again.get_table("db.p").new_scan().with_snapshot(1).to_arrow()
    assert sorted(first.column("name").to_pylist()) == ["a", "b"]
    infos = S3Config.of(s3_server).filesystem().get_file_info(pafs.FileSelector("lake/warehouse/db.db/p/snapshot"))
    assert {i.base_name for i in infos} >= {"snapshot-1", "snapshot-2", "LATEST"}


def test_create_if_absent_options_rename_and_secrets_on_s3(s3_server):
    import pytest

    from paimon_sql.exceptions import InvalidOptionError
    from paimon_sql.io.file_io import FileIO
    endpoint = s3_server["s3.endpoint"].split("//")[1]
    pafs.S3FileSystem(access_key="test", secret_key="test", endpoint_override=endpoint, scheme="http",
                      allow_bucket_creation=True).create_dir("lake3")
    # Paimon's spellings of S3A's names: s3./s3a./fs.s3a. prefixes, dashed or dotted keys
    spelled = {"fs.s3a.endpoint": s3_server["s3.endpoint"], "s3a.access.key": "test", "s3.secret.key": "test",
               "s3.path-style-access": "true", "s3.endpoint.region": "us-east-1"}
    io = FileIO.for_path("s3://lake3/w", spelled)
    assert io.try_create("s3://lake3/w/snapshot/snapshot-1", b"first")
    assert not io.try_create("s3://lake3/w/snapshot/snapshot-1", b"second")  # If-None-Match: * -> 412
    assert io.read_text("s3://lake3/w/snapshot/snapshot-1") == "first"
    assert io.list_names("s3://lake3/w/snapshot") == ["snapshot-1"]  # the bucket's probe object is gone
    assert "test" not in repr(io.store.config)  # keys never in a repr, so never in an error
    with pytest.raises(InvalidOptionError, match="'s3.path.style.access' must be true or false"):
        FileIO.for_path("s3://lake3/w", {**spelled, "s3.path.style.access": "yes"})

    cat = load_catalog("s3://lake3/wh", s3_server)  # a table's directory moves by copy + delete, as S3A
    cat.create_database("db")
    cat.create_table_from_arrow("db.t", SCHEMA).write_arrow(
        pa.table({"id": [1], "name": ["a"], "value": [1.0], "dt": ["x"]}, schema=SCHEMA))
    cat.rename_table("db.t", "db.u")
    assert cat.list_tables("db") == ["u"] and cat.get_table("db.u").to_arrow().column("id").to_pylist() == [1]


def test_unknown_warehouse_schemes_are_refused():
    import pytest

    from paimon_sql.exceptions import InvalidOptionError
    from paimon_sql.io.file_io import FileIO
    with pytest.raises(InvalidOptionError, match="warehouse scheme 'hdfs://' is not supported"):
        FileIO.for_path("hdfs://nn/wh")


def test_object_store_secrets_are_masked():
    from paimon_sql.options.core_options import MASK, redact
    secrets = ["s3.access-key", "s3.secret-key", "s3.session.token", "fs.s3a.secret.key", "fs.azure.account.key",
               "fs.azure.account.key.acct.dfs.core.windows.net", "fs.azure.sas.fixed.token", "gs.auth.access.token"]
    shown = redact({**{k: "x" for k in secrets}, "s3.endpoint": "http://h:9000"})
    assert all(shown[k] == MASK for k in secrets) and shown["s3.endpoint"] == "http://h:9000"
