"""Deletion vectors in real Puffin files (``metadata.iceberg.deletion-vectors.puffin-files``, paimon-sql's
own option): pyiceberg 0.12 (its normal scan), DuckDB 1.5 and Iceberg Java 1.10.1 read format-v3
tables with deletion vectors, which they cannot (the first two) in Java Paimon's layout, where the
delete files are Paimon's index files. Expiry deletes the Puffin files no kept snapshot names, also
after Java Paimon 2.0 continued the table (it keeps our delete manifests while the index is
unchanged and rewrites the vectors into its own layout when it changes it). With the option off
the metadata is Java's (tests/interop/test_iceberg_dv_interop.py).
"""

import json
import os

import pytest
from java_paimon import Driver, driver_command
from test_iceberg_dv_interop import FOR_JAVA, JAVA, SCHEMA, V3_DV, _entries, _rows, iceberg_rows
from test_iceberg_interop import iceberg, latest_metadata, metadata_dir, ours
from test_iceberg_readers import _v3_tables, duck, duckdb_rows, java, java_rows  # noqa: F401  (fixtures)

from paimon_sql.data import predicate as P
from paimon_sql.data.row_kind import DELETE
from paimon_sql.exceptions import InvalidOptionError
from paimon_sql.iceberg.puffin import MAGIC

pytestmark = pytest.mark.interop

PUFFIN = {"metadata.iceberg.deletion-vectors.puffin-files": "true"}


def _vector_files(directory: str, snapshot=None) -> dict:
    """The live vectors of the latest metadata's snapshot (or ``snapshot``): data file → its delete file entry."""
    meta = json.load(open(latest_metadata(directory)))
    sid = meta["current-snapshot-id"] if snapshot is None else snapshot
    snap = next(s for s in meta["snapshots"] if s["snapshot-id"] == sid)
    return {e["data_file"]["referenced_data_file"]: e["data_file"] for content, e in _entries(directory, snap)
            if content == 1 and e["status"] != 2}


def _puffin_files(directory: str) -> set:
    return {f"{directory}/{n}" for n in os.listdir(directory) if n.endswith(".puffin")}


def _check_puffin(directory: str) -> None:
    """Every live vector sits in a Puffin file of the metadata directory, sized as the file, and its
    footer names it at the entry's range with its data file and cardinality."""
    vectors = _vector_files(directory)
    assert vectors
    for data_file, d in vectors.items():
        assert os.path.dirname(d["file_path"]) == directory and d["file_format"] == "puffin"
        raw = open(d["file_path"], "rb").read()
        assert raw[:4] == raw[-4:] == MAGIC and d["file_size_in_bytes"] == len(raw)
        size = int.from_bytes(raw[-12:-8], "little")
        footer = json.loads(raw[-12 - size:-12])
        blob = next(b for b in footer["blobs"] if b["properties"]["referenced-data-file"] == data_file)
        assert (blob["type"], blob["snapshot-id"], blob["sequence-number"]) == ("deletion-vector-v1", -1, -1)
        assert (blob["offset"], blob["length"]) == (d["content_offset"], d["content_size_in_bytes"])
        assert blob["properties"]["cardinality"] == str(d["record_count"])


def test_pyiceberg_and_duckdb_read_the_vectors(catalog, duck):
    pk, append, earlier = _v3_tables(catalog, PUFFIN)
    for t in (pk, append):
        _check_puffin(metadata_dir(t))
    assert iceberg(metadata_dir(pk)) == duckdb_rows(duck, pk.path) == ours(pk) == \
        [(1, "v1", "x"), (2, "u2", "x"), (3, "n3", "y")]
    assert iceberg(metadata_dir(pk), earlier) == duckdb_rows(duck, pk.path, earlier) == ours(pk, earlier) == \
        [(1, "n1", "x"), (2, "u2", "x"), (3, "n3", "x")]
    assert iceberg(metadata_dir(append)) == duckdb_rows(duck, append.path) == ours(append) == \
        [(1, "n1", "x"), (4, "n4", "y")]
    assert iceberg(metadata_dir(append), 2) == duckdb_rows(duck, append.path, 2) == ours(append, 2) == \
        [(1, "n1", "x"), (3, "n3", "x"), (4, "n4", "y")]


def test_iceberg_java_reads_the_vectors(catalog, java):
    pk, append, earlier = _v3_tables(catalog, PUFFIN)
    assert java_rows(java, pk.path) == ours(pk) == [(1, "v1", "x"), (2, "u2", "x"), (3, "n3", "y")]
    assert java_rows(java, pk.path, snapshot=earlier) == ours(pk, earlier)
    assert java_rows(java, append.path) == ours(append) == [(1, "n1", "x"), (4, "n4", "y")]
    assert java_rows(java, append.path, snapshot=2) == ours(append, 2)


def test_off_by_default_and_refused_below_format_version_3(catalog):
    t = catalog.create_table_from_arrow("db.t", SCHEMA, partition_keys=["dt"], options=V3_DV)
    t.write_arrow(_rows([1, 2]))
    t.delete_where(P.equal("id", 1))
    assert not _puffin_files(metadata_dir(t))
    assert all("/index/" in d["file_path"] for d in _vector_files(metadata_dir(t)).values())
    with pytest.raises(InvalidOptionError, match="'metadata.iceberg.deletion-vectors.puffin-files' = 'true' "
                                                 "needs 'metadata.iceberg.format-version' = '3'"):
        catalog.create_table_from_arrow("db.v2", SCHEMA, options={
            **V3_DV, "metadata.iceberg.format-version": "2", **PUFFIN})


def test_expiry_deletes_the_puffin_files_no_kept_snapshot_names(catalog):
    """One Puffin file per commit that changes the vectors; a commit that does not keeps the
    previous one; a file goes when the last kept snapshot naming it expires."""
    t = catalog.create_table_from_arrow("db.t", SCHEMA, partition_keys=["dt"], options={
        **V3_DV, **PUFFIN, "snapshot.num-retained.min": "2", "snapshot.num-retained.max": "2"})
    d = metadata_dir(t)
    t.write_arrow(_rows(list(range(1, 9))))
    t.delete_where(P.equal("id", 1))  # snapshot 2: the first Puffin file
    first = _puffin_files(d)
    assert len(first) == 1
    t.write_arrow(_rows([20], dt="y"))  # snapshot 3: the index unchanged, the same file
    assert _puffin_files(d) == first == {v["file_path"] for v in _vector_files(d).values()}
    t.delete_where(P.equal("id", 2))  # snapshot 4: a new file; snapshot 3 (kept) still names the first
    second = _puffin_files(d) - first
    assert len(second) == 1 and first < _puffin_files(d)
    t.delete_where(P.equal("id", 3))  # snapshot 5: snapshot 3 expired, and the first file with it
    third = _puffin_files(d) - first - second
    assert _puffin_files(d) == second | third
    assert iceberg(d) == ours(t) == sorted([(i, f"n{i}", "x") for i in range(4, 9)] + [(20, "n20", "y")])
    assert iceberg(d, 4) == ours(t, 4)


@pytest.fixture(scope="module")
def java_paimon():
    with Driver(driver_command(JAVA / "IcebergDriver.java", version="2.0")) as driver:
        yield driver.on


def test_java_paimon_continues_the_table(java_paimon, duck, catalog, warehouse):
    """Java 2.0 takes the table with the option (it ignores the key), keeps our Puffin files while
    the index is unchanged and writes its own layout when it changes; our next commit writes the
    metadata again (Java drops row lineage) with a new Puffin file and deletes the old ones."""
    t = catalog.create_table_from_arrow("db.t", SCHEMA, primary_keys=["id", "dt"], partition_keys=["dt"],
                                        options={**FOR_JAVA, **PUFFIN, "bucket": "1"})
    d = metadata_dir(t)
    t.write_arrow(_rows([1, 2, 3]))
    t.write_arrow(_rows([1], name="u"))
    ours_first = _puffin_files(d)
    assert len(ours_first) == 1
    java_paimon(warehouse, [{"op": "write", "table": "db.t", "rows": [[8, "j8", "y"]]}])
    javas = json.load(open(latest_metadata(d)))
    assert javas["current-snapshot-id"] > 2 and "next-row-id" not in javas  # Java's metadata (no row lineage)
    assert {v["file_path"] for v in _vector_files(d).values()} == ours_first  # Java kept our delete manifests
    assert iceberg(d) == ours(catalog.get_table("db.t")) == [(1, "u1", "x"), (2, "n2", "x"), (3, "n3", "x"),
                                                             (8, "j8", "y")]
    java_paimon(warehouse, [{"op": "write", "table": "db.t", "rows": [[2, "j2", "x"]]}])
    assert all("/index/" in v["file_path"] for v in _vector_files(d).values())  # Java's own layout
    assert iceberg_rows(d) == ours(catalog.get_table("db.t"))
    t = catalog.get_table("db.t")
    t.write_arrow(_rows([3]), row_kinds=[DELETE])
    assert _puffin_files(d) == {v["file_path"] for v in _vector_files(d).values()}
    assert not _puffin_files(d) & ours_first
    expected = [(1, "u1", "x"), (2, "j2", "x"), (8, "j8", "y")]
    assert iceberg(d) == duckdb_rows(duck, t.path) == ours(t) == expected
    assert sorted(map(tuple, java_paimon(warehouse, [{"op": "read", "table": "db.t"}])[0])) == expected
