"""Iceberg compatibility (``metadata.iceberg.storage``) against pyiceberg and Java Apache Paimon 2.0.

pyiceberg reads the Iceberg metadata we write after each commit (``StaticTable.from_metadata``) and
must see the rows paimon-sql reads, for append and primary-key tables, through inserts, a delete,
an update, compaction, an added column and snapshot expiry, and travel to a kept snapshot. Java's
IcebergCommitCallback (tests/interop/java/IcebergDriver.java) writes the same table: its metadata
and manifests are compared with ours field by field where both are deterministic, and each writer
extends the metadata the other wrote. Java's driver classpath has no Snappy codec, so the tables
Java touches use ``metadata.iceberg.manifest-compression`` = deflate (ours default to Snappy, as
Paimon's, which pyiceberg reads).
"""

import glob
import json
import os
from pathlib import Path

import fastavro
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from java_paimon import Driver, driver_command
from pyiceberg.table import StaticTable
from spark.conftest import rows, session, spark  # noqa: F401  (fixtures: one SparkSession per run)

from paimon_sql.data import predicate as P
from paimon_sql.data.row_kind import DELETE
from paimon_sql.data.types import parse_type
from paimon_sql.exceptions import InvalidOptionError, UnservedFeatureError
from paimon_sql.maintenance.expire_snapshots import expire_snapshots
from paimon_sql.maintenance.rollback import rollback_to_snapshot
from paimon_sql.iceberg.alter import commit_changes
from paimon_sql.schema.schema_change import AddColumn, SetOption

pytestmark = pytest.mark.interop

SOURCE = Path(__file__).resolve().parent / "java" / "IcebergDriver.java"
SCHEMA = pa.schema([("id", pa.int64()), ("name", pa.string()), ("dt", pa.string())])
TABLE_LOCATION = {"metadata.iceberg.storage": "table-location"}
FOR_JAVA = {**TABLE_LOCATION, "metadata.iceberg.manifest-compression": "deflate"}


def _rows(ids, dt="x", name="n"):
    return pa.table({"id": ids, "name": [f"{name}{i}" for i in ids], "dt": [dt] * len(ids)}, schema=SCHEMA)


def ours(table, snapshot=None) -> list:
    scan = table.new_scan() if snapshot is None else table.new_scan().with_snapshot(snapshot)
    return sorted(tuple(r.values()) for r in scan.to_arrow().to_pylist())


def metadata_dir(table) -> str:
    return f"{table.path}/metadata"


def latest_metadata(directory: str) -> str:
    with open(f"{directory}/version-hint.text") as f:
        return f"{directory}/v{f.read().strip()}.metadata.json"


def iceberg(directory: str, snapshot=None) -> list:
    """The rows pyiceberg reads from the latest metadata of ``directory`` (at ``snapshot``)."""
    scan = StaticTable.from_metadata(latest_metadata(directory)).scan(snapshot_id=snapshot)
    return sorted(tuple(r.values()) for r in scan.to_arrow().to_pylist())


def test_pyiceberg_reads_our_append_table(catalog):
    t = catalog.create_table_from_arrow("db.t", SCHEMA, partition_keys=["dt"],
                                        options={**TABLE_LOCATION, "snapshot.num-retained.min": "2",
                                                 "snapshot.num-retained.max": "3"})
    t.write_arrow(_rows([1, 2]))
    t.write_arrow(_rows([3], dt="y"))
    assert iceberg(metadata_dir(t)) == ours(t) == [(1, "n1", "x"), (2, "n2", "x"), (3, "n3", "y")]
    assert iceberg(metadata_dir(t), snapshot=1) == ours(t, 1)  # Iceberg time travel to a kept snapshot
    t.delete_where(P.equal("id", 2))  # copy-on-write: a file replaced
    assert iceberg(metadata_dir(t)) == ours(t) == [(1, "n1", "x"), (3, "n3", "y")]
    meta = json.load(open(latest_metadata(metadata_dir(t))))
    assert meta["snapshots"][-1]["summary"]["operation"] == "overwrite"
    t.write_arrow(_rows([4]))
    t.compact(full=True)
    assert iceberg(metadata_dir(t)) == ours(t) == [(1, "n1", "x"), (3, "n3", "y"), (4, "n4", "x")]
    t.schema_manager.commit_changes([AddColumn("score", parse_type("DOUBLE"))])
    t = catalog.get_table("db.t")
    t.write_arrow(pa.table({"id": [5], "name": ["n5"], "dt": ["y"], "score": [0.5]},
                           schema=t.schema.arrow_schema()))
    assert iceberg(metadata_dir(t)) == ours(t)
    assert (5, "n5", "y", 0.5) in ours(t) and (1, "n1", "x", None) in ours(t)
    meta = json.load(open(latest_metadata(metadata_dir(t))))
    assert [s["schema-id"] for s in meta["schemas"]] == [0, 1] and meta["current-schema-id"] == 1
    # Iceberg snapshots expire with Paimon's retention (max 3): only the newest three are kept, their
    # manifests present, the older manifest lists deleted
    kept = [s["snapshot-id"] for s in meta["snapshots"]]
    latest = t.snapshot_manager.latest_id()
    assert kept == [latest - 2, latest - 1, latest]
    assert sorted(glob.glob(f"{metadata_dir(t)}/v*.metadata.json")) == [latest_metadata(metadata_dir(t))]
    lists = {os.path.basename(s["manifest-list"]) for s in meta["snapshots"]}
    assert {os.path.basename(p) for p in glob.glob(f"{metadata_dir(t)}/snap-*.avro")} == lists
    # Iceberg reads a snapshot with the schema it was written with (no score yet), Paimon with the current one
    assert iceberg(metadata_dir(t), snapshot=latest - 2) == [r[:3] for r in ours(t, latest - 2)]
    expire_snapshots(t, retain_max=1, retain_min=1)  # Paimon's expiry: Iceberg's current metadata still reads
    assert iceberg(metadata_dir(t)) == ours(t)


def test_pyiceberg_reads_our_primary_key_table_once_compacted(catalog):
    t = catalog.create_table_from_arrow("db.pk", SCHEMA, primary_keys=["id", "dt"], partition_keys=["dt"],
                                        options={**TABLE_LOCATION, "bucket": "1"})
    t.write_arrow(_rows([1, 2, 3]))
    t.write_arrow(_rows([2], name="u"))  # an update: two overlapping level-0 files, nothing exposed yet
    assert iceberg(metadata_dir(t)) == [(i, f"n{i}", "x") for i in (1, 2, 3)]  # the first snapshot's lone file
    t.compact(full=True)
    assert iceberg(metadata_dir(t)) == ours(t) == [(1, "n1", "x"), (2, "u2", "x"), (3, "n3", "x")]
    t.write_arrow(_rows([3]), row_kinds=[DELETE])
    t.write_arrow(_rows([7], dt="y"))
    assert iceberg(metadata_dir(t)) == [(1, "n1", "x"), (2, "u2", "x"), (3, "n3", "x")]  # top level only
    t.compact(full=True)
    assert iceberg(metadata_dir(t)) == ours(t) == [(1, "n1", "x"), (2, "u2", "x"), (7, "n7", "y")]
    meta = json.load(open(latest_metadata(metadata_dir(t))))
    assert meta["snapshots"][-1]["summary"]["operation"] == "replace"


def test_hadoop_catalog_storage(catalog, warehouse):
    t = catalog.create_table_from_arrow("db.h", SCHEMA, partition_keys=["dt"],
                                        options={"metadata.iceberg.storage": "hadoop-catalog"})
    t.write_arrow(_rows([1, 2]))
    directory = f"{warehouse}/iceberg/db/h/metadata"
    assert open(f"{directory}/version-hint.text").read() == "1"
    assert not os.path.exists(metadata_dir(t))
    assert iceberg(directory) == ours(t)
    catalog.drop_table("db.h")  # a table made again starts its Iceberg history afresh
    t = catalog.create_table_from_arrow("db.h", SCHEMA, partition_keys=["dt"],
                                        options={"metadata.iceberg.storage": "hadoop-catalog"})
    t.write_arrow(_rows([9]))
    assert iceberg(directory) == [(9, "n9", "x")]
    assert len(json.load(open(latest_metadata(directory)))["snapshots"]) == 1


def test_pyiceberg_reads_what_sql_wrote(session):
    """INSERT, DELETE, UPDATE and INSERT OVERWRITE through SQL (Spark's write path, not the Python API)."""
    session.sql("CREATE DATABASE db")
    session.sql("CREATE TABLE db.s (id BIGINT, name STRING, dt STRING) PARTITIONED BY (dt) "
                "TBLPROPERTIES ('metadata.iceberg.storage' = 'table-location')")
    session.sql("INSERT INTO db.s VALUES (1, 'a', 'x'), (2, 'b', 'y'), (3, 'c', 'x')")
    session.sql("DELETE FROM db.s WHERE id = 2")
    session.sql("UPDATE db.s SET name = 'cc' WHERE id = 3")
    session.sql("INSERT OVERWRITE db.s PARTITION (dt = 'z') SELECT 9, 'z9'")
    directory = f"{session.warehouse}/db.db/s/metadata"
    expected = rows(session, "SELECT * FROM db.s ORDER BY id")
    assert iceberg(directory) == expected == [(1, "a", "x"), (3, "cc", "x"), (9, "z9", "z")]


@pytest.mark.parametrize("options, message", [
    ({"metadata.iceberg.storage": "rest-catalog"}, "needs the catalog's address"),
    ({"metadata.iceberg.storage": "hive-catalog", "metadata.iceberg.hive-client-class": "com.amazonaws.glue."
      "catalog.metastore.AWSCatalogMetastoreClient"}, "only 'org.apache.hadoop.hive.metastore.HiveMetaStoreClient'"),
    ({"metadata.iceberg.storage": "hive-catalog", "metadata.iceberg.hadoop-conf-dir": "/etc/hadoop"},
     "Hadoop's configuration files are not read"),
    ({**TABLE_LOCATION, "metadata.iceberg.rest.rest.sigv4-enabled": "true"}, "'rest.sigv4-enabled' is not served"),
    ({"metadata.iceberg.storage": "somewhere"}, "expects one of"),
])
def test_what_is_not_built_is_refused_at_create(catalog, options, message):
    with pytest.raises(InvalidOptionError, match=message):
        catalog.create_table_from_arrow("db.r", SCHEMA, options=options)
    assert not catalog.table_exists("db.r")


@pytest.mark.parametrize("options, message", [
    ({"deletion-vectors.enabled": "true"}, "carries deletion vectors only with"),
])
def test_what_would_publish_wrong_is_refused_before_a_write(catalog, options, message):
    t = catalog.create_table_from_arrow("db.r", SCHEMA, primary_keys=["id", "dt"],
                                        options={**TABLE_LOCATION, "bucket": "1", **options})
    with pytest.raises(UnservedFeatureError, match=message):
        t.write_arrow(_rows([1]))
    assert t.snapshot_manager.latest_id() is None


# -- Java Paimon 2.0 as the oracle --------------------------------------------------------------

@pytest.fixture(scope="module")
def java():
    with Driver(driver_command(SOURCE, version="2.0")) as driver:
        yield driver.on


def _manifests(directory: str, meta: dict) -> list:
    """The current snapshot's manifest-list records and each manifest's entries, stripped of what
    differs between two writers of the same rows (random names, sizes, Parquet bytes)."""
    current = next(s for s in meta["snapshots"] if s["snapshot-id"] == meta["current-snapshot-id"])
    out = []
    for m in fastavro.reader(open(f"{directory}/{os.path.basename(current['manifest-list'])}", "rb")):
        entries = []
        for e in fastavro.reader(open(f"{directory}/{os.path.basename(m['manifest_path'])}", "rb")):
            d = e["data_file"]
            entries.append((e["status"], e["snapshot_id"], e["sequence_number"], e["file_sequence_number"],
                            d["content"], d["file_format"], d["partition"], d["record_count"],
                            d["file_path"].split("/")[-3:-1], d["null_value_counts"], d["lower_bounds"],
                            d["upper_bounds"]))
        record = {k: v for k, v in m.items() if k not in ("manifest_path", "manifest_length")}
        out.append((record, sorted(entries, key=repr)))
    return sorted(out, key=repr)


def _comparable(meta: dict) -> dict:
    # sizes differ between writers; the commit identity is Paimon's master's (#9036), not Java 2.0's
    size_keys = ("added-files-size", "removed-files-size", "total-files-size", "paimon-commit-identity")
    return {
        **{k: meta[k] for k in ("format-version", "last-sequence-number", "last-column-id", "schemas",
                                "current-schema-id", "partition-specs", "default-spec-id", "last-partition-id",
                                "sort-orders", "default-sort-order-id", "current-snapshot-id", "properties",
                                "refs")},
        "snapshots": [(s["sequence-number"], s["snapshot-id"], s.get("parent-snapshot-id"), s["schema-id"],
                       {k: v for k, v in s["summary"].items() if k not in size_keys}) for s in meta["snapshots"]],
    }


@pytest.mark.parametrize("pk", [False, True])
def test_our_metadata_is_javas(java, catalog, warehouse, tmp_path, pk):
    """The same commits through Java and through us: metadata JSON and manifests agree."""
    theirs = str(tmp_path / "java")
    batches = [[[1, "a", "x"], [2, "b", "y"]], [[3, "c", "x"], [1, "z", "x"]]]
    commands = [{"op": "create", "table": "db.t", "pk": pk, "options": FOR_JAVA}]
    commands += [{"op": "write", "table": "db.t", "rows": b} for b in batches]
    if pk:
        commands.append({"op": "compact", "table": "db.t"})
    java(theirs, commands)
    keys = {"primary_keys": ["id", "dt"], "options": {**FOR_JAVA, "bucket": "1"}} if pk else {"options": FOR_JAVA}
    t = catalog.create_table_from_arrow("db.t", SCHEMA, partition_keys=["dt"], **keys)
    for b in batches:
        t.write_arrow(pa.table(list(zip(*b)), schema=SCHEMA))
    if pk:
        t.compact(full=True)
    mine_dir, java_dir = metadata_dir(t), f"{theirs}/db.db/t/metadata"
    mine, javas = json.load(open(latest_metadata(mine_dir))), json.load(open(latest_metadata(java_dir)))
    assert _comparable(mine) == _comparable(javas)
    assert _manifests(mine_dir, mine) == _manifests(java_dir, javas)
    entries = [e for _, es in _manifests(mine_dir, mine) for e in es]
    assert sum(e[7] for e in entries if e[0] != 2) == len(ours(t))  # live entries hold every row once
    assert all(e[10] and e[11] for e in entries)  # with bounds, compared above
    if not pk:  # a primary-key table's totals count Paimon's deleted level-0 files too, as Java's do
        assert mine["snapshots"][-1]["summary"]["total-records"] == str(len(ours(t)))
    assert iceberg(mine_dir) == iceberg(java_dir) == ours(t)
    assert sorted(map(tuple, java(theirs, [{"op": "read", "table": "db.t"}])[0])) == ours(t)


def test_each_writer_extends_the_others_metadata(java, catalog, warehouse):
    """We write, Java appends (its callback extends our metadata), we append again (ours extends
    Java's): pyiceberg reads every writer's rows, Java and we read the same."""
    t = catalog.create_table_from_arrow("db.t", SCHEMA, partition_keys=["dt"], options=FOR_JAVA)
    t.write_arrow(_rows([1, 2]))
    java(warehouse, [{"op": "write", "table": "db.t", "rows": [[3, "j3", "y"]]}])
    meta = json.load(open(latest_metadata(metadata_dir(t))))
    assert [s["snapshot-id"] for s in meta["snapshots"]] == [1, 2]  # Java extended our v1
    t = catalog.get_table("db.t")
    t.write_arrow(_rows([4], dt="y"))
    meta = json.load(open(latest_metadata(metadata_dir(t))))
    assert [s["snapshot-id"] for s in meta["snapshots"]] == [1, 2, 3]  # and we Java's v2
    expected = [(1, "n1", "x"), (2, "n2", "x"), (3, "j3", "y"), (4, "n4", "y")]
    assert iceberg(metadata_dir(t)) == ours(t) == expected
    assert sorted(map(tuple, java(warehouse, [{"op": "read", "table": "db.t"}])[0])) == expected
    for sid in (1, 2):
        assert iceberg(metadata_dir(t), snapshot=sid) == ours(t, sid)


# -- turned on for a table with data; tags reach Iceberg at once -------------------------------

def _refs(directory: str) -> dict:
    return {name: ref["snapshot-id"] for name, ref in
            json.load(open(latest_metadata(directory))).get("refs", {}).items() if ref["type"] == "tag"}


def test_alter_turns_the_metadata_on_at_once_and_unset_stops_it(session):
    session.sql("CREATE DATABASE db")
    session.sql("CREATE TABLE db.a (id BIGINT, name STRING, dt STRING) PARTITIONED BY (dt)")
    session.sql("INSERT INTO db.a VALUES (1, 'a', 'x')")
    session.sql("INSERT INTO db.a VALUES (2, 'b', 'y')")
    directory = f"{session.warehouse}/db.db/a/metadata"
    assert not os.path.exists(directory)
    session.sql("ALTER TABLE db.a SET TBLPROPERTIES ('metadata.iceberg.storage' = 'table-location')")
    assert iceberg(directory) == [(1, "a", "x"), (2, "b", "y")]  # no commit since: written by the ALTER
    assert sorted(os.listdir(directory))[-2:] == ["v2.metadata.json", "version-hint.text"]
    session.sql("INSERT INTO db.a VALUES (3, 'c', 'x')")
    assert iceberg(directory) == [(1, "a", "x"), (2, "b", "y"), (3, "c", "x")]
    session.sql("ALTER TABLE db.a UNSET TBLPROPERTIES ('metadata.iceberg.storage')")
    session.sql("INSERT INTO db.a VALUES (4, 'd', 'x')")
    assert iceberg(directory) == [(1, "a", "x"), (2, "b", "y"), (3, "c", "x")]  # left as it was, as Java leaves it
    session.sql("ALTER TABLE db.a SET TBLPROPERTIES ('metadata.iceberg.storage' = 'table-location')")
    assert iceberg(directory) == rows(session, "SELECT * FROM db.a ORDER BY id")  # caught up at once
    session.sql("CREATE TABLE db.dv (id BIGINT, name STRING) TBLPROPERTIES ('primary-key' = 'id', "
                "'bucket' = '1', 'deletion-vectors.enabled' = 'true')")
    session.sql("INSERT INTO db.dv VALUES (1, 'a')")
    with pytest.raises(UnservedFeatureError, match="carries deletion vectors only with"):
        session.sql("ALTER TABLE db.dv SET TBLPROPERTIES ('metadata.iceberg.storage' = 'table-location')")
    assert "metadata.iceberg.storage" not in rows(session, "SHOW TBLPROPERTIES db.dv")[0]  # refused before stored
    assert not os.path.exists(f"{session.warehouse}/db.db/dv/metadata")


def test_tag_procedures_change_the_iceberg_refs_at_once(session):
    session.sql("CREATE DATABASE db")
    session.sql("CREATE TABLE db.t (id BIGINT, name STRING, dt STRING) "
                "TBLPROPERTIES ('metadata.iceberg.storage' = 'table-location')")
    for i in (1, 2, 3):
        session.sql(f"INSERT INTO db.t VALUES ({i}, 'n{i}', 'x')")
    directory = f"{session.warehouse}/db.db/t/metadata"
    session.sql("CALL sys.create_tag(table => 'db.t', tag => 'one', snapshot => 1)")
    session.sql("CALL sys.create_tag(table => 'db.t', tag => 'two', snapshot => 2)")
    assert _refs(directory) == {"one": 1, "two": 2}
    assert StaticTable.from_metadata(latest_metadata(directory)).scan(snapshot_id=1).to_arrow().num_rows == 1
    session.sql("CALL sys.replace_tag(table => 'db.t', tag => 'one', snapshot => 3)")
    assert _refs(directory) == {"one": 3, "two": 2}
    session.sql("CALL sys.rename_tag(table => 'db.t', tag => 'two', target_tag => 'second')")
    assert _refs(directory) == {"one": 3, "second": 2}
    session.sql("CALL sys.delete_tag(table => 'db.t', tag => 'one')")
    assert _refs(directory) == {"second": 2}
    assert sorted(n for n in os.listdir(directory) if n.endswith(".metadata.json")) == ["v3.metadata.json"]


def test_an_automatic_tag_is_an_iceberg_ref_of_its_own_commit(catalog):
    t = catalog.create_table_from_arrow("db.b", SCHEMA, options={
        **TABLE_LOCATION, "tag.automatic-creation": "batch", "tag.batch.customized-name": "nightly"})
    t.write_arrow(_rows([1]))
    assert _refs(metadata_dir(t)) == {"nightly": 1}  # not only at the next commit
    t.write_arrow(_rows([2]))
    assert _refs(metadata_dir(t)) == {"nightly": 2}  # the batch tag moved, and its ref with it


def test_java_and_we_agree_on_the_refs_of_a_tag_made_after_the_commit(java, catalog, warehouse):
    """Java's TagCallback (createTag through the table) rewrites the latest metadata with the ref, as ours."""
    t = catalog.create_table_from_arrow("db.t", SCHEMA, partition_keys=["dt"], options=FOR_JAVA)
    t.write_arrow(_rows([1]))
    java(warehouse, [{"op": "write", "table": "db.t", "rows": [[2, "j2", "x"]]},
                     {"op": "tag", "table": "db.t", "tag": "java", "snapshot": 1}])
    assert _refs(metadata_dir(t)) == {"java": 1}
    t = catalog.get_table("db.t")
    t.tag_manager.create("ours", t.snapshot_manager.snapshot(2))
    assert _refs(metadata_dir(t)) == {"java": 1, "ours": 2}
    java(warehouse, [{"op": "delete_tag", "table": "db.t", "tag": "ours"}])
    assert _refs(metadata_dir(t)) == {"java": 1}


def test_turning_on_is_refused_for_a_file_without_field_ids(catalog):
    """A data file of another (or an older) writer without Parquet field ids: Iceberg readers could
    not find its columns, so the options are refused before they are stored."""
    t = catalog.create_table_from_arrow("db.f", SCHEMA)
    t.write_arrow(_rows([1]))
    path = glob.glob(f"{t.path}/bucket-0/*.parquet")[0]
    plain = pq.read_table(path)
    pq.write_table(plain.replace_schema_metadata(None).cast(pa.schema([f.remove_metadata() for f in plain.schema])),
                   path)
    with pytest.raises(UnservedFeatureError, match=r"data file .* has no Parquet field ids"):
        commit_changes(t, [SetOption("metadata.iceberg.storage", "table-location")])
    assert "metadata.iceberg.storage" not in catalog.get_table("db.f").schema.options
    assert not os.path.exists(metadata_dir(t))


def test_a_rollback_over_javas_metadata(java, catalog, warehouse):
    """Java 2.0's metadata names no Paimon commit (``paimon-commit-identity``, Paimon's master after
    2.0): after a rollback ours tells its abandoned v2 by time, replaces it under the same table
    uuid, and Java extends the metadata we wrote again."""
    t = catalog.create_table_from_arrow("db.t", SCHEMA, partition_keys=["dt"], options=FOR_JAVA)
    t.write_arrow(_rows([1]))
    java(warehouse, [{"op": "write", "table": "db.t", "rows": [[2, "j2", "x"]]}])
    meta = json.load(open(latest_metadata(metadata_dir(t))))
    assert "paimon-commit-identity" not in meta["snapshots"][-1]["summary"]  # Java's v2
    rollback_to_snapshot(t, 1)
    t = catalog.get_table("db.t")
    t.write_arrow(_rows([3]))  # snapshot 2 again
    mine = json.load(open(latest_metadata(metadata_dir(t))))
    assert mine["table-uuid"] == meta["table-uuid"]
    assert mine["snapshots"][-1]["summary"]["paimon-commit-identity"] == t.snapshot_manager.snapshot(2).uuid
    assert iceberg(metadata_dir(t)) == ours(t) == [(1, "n1", "x"), (3, "n3", "x")]
    java(warehouse, [{"op": "write", "table": "db.t", "rows": [[4, "j4", "y"]]}])
    expected = [(1, "n1", "x"), (3, "n3", "x"), (4, "j4", "y")]
    assert iceberg(metadata_dir(t)) == ours(catalog.get_table("db.t")) == expected
