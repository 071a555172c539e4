"""DuckDB and Apache Iceberg's Java library read the Iceberg metadata of ``metadata.iceberg.storage``
tables, and see the rows paimon-sql reads at the same snapshot.

- DuckDB 1.5's ``iceberg`` extension (``iceberg_scan``), from the PyPI packages that bundle it and
  the ``avro`` extension it needs (extensions.duckdb.org is not reached: they are loaded by path).
- Iceberg Java, the reference reader (tests/interop/java/IcebergReadDriver.java, generic records),
  which applies position deletes and format-v3 deletion vectors at their ``content_offset``: what
  pyiceberg 0.12 cannot. 1.10.1 reads format versions 2 and 3: v3 needs row lineage
  (``next-row-id``), which we write as Paimon's master after 2.0 does (Java Paimon 2.0's own v3
  metadata lacks it, and 1.10.1 refuses that); its ``_row_id`` and ``_last_updated_sequence_number``
  are checked (the last test). Format version 3 is also read with 1.8.1, as Java Paimon 2.0's own
  tests read it.

What each reader supports and what it lacks is in docs/iceberg.md, "Reading it".
"""

import json
import os
from types import ModuleType
from typing import Optional

import duckdb
import duckdb_extension_avro
import duckdb_extension_iceberg
import pyarrow as pa
import pytest
from java_paimon import Driver
from oracles import iceberg_java
from spark.conftest import rows, session, spark  # noqa: F401  (fixtures: one SparkSession per run)
from test_iceberg_dv_interop import V3_DV
from test_iceberg_interop import SCHEMA, TABLE_LOCATION, _rows, latest_metadata, ours

from paimon_sql.data import predicate as P
from paimon_sql.data.row_kind import DELETE

pytestmark = pytest.mark.interop


def _extension(package: ModuleType, name: str) -> str:
    """The extension file a PyPI package bundles for this DuckDB version (LOAD takes its path)."""
    path = os.path.join(os.path.dirname(package.__file__), "extensions", f"v{duckdb.__version__}",
                        f"{name}.duckdb_extension")
    if not os.path.exists(path):
        pytest.fail(f"{package.__name__} bundles no {name} extension for DuckDB {duckdb.__version__}: "
                    f"install the duckdb-extension-{name} of DuckDB's version", pytrace=False)
    return path


@pytest.fixture(scope="module")
def duck():
    con = duckdb.connect(config={"autoinstall_known_extensions": False})
    for package, name in ((duckdb_extension_avro, "avro"), (duckdb_extension_iceberg, "iceberg")):
        con.execute(f"LOAD '{_extension(package, name)}'")
    yield con
    con.close()


@pytest.fixture(scope="module")
def java():
    with Driver(iceberg_java.driver_command()) as driver:
        yield driver


@pytest.fixture(scope="module")
def java_v3():
    with Driver(iceberg_java.driver_command(iceberg_java.V3)) as driver:
        yield driver


def duckdb_rows(duck: duckdb.DuckDBPyConnection, table: str, snapshot: Optional[int] = None) -> list:
    """``iceberg_scan`` of the table directory (DuckDB follows version-hint.text), at ``snapshot``."""
    at = "" if snapshot is None else f", snapshot_from_id = {snapshot}"
    return sorted(duck.sql(f"SELECT * FROM iceberg_scan('{table}'{at})").fetchall())


def java_answer(java: Driver, table: str, op: str = "read", **at: object) -> list:
    return java.batch({"op": op, "metadata": latest_metadata(f"{table}/metadata"), **at})


def java_rows(java: Driver, table: str, **at: object) -> list:
    """Iceberg Java's rows of the table's latest metadata, at ``snapshot=`` or ``ref=``."""
    answer = java_answer(java, table, **at)
    errors = [r["error"] for r in answer if isinstance(r, dict)]
    assert not errors, errors
    return sorted(map(tuple, answer))


def read(duck: duckdb.DuckDBPyConnection, java: Driver, table: str, snapshot: Optional[int] = None) -> list:
    """The rows both readers see (they must agree)."""
    at = {} if snapshot is None else {"snapshot": snapshot}
    seen = duckdb_rows(duck, table, snapshot)
    assert java_rows(java, table, **at) == seen
    return seen


def _position_deletes(table: str) -> int:
    meta = json.load(open(latest_metadata(f"{table}/metadata")))
    current = next(s for s in meta["snapshots"] if s["snapshot-id"] == meta["current-snapshot-id"])
    return int(current["summary"]["total-position-deletes"])


def test_append_table_through_sql(session, duck, java):
    """Partitioned append table: copy-on-write DELETE and UPDATE, an added column (older files read
    with NULLs), expiry by retention, travel to a kept snapshot and to a tag, an expired snapshot."""
    session.sql("CREATE DATABASE db")
    session.sql("CREATE TABLE db.a (id BIGINT, name STRING, dt STRING) PARTITIONED BY (dt) TBLPROPERTIES ("
                "'metadata.iceberg.storage' = 'table-location', 'snapshot.num-retained.min' = '1', "
                "'snapshot.num-retained.max' = '4')")
    table = f"{session.warehouse}/db.db/a"
    session.sql("INSERT INTO db.a VALUES (1, 'a', 'x'), (2, 'b', 'x'), (3, 'c', 'y')")  # snapshot 1
    session.sql("INSERT INTO db.a VALUES (4, 'd', 'y')")  # 2
    session.sql("DELETE FROM db.a WHERE id = 2")  # 3: the file rewritten without the row
    session.sql("UPDATE db.a SET name = 'cc' WHERE id = 3")  # 4
    expected = [(1, "a", "x"), (3, "cc", "y"), (4, "d", "y")]
    assert read(duck, java, table) == rows(session, "SELECT * FROM db.a ORDER BY id") == expected
    session.sql("CALL sys.create_tag(table => 'db.a', tag => 'deleted', snapshot => 3)")
    session.sql("ALTER TABLE db.a ADD COLUMNS (score DOUBLE)")
    session.sql("INSERT INTO db.a VALUES (5, 'e', 'x', 0.5)")  # 5: snapshot 1 expires (4 kept)
    expected = rows(session, "SELECT * FROM db.a ORDER BY id")
    assert read(duck, java, table) == expected
    assert (1, "a", "x", None) in expected and (5, "e", "x", 0.5) in expected
    [info] = java_answer(java, table, "refs")
    assert info == {"current": 5, "snapshots": [2, 3, 4, 5], "refs": {"deleted": {"type": "tag", "snapshot": 3}}}
    # Iceberg reads a snapshot with the schema it was written with; Paimon reads it with today's
    for snapshot in (2, 4):
        before = [r[:3] for r in rows(session, f"SELECT * FROM db.a VERSION AS OF {snapshot} ORDER BY id")]
        assert read(duck, java, table, snapshot) == before
    tagged = [r[:3] for r in rows(session, "SELECT * FROM db.a VERSION AS OF 'deleted' ORDER BY id")]
    assert java_rows(java, table, ref="deleted") == duckdb_rows(duck, table, 3) == tagged
    assert len(tagged) == 3 and (2, "b", "x") not in tagged
    assert java_answer(java, table, snapshot=1) == [{"error": "java.lang.IllegalArgumentException: "
                                                              "Cannot find snapshot with ID 1"}]
    with pytest.raises(duckdb.Error, match="Could not find snapshot with id 1$"):
        duckdb_rows(duck, table, 1)


def test_primary_key_table_after_full_compaction(catalog, duck, java):
    t = catalog.create_table_from_arrow("db.pk", SCHEMA, primary_keys=["id", "dt"], partition_keys=["dt"],
                                        options={**TABLE_LOCATION, "bucket": "1"})
    t.write_arrow(_rows([1, 2, 3]))
    t.write_arrow(_rows([2], name="u"))
    t.write_arrow(_rows([4], dt="y"))
    t.write_arrow(_rows([1]), row_kinds=[DELETE])
    t.compact(full=True)
    compacted = t.snapshot_manager.latest_id()
    assert read(duck, java, t.path) == ours(t) == [(2, "u2", "x"), (3, "n3", "x"), (4, "n4", "y")]
    t.write_arrow(_rows([9], name="late"))  # level 0: Iceberg readers see the compacted state
    assert read(duck, java, t.path) == ours(t, compacted)


def _v3_tables(catalog, options: Optional[dict] = None) -> tuple:
    """A primary-key and an append table of format version 3 (``options`` added), each with deletion
    vectors in its latest snapshot and in an earlier one (its id third in the answer)."""
    options = {**V3_DV, **(options or {})}
    pk = catalog.create_table_from_arrow("db.pk", SCHEMA, primary_keys=["id", "dt"], partition_keys=["dt"],
                                         options={**options, "bucket": "1"})
    pk.write_arrow(_rows([1, 2, 3]))
    pk.write_arrow(_rows([2], name="u"))  # the old row of 2 is deleted by a vector
    earlier = pk.snapshot_manager.latest_id()
    assert _position_deletes(pk.path) == 1
    pk.write_arrow(_rows([3, 4], dt="y"))
    pk.write_arrow(_rows([1], name="v"))
    pk.write_arrow(_rows([3]), row_kinds=[DELETE])
    pk.write_arrow(_rows([4], dt="y"), row_kinds=[DELETE])
    append = catalog.create_table_from_arrow("db.a", SCHEMA, partition_keys=["dt"], options=options)
    append.write_arrow(pa.concat_tables([_rows([1, 2, 3]), _rows([4, 5], dt="y")]))
    append.delete_where(P.is_in("id", [2, 5]))
    append.delete_where(P.equal("id", 3))
    assert (_position_deletes(pk.path), _position_deletes(append.path)) == (2, 3)
    return pk, append, earlier


def test_format_version_3_deletion_vectors(catalog, duck, java_v3):
    """Iceberg Java reads each vector at its range of Paimon's index file. DuckDB 1.5 reads a delete
    file of format puffin whole as a Puffin file, which Paimon's index files are not: a clean error."""
    pk, append, earlier = _v3_tables(catalog)
    assert java_rows(java_v3, pk.path) == ours(pk) == [(1, "v1", "x"), (2, "u2", "x"), (3, "n3", "y")]
    assert java_rows(java_v3, pk.path, snapshot=earlier) == ours(pk, earlier) == [(1, "n1", "x"), (2, "u2", "x"),
                                                                                  (3, "n3", "x")]
    assert java_rows(java_v3, append.path) == ours(append) == [(1, "n1", "x"), (4, "n4", "y")]
    assert java_rows(java_v3, append.path, snapshot=2) == ours(append, 2)
    for t in (pk, append):
        with pytest.raises(duckdb.Error, match="Deletion vector file is not a valid Puffin file"):
            duckdb_rows(duck, t.path)


def test_iceberg_1_10_reads_format_version_3_with_row_lineage(catalog, java):
    """Iceberg 1.10 reads format-v3 metadata only with row lineage (``next-row-id``): our tables'
    rows with each vector applied, and each row's id and sequence number. A commit of vectors
    alone changes no data file: every row keeps the id and sequence number of the snapshot that
    wrote it."""
    pk, append, earlier = _v3_tables(catalog)
    assert java_rows(java, pk.path) == ours(pk) == [(1, "v1", "x"), (2, "u2", "x"), (3, "n3", "y")]
    assert java_rows(java, pk.path, snapshot=earlier) == ours(pk, earlier)
    assert java_rows(java, append.path) == ours(append) == [(1, "n1", "x"), (4, "n4", "y")]
    assert java_rows(java, append.path, snapshot=2) == ours(append, 2)
    written = {r[0]: r[3:] for r in java_rows(java, append.path, snapshot=1, lineage=True)}
    assert sorted(written.values()) == [(i, 1) for i in range(5)]  # ids 0..4, sequence number 1
    assert [(r[0], r[3:]) for r in java_rows(java, append.path, lineage=True)] == [(1, written[1]), (4, written[4])]
    meta = json.load(open(latest_metadata(f"{pk.path}/metadata")))
    lineage = [r[3:] for r in java_rows(java, pk.path, lineage=True)]
    assert len({i for i, _ in lineage}) == 3 and all(i < meta["next-row-id"] for i, _ in lineage)
    assert all(1 <= seq <= meta["current-snapshot-id"] for _, seq in lineage)
