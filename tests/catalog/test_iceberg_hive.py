"""``metadata.iceberg.storage`` = ``hive-catalog`` against a real Hive metastore (the run's one,
tests/catalog/hive_metastore.py): pyiceberg's own Hive catalog finds our table by name and reads
our rows, tags reach it at once, and Java Paimon 2.0 (IcebergHiveMetadataCommitter) registers the
same kind of table with the same parameters. What the metastore holds is read with the Thrift
client library directly, never through our code."""

import json
import uuid
from pathlib import Path

import pyarrow as pa
import pytest
from catalog.hive_metastore import metastore_client, shared_metastore
from interop.java_paimon import Driver, driver_command, hive_client_jars
from pyiceberg.catalog.hive import HiveCatalog as IcebergHiveCatalog
from support import free_port

from paimon_sql.catalog import load_catalog
from paimon_sql.exceptions import InvalidOptionError, UnservedFeatureError
from paimon_sql.iceberg.alter import commit_changes
from paimon_sql.schema.schema_change import SetOption
from paimon_sql.table.table import FileStoreTable

SCHEMA = pa.schema([("id", pa.int64()), ("name", pa.string()), ("dt", pa.string())])
JAVA_SOURCE = Path(__file__).resolve().parents[1] / "interop" / "java" / "IcebergDriver.java"
# parameters the metastore (or the Iceberg reader) adds or changes on its own
HMS_OWN = ("transient_lastDdlTime", "numFiles", "totalSize", "numRows", "rawDataSize", "COLUMN_STATS_ACCURATE")


def _rows(ids, dt="x"):
    return pa.table({"id": ids, "name": [f"n{i}" for i in ids], "dt": [dt] * len(ids)}, schema=SCHEMA)


@pytest.fixture(scope="module")
def server():
    return shared_metastore()


@pytest.fixture
def hms(server):
    with metastore_client(server.uri) as client:
        yield client


@pytest.fixture
def db():
    return f"ice_{uuid.uuid4().hex[:8]}"  # the metastore is shared by the whole run


@pytest.fixture
def pyiceberg(server):
    return IcebergHiveCatalog("hive", uri=server.uri)


def _hive(server, db, **extra):
    return {"metadata.iceberg.storage": "hive-catalog", "metadata.iceberg.uri": server.uri, **extra}


def _read(ice_table, snapshot_id=None) -> list:
    return sorted(tuple(r.values()) for r in ice_table.scan(snapshot_id=snapshot_id).to_arrow().to_pylist())


def _drop(hms, *dbs):
    for name in dbs:
        try:
            hms.drop_database(name, False, True)
        except Exception:  # noqa: BLE001 - absent already
            pass


def test_pyiceberg_hive_catalog_reads_our_table_by_name(tmp_path, server, hms, db, pyiceberg):
    cat = load_catalog(str(tmp_path / "wh"))
    cat.create_database(db)
    t = cat.create_table_from_arrow(f"{db}.events", SCHEMA, partition_keys=["dt"], options=_hive(server, db))
    try:
        t.write_arrow(_rows([1, 2]))
        hms_table = hms.get_table(db, "events")
        first = hms_table.parameters["metadata_location"]
        assert hms_table.tableType == "EXTERNAL_TABLE" and hms_table.parameters["table_type"] == "ICEBERG"
        assert first == f"{tmp_path}/wh/iceberg/{db}/events/metadata/v1.metadata.json"
        assert "previous_metadata_location" not in hms_table.parameters
        assert [(c.name, c.type) for c in hms_table.sd.cols] == [("id", "bigint"), ("name", "string"),
                                                                 ("dt", "string")]
        # a filesystem catalog's database is made in the metastore, at the Iceberg database directory
        assert hms.get_database(db).locationUri.rstrip("/").endswith(f"{tmp_path}/wh/iceberg/{db}")
        assert _read(pyiceberg.load_table(f"{db}.events")) == [(1, "n1", "x"), (2, "n2", "x")]

        t.write_arrow(_rows([3], dt="y"))
        params = hms.get_table(db, "events").parameters
        assert params["metadata_location"].endswith("/v2.metadata.json")
        assert params["previous_metadata_location"] == first
        assert _read(pyiceberg.load_table(f"{db}.events")) == [(1, "n1", "x"), (2, "n2", "x"), (3, "n3", "y")]
    finally:
        _drop(hms, db)


def test_iceberg_database_and_table_names_and_a_new_database(tmp_path, server, hms, db, pyiceberg):
    cat = load_catalog(str(tmp_path / "wh"))
    cat.create_database("src")
    one, two = f"{db}_a", f"{db}_b"
    t = cat.create_table_from_arrow("src.t", SCHEMA, options=_hive(server, db, **{
        "metadata.iceberg.database": f"{one};{two}", "metadata.iceberg.table": "alias",
        "metadata.iceberg.hive-skip-update-stats": "true", "metadata.iceberg.glue.skip-archive": "true"}))
    try:
        t.write_arrow(_rows([7]))
        for name in (one, two):  # each database made by the registration, at the Iceberg database directory
            assert hms.get_database(name).locationUri.rstrip("/").endswith(f"{tmp_path}/wh/iceberg/src")
            assert hms.get_table(name, "alias").parameters["DO_NOT_UPDATE_STATS"] == "true"
            assert _read(pyiceberg.load_table(f"{name}.alias")) == [(7, "n7", "x")]
        assert not any(t.tableName == "t" for t in hms.get_table_objects_by_name(one, ["t"]))
    finally:
        _drop(hms, one, two)


def test_turned_on_by_alter_registers_at_once_and_tags_follow_at_once(tmp_path, server, hms, db, pyiceberg):
    cat = load_catalog(str(tmp_path / "wh"))
    cat.create_database(db)
    t = cat.create_table_from_arrow(f"{db}.t", SCHEMA)
    t.write_arrow(_rows([1]))
    t.write_arrow(_rows([2]))
    try:
        commit_changes(t, [SetOption(k, v) for k, v in _hive(server, db).items()])
        assert hms.get_table(db, "t").parameters["metadata_location"].endswith("/v2.metadata.json")
        assert _read(pyiceberg.load_table(f"{db}.t")) == [(1, "n1", "x"), (2, "n2", "x")]
        t = cat.get_table(f"{db}.t")
        t.tag_manager.create("v2", t.snapshot_manager.snapshot(2))
        refs = pyiceberg.load_table(f"{db}.t").metadata.refs
        assert refs["v2"].snapshot_id == 2 and refs["v2"].snapshot_ref_type == "tag"
        t.tag_manager.rename("v2", "release")
        assert set(pyiceberg.load_table(f"{db}.t").metadata.refs) == {"main", "release"}
        t.tag_manager.delete("release")
        assert set(pyiceberg.load_table(f"{db}.t").metadata.refs) == {"main"}
    finally:
        _drop(hms, db)


def test_the_metastore_found_by_hive_conf_dir(tmp_path, server, hms, db, pyiceberg):
    conf = tmp_path / "conf"
    conf.mkdir()
    (conf / "hive-site.xml").write_text(
        f"<configuration><property><name>hive.metastore.uris</name><value>{server.uri}</value></property>"
        "</configuration>")
    cat = load_catalog(str(tmp_path / "wh"))
    cat.create_database(db)
    t = cat.create_table_from_arrow(f"{db}.t", SCHEMA, options={
        "metadata.iceberg.storage": "hive-catalog", "metadata.iceberg.hive-conf-dir": str(conf)})
    try:
        t.write_arrow(_rows([5]))
        assert _read(pyiceberg.load_table(f"{db}.t")) == [(5, "n5", "x")]
    finally:
        _drop(hms, db)


def test_an_unreachable_metastore_fails_no_commit_and_alter_registers_again(tmp_path, server, hms, db, pyiceberg,
                                                                            caplog):
    cat = load_catalog(str(tmp_path / "wh"))
    cat.create_database(db)
    t = cat.create_table_from_arrow(f"{db}.t", SCHEMA, options=_hive(server, db, **{
        "metadata.iceberg.uri": f"thrift://127.0.0.1:{free_port()}"}))
    try:
        t.write_arrow(_rows([1]))  # the commit has happened; the registration failed and says so
        assert t.new_scan().to_arrow().column("id").to_pylist() == [1]
        assert "cannot reach the Hive metastore" in caplog.text
        assert db not in hms.get_all_databases()
        commit_changes(t, [SetOption("metadata.iceberg.uri", server.uri)])  # registered at once
        assert hms.get_table(db, "t").parameters["metadata_location"].endswith("/v1.metadata.json")
        assert _read(pyiceberg.load_table(f"{db}.t")) == [(1, "n1", "x")]
    finally:
        _drop(hms, db)


def test_a_table_without_a_catalog_name_or_metastore_is_refused(tmp_path, server, db, monkeypatch):
    cat = load_catalog(str(tmp_path / "wh"))
    cat.create_database(db)
    t = cat.create_table_from_arrow(f"{db}.t", SCHEMA, options=_hive(server, db))
    by_path = FileStoreTable(t.io, t.path, t.schema)
    with pytest.raises(UnservedFeatureError, match="load the table from a catalog, not by its path"):
        by_path.write_arrow(_rows([1]))
    monkeypatch.delenv("HIVE_CONF_DIR", raising=False)
    t = cat.create_table_from_arrow(f"{db}.u", SCHEMA, options={"metadata.iceberg.storage": "hive-catalog"})
    with pytest.raises(InvalidOptionError, match="needs the metastore's address: 'metadata.iceberg.uri'"):
        t.write_arrow(_rows([1]))
    assert t.snapshot_manager.latest_id() is None


# -- Java Paimon 2.0 registers the same kind of table -------------------------------------------

def test_java_registers_the_same_parameters(tmp_path, server, hms, db, pyiceberg):
    warehouse = str(tmp_path / "wh")
    cat = load_catalog(warehouse)
    cat.create_database(db)
    options = _hive(server, db, **{"metadata.iceberg.manifest-compression": "deflate"})
    ours = cat.create_table_from_arrow(f"{db}.ours", SCHEMA, partition_keys=["dt"], options=options)
    try:
        with Driver(driver_command(JAVA_SOURCE, before=[hive_client_jars()], version="2.0")) as java:
            java.on(warehouse, [{"op": "create", "table": f"{db}.java", "options": options},
                                {"op": "write", "table": f"{db}.java", "rows": [[1, "n1", "x"]]},
                                {"op": "write", "table": f"{db}.java", "rows": [[2, "n2", "x"]]}])
        ours.write_arrow(_rows([1]))
        ours.write_arrow(_rows([2]))
        theirs, mine = hms.get_table(db, "java"), hms.get_table(db, "ours")

        def shape(h, name):
            params = {k: v.replace(f"/{name}/", "/T/") for k, v in h.parameters.items() if k not in HMS_OWN}
            return (h.tableType, h.owner is not None, params, [(c.name, c.type, c.comment) for c in h.sd.cols],
                    h.sd.location.replace(f"/{name}", "/T"), h.sd.inputFormat, h.sd.outputFormat,
                    h.sd.serdeInfo.serializationLib, [k.name for k in h.partitionKeys])

        assert shape(mine, "ours") == shape(theirs, "java")
        assert _read(pyiceberg.load_table(f"{db}.java")) == _read(pyiceberg.load_table(f"{db}.ours")) == \
            [(1, "n1", "x"), (2, "n2", "x")]
        with open(theirs.parameters["metadata_location"]) as f:
            assert json.load(f)["current-snapshot-id"] == 2
        cat.get_table(f"{db}.java").write_arrow(_rows([3]))  # we continue Java's registration
        params = hms.get_table(db, "java").parameters
        assert params["previous_metadata_location"] == theirs.parameters["metadata_location"]
        assert params["metadata_location"] == f"{warehouse}/iceberg/{db}/java/metadata/v3.metadata.json"
        assert _read(pyiceberg.load_table(f"{db}.java")) == [(1, "n1", "x"), (2, "n2", "x"), (3, "n3", "x")]
    finally:
        _drop(hms, db)
