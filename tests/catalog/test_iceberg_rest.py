"""``metadata.iceberg.storage`` = ``rest-catalog`` against a real Iceberg REST catalog (Apache
Iceberg's REST fixture, tests/catalog/iceberg_rest_server.py): after each kind of commit, pyiceberg's
own RestCatalog loads the table from the server and reads the rows paimon-sql reads; a server down
during a commit leaves the commit standing and the next one catches the catalog up. What the
catalog holds is read through pyiceberg, never through our code."""

import logging
import uuid

import pyarrow as pa
import pytest
from catalog.iceberg_rest_server import start_rest_server
from pyiceberg.catalog.rest import RestCatalog

from paimon_sql.catalog import load_catalog
from paimon_sql.data import predicate as P
from paimon_sql.exceptions import InvalidOptionError, PaimonError, UnservedFeatureError
from paimon_sql.iceberg.alter import commit_changes
from paimon_sql.maintenance.rollback import rollback_to_snapshot
from paimon_sql.schema.schema_change import AddColumn, SetOption
from paimon_sql.table.table import FileStoreTable
from paimon_sql.data.types import parse_type

SCHEMA = pa.schema([("id", pa.int64()), ("name", pa.string()), ("dt", pa.string())])


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    server = start_rest_server(str(tmp_path_factory.mktemp("rest")))
    yield server
    server.stop()


@pytest.fixture
def db():
    return f"ice_{uuid.uuid4().hex[:8]}"  # the server is shared by the module


@pytest.fixture
def catalog(tmp_path, db):
    cat = load_catalog(str(tmp_path / "wh"))
    cat.create_database(db)
    return cat


def _rest(server, **extra) -> dict:
    return {"metadata.iceberg.storage": "rest-catalog", "metadata.iceberg.rest.uri": server.uri, **extra}


def _rows(ids, dt="x") -> pa.Table:
    return pa.table({"id": ids, "name": [f"n{i}" for i in ids], "dt": [dt] * len(ids)}, schema=SCHEMA)


def _sorted(table: pa.Table) -> list:
    return sorted(tuple(r.values()) for r in table.to_pylist())


def _iceberg(server, name: str, snapshot_id=None) -> list:
    return _sorted(RestCatalog("rest", uri=server.uri).load_table(name).scan(snapshot_id=snapshot_id).to_arrow())


def _snapshot_ids(server, name: str) -> list:
    return [s.snapshot_id for s in RestCatalog("rest", uri=server.uri).load_table(name).metadata.snapshots]


def test_each_commit_reaches_the_rest_catalog(server, catalog, db):
    name = f"{db}.events"
    t = catalog.create_table_from_arrow(name, SCHEMA, partition_keys=["dt"], options=_rest(server, **{
        "snapshot.num-retained.min": "2", "snapshot.num-retained.max": "3"}))

    def same():
        table = catalog.get_table(name)
        assert _iceberg(server, name) == _sorted(table.to_arrow())
        return table

    t.write_arrow(_rows([1, 2]))
    t = same()
    t.write_arrow(_rows([3], dt="y"))
    t = same()
    assert _iceberg(server, name, snapshot_id=1) == [(1, "n1", "x"), (2, "n2", "x")]  # history kept
    t.delete_where(P.equal("id", 2))  # copy-on-write: a file replaced
    t = same()
    t.compact(full=True)
    t = same()
    commit_changes(t, [AddColumn("score", parse_type("DOUBLE"))])
    t = catalog.get_table(name)
    t.write_arrow(pa.table({"id": [4], "name": ["n4"], "dt": ["y"], "score": [0.5]}))
    t = same()
    assert _iceberg(server, name) == [(1, "n1", "x", None), (3, "n3", "y", None), (4, "n4", "y", 0.5)]
    ice = RestCatalog("rest", uri=server.uri).load_table(name)
    assert [f.name for f in ice.schema().fields] == ["id", "name", "dt", "score"]
    assert [f.name for f in ice.spec().fields] == ["dt"]
    # Iceberg keeps the snapshots Paimon's retention keeps (at most 3)
    latest = t.snapshot_manager.latest_id()
    assert _snapshot_ids(server, name) == list(range(latest - 2, latest + 1))
    assert ice.metadata.properties["write.metadata.previous-versions-max"] == "0"


def test_a_primary_key_tables_update_reaches_it_after_full_compaction(server, catalog, db):
    name = f"{db}.pk"
    t = catalog.create_table_from_arrow(name, SCHEMA, primary_keys=["id"], partition_keys=[],
                                        options=_rest(server, bucket="1"))
    t.write_arrow(_rows([1, 2]))
    t.compact(full=True)
    assert _iceberg(server, name) == [(1, "n1", "x"), (2, "n2", "x")]
    t = catalog.get_table(name)
    t.write_arrow(pa.table({"id": [2], "name": ["two"], "dt": ["x"]}, schema=SCHEMA))
    t.compact(full=True)
    assert _iceberg(server, name) == _sorted(catalog.get_table(name).to_arrow()) == [(1, "n1", "x"), (2, "two", "x")]


def test_a_partition_key_with_column_id_0_and_names_from_options(server, catalog, db):
    t = catalog.create_table_from_arrow(f"{db}.t", SCHEMA, partition_keys=["id"], options=_rest(server, **{
        "metadata.iceberg.database": f"{db}_ice", "metadata.iceberg.table": "alias"}))
    t.write_arrow(_rows([1, 2]))
    t.write_arrow(_rows([3]))
    ice = RestCatalog("rest", uri=server.uri).load_table(f"{db}_ice.alias")
    assert [(f.name, f.source_id) for f in ice.spec().fields] == [("id", 0)]
    assert _sorted(ice.scan().to_arrow()) == [(1, "n1", "x"), (2, "n2", "x"), (3, "n3", "x")]


def test_a_server_down_during_a_commit(tmp_path, catalog, db, caplog):
    server = start_rest_server(str(tmp_path / "rest"))
    try:
        name = f"{db}.t"
        t = catalog.create_table_from_arrow(name, SCHEMA, options=_rest(server))
        t.write_arrow(_rows([1]))
        server.stop()
        with caplog.at_level(logging.WARNING, logger="paimon_sql.iceberg"):
            t.write_arrow(_rows([2]))  # the commit stands; the catalog's update failed and says so
        assert _sorted(catalog.get_table(name).to_arrow()) == [(1, "n1", "x"), (2, "n2", "x")]
        logged = [r for r in caplog.records if r.name.startswith("paimon_sql.iceberg")]
        assert len(logged) == 1 and "snapshot 2" in logged[0].getMessage()
        assert f"Iceberg REST catalog: GET {server.uri}/v1/config failed" in logged[0].getMessage()
        server = server.restart()
        assert _snapshot_ids(server, name) == [1]
        t.write_arrow(_rows([3]))  # caught up, with the missed snapshot
        assert _snapshot_ids(server, name) == [1, 2, 3]
        assert _iceberg(server, name) == [(1, "n1", "x"), (2, "n2", "x"), (3, "n3", "x")]
        assert _iceberg(server, name, snapshot_id=2) == [(1, "n1", "x"), (2, "n2", "x")]
    finally:
        server.stop()


def _lineage(server, name: str) -> tuple:
    """The catalog's format version, next-row-id and (snapshot, first-row-id, added-rows)s."""
    ice = RestCatalog("rest", uri=server.uri).load_table(name).metadata
    return ice.format_version, ice.next_row_id, [(s.snapshot_id, s.first_row_id, s.added_rows) for s in ice.snapshots]


def test_format_version_3_with_row_lineage(tmp_path, catalog, db):
    """The catalog takes a version 3 snapshot only with its first-row-id at or past the table's
    next-row-id, which it then moves by the snapshot's added-rows: each commit, and a server
    down during one, keeps the catalog's row lineage ours. (pyiceberg 0.12 cannot read our
    deletion vectors: a table without them.)"""
    server = start_rest_server(str(tmp_path / "rest"))
    name = f"{db}.v3"
    try:
        t = catalog.create_table_from_arrow(name, SCHEMA, options=_rest(server, **{
            "metadata.iceberg.format-version": "3"}))
        t.write_arrow(_rows([1, 2]))
        t.write_arrow(_rows([3]))
        assert _lineage(server, name) == (3, 3, [(1, 0, 2), (2, 2, 1)])
        t.delete_where(P.equal("id", 2))  # copy-on-write: the manifest rewritten, a new range for its files
        server.stop()
        t = catalog.get_table(name)
        t.write_arrow(_rows([4]))  # the catalog misses it
        server = server.restart()
        t = catalog.get_table(name)
        t.write_arrow(_rows([5]))
        assert _iceberg(server, name) == _sorted(catalog.get_table(name).to_arrow()) == [
            (1, "n1", "x"), (3, "n3", "x"), (4, "n4", "x"), (5, "n5", "x")]
        version, next_row_id, snapshots = _lineage(server, name)
        assert (version, [s[0] for s in snapshots]) == (3, [1, 2, 3, 4, 5])
        assert [b[1] for b in snapshots[1:]] == [a[1] + a[2] for a in snapshots[:-1]]  # one range after another
        assert next_row_id == snapshots[-1][1] + snapshots[-1][2] > 5
    finally:
        server.stop()


def test_format_version_3_after_a_rollback_is_registered(server, catalog, db):
    """After a rollback our metadata is written again with ids past those handed out (6 of them):
    a table the catalog creates starts at next-row-id 0 and would stay below, so the table is
    registered from our metadata; later commits (a new schema too) extend it."""
    name = f"{db}.rb"
    t = catalog.create_table_from_arrow(name, SCHEMA, options=_rest(server, **{"metadata.iceberg.format-version": "3"}))
    for i in range(3):
        t.write_arrow(_rows([i, i + 10]))
    rollback_to_snapshot(t, 1)
    t = catalog.get_table(name)
    t.write_arrow(_rows([7]))  # snapshot 2 again, its metadata written afresh: 3 rows from id 6
    assert _lineage(server, name) == (3, 9, [(2, 6, 3)])
    ice = RestCatalog("rest", uri=server.uri).load_table(name).metadata
    assert ice.properties["write.metadata.previous-versions-max"] == "0"  # sent after registering
    commit_changes(t, [AddColumn("score", parse_type("DOUBLE"))])
    t = catalog.get_table(name)
    t.write_arrow(pa.table({"id": [8], "name": ["n8"], "dt": ["x"], "score": [0.5]}))
    assert _lineage(server, name) == (3, 10, [(2, 6, 3), (3, 9, 1)])
    assert _iceberg(server, name) == _sorted(catalog.get_table(name).to_arrow()) == [
        (0, "n0", "x", None), (7, "n7", "x", None), (8, "n8", "x", 0.5), (10, "n10", "x", None)]


def test_a_table_made_again_is_made_again_in_the_catalog(server, catalog, db):
    name = f"{db}.t"
    t = catalog.create_table_from_arrow(name, SCHEMA, options=_rest(server))
    t.write_arrow(_rows([1]))
    t.write_arrow(_rows([2]))
    first = RestCatalog("rest", uri=server.uri).load_table(name).metadata.table_uuid
    catalog.drop_table(name)
    t = catalog.create_table_from_arrow(name, SCHEMA, options=_rest(server))
    t.write_arrow(_rows([7]))
    ice = RestCatalog("rest", uri=server.uri).load_table(name)
    assert ice.metadata.table_uuid != first and _snapshot_ids(server, name) == [1]
    assert _sorted(ice.scan().to_arrow()) == [(7, "n7", "x")]


def test_tags_reach_the_catalog_with_the_next_commit(server, catalog, db):
    name = f"{db}.t"
    t = catalog.create_table_from_arrow(name, SCHEMA, options=_rest(server))
    t.write_arrow(_rows([1]))
    t.tag_manager.create("v1", t.snapshot_manager.snapshot(1))
    t.write_arrow(_rows([2]))
    refs = RestCatalog("rest", uri=server.uri).load_table(name).metadata.refs
    assert refs["v1"].snapshot_id == 1 and refs["v1"].snapshot_ref_type == "tag"
    t.tag_manager.delete("v1")
    t.write_arrow(_rows([3]))
    assert set(RestCatalog("rest", uri=server.uri).load_table(name).metadata.refs) == {"main"}


def test_turned_on_by_alter_commits_at_once(server, catalog, db):
    name = f"{db}.t"
    t = catalog.create_table_from_arrow(name, SCHEMA)
    t.write_arrow(_rows([1]))
    commit_changes(t, [SetOption(k, v) for k, v in _rest(server).items()])
    assert _iceberg(server, name) == [(1, "n1", "x")]


def test_oauth2_client_credentials_headers_and_warehouse(server, catalog, db):
    """The fixture's token endpoint answers the client-credentials request; a token address that
    answers nothing fails the ALTER that sets it (it commits to the catalog again), naming it."""
    name = f"{db}.t"
    t = catalog.create_table_from_arrow(name, SCHEMA, options=_rest(server, **{
        "metadata.iceberg.rest.credential": "client:secret", "metadata.iceberg.rest.scope": "catalog",
        "metadata.iceberg.rest.warehouse": "any", "metadata.iceberg.rest.header.X-Client": "paimon"}))
    t.write_arrow(_rows([1]))
    assert _iceberg(server, name) == [(1, "n1", "x")]
    elsewhere = f"{server.uri}/nowhere/tokens"
    with pytest.raises(PaimonError, match=f"the options are set, but .*POST {elsewhere} failed: 400 No route"):
        commit_changes(catalog.get_table(name), [SetOption("metadata.iceberg.rest.oauth2-server-uri", elsewhere)])
    t = catalog.get_table(name)
    t.write_arrow(_rows([2]))  # logged, not committed to the catalog
    assert _snapshot_ids(server, name) == [1]


def test_a_static_token_and_the_prefix(server, catalog, db):
    """The fixture serves no prefix (its config gives none): a prefix from the options is in the
    path of every call, which the fixture does not route."""
    name = f"{db}.t"
    t = catalog.create_table_from_arrow(name, SCHEMA, options=_rest(server, **{"metadata.iceberg.rest.token": "tok"}))
    t.write_arrow(_rows([1]))
    assert _iceberg(server, name) == [(1, "n1", "x")]
    commit_changes(t, [SetOption("metadata.iceberg.table", "u")])  # committed under the new name at once
    assert _iceberg(server, f"{db}.u") == [(1, "n1", "x")]
    with pytest.raises(PaimonError, match=f"GET {server.uri}/v1/any/namespaces/{db} failed: 400 No route"):
        commit_changes(catalog.get_table(name), [SetOption("metadata.iceberg.rest.prefix", "any")])


@pytest.mark.parametrize("options, message", [
    ({"metadata.iceberg.rest.uri": ""}, "needs the catalog's address: 'metadata.iceberg.rest.uri'"),
    ({"metadata.iceberg.rest.uri": "thrift://h:1"}, "expects http\\(s\\)://host:port"),
    ({"metadata.iceberg.rest.rest.sigv4-enabled": "true"}, "'rest.sigv4-enabled' is not served"),
    ({"metadata.iceberg.rest.token": "t", "metadata.iceberg.rest.credential": "c"}, "set one"),
    ({"metadata.iceberg.database": "a;b"}, "names one REST catalog namespace"),
    ({"metadata.iceberg.table-properties.": "x"}, "names no Iceberg table property"),
    ({"metadata.iceberg.table-properties.format-version": "3"}, "'format-version' is reserved by Iceberg"),
    ({"metadata.iceberg.table-properties.write.metadata.previous-versions-max": "3"},
     "set by each commit from metadata.iceberg.previous-versions-max"),
])
def test_what_cannot_be_served_is_refused_at_create(server, catalog, db, options, message):
    with pytest.raises(InvalidOptionError, match=message):
        catalog.create_table_from_arrow(f"{db}.r", SCHEMA, options={**_rest(server), **options})
    assert not catalog.table_exists(f"{db}.r")


def test_a_table_opened_by_its_path_is_refused_before_a_write(server, catalog, db):
    t = catalog.create_table_from_arrow(f"{db}.t", SCHEMA, options=_rest(server))
    with pytest.raises(UnservedFeatureError, match="load the table from a catalog, not by its path"):
        FileStoreTable(t.io, t.path, t.schema).write_arrow(_rows([1]))


def test_table_properties_reach_the_catalogs_table(server, catalog, db):
    """``metadata.iceberg.table-properties.<name>`` (Paimon's master after 2.0, #9268): set on the
    catalog's table when it is made, changed by the next commit after an ALTER."""
    name = f"{db}.t"
    prop = "metadata.iceberg.table-properties."
    t = catalog.create_table_from_arrow(name, SCHEMA, options=_rest(server, **{
        f"{prop}owner": "analytics", f"{prop}write.parquet.compression-codec": "zstd"}))
    t.write_arrow(_rows([1]))
    properties = RestCatalog("rest", uri=server.uri).load_table(name).metadata.properties
    assert (properties["owner"], properties["write.parquet.compression-codec"]) == ("analytics", "zstd")
    commit_changes(t, [SetOption(f"{prop}owner", "finance")])  # committed to the catalog at once
    properties = RestCatalog("rest", uri=server.uri).load_table(name).metadata.properties
    assert (properties["owner"], properties["write.metadata.previous-versions-max"]) == ("finance", "0")
    assert _iceberg(server, name) == [(1, "n1", "x")]
