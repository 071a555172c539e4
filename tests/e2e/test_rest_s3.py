"""Data tokens (issue 48): paimon-sql-server's REST catalog over a warehouse on S3 (moto) turns on
Paimon's ``data-token.enabled``; a paimon-sql client that holds no storage options of its own
reaches each table's files with the credentials the server vends (``.../token``), reads and
writes them, Spark's tasks included, and the files land in the server's bucket."""

import pyarrow.fs as pafs
import pytest

import paimon_sql
from conftest import s3_bucket
from e2e.server_support import start_rest_server

TOKEN = "tok-admin"


@pytest.fixture(scope="module")
def rest(tmp_path_factory, s3_server):
    store = s3_bucket(s3_server, "rest-lake")
    tokens = tmp_path_factory.mktemp("rest-s3") / "tokens"
    tokens.write_text(f"{TOKEN} admin\n")
    catalog = [arg for k, v in store.items() for arg in ("--catalog", f"{k}={v}")]
    with start_rest_server("s3://rest-lake/wh", str(tokens), *catalog) as (_, uri):
        yield {"uri": uri, "store": store}


def test_a_client_without_storage_options_uses_the_vended_ones(spark, rest):
    client = paimon_sql.connect("s3://rest-lake/wh", spark=spark, catalog_options={
        "metastore": "rest", "uri": rest["uri"], "token.provider": "bear", "token": TOKEN})
    assert client.catalog.data_tokens and not any(k.startswith("s3.") for k in client.catalog.options)
    client.sql("CREATE DATABASE lake")
    client.sql("CREATE TABLE lake.t (id INT, v STRING) TBLPROPERTIES ('primary-key' = 'id', 'bucket' = '2')")
    client.sql("INSERT INTO lake.t VALUES (1, 'a'), (2, 'b'), (3, 'c')")
    client.sql("INSERT INTO lake.t SELECT id, upper(v) FROM lake.t WHERE id > 1")  # Spark's tasks write too
    assert sorted(tuple(r) for r in client.sql("SELECT * FROM lake.t").collect()) == [(1, "a"), (2, "B"), (3, "C")]
    fs = pafs.S3FileSystem(access_key="test", secret_key="test", scheme="http",
                           endpoint_override=rest["store"]["s3.endpoint"].split("//")[1])
    names = [i.path for i in fs.get_file_info(pafs.FileSelector("rest-lake/wh/lake.db/t", recursive=True))]
    assert any("/bucket-" in n and n.endswith(".parquet") for n in names)
    assert "rest-lake/wh/lake.db/t/snapshot/snapshot-2" in names
    vended, _ = client.catalog._tokens[client.catalog._ident("lake.t")]
    assert vended["s3.endpoint"] == rest["store"]["s3.endpoint"]
