"""A warehouse on Azure Blob Storage, served by Azurite (Microsoft's emulator, installed by
scripts/setup-tests.sh under .venv/azurite) on 127.0.0.1: tables through pyarrow's AzureFileSystem,
snapshots created by Put Blob with If-None-Match: *, concurrent committers losing nothing."""

import uuid
from pathlib import Path

import pyarrow as pa
import pytest
from catalog.committers import assert_nothing_lost, commit_concurrently
from support import free_port, serve

from paimon_sql.catalog import load_catalog
from paimon_sql.exceptions import InvalidOptionError
from paimon_sql.io.file_io import FileIO

ROOT = Path(__file__).resolve().parents[2]
AZURITE = ROOT / ".venv" / "azurite" / "node_modules" / ".bin" / "azurite-blob"
ACCOUNT = "devstoreaccount1"  # Azurite's well-known account and key
KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="


@pytest.fixture(scope="module")
def azurite(tmp_path_factory):
    if not AZURITE.exists():
        pytest.fail(f"Azurite is not installed at {AZURITE}: run scripts/setup-tests.sh")
    port = free_port()
    proc = serve([str(AZURITE), "--blobHost", "127.0.0.1", "--blobPort", str(port), "--silent", "--loose",
                  "--skipApiVersionCheck", "--location", str(tmp_path_factory.mktemp("azurite"))], port, "Azurite", 60)
    options = {f"fs.azure.account.key.{ACCOUNT}.dfs.core.windows.net": KEY,
               "fs.azure.abfs.endpoint": f"127.0.0.1:{port}", "fs.azure.always.use.https": "false"}
    FileIO.for_path(f"abfs://lake@{ACCOUNT}.dfs.core.windows.net/", options).fs.create_dir("lake")
    yield options
    proc.kill()  # Azurite waits on open connections after SIGTERM; its data is a temporary directory
    proc.wait(timeout=10)


def _warehouse() -> str:
    return f"abfs://lake@{ACCOUNT}.dfs.core.windows.net/{uuid.uuid4().hex}"


def test_tables_on_azure(azurite):
    warehouse = _warehouse()
    io = FileIO.for_path(warehouse, azurite)
    assert io.try_create(f"{warehouse}/x/snapshot-1", b"first")
    assert not io.try_create(f"{warehouse}/x/snapshot-1", b"second")  # If-None-Match: * -> 409
    assert io.read_text(f"{warehouse}/x/snapshot-1") == "first"
    assert KEY not in repr(io.store.config)

    cat = load_catalog(warehouse, azurite)
    cat.create_database("db")
    schema = pa.schema([("id", pa.int64()), ("v", pa.string())])
    t = cat.create_table_from_arrow("db.t", schema, primary_keys=["id"], options={"bucket": "1"})
    t.write_arrow(pa.table({"id": [1, 2], "v": ["a", "b"]}, schema=schema))
    t.write_arrow(pa.table({"id": [2], "v": ["B"]}, schema=schema))
    again = load_catalog(warehouse, azurite).get_table("db.t")
    assert sorted(again.to_arrow().to_pylist(), key=lambda r: r["id"]) == [{"id": 1, "v": "a"}, {"id": 2, "v": "B"}]
    assert sorted(again.to_arrow(snapshot_id=1).column("v").to_pylist()) == ["a", "b"]
    cat.rename_table("db.t", "db.u")  # copy + delete: the store has no rename
    assert cat.list_tables("db") == ["u"] and cat.get_table("db.u").to_arrow().num_rows == 2


def test_azure_options(azurite):
    other = {k.replace(ACCOUNT, "otheraccount"): v for k, v in azurite.items()}  # another account's key
    io = FileIO.for_path(_warehouse(), other)
    assert io.store.config.key is None
    with pytest.raises(InvalidOptionError, match="need fs.azure.account.key or fs.azure.sas.fixed.token"):
        io.try_create(f"{_warehouse()}/snapshot-1", b"x")
    with pytest.raises(InvalidOptionError, match="'fs.azure.account.oauth2.client.id' is not supported"):
        FileIO.for_path(_warehouse(), {**azurite, "fs.azure.account.oauth2.client.id": "c"})
    with pytest.raises(InvalidOptionError, match="abfs://<container>@<account>"):
        FileIO.for_path(f"abfs://{ACCOUNT}.dfs.core.windows.net/wh")


def test_concurrent_committers_on_azure_lose_nothing(azurite, tmp_path):
    procs, commits, warehouse = 3, 5, _warehouse()
    cat = load_catalog(warehouse, azurite)
    cat.create_database("db")
    cat.create_table_from_arrow("db.t", pa.schema([("id", pa.int64())]))
    commit_concurrently(warehouse, azurite, tmp_path / "barrier", procs, commits)
    assert_nothing_lost(warehouse, azurite, procs, commits)
