"""Iceberg format version 3 with deletion vectors (``metadata.iceberg.format-version`` = 3,
``deletion-vectors.bitmap64``), against pyiceberg and Java Apache Paimon 2.0.

As Java, the metadata points Iceberg at Paimon's own index files: each 64-bit vector is an Iceberg
``deletion-vector-v1`` blob at ``content_offset`` / ``content_size_in_bytes``. pyiceberg 0.12 plans
the scan (its delete-file index matches each vector to its data file by partition and sequence
number), but its reader parses a delete file whole as a Puffin file, which Paimon's index files are
not. So :func:`iceberg_rows` reads as a blob-reading Iceberg reader (Java Iceberg 1.8+) does:
pyiceberg's plan, each vector's blob at its range decoded by pyiceberg's deletion-vector decoder,
checked against its CRC and record count, and the data file's rows at the other positions.
Java's IcebergCommitCallback (IcebergDriver.java for primary-key tables, Bitmap64Driver.java for
an append table's deletes) writes the same commits: metadata and manifests agree field by field
where both are deterministic (row lineage aside: Java 2.0 writes none, we write it as Paimon's
master after 2.0 does), and each writer extends the other's metadata (ours after Java's written
again, to restore the row lineage Java dropped). And paimon-spark itself (relay.py) deletes and updates an
append table's rows by SQL, its vectors published to Iceberg by its callback, with ours in turn: every
snapshot reads through Iceberg as through Paimon.
"""

import json
import os
import shutil
import struct
import zlib
from pathlib import Path

import fastavro
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from java_paimon import Driver, driver_command
from oracles import iceberg_java
from pyiceberg.table import StaticTable
from pyiceberg.table.deletion_vector import DeletionVector, _extract_vector_payload
from relay import ENGINES, Relay, relays  # noqa: F401  (fixture)
from spark.conftest import rows, session, spark  # noqa: F401  (fixtures: one SparkSession per run)
from test_iceberg_interop import _comparable, latest_metadata, metadata_dir, ours

from paimon_sql.data import predicate as P
from paimon_sql.data.row_kind import DELETE
from paimon_sql.exceptions import UnservedFeatureError
from paimon_sql.catalog import load_catalog
from paimon_sql.iceberg.commit_callback import iceberg_after_commit
from paimon_sql.maintenance.expire_snapshots import expire_snapshots

pytestmark = pytest.mark.interop

SCHEMA = pa.schema([("id", pa.int64()), ("name", pa.string()), ("dt", pa.string())])
V3_DV = {"metadata.iceberg.storage": "table-location", "metadata.iceberg.format-version": "3",
         "deletion-vectors.enabled": "true", "deletion-vectors.bitmap64": "true"}
FOR_JAVA = {**V3_DV, "metadata.iceberg.manifest-compression": "deflate"}  # Java's classpath has no Snappy
JAVA = Path(__file__).resolve().parent / "java"


def _rows(ids, dt="x", name="n"):
    return pa.table({"id": ids, "name": [f"{name}{i}" for i in ids], "dt": [dt] * len(ids)}, schema=SCHEMA)


def _snapshot(meta: dict, sid=None) -> dict:
    sid = meta["current-snapshot-id"] if sid is None else sid
    return next(s for s in meta["snapshots"] if s["snapshot-id"] == sid)


def _entries(directory: str, snap: dict) -> list:
    """(manifest content, entry) of every entry of the snapshot's manifests."""
    out = []
    for m in fastavro.reader(open(f"{directory}/{os.path.basename(snap['manifest-list'])}", "rb")):
        out += [(m["content"], e) for e in fastavro.reader(open(f"{directory}/{os.path.basename(m['manifest_path'])}",
                                                                     "rb"))]
    return out


def _positions(d: dict) -> set:
    with open(d["file_path"], "rb") as f:
        f.seek(d["content_offset"])
        blob = f.read(d["content_size_in_bytes"])
    (length,) = struct.unpack(">i", blob[:4])
    assert length + 8 == len(blob) and blob[4:8] == bytes([0xD1, 0xD3, 0x39, 0x64])  # deletion-vector-v1 framing
    assert struct.unpack(">I", blob[-4:])[0] == zlib.crc32(blob[4:-4])
    bitmaps = DeletionVector._deserialize_bitmap(_extract_vector_payload(blob))
    positions = {(key << 32) + p for key, bm in enumerate(bitmaps) for p in bm}
    assert len(positions) == d["record_count"]  # Iceberg checks the cardinality
    return positions


def iceberg_rows(directory: str, snapshot=None) -> list:
    """The rows an Iceberg reader sees in the latest metadata of ``directory`` (at ``snapshot``)."""
    path = latest_metadata(directory)
    meta = json.load(open(path))
    snap = _snapshot(meta, snapshot)
    names = [f["name"] for f in next(x for x in meta["schemas"] if x["schema-id"] == snap["schema-id"])["fields"]]
    vectors = {}
    for content, e in _entries(directory, snap):
        if content == 1 and e["status"] != 2:
            d = e["data_file"]
            assert (d["content"], d["file_format"], d["null_value_counts"]) == (1, "puffin", None)
            assert d["referenced_data_file"] not in vectors  # one vector per data file
            vectors[d["referenced_data_file"]] = d
    out = []
    for task in StaticTable.from_metadata(path).scan(snapshot_id=snapshot).plan_files():
        data = task.file.file_path
        if data in vectors:  # pyiceberg's planner applies the vector's file to this data file
            assert vectors[data]["file_path"] in {x.file_path for x in task.delete_files}
        deleted = _positions(vectors.pop(data)) if data in vectors else set()
        table = pq.read_table(data, columns=names)
        out += [tuple(r.values()) for i, r in enumerate(table.to_pylist()) if i not in deleted]
    assert not vectors, f"vectors of files not in the snapshot: {list(vectors)}"
    return sorted(out)


def _summary(directory: str) -> dict:
    return _snapshot(json.load(open(latest_metadata(directory))))["summary"]


# -- pyiceberg ------------------------------------------------------------------------------------

def test_append_table_deletes_are_iceberg_deletion_vectors(catalog):
    t = catalog.create_table_from_arrow("db.t", SCHEMA, partition_keys=["dt"], options={
        **V3_DV, "snapshot.num-retained.min": "2", "snapshot.num-retained.max": "3"})
    d = metadata_dir(t)
    t.write_arrow(pa.concat_tables([_rows([1, 2, 3]), _rows([4, 5], dt="y")]))
    t.delete_where(P.equal("id", 2))
    assert iceberg_rows(d) == ours(t) == [(1, "n1", "x"), (3, "n3", "x"), (4, "n4", "y"), (5, "n5", "y")]
    assert (_summary(d)["total-delete-files"], _summary(d)["total-position-deletes"]) == ("1", "1")
    assert json.load(open(latest_metadata(d)))["format-version"] == 3
    t.delete_where(P.equal("id", 5))  # a second vector, in the other partition; the first is kept
    t.delete_where(P.equal("id", 3))  # the first vector grows
    assert iceberg_rows(d) == ours(t) == [(1, "n1", "x"), (4, "n4", "y")]
    assert (_summary(d)["total-delete-files"], _summary(d)["total-position-deletes"]) == ("2", "3")
    assert iceberg_rows(d, snapshot=t.snapshot_manager.latest_id() - 1) == ours(t, t.snapshot_manager.latest_id() - 1)
    t.write_arrow(_rows([6]))  # no index change: the delete manifests are the base's
    assert iceberg_rows(d) == ours(t) == [(1, "n1", "x"), (4, "n4", "y"), (6, "n6", "x")]
    t.compact(full=True)  # the files rewritten without their deleted rows: no vector left
    assert iceberg_rows(d) == ours(t)
    assert (_summary(d)["total-delete-files"], _summary(d)["total-position-deletes"]) == ("0", "0")
    meta = json.load(open(latest_metadata(d)))
    latest = t.snapshot_manager.latest_id()
    assert [s["snapshot-id"] for s in meta["snapshots"]] == [latest - 2, latest - 1, latest]  # expired with Paimon's
    lists = {os.path.basename(s["manifest-list"]) for s in meta["snapshots"]}
    assert {p for p in os.listdir(d) if p.startswith("snap-")} == lists
    expire_snapshots(t, retain_max=1, retain_min=1)
    assert iceberg_rows(d) == ours(t)


def test_metadata_written_afresh_carries_the_vectors(catalog):
    t = catalog.create_table_from_arrow("db.t", SCHEMA, partition_keys=["dt"], options=V3_DV)
    d = metadata_dir(t)
    t.write_arrow(pa.concat_tables([_rows([1, 2, 3]), _rows([4, 5], dt="y")]))
    t.delete_where(P.is_in("id", [2, 5]))
    shutil.rmtree(d)  # metadata lost: the next commit writes it afresh, vectors included (sized -1, as Java)
    t.delete_where(P.equal("id", 3))
    assert iceberg_rows(d) == ours(t) == [(1, "n1", "x"), (4, "n4", "y")]
    vectors = [e["data_file"] for c, e in _entries(d, _snapshot(json.load(open(latest_metadata(d))))) if c == 1]
    assert sorted((v["record_count"], v["file_size_in_bytes"]) for v in vectors) == [(1, -1), (2, -1)]
    assert (_summary(d)["total-delete-files"], _summary(d)["total-position-deletes"]) == ("2", "3")


def test_metadata_written_afresh_names_every_level_above_0(catalog):
    """A level-0 file (read by no one until compacted) does not hide its bucket's other files from
    metadata written afresh: it names what metadata extended from a base names, and the commits
    extending it keep them (it once named none, for good)."""
    t = catalog.create_table_from_arrow("db.pk", SCHEMA, primary_keys=["id", "dt"], partition_keys=["dt"],
                                        options={**V3_DV, "bucket": "1"})
    d = metadata_dir(t)
    t.write_arrow(_rows([1, 2, 3]))  # compacted above level 0
    shutil.rmtree(d)  # metadata lost: the next commit writes it afresh
    t.copy({"write-only": "true"}).write_arrow(_rows([3], name="u"))  # level 0, overlapping 1..3
    assert [s["snapshot-id"] for s in json.load(open(latest_metadata(d)))["snapshots"]] == [3]  # afresh
    assert iceberg_rows(d) == ours(t) == [(1, "n1", "x"), (2, "n2", "x"), (3, "n3", "x")]
    t.write_arrow(_rows([7]))  # extends it, compacting the level-0 file
    assert iceberg_rows(d) == ours(t) == [(1, "n1", "x"), (2, "n2", "x"), (3, "u3", "x"), (7, "n7", "x")]


def test_primary_key_table_exposes_every_level_above_0_with_its_vectors(catalog):
    t = catalog.create_table_from_arrow("db.pk", SCHEMA, primary_keys=["id", "dt"], partition_keys=["dt"],
                                        options={**V3_DV, "bucket": "1"})
    d = metadata_dir(t)
    t.write_arrow(_rows([1, 2, 3]))
    t.write_arrow(_rows([2], name="u"))  # the old row of 2 is deleted by a vector, the new one sits above level 0
    assert iceberg_rows(d) == ours(t) == [(1, "n1", "x"), (2, "u2", "x"), (3, "n3", "x")]
    assert _summary(d)["total-position-deletes"] == "1"
    t.write_arrow(_rows([3]), row_kinds=[DELETE])
    t.write_arrow(_rows([7], dt="y"))
    assert iceberg_rows(d) == ours(t) == [(1, "n1", "x"), (2, "u2", "x"), (7, "n7", "y")]  # no full compaction needed
    t.compact(full=True)
    assert iceberg_rows(d) == ours(t)
    assert _summary(d)["total-delete-files"] == "0"
    operations = {s["summary"]["operation"] for s in json.load(open(latest_metadata(d)))["snapshots"]}
    assert "replace" in operations  # a compaction that rewrote an exposed file


def test_sql_delete_and_update(session):
    session.sql("CREATE DATABASE db")
    props = ", ".join(f"'{k}' = '{v}'" for k, v in V3_DV.items())
    for name, pk in (("a", ""), ("k", "'primary-key' = 'id,dt', 'bucket' = '1', ")):
        session.sql(f"CREATE TABLE db.{name} (id BIGINT, name STRING, dt STRING) PARTITIONED BY (dt) "
                    f"TBLPROPERTIES ({pk}{props})")
        session.sql(f"INSERT INTO db.{name} VALUES (1, 'a', 'x'), (2, 'b', 'y'), (3, 'c', 'x')")
        session.sql(f"DELETE FROM db.{name} WHERE id = 2")
        session.sql(f"UPDATE db.{name} SET name = 'cc' WHERE id = 3")
        expected = rows(session, f"SELECT * FROM db.{name} ORDER BY id")
        directory = f"{session.warehouse}/db.db/{name}/metadata"
        assert iceberg_rows(directory) == expected == [(1, "a", "x"), (3, "cc", "x")]
        assert int(_summary(directory)["total-position-deletes"]) > 0


@pytest.mark.parametrize("options, message", [
    ({"deletion-vectors.enabled": "true"}, "only with 'metadata.iceberg.format-version' = '3'"),
    ({"deletion-vectors.enabled": "true", "metadata.iceberg.format-version": "3"}, "'deletion-vectors.bitmap64'"),
])
def test_vectors_iceberg_cannot_read_are_refused_before_a_write(catalog, options, message):
    t = catalog.create_table_from_arrow("db.r", SCHEMA, primary_keys=["id", "dt"], options={
        "metadata.iceberg.storage": "table-location", "bucket": "1", **options})
    with pytest.raises(UnservedFeatureError, match=message):
        t.write_arrow(_rows([1]))
    assert t.snapshot_manager.latest_id() is None


# -- Java Paimon 2.0 as the oracle ----------------------------------------------------------------

@pytest.fixture(scope="module")
def java():
    with Driver(driver_command(JAVA / "IcebergDriver.java", version="2.0")) as driver:
        yield driver.on


@pytest.fixture(scope="module")
def java_dv():
    with Driver(driver_command(JAVA / "Bitmap64Driver.java", version="2.0")) as driver:
        yield driver.on


def _manifests(directory: str, snap: dict) -> list:
    """A snapshot's manifest entries, their files named within the table directory."""
    def inside(path):
        return None if path is None else path.split("/db.db/t/", 1)[1]
    out = []
    for content, e in _entries(directory, snap):
        d = e["data_file"]
        out.append((content, e["status"], e["snapshot_id"], e["sequence_number"], e["file_sequence_number"],
                    d["content"], inside(d["file_path"]), d["file_format"], d["partition"], d["record_count"],
                    d["file_size_in_bytes"], d["null_value_counts"], d["lower_bounds"], d["upper_bounds"],
                    inside(d["referenced_data_file"]), d["content_offset"], d["content_size_in_bytes"]))
    return sorted(out, key=repr)


def _lists(directory: str, snap: dict) -> list:
    """A snapshot's manifest-list records, without row lineage's ``first_row_id`` (Java 2.0 writes none)."""
    records = fastavro.reader(open(f"{directory}/{os.path.basename(snap['manifest-list'])}", "rb"))
    skip = ("manifest_path", "manifest_length", "first_row_id")
    return sorted(({k: v for k, v in m.items() if k not in skip} for m in records), key=repr)


def _replay(java_root: str, warehouse: str, catalog) -> str:
    """Our Iceberg metadata of the Paimon snapshots Java wrote: the table copied without its
    snapshots and Iceberg metadata, then each snapshot we lack put back in turn, followed by our
    post-commit job, as Java's callback followed each commit. The same Paimon history on both
    sides (our writers compact differently from Java's), so every field can be compared."""
    source, target = f"{java_root}/db.db/t", f"{warehouse}/db.db/t"
    shutil.copytree(source, target, ignore=shutil.ignore_patterns("metadata", "snapshot"), dirs_exist_ok=True)
    os.makedirs(f"{target}/snapshot", exist_ok=True)
    snapshots = sorted(int(n.split("-")[1]) for n in os.listdir(f"{source}/snapshot") if n.startswith("snapshot-"))
    for sid in snapshots:
        if not os.path.exists(f"{target}/snapshot/snapshot-{sid}"):
            shutil.copy(f"{source}/snapshot/snapshot-{sid}", f"{target}/snapshot/snapshot-{sid}")
            iceberg_after_commit(catalog.get_table("db.t"))
    return metadata_dir(catalog.get_table("db.t"))


def _same_metadata(mine_dir: str, java_dir: str) -> None:
    """The same metadata but for row lineage, which Java 2.0 does not write (Paimon's master after 2.0 does)."""
    mine, javas = json.load(open(latest_metadata(mine_dir))), json.load(open(latest_metadata(java_dir)))
    assert _comparable(mine) == _comparable(javas)
    assert "next-row-id" in mine and "next-row-id" not in javas
    for snap, java_snap in zip(mine["snapshots"], javas["snapshots"]):  # every kept snapshot's manifests
        assert _manifests(mine_dir, snap) == _manifests(java_dir, java_snap), snap["snapshot-id"]
        assert _lists(mine_dir, snap) == _lists(java_dir, java_snap), snap["snapshot-id"]


def test_primary_key_metadata_is_javas(java, catalog, warehouse, tmp_path):
    """Java writes, updates (vectors), deletes and compacts; we publish the same snapshots: the
    same metadata, manifests and vectors (file, range, cardinality, size)."""
    theirs = str(tmp_path / "java")
    java(theirs, [{"op": "create", "table": "db.t", "pk": True, "options": FOR_JAVA},
                  {"op": "write", "table": "db.t", "rows": [[1, "a", "x"], [2, "b", "x"], [3, "c", "y"]]},
                  {"op": "write", "table": "db.t", "rows": [[2, "u", "x"], [3, "v", "y"]]},
                  {"op": "delete", "table": "db.t", "rows": [[1, "a", "x"]]}])
    java_dir = f"{theirs}/db.db/t/metadata"
    mine_dir = _replay(theirs, warehouse, catalog)
    _same_metadata(mine_dir, java_dir)
    snapshots = json.load(open(latest_metadata(mine_dir)))["snapshots"]
    assert any(int(s["summary"]["total-position-deletes"]) > 0 for s in snapshots), "no vector published"
    for s in snapshots:
        assert iceberg_rows(mine_dir, s["snapshot-id"]) == iceberg_rows(java_dir, s["snapshot-id"])
    expected = [(2, "u", "x"), (3, "v", "y")]
    assert iceberg_rows(mine_dir) == iceberg_rows(java_dir) == ours(catalog.get_table("db.t")) == expected
    java(theirs, [{"op": "compact", "table": "db.t"}])
    _replay(theirs, warehouse, catalog)
    _same_metadata(mine_dir, java_dir)
    assert iceberg_rows(mine_dir) == expected
    assert _summary(mine_dir)["total-delete-files"] == "0"


def test_append_table_metadata_is_javas(java_dv, catalog, warehouse, tmp_path):
    """Java deletes an append table's rows by vectors as paimon-spark's DELETE does (Bitmap64Driver)."""
    theirs = str(tmp_path / "java")
    java_dv(theirs, [{"op": "create", "table": "db.t", "pk": False,
                      "options": {**FOR_JAVA, "bucket": "1", "bucket-key": "id"}},
                     {"op": "write", "table": "db.t", "rows": [[1, "a", "+I"], [2, "b", "+I"], [3, "c", "+I"]]},
                     {"op": "delete", "table": "db.t", "ids": [2]},
                     {"op": "write", "table": "db.t", "rows": [[4, "d", "+I"]]},
                     {"op": "delete", "table": "db.t", "ids": [3, 4]}])
    java_dir = f"{theirs}/db.db/t/metadata"
    mine_dir = _replay(theirs, warehouse, catalog)
    _same_metadata(mine_dir, java_dir)
    assert (_summary(mine_dir)["total-delete-files"], _summary(mine_dir)["total-position-deletes"]) == ("2", "3")
    assert iceberg_rows(mine_dir) == iceberg_rows(java_dir) == ours(catalog.get_table("db.t")) == [(1, "a")]


@pytest.fixture(scope="module")
def iceberg():
    with Driver(iceberg_java.driver_command()) as driver:
        yield driver


def _iceberg_answer(iceberg: Driver, directory: str) -> list:
    """Iceberg Java 1.10.1's rows of the latest metadata, each with its _row_id (or its error)."""
    answer = iceberg.batch({"op": "read", "metadata": latest_metadata(directory), "lineage": True})
    return answer if any(isinstance(r, dict) for r in answer) else sorted(map(tuple, answer))


def test_each_writer_extends_the_others_vectors(java, iceberg, catalog, warehouse):
    """We write and update (a vector), Java 2.0 updates (its callback extends our v3 metadata and
    rewrites the vectors, but drops row lineage, which it does not know: ``next-row-id`` and the
    manifests' ranges go, so Iceberg 1.10 refuses the table), we delete (ours writes the metadata
    again with row lineage, past every id handed out): every step reads right through Iceberg."""
    t = catalog.create_table_from_arrow("db.t", SCHEMA, primary_keys=["id", "dt"], partition_keys=["dt"],
                                        options={**FOR_JAVA, "bucket": "1"})
    d = metadata_dir(t)
    t.write_arrow(_rows([1, 2, 3]))
    t.write_arrow(_rows([1], name="u"))
    mine = t.snapshot_manager.latest_id()
    handed_out = json.load(open(latest_metadata(d)))["next-row-id"]
    assert [r[:3] for r in _iceberg_answer(iceberg, d)] == [(1, "u1", "x"), (2, "n2", "x"), (3, "n3", "x")]
    java(warehouse, [{"op": "write", "table": "db.t", "rows": [[2, "j2", "x"], [8, "j8", "y"]]}])
    meta = json.load(open(latest_metadata(d)))
    assert meta["format-version"] == 3 and meta["snapshots"][0]["snapshot-id"] <= mine  # Java extended ours
    assert "next-row-id" not in meta and "first-row-id" not in meta["snapshots"][-1]
    assert _iceberg_answer(iceberg, d) == [{"error": "java.lang.IllegalArgumentException: "
                                                     "Cannot parse missing long: next-row-id"}]
    assert iceberg_rows(d) == ours(catalog.get_table("db.t")) == [(1, "u1", "x"), (2, "j2", "x"), (3, "n3", "x"),
                                                                  (8, "j8", "y")]
    t = catalog.get_table("db.t")
    t.write_arrow(_rows([3]), row_kinds=[DELETE])
    healed = json.load(open(latest_metadata(d)))
    assert healed["table-uuid"] == meta["table-uuid"] and healed["snapshots"][0]["snapshot-id"] > mine
    assert healed["snapshots"][0]["first-row-id"] >= handed_out  # Java kept our snapshots' ranges
    expected = [(1, "u1", "x"), (2, "j2", "x"), (8, "j8", "y")]
    assert iceberg_rows(d) == ours(t) == expected
    lineage = _iceberg_answer(iceberg, d)
    assert [r[:3] for r in lineage] == expected
    assert len({r[3] for r in lineage}) == 3 and all(handed_out <= r[3] < healed["next-row-id"] for r in lineage)
    assert sorted(map(tuple, java(warehouse, [{"op": "read", "table": "db.t"}])[0])) == expected


# -- paimon-spark itself ---------------------------------------------------------------------------

RELAYS = {"append_vectors": Relay(steps=[
    """CREATE DATABASE db;
       CREATE TABLE db.t (id BIGINT, name STRING, dt STRING) TBLPROPERTIES ('bucket' = '1', 'bucket-key' = 'id',
         'metadata.iceberg.storage' = 'table-location', 'metadata.iceberg.format-version' = '3',
         'deletion-vectors.enabled' = 'true', 'deletion-vectors.bitmap64' = 'true');
       INSERT INTO db.t VALUES (1, 'a', 'x'), (2, 'b', 'x'), (3, 'c', 'x');
       DELETE FROM db.t WHERE id = 2;""",
    """INSERT INTO db.t VALUES (4, 'd', 'y');
       DELETE FROM db.t WHERE id IN (3, 4);""",
    """UPDATE db.t SET name = 'A' WHERE id = 1;
       INSERT INTO db.t VALUES (5, 'e', 'y');"""],
    reads="SELECT * FROM db.t;")}


# Known bug (docs/iceberg.md, "Known gaps"): paimon-sql's Iceberg manifests name local files without a
# scheme (/tmp/...), paimon-spark's with one (file:/tmp/...). When paimon-spark's commit callback extends
# metadata paimon-sql wrote and adds a vector for one of paimon-sql's data files, the vector names
# file:/tmp/... while the data file's entry says /tmp/...: an Iceberg reader matches them by text and
# leaves the vector unapplied. Strict: the test fails as soon as it passes.
_SCHEMES_DIFFER = pytest.mark.xfail(strict=True, reason="Iceberg file paths: ours without file:, Java's with it")


@pytest.mark.parametrize("first", [pytest.param("paimon-spark", marks=_SCHEMES_DIFFER), "paimon-sql"])
def test_append_table_vectors_between_paimon_spark_and_us(relays, first):
    """Each engine's DELETE vectors read by the other; every snapshot's Iceberg rows are Paimon's."""
    relays.check("append_vectors", first)
    table = load_catalog(relays.warehouse("append_vectors", first)).get_table("db.t")
    d = metadata_dir(table)
    # the last two commits are the first writer's (its callback extends the other's metadata; ours writes
    # it afresh after paimon-spark's, to restore the row lineage paimon-spark drops)
    snapshots = [s["snapshot-id"] for s in json.load(open(latest_metadata(d)))["snapshots"]]
    assert snapshots[-2:] == [5, 6] and int(_summary(d)["total-position-deletes"]) > 0
    for sid in snapshots:
        assert iceberg_rows(d, sid) == ours(table, sid), sid
    assert iceberg_rows(d) == [(1, "A", "x"), (5, "e", "y")]
