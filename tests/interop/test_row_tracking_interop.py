"""Row tracking (``row-tracking.enabled``) against pypaimon 2.1 and Java Apache Paimon 2.0, both ways: the
row ids (``_ROW_ID``) and sequence numbers (``_SEQUENCE_NUMBER``) one side assigns and keeps through
compaction are the ones the other reads.

Row tracking is not in Java Paimon 1.0 (its CoreOptions has no ``row-tracking.enabled``): the Java cases run
against 2.0 only, through tests/interop/java/RowTrackingDriver.java; and against paimon-spark itself
(relay.py): its INSERT, UPDATE, DELETE and compaction and ours in turn, each reading the other's ids.
"""

from pathlib import Path

import pyarrow as pa
import pytest
from java_paimon import Driver, driver_command
from spark.conftest import rows, session, spark  # noqa: F401  (fixtures: one SparkSession per run)
from relay import ENGINES, Relay, relays  # noqa: F401  (fixture)
from support import SCHEMA

pytestmark = pytest.mark.interop

SOURCE = Path(__file__).resolve().parent / "java" / "RowTrackingDriver.java"
TRACKED = ["id", "name", "dt", "_ROW_ID", "_SEQUENCE_NUMBER"]


def tracked_rows(table, snapshot=None) -> list:
    """Our rows with their row ids and sequence numbers, as tuples in row id order (Python API)."""
    scan = table.new_scan() if snapshot is None else table.new_scan().with_snapshot(snapshot)
    reader = scan.reader()
    parts = [reader.read_positions(s, tracked=True).select(TRACKED) for s in scan.plan().splits]
    out = pa.concat_tables(parts).to_pylist() if parts else []
    return sorted((tuple(r[c] for c in TRACKED) for r in out), key=lambda r: r[3])


def _batch(ids, dts):
    return pa.table({"id": ids, "name": [f"n{i}" for i in ids], "value": [float(i) for i in ids], "dt": dts},
                    schema=SCHEMA)


def test_we_read_pypaimon_row_ids(pypaimon, catalog, warehouse):
    pypaimon(op="scenario", warehouse=warehouse, name="row_tracking")
    t = catalog.get_table("db.row_tracking")
    for sid in (1, 2):
        theirs = pypaimon(op="read", warehouse=warehouse, table="db.row_tracking", snapshot=sid, columns=TRACKED)
        assert sorted((tuple(r[c] for c in TRACKED) for r in theirs), key=lambda r: r[3]) == tracked_rows(t, sid)
    assert [r[3] for r in tracked_rows(t)] == list(range(6))
    assert t.snapshot_manager.latest().next_row_id == 6


def test_pypaimon_reads_our_row_ids_through_compaction(pypaimon, catalog, warehouse):
    t = catalog.create_table_from_arrow("db.rt", SCHEMA, partition_keys=["dt"],
                                        options={"row-tracking.enabled": "true", "compaction.min.file-num": "2"})
    t.write_arrow(_batch([1, 2, 3], ["x", "y", "x"]))
    t.write_arrow(_batch([4, 5], ["x", "x"]))
    before = tracked_rows(t)
    assert [r[3] for r in before] == list(range(5))
    t.compact(full=True)
    after = tracked_rows(t)
    assert after == before  # compaction keeps ids and sequence numbers (held in the compacted file)
    compacted = [e.file for e in t.new_scan().plan_entries() if e.file.file_source == 1]
    assert compacted and all(f.first_row_id is None and f.write_cols[-2:] == ("_ROW_ID", "_SEQUENCE_NUMBER")
                             for f in compacted)
    pypaimon(op="append", warehouse=warehouse, table="db.rt", rows=[{"id": 9, "name": "p", "value": 9.0, "dt": "y"}])
    t = catalog.get_table("db.rt")
    ours = tracked_rows(t)
    assert ours[-1][0] == 9 and ours[-1][3] == 5  # pypaimon numbers on from our nextRowId
    theirs = sorted((tuple(r[c] for c in TRACKED) for r in pypaimon(
        op="read", warehouse=warehouse, table="db.rt", columns=TRACKED)), key=lambda r: r[0])
    # pypaimon 2.1's own limit (its DataFileBatchReader._assign_row_tracking): a file without a first row id
    # reads _ROW_ID NULL, where Java 2.0 reads the _ROW_ID the compacted file holds (test_we_read_java_row_ids
    # shows Java compacts so, and test_java_reads_our_row_ids that Java reads ours). Its other rows match ours.
    in_compacted = sum(f.row_count for f in compacted)
    by_id = sorted(ours, key=lambda r: r[0])
    assert [r[3] is None for r in theirs].count(True) == in_compacted
    assert [r if r[3] is not None else r[:3] + r[4:] for r in theirs] == \
        [o if t[3] is not None else o[:3] + o[4:] for o, t in zip(by_id, theirs)]


@pytest.fixture(scope="module")
def java():
    """``java(warehouse, commands)``: RowTrackingDriver's results on Java Paimon 2.0, one JVM per module."""
    with Driver(driver_command(SOURCE, version="2.0")) as driver:
        yield driver.on


def ours_sql(session, table: str, snapshot=None) -> list:
    travel = f" VERSION AS OF {snapshot}" if snapshot else ""
    return [list(r) for r in rows(session, f"SELECT id, name, dt, _ROW_ID, _SEQUENCE_NUMBER FROM {table}{travel} "
                                           "ORDER BY _ROW_ID")]


def test_we_read_java_row_ids(java, session):
    t = "db.jrt"
    results = java(session.warehouse, [
        {"op": "create", "table": t, "options": {"compaction.min.file-num": "2"}},
        {"op": "write", "table": t, "rows": [[1, "a", "x"], [2, "b", "x"]]},
        {"op": "write", "table": t, "rows": [[3, "c", "y"], [4, "d", "x"], [5, "e", "y"]]},
        {"op": "compact", "table": t},
        {"op": "write", "table": t, "rows": [[6, "f", "x"]]},
        {"op": "read", "table": t, "snapshot": 2}, {"op": "read", "table": t}, {"op": "files", "table": t},
        {"op": "next_row_id", "table": t}])
    tasks, at2, latest, files, next_row_id = results[3], results[5], results[6], results[7], results[8]
    assert tasks >= 1 and next_row_id == 6
    assert [r[3] for r in latest] == list(range(6))
    assert any(f[0] is None and f[5][-2:] == ["_ROW_ID", "_SEQUENCE_NUMBER"] for f in files)  # Java's compacted file
    assert ours_sql(session, t, 2) == at2
    assert ours_sql(session, t) == latest
    assert rows(session, f"SELECT id FROM {t} WHERE _ROW_ID = 4") == [(5,)]


def test_java_reads_our_row_ids(java, session):
    t = "db.ort"
    session.sql("CREATE DATABASE db")
    session.sql(f"CREATE TABLE {t} (id BIGINT, name STRING, dt STRING) PARTITIONED BY (dt) "
                "TBLPROPERTIES ('row-tracking.enabled' = 'true', 'compaction.min.file-num' = '2')")
    session.sql(f"INSERT INTO {t} VALUES (1, 'a', 'x'), (2, 'b', 'y')")
    session.sql(f"INSERT INTO {t} VALUES (3, 'c', 'x')")
    session.sql(f"CALL sys.compact(table => '{t}')")
    session.sql(f"INSERT INTO {t} VALUES (4, 'd', 'y')")
    latest = ours_sql(session, t)
    assert [r[3] for r in latest] == list(range(4))
    at2, now, next_row_id = java(session.warehouse, [
        {"op": "read", "table": t, "snapshot": 2}, {"op": "read", "table": t}, {"op": "next_row_id", "table": t}])
    assert now == latest and at2 == ours_sql(session, t, 2) and next_row_id == 4
    java(session.warehouse, [{"op": "write", "table": t, "rows": [[5, "e", "x"]]}])
    snapshot = rows(session, f"SELECT max(snapshot_id) FROM db.`ort$snapshots`")[0][0]
    assert ours_sql(session, t)[-1] == [5, "e", "x", 4, snapshot]  # Java numbers on from our nextRowId
    # our UPDATE and copy-on-write DELETE keep the rows' ids (held in the files written): Java reads them
    ids = {r[0]: r[3] for r in ours_sql(session, t)}
    session.sql(f"UPDATE {t} SET name = upper(name) WHERE id IN (2, 5)")
    session.sql(f"DELETE FROM {t} WHERE id = 3")
    ours = ours_sql(session, t)
    assert sorted((r[0], r[1], r[3]) for r in ours) == [(1, "a", ids[1]), (2, "B", ids[2]), (4, "d", ids[4]),
                                                        (5, "E", ids[5])]
    assert java(session.warehouse, [{"op": "read", "table": t}])[0] == ours


RELAYS = {"row_tracking": Relay(steps=[
    """CREATE TABLE rt (id BIGINT, name STRING, dt STRING) PARTITIONED BY (dt)
         TBLPROPERTIES ('row-tracking.enabled' = 'true');
       INSERT INTO rt VALUES (1, 'a', 'x'), (2, 'b', 'y');
       INSERT INTO rt VALUES (3, 'c', 'x');
       UPDATE rt SET name = upper(name) WHERE id IN (1, 3);""",
    """INSERT INTO rt VALUES (4, 'd', 'y');
       DELETE FROM rt WHERE id = 2;
       UPDATE rt SET name = 'dd' WHERE id = 4;
       CALL sys.compact(table => 'rt');""",
    """INSERT INTO rt VALUES (5, 'e', 'x');
       UPDATE rt SET name = 'A!' WHERE id = 1;"""],
    reads="""SELECT id, name, dt, _ROW_ID, _SEQUENCE_NUMBER FROM rt;
             SELECT id, _ROW_ID FROM rt WHERE _ROW_ID >= 2;""")}


@pytest.mark.parametrize("first", ENGINES)
def test_row_ids_between_paimon_spark_and_us(relays, first):
    relays.check("row_tracking", first)
