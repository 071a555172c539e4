"""Iceberg metadata and Paimon branches (paimon_sql/iceberg/branches.py): Iceberg's one table is
Paimon's main branch. A branch write publishes nothing and leaves main's metadata as it was
(Java 2.0's callback writes a branch's snapshots into main's metadata directory: shown against
Java below); ``CALL sys.fast_forward`` makes main's metadata catch up at once, and pyiceberg reads
main's rows throughout."""

import os

import fastavro
import pytest
from java_paimon import Driver, driver_command
from pyiceberg.table import StaticTable
from spark.conftest import rows, session, spark  # noqa: F401  (fixtures: one SparkSession per run)

from test_iceberg_interop import FOR_JAVA, SOURCE, iceberg, latest_metadata

pytestmark = pytest.mark.interop

ON = "TBLPROPERTIES ('metadata.iceberg.storage' = 'table-location')"


def _files(directory: str) -> dict:
    out = {}
    for name in sorted(os.listdir(directory)):
        with open(f"{directory}/{name}", "rb") as f:
            out[name] = f.read()
    return out


def _named_by_current(directory: str) -> set:
    """The files the current metadata needs: itself, the version hint, its manifest lists and manifests."""
    path = latest_metadata(directory)
    names = {os.path.basename(path), "version-hint.text"}
    for s in StaticTable.from_metadata(path).metadata.snapshots:
        names.add(os.path.basename(s.manifest_list))
        with open(s.manifest_list, "rb") as f:
            names.update(os.path.basename(m["manifest_path"]) for m in fastavro.reader(f))
    return names


def test_branch_writes_publish_nothing_and_fast_forward_catches_main_up(session):
    session.sql("CREATE DATABASE db")
    session.sql(f"CREATE TABLE db.t (id BIGINT, name STRING) {ON}")
    for i in (1, 2, 3):
        session.sql(f"INSERT INTO db.t VALUES ({i}, 'n{i}')")
    directory = f"{session.warehouse}/db.db/t/metadata"
    session.sql("CALL sys.create_tag(table => 'db.t', tag => 'two', snapshot => 2)")
    session.sql("CALL sys.create_branch(table => 'db.t', branch => 'b', tag => 'two')")
    before = _files(directory)
    session.sql("INSERT INTO db.t$branch_b VALUES (8, 'b8')")  # the branch's snapshot 3: an id main published
    session.sql("INSERT INTO db.t$branch_b VALUES (9, 'b9')")  # its snapshot 4: beyond main's latest
    session.sql("DELETE FROM db.t$branch_b WHERE id = 1")
    assert _files(directory) == before  # main's Iceberg metadata untouched
    assert iceberg(directory) == rows(session, "SELECT * FROM db.t ORDER BY id") == [(1, "n1"), (2, "n2"), (3, "n3")]
    session.sql("INSERT INTO db.t VALUES (4, 'n4')")  # main's own snapshot 4 is published as ever
    assert iceberg(directory) == [(i, f"n{i}") for i in (1, 2, 3, 4)]

    session.sql("CALL sys.fast_forward(table => 'db.t', branch => 'b')")  # main: 1, 2, then the branch's 3..5
    main = rows(session, "SELECT * FROM db.t ORDER BY id")
    assert main == [(2, "n2"), (8, "b8"), (9, "b9")]
    assert iceberg(directory) == main  # at once, not at the next commit
    meta = StaticTable.from_metadata(latest_metadata(directory)).metadata
    assert os.path.basename(latest_metadata(directory)) == "v5.metadata.json"
    assert [s.snapshot_id for s in meta.snapshots] == [5]  # written afresh from main's new latest
    assert set(os.listdir(directory)) == _named_by_current(directory)  # the replaced history's files are gone

    session.sql("INSERT INTO db.t VALUES (5, 'n5')")  # main goes on from there
    assert iceberg(directory) == rows(session, "SELECT * FROM db.t ORDER BY id") == \
        [(2, "n2"), (5, "n5"), (8, "b8"), (9, "b9")]
    assert [s.snapshot_id for s in StaticTable.from_metadata(latest_metadata(directory)).metadata.snapshots] == [5, 6]
    assert iceberg(directory, snapshot=5) == main


def test_fast_forward_of_an_empty_branch(session):
    session.sql("CREATE DATABASE db")
    session.sql(f"CREATE TABLE db.t (id BIGINT, name STRING) {ON}")
    session.sql("INSERT INTO db.t VALUES (1, 'a'), (2, 'b')")
    session.sql("CALL sys.create_branch(table => 'db.t', branch => 'e')")
    session.sql("INSERT INTO db.t$branch_e VALUES (7, 'x')")
    session.sql("CALL sys.fast_forward(table => 'db.t', branch => 'e')")  # main's snapshot 1 replaced
    directory = f"{session.warehouse}/db.db/t/metadata"
    assert iceberg(directory) == rows(session, "SELECT * FROM db.t") == [(7, "x")]
    assert set(os.listdir(directory)) == _named_by_current(directory)


def test_javas_callback_writes_a_branch_commit_into_mains_metadata(session):
    """Why paimon-sql publishes nothing for a branch: Java 2.0 publishes a branch snapshot beyond
    main's latest as main's next Iceberg snapshot, and then skips main's own commit of that id."""
    session.sql("CREATE DATABASE db")
    session.sql("CREATE TABLE db.t (id BIGINT, name STRING, dt STRING) PARTITIONED BY (dt) TBLPROPERTIES ("
                + ", ".join(f"'{k}' = '{v}'" for k, v in FOR_JAVA.items()) + ")")
    session.sql("INSERT INTO db.t VALUES (1, 'n1', 'x')")
    session.sql("CALL sys.create_tag(table => 'db.t', tag => 'one', snapshot => 1)")
    session.sql("CALL sys.create_branch(table => 'db.t', branch => 'b', tag => 'one')")
    directory = f"{session.warehouse}/db.db/t/metadata"
    with Driver(driver_command(SOURCE, version="2.0")) as driver:
        driver.on(session.warehouse, [{"op": "write", "table": "db.t$branch_b", "rows": [[9, "b9", "x"]]}])
        assert iceberg(directory) == [(1, "n1", "x"), (9, "b9", "x")]  # the branch's row, in main's Iceberg table
        assert rows(session, "SELECT * FROM db.t") == [(1, "n1", "x")]
        driver.on(session.warehouse, [{"op": "write", "table": "db.t", "rows": [[2, "j2", "x"]]}])
    assert rows(session, "SELECT * FROM db.t ORDER BY id") == [(1, "n1", "x"), (2, "j2", "x")]
    assert iceberg(directory) == [(1, "n1", "x"), (9, "b9", "x")]  # main's snapshot 2: its v2 existed already
