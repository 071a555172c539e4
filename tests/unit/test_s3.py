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
