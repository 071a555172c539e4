"""Commit conflicts (DESIGN.md §7): rebase on a newer snapshot, fail cleanly on a lost file."""

import threading

import pyarrow as pa
import pytest
from support import SCHEMA

from paimon_sql.commit.table_commit import BASE_SNAPSHOT
from paimon_sql.exceptions import CommitConflictError


def batch(ids, dt="d"):
    return pa.table({"id": ids, "name": [str(i) for i in ids], "value": [1.0] * len(ids), "dt": [dt] * len(ids)},
                    schema=SCHEMA)


def prepared(table, data):
    w = table.new_write()
    w.write_arrow(data)
    return w.prepare_commit()


def test_newer_snapshot_means_rebase(catalog):
    t = catalog.create_table_from_arrow("db.a", SCHEMA)
    first, second = prepared(t, batch([1])), prepared(t, batch([2]))
    assert t.new_commit().commit(second) == 1
    assert t.new_commit().commit(first) == 2  # prepared against no snapshot, committed on top of 1
    assert sorted(r["id"] for r in t.new_scan().to_arrow().to_pylist()) == [1, 2]
    assert t.snapshot_manager.snapshot(2).total_record_count == 2


def test_a_write_planned_on_a_snapshot_fails_once_another_commit_came_after_it(catalog):
    """paimon-sql.commit.base-snapshot (a materialized table's incremental refresh): no rebase, no
    retry, nothing committed; on the snapshot it was planned on, it commits."""
    t = catalog.create_table_from_arrow("db.a", SCHEMA)
    t.write_arrow(batch([1]))
    planned = t.copy({BASE_SNAPSHOT: "1"})
    messages = prepared(planned, batch([2]))
    t.write_arrow(batch([3]))  # another writer commits snapshot 2 first
    with pytest.raises(CommitConflictError, match="snapshot 2 was committed after snapshot 1"):
        planned.new_commit().commit(messages)
    assert t.snapshot_manager.latest_id() == 2
    assert sorted(r["id"] for r in t.new_scan().to_arrow().to_pylist()) == [1, 3]
    again = t.copy({BASE_SNAPSHOT: "2"})
    assert again.new_commit().commit(prepared(again, batch([4]))) == 3


def test_deleting_a_file_already_gone_fails_cleanly(catalog):
    t = catalog.create_table_from_arrow("db.a", SCHEMA, partition_keys=["dt"])
    t.write_arrow(batch([1, 2]))
    commit_a = t.new_commit()
    messages = prepared(t, batch([3]))
    # another writer overwrites the partition first
    t.new_commit().overwrite(prepared(t, batch([9])))
    # a commit that deletes the file the other writer already removed: replayed as a compaction-like change
    stale = t.snapshot_manager.snapshot(1)
    old_files = t.new_scan().with_snapshot(stale.id).plan_entries()
    for m in messages:
        m.deleted_files = [e.file for e in old_files]
    manifests_before = sorted(t.io.list_names(t.paths.manifest_dir))
    with pytest.raises(CommitConflictError, match="already removed"):
        commit_a.commit(messages)
    assert t.snapshot_manager.latest_id() == 2
    assert sorted(t.io.list_names(t.paths.manifest_dir)) == manifests_before
    assert [r["id"] for r in t.new_scan().to_arrow().to_pylist()] == [9]


def test_concurrent_committers_lose_nothing(catalog):
    t = catalog.create_table_from_arrow("db.a", SCHEMA)
    batches = [prepared(t, batch([i * 10 + j for j in range(10)])) for i in range(8)]
    errors = []

    def run(msgs):
        try:
            catalog.get_table("db.a").new_commit().commit(msgs)
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=run, args=(m,)) for m in batches]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors
    assert t.snapshot_manager.latest_id() == 8
    ids = sorted(r["id"] for r in t.new_scan().to_arrow().to_pylist())
    assert ids == list(range(80))  # no commit lost, none duplicated


def test_snapshot_hints_may_be_stale(catalog):
    t = catalog.create_table_from_arrow("db.a", SCHEMA)
    t.write_arrow(batch([1]))
    t.write_arrow(batch([2]))
    t.io.write_bytes(f"{t.paths.snapshot_dir}/LATEST", b"1")
    assert t.snapshot_manager.latest_id() == 2
    t.io.delete(f"{t.paths.snapshot_dir}/LATEST")
    assert t.snapshot_manager.latest_id() == 2


def test_aborted_write_leaves_no_files(catalog):
    t = catalog.create_table_from_arrow("db.a", SCHEMA)
    msgs = prepared(t, batch([1, 2]))
    t.new_commit().abort(msgs)
    assert t.io.list_names(f"{t.path}/bucket-0") == []
    assert t.snapshot_manager.latest_id() is None
