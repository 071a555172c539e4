"""Decoupled changelog: with ``changelog.num-retained.*`` above the snapshots' retention, expired
snapshots leave ``changelog/changelog-N`` behind; incremental reads of their changes still work,
their files are kept until the changelog itself expires, and then they go."""

import json
import os
import time

import pyarrow as pa
from support import SCHEMA

from paimon_sql.maintenance.expire_snapshots import expire_snapshots
from paimon_sql.store.references import changelog_ids, referenced_files

FAR_FUTURE = int(time.time() * 1000) + 10 * 3600 * 1000
RETENTION = {"write-only": "true", "snapshot.num-retained.min": "2", "snapshot.num-retained.max": "2",
             "changelog.num-retained.min": "4", "changelog.num-retained.max": "4"}


def batch(ids, dt="d"):
    return pa.table({"id": ids, "name": [f"n{i}" for i in ids], "value": [1.0] * len(ids), "dt": [dt] * len(ids)},
                    schema=SCHEMA)


def on_disk(table):
    return {os.path.join(d, n) for d, _, names in os.walk(table.path) for n in names if not n.startswith(".")}


def changes(table, start, end, mode):
    scan = table.copy({"incremental-between": f"{start},{end}", "incremental-between-scan-mode": mode}).new_scan()
    return sorted(scan.to_arrow().column("id").to_pylist())


def test_expired_snapshots_leave_their_changelog_which_expires_on_its_own_bounds(catalog):
    t = catalog.create_table_from_arrow("db.t", SCHEMA, partition_keys=["dt"], primary_keys=["id", "dt"],
                                        options={**RETENTION, "bucket": "1", "changelog-producer": "input"})
    for i in range(1, 7):
        t.write_arrow(batch([i * 10, i * 10 + 1]))
    changelog_files = {p for p in on_disk(t) if os.path.basename(p).startswith("changelog-")
                       and "/bucket-" in p}
    assert len(changelog_files) == 6
    expire_snapshots(t, now_millis=FAR_FUTURE)
    assert t.snapshot_manager.listed_ids() == [5, 6]
    assert changelog_ids(t) == [3, 4]  # 1 and 2 expired: four changes kept (changelog.num-retained.min)
    doc = json.loads(t.io.read_text(f"{t.path}/changelog/changelog-3"))
    assert doc["baseManifestList"] is None and doc["changelogManifestList"] and doc["id"] == 3
    assert changes(t, 2, 6, "changelog") == [30, 31, 40, 41, 50, 51, 60, 61]
    assert len(changelog_files & on_disk(t)) == 4  # the expired changelogs' files are gone, the rest kept
    assert on_disk(t) == set(referenced_files(t))
    for i in range(7, 9):
        t.write_arrow(batch([i * 10]))
    expire_snapshots(t, now_millis=FAR_FUTURE)
    assert changelog_ids(t) == [5, 6] and t.snapshot_manager.listed_ids() == [7, 8]
    assert on_disk(t) == set(referenced_files(t))


def test_delta_changelog_keeps_data_files_a_compaction_replaced_until_it_expires(catalog):
    """Without a changelog producer an APPEND snapshot's changes are its delta: its data files
    stay while its changelog does, even after a compaction replaced them."""
    # an append table's compaction takes at least compaction.min.file-num (5) small files, as Paimon's
    t = catalog.create_table_from_arrow("db.t", SCHEMA, partition_keys=["dt"],
                                        options={**RETENTION, "compaction.min.file-num": "4"})
    for i in range(1, 5):
        t.write_arrow(batch([i]))
    t.compact(full=True)  # snapshot 5 replaces the four files
    t.write_arrow(batch([6]))
    expire_snapshots(t, now_millis=FAR_FUTURE)
    assert t.snapshot_manager.listed_ids() == [5, 6] and changelog_ids(t) == [3, 4]
    assert changes(t, 2, 4, "delta") == [3, 4]  # read from the kept changelogs' data files
    assert on_disk(t) == set(referenced_files(t))
    for i in range(7, 10):
        t.write_arrow(batch([i]))
    expire_snapshots(t, now_millis=FAR_FUTURE)
    assert changelog_ids(t) == [6, 7] and sorted(t.to_arrow().column("id").to_pylist()) == [1, 2, 3, 4, 6, 7, 8, 9]
    assert on_disk(t) == set(referenced_files(t))  # the replaced files went with their changelogs


def test_changelog_time_retained_outlives_snapshot_time_retained(catalog):
    t = catalog.create_table_from_arrow("db.t", SCHEMA, partition_keys=["dt"], primary_keys=["id", "dt"], options={
        "write-only": "true", "bucket": "1", "changelog-producer": "input", "snapshot.num-retained.min": "1",
        "changelog.time-retained": "2 h"})
    for i in range(1, 4):
        t.write_arrow(batch([i]))
    now = int(time.time() * 1000)
    expire_snapshots(t, now_millis=now + 90 * 60 * 1000)  # past the snapshots' hour, within the changelog's two
    assert t.snapshot_manager.listed_ids() == [3] and changelog_ids(t) == [1, 2]
    assert changes(t, 0, 3, "changelog") == [1, 2, 3]
    expire_snapshots(t, now_millis=now + 3 * 3600 * 1000)
    assert changelog_ids(t) == [2]  # Paimon keeps the newest changelog
    assert on_disk(t) == set(referenced_files(t))
