"""paimon-sql's Paimon REST client (paimon_sql/catalog/rest/rest_api.py) against Apache Paimon's own
REST test server (RESTCatalogServer of paimon-core 2.0.0, tests/oracles/paimon_rest.py): the config
handshake and bearer token, databases, tables, commits on a base snapshot, pages, and Paimon's error bodies as paimon-sql's errors."""

import uuid
from pathlib import Path

import pytest

from oracles.paimon_rest import TOKEN, WAREHOUSE, rest_server
from paimon_sql.catalog.rest.rest_api import RESTApi
from paimon_sql.data.types import DataField, parse_type
from paimon_sql.exceptions import (DatabaseAlreadyExistsError, DatabaseNotFoundError, InvalidOptionError,
                                   RestCatalogError, TableAlreadyExistsError, TableNotFoundError)
from paimon_sql.schema.table_schema import TableSchema


@pytest.fixture(scope="module")
def uri(tmp_path_factory):
    with rest_server(tmp_path_factory.mktemp("paimon-rest") / "data") as url:
        yield url


def api(uri: str, **extra) -> RESTApi:
    return RESTApi({"uri": uri, "warehouse": WAREHOUSE, "token.provider": "bear", "token": TOKEN, **extra})


def test_the_handshake_takes_the_servers_prefix_and_its_options_win_as_paimons_do(uri):
    client = api(uri, **{"data-token.enabled": "true"})
    assert client.options["prefix"] == "paimon" and client.paths.databases() == "/v1/paimon/databases"
    assert client.options["data-token.enabled"] == "true"  # a server default yields to the client's own


def test_databases_are_made_read_altered_and_dropped_on_paimons_server(uri):
    client = api(uri)
    client.create_database("sales", {"owner": "ana"})
    client.create_database("odd name$1")
    assert {"sales", "odd name$1"} <= set(client.list_databases())
    assert client.get_database("sales")["name"] == "sales"
    client.alter_database("sales", updates={"k": "v"})
    assert client.get_database("sales")["options"]["k"] == "v"
    with pytest.raises(DatabaseAlreadyExistsError, match="sales"):
        client.create_database("sales")
    client.drop_database("odd name$1")
    assert "odd name$1" not in api(uri).list_databases()
    with pytest.raises(DatabaseNotFoundError):
        client.get_database("odd name$1")


def test_a_wrong_token_or_an_unusable_option_is_one_clear_error(uri):
    with pytest.raises(RestCatalogError, match="401") as e:
        RESTApi({"uri": uri, "warehouse": WAREHOUSE, "token.provider": "bear", "token": "wrong"})
    assert e.value.status == 401 and "\n" not in str(e.value)
    with pytest.raises(InvalidOptionError, match="'token.provider' is not set"):
        RESTApi({"uri": uri, "warehouse": WAREHOUSE, "token": TOKEN})
    with pytest.raises(InvalidOptionError, match="'dlf' is not supported"):
        RESTApi({"uri": uri, "token.provider": "dlf"})
    with pytest.raises(RestCatalogError, match="failed"):
        RESTApi({"uri": "127.0.0.1:9", "token.provider": "bear", "token": TOKEN})  # nothing listens


SCHEMA = TableSchema.create([DataField(0, "id", parse_type("INT")), DataField(1, "v", parse_type("STRING"))],
                            primary_keys=["id"], options={"bucket": "1"})


def _snapshot(snapshot_id: int) -> dict:
    return {"version": 3, "id": snapshot_id, "uuid": str(uuid.uuid4()), "schemaId": 0,
            "baseManifestList": f"manifest-list-base-{snapshot_id}", "deltaManifestList": f"manifest-list-delta-{snapshot_id}",
            "commitUser": "paimon-sql-test", "commitIdentifier": snapshot_id, "commitKind": "APPEND",
            "timeMillis": 1_700_000_000_000 + snapshot_id, "totalRecordCount": 0, "deltaRecordCount": 0}


def test_tables_and_commits_on_paimons_server(uri):
    client = api(uri)
    client.create_database("shop")
    client.create_table("shop", "orders", SCHEMA)
    table = client.get_table("shop", "orders")
    assert table["name"] == "orders" and table["schemaId"] == 0 and table["schema"]["primaryKeys"] == ["id"]
    assert (Path(table["path"]) / "schema" / "schema-0").exists()  # the server wrote the first schema file
    assert client.list_tables("shop") == ["orders"]
    assert client.latest_snapshot("shop", "orders") is None
    first = _snapshot(1)
    assert client.commit("shop", "orders", table["id"], None, first)
    assert client.latest_snapshot("shop", "orders")["uuid"] == first["uuid"]
    assert (Path(table["path"]) / "snapshot" / "snapshot-1").exists()
    assert not client.commit("shop", "orders", table["id"], None, _snapshot(2))  # built on a stale base: refused
    assert client.commit("shop", "orders", table["id"], first["uuid"], _snapshot(2))
    assert client.latest_snapshot("shop", "orders")["id"] == 2
    with pytest.raises(TableNotFoundError):  # another table's id: Paimon's server says the table is not there
        client.commit("shop", "orders", str(uuid.uuid4()), None, _snapshot(3))
    client.rename_table(("shop", "orders"), ("shop", "sales"))
    assert client.list_tables("shop") == ["sales"]
    with pytest.raises(TableAlreadyExistsError):
        client.create_table("shop", "sales", SCHEMA)
    client.drop_table("shop", "sales")
    with pytest.raises(TableNotFoundError):
        client.get_table("shop", "sales")


def test_a_schema_of_ours_is_the_table_paimons_server_makes(uri):
    """Java Paimon's catalog behind the server writes schema-0 from our Schema JSON: it reads back as
    the schema we sent (nested types, keys, options, comment; field ids kept)."""
    fields = [DataField(0, "id", parse_type("BIGINT")), DataField(1, "dt", parse_type("STRING")),
              DataField(2, "s", parse_type("ROW<a INT, b ARRAY<DECIMAL(10, 2)>>")),
              DataField(3, "m", parse_type("MAP<STRING, TIMESTAMP(3)>"), description="a map")]
    ours = TableSchema.create(fields, partition_keys=["dt"], primary_keys=["id", "dt"],
                              options={"bucket": "2", "deletion-vectors.enabled": "true"}, comment="orders")
    client = api(uri)
    client.create_database("schemas")
    client.create_table("schemas", "nested", ours)
    table = client.get_table("schemas", "nested")
    written = TableSchema.from_json((Path(table["path"]) / "schema" / "schema-0").read_bytes())
    assert written.fields == ours.fields and written.highest_field_id == ours.highest_field_id
    assert (written.partition_keys, written.primary_keys, written.comment) == (["dt"], ["id", "dt"], "orders")
    assert {k: v for k, v in written.options.items() if k != "path"} == ours.options
