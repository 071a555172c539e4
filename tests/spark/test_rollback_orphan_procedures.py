"""CALL sys.rollback / rollback_to_timestamp / rollback_to_watermark / remove_orphan_files:
paimon-spark's parameters and outputs, effects seen in $snapshots, $tags and the data, errors."""

import datetime as dt
import os
import time
import uuid

import pytest

from paimon_sql.exceptions import SnapshotNotFoundError
from paimon_sql.procedures import ProcedureError
from tests.spark.conftest import rows


def table_with_snapshots(session, n=4):
    session.sql("CREATE TABLE t (id INT, v STRING) TBLPROPERTIES ('primary-key'='id', 'bucket'='1')")
    for i in range(1, n + 1):
        session.sql(f"INSERT INTO t VALUES ({i}, 'v{i}')")


def snapshot_ids(session):
    return [s for (s,) in rows(session, "SELECT snapshot_id FROM t$snapshots ORDER BY snapshot_id")]


def data(session):
    return rows(session, "SELECT id FROM t ORDER BY id")


def test_rollback_to_snapshot_tag_and_version(session):
    table_with_snapshots(session, 5)
    latest = snapshot_ids(session)[-1]  # the fifth insert may be followed by a compaction
    df = session.sql("CALL sys.rollback(table => 'default.t', snapshot => 4)")
    assert df.columns == ["previous_snapshot_id", "current_snapshot_id"]
    assert df.schema["current_snapshot_id"].dataType.simpleString() == "bigint"
    assert [tuple(r) for r in df.collect()] == [(latest, 4)]
    assert snapshot_ids(session) == [1, 2, 3, 4] and data(session) == [(1,), (2,), (3,), (4,)]
    assert rows(session, "CALL sys.rollback('t', '3')") == [(4, 3)]  # version: digits are a snapshot id
    assert data(session) == [(1,), (2,), (3,)]


def test_rollback_to_tag_removes_later_tags(session):
    table_with_snapshots(session, 4)
    table = _table(session)
    table.tag_manager.create("two", table.snapshot_manager.snapshot(2))
    table.tag_manager.create("three", table.snapshot_manager.snapshot(3))
    assert rows(session, "CALL sys.rollback(table => 't', tag => 'two')") == [(4, 2)]
    assert rows(session, "SELECT tag_name FROM t$tags") == [("two",)]
    assert data(session) == [(1,), (2,)]
    assert rows(session, "CALL sys.rollback(table => 't', version => 'two')") == [(2, 2)]


def test_rollback_to_timestamp_and_watermark(session):
    table_with_snapshots(session, 3)
    times = {s: t for s, t in rows(session, "SELECT snapshot_id, unix_millis(commit_time) FROM t$snapshots")}
    time.sleep(0.01)
    session.sql("INSERT INTO t VALUES (9, 'late')")
    assert rows(session, f"CALL sys.rollback_to_timestamp(table => 't', timestamp => {times[3]})") == [(4, 3)]
    assert data(session) == [(1,), (2,), (3,)]
    with pytest.raises(SnapshotNotFoundError, match="no snapshot with watermark >= 5"):
        session.sql("CALL sys.rollback_to_watermark(table => 't', watermark => 5)")
    assert snapshot_ids(session) == [1, 2, 3]


@pytest.mark.parametrize("call, error, message", [
    ("rollback(table => 't')", ProcedureError, "exactly one of snapshot, tag or version"),
    ("rollback(table => 't', snapshot => 2, tag => 'x')", ProcedureError, "exactly one of"),
    ("rollback(table => 't', snapshot => 9)", SnapshotNotFoundError, "snapshot 9 does not exist"),
    ("rollback(table => 't', tag => 'nope')", SnapshotNotFoundError, "tag 'nope' does not exist"),
    ("rollback_to_timestamp(table => 't', timestamp => 1)", SnapshotNotFoundError, "at or before"),
    ("rollback_to_timestamp(table => 't')", ProcedureError, "missing argument 'timestamp'"),
])
def test_rollback_errors_are_one_line_and_change_nothing(session, call, error, message):
    table_with_snapshots(session, 2)
    with pytest.raises(error, match=message) as e:
        session.sql(f"CALL sys.{call}")
    assert "\n" not in str(e.value)
    assert snapshot_ids(session) == [1, 2]


def _table(session):
    from paimon_sql.sql import parse
    return session.find_table(parse.table_reference("default.t"))


def spark_jobs(session, statement):
    """The statement's rows, and whether it ran Spark stages of spark/tasks.py (listing and
    deleting in tasks; a stage is named after its call site)."""
    sc = session.spark.sparkContext
    group = f"orphans-{uuid.uuid4()}"
    sc.setJobGroup(group, "remove_orphan_files")
    try:
        result = rows(session, statement)
    finally:
        sc.setLocalProperty("spark.jobGroup.id", None)
    tracker = sc.statusTracker()
    stages = [tracker.getStageInfo(s) for j in tracker.getJobIdsForGroup(group) for s in tracker.getJobInfo(j).stageIds]
    return result, any("tasks.py" in st.name for st in stages if st is not None)


def test_remove_orphan_files(session):
    table_with_snapshots(session, 2)
    table = _table(session)
    stray = f"{table.path}/bucket-0/data-stray.parquet"
    with open(stray, "wb") as f:
        f.write(b"x" * 100)
    old = time.time() - 3 * 24 * 3600
    os.utime(stray, (old, old))
    fresh = f"{table.path}/manifest/manifest-fresh"
    with open(fresh, "wb") as f:
        f.write(b"y" * 7)
    df = session.sql("CALL sys.remove_orphan_files(table => 'default.t', dry_run => true)")
    assert df.columns == ["deletedFileCount", "deletedFileTotalLenInBytes"]
    assert [tuple(r) for r in df.collect()] == [(1, 100)] and os.path.exists(stray)
    assert spark_jobs(session, "CALL sys.remove_orphan_files(table => 't')") == ([(1, 100)], True)  # distributed
    assert not os.path.exists(stray) and os.path.exists(fresh)  # young: kept by the default cut-off
    soon = (dt.datetime.now() + dt.timedelta(seconds=1)).isoformat(sep=" ", timespec="milliseconds")
    with pytest.raises(Exception, match="older_than must not be later than now"):
        session.sql(f"CALL sys.remove_orphan_files(table => 't', older_than => '{soon}')")
    time.sleep(0.05)
    now = dt.datetime.now().isoformat(sep=" ", timespec="milliseconds")
    assert spark_jobs(session, f"CALL sys.remove_orphan_files('default.*', '{now}', false, 2, 'local')") \
        == ([(1, 7)], False)
    assert data(session) == [(1,), (2,)]


@pytest.mark.parametrize("call, message", [
    ("table => 't', mode => 'remote'", "mode must be local or distributed"),
    ("table => 't', older_than => 'yesterday'", "older_than must be a timestamp"),
    ("table => 'nodb.*'", "database 'nodb' does not exist"),
])
def test_remove_orphan_files_errors(session, call, message):
    table_with_snapshots(session, 1)
    with pytest.raises(ProcedureError, match=message):
        session.sql(f"CALL sys.remove_orphan_files({call})")
