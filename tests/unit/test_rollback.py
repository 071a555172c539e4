"""Rollback to a snapshot, tag, timestamp or watermark: the table reads what the target held,
later snapshots, their tags and the files only they referenced are gone, shared files stay."""

import os
import time
from dataclasses import replace

import pyarrow as pa
import pytest

from paimon_sql.exceptions import SnapshotNotFoundError
from paimon_sql.maintenance.remove_orphan_files import remove_orphan_files
from paimon_sql.maintenance.rollback import (rollback_to_snapshot, rollback_to_tag, rollback_to_timestamp,
                                             rollback_to_watermark)
from paimon_sql.store.references import snapshot_files


def _files(root):
    return {os.path.relpath(os.path.join(d, f), root) for d, _, fs in os.walk(root) for f in fs}


def _rows(table, snapshot_id=None):
    return sorted(table.to_arrow(snapshot_id).to_pylist(), key=lambda r: (r["id"], r["p"]))


@pytest.fixture(params=["append", "pk"])
def table(request, catalog):
    """Five snapshots over two partitions; the primary-key table also compacts (snapshot 4)."""
    pk = ["id", "p"] if request.param == "pk" else []
    t = catalog.create_table_from_arrow("db.t", pa.schema([("id", pa.int64()), ("p", pa.string()), ("v", pa.int64())]),
                                        partition_keys=["p"], primary_keys=pk,
                                        options={"bucket": "1"} if pk else {"bucket": "1", "bucket-key": "id"})
    for i in range(3):
        t.write_arrow(pa.table({"id": [i, 10 + i], "p": ["a", "b"], "v": [i, i]}))
    if pk:
        t.compact(full=True)
    else:
        t.write_arrow(pa.table({"id": [7], "p": ["a"], "v": [7]}))
    t.write_arrow(pa.table({"id": [0, 20], "p": ["a", "c"], "v": [100, 100]}))
    assert t.snapshot_manager.latest_id() == 5
    return t


def test_rollback_to_snapshot_removes_later_snapshots_and_their_files(table):
    expected = _rows(table, 2)
    keep = snapshot_files(table, table.snapshot_manager.snapshot(2))
    later = set()
    for sid in (3, 4, 5):
        later |= snapshot_files(table, table.snapshot_manager.snapshot(sid))
    assert rollback_to_snapshot(table, 2) == (5, 2)
    assert _rows(table) == expected
    assert table.snapshot_manager.listed_ids() == [1, 2]
    assert table.snapshot_manager.latest_id() == 2
    assert open(f"{table.path}/snapshot/LATEST").read() == "2"
    assert all(os.path.exists(p) for p in keep)
    assert not any(os.path.exists(p) for p in later - keep)
    assert not os.path.exists(f"{table.path}/p=c")
    # the table goes on from there
    table.write_arrow(pa.table({"id": [5], "p": ["a"], "v": [5]}))
    assert table.snapshot_manager.latest_id() == 3 and len(_rows(table)) == len(expected) + 1


def test_tags_after_the_target_go_and_earlier_tags_keep_their_files(table):
    tm, sm = table.tag_manager, table.snapshot_manager
    tm.create("t1", sm.snapshot(1))
    tm.create("t4", sm.snapshot(4))
    tagged = snapshot_files(table, sm.snapshot(1))
    rollback_to_snapshot(table, 3)
    assert tm.names() == ["t1"]
    assert all(os.path.exists(p) for p in tagged)


def test_rollback_to_tag(table):
    table.tag_manager.create("mid", table.snapshot_manager.snapshot(3))
    expected = _rows(table, 3)
    assert rollback_to_tag(table, "mid") == (5, 3)
    assert _rows(table) == expected and table.tag_manager.names() == ["mid"]


def test_rollback_to_a_tag_whose_snapshot_expired_recreates_it(table):
    sm = table.snapshot_manager
    table.tag_manager.create("old", sm.snapshot(2))
    expected = _rows(table, 2)
    os.remove(sm.paths.snapshot_path(1))  # expired snapshots, their files shared with the tag
    os.remove(sm.paths.snapshot_path(2))
    assert rollback_to_tag(table, "old") == (5, 2)
    assert sm.listed_ids() == [2] and sm.earliest_id() == 2 and sm.latest_id() == 2
    assert open(f"{table.path}/snapshot/EARLIEST").read() == "2"
    assert _rows(table) == expected


def test_rollback_to_timestamp_and_watermark(table):
    sm = table.snapshot_manager
    # give snapshots distinct times and watermarks, as commits would
    for sid in range(1, 6):
        snap = replace(sm.snapshot(sid), time_millis=1000 * sid, watermark=100 * sid)
        with open(sm.paths.snapshot_path(sid), "w") as f:
            f.write(snap.to_json())
    expected4, expected2 = _rows(table, 4), _rows(table, 2)
    assert rollback_to_timestamp(table, 4500) == (5, 4)
    assert _rows(table) == expected4
    assert rollback_to_watermark(table, 150) == (4, 2)
    assert _rows(table) == expected2
    with pytest.raises(SnapshotNotFoundError, match="at or before"):
        rollback_to_timestamp(table, 10)
    with pytest.raises(SnapshotNotFoundError, match="watermark >= 900"):
        rollback_to_watermark(table, 900)


def test_rollback_to_latest_changes_nothing(table):
    before = _files(table.path)
    assert rollback_to_snapshot(table, 5) == (5, 5)
    assert _files(table.path) == before


def test_unknown_targets_are_one_line_errors_and_change_nothing(table):
    before = _files(table.path)
    with pytest.raises(SnapshotNotFoundError, match=r"snapshot 9 does not exist$"):
        rollback_to_snapshot(table, 9)
    with pytest.raises(SnapshotNotFoundError, match=r"tag 'nope' does not exist$"):
        rollback_to_tag(table, "nope")
    assert _files(table.path) == before


def test_interrupted_rollback_completes_when_run_again(table, monkeypatch):
    """The snapshot files go first (as Paimon's): killed at any deletion, the latest snapshot is a
    whole one; running the rollback again completes it, and the files the interrupted run had not
    deleted yet, which nothing names any more, are what orphan removal removes."""
    expected = _rows(table, 2)
    io = table.io
    real_delete, calls = io.delete, []

    def dying_delete(path):
        calls.append(path)
        if len(calls) == 4:
            raise OSError("killed")
        real_delete(path)

    monkeypatch.setattr(io, "delete", dying_delete)
    with pytest.raises(OSError):
        rollback_to_snapshot(table, 2)
    monkeypatch.setattr(io, "delete", real_delete)
    assert [os.path.basename(p) for p in calls[:3]] == ["snapshot-5", "snapshot-4", "snapshot-3"]
    assert _rows(table) == expected  # the latest snapshot is whole: here already the target
    rollback_to_snapshot(table, 2)
    assert _rows(table) == expected and table.snapshot_manager.listed_ids() == [1, 2]
    remove_orphan_files(table, older_than_millis=int(time.time() * 1000))
    referenced = set()
    for sid in (1, 2):
        referenced |= snapshot_files(table, table.snapshot_manager.snapshot(sid))
    data = {os.path.join(table.path, f) for f in _files(table.path) if "/bucket-" in f}
    assert data <= referenced and _rows(table) == expected  # no file of the removed snapshots was left


def test_a_branch_keeps_the_files_of_the_snapshot_it_was_made_from(table):
    sm = table.snapshot_manager
    table.tag_manager.create("t4", sm.snapshot(4))
    table.branch_manager.create("b", table, tag="t4")
    branch_rows = _rows(table.switch_to_branch("b"))
    assert rollback_to_snapshot(table, 1) == (5, 1)
    assert table.tag_manager.names() == []
    assert _rows(table.switch_to_branch("b")) == branch_rows
    assert _rows(table) == _rows(table, 1)
