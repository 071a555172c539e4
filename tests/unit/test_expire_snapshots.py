"""Snapshot expiry (paimon_sql.maintenance.expire_snapshots): Paimon's retention rules, what protects a file, and
that no kept snapshot, tag or branch ever loses one, even when a run is interrupted."""

import os
import time

import pyarrow as pa
import pytest
from support import SCHEMA

from paimon_sql.data.predicate import equal
from paimon_sql.exceptions import PaimonError
from paimon_sql.io import FileIO
from paimon_sql.maintenance.expire_snapshots import expire_snapshots
from paimon_sql.store.references import referenced_files
from paimon_sql.table.statistics import write_statistics
from paimon_sql.table.table import FileStoreTable

FAR_FUTURE = int(time.time() * 1000) + 10 * 3600 * 1000  # every snapshot is older than the retention


def batch(ids, dt="d", value=1.0):
    return pa.table({"id": ids, "name": [f"n{i}" for i in ids], "value": [value] * len(ids), "dt": [dt] * len(ids)},
                    schema=SCHEMA)


def rows(arrow):
    return sorted(tuple(r.values()) for r in arrow.to_pylist())


class History:
    """A table and the rows each of its snapshots held when it was made."""

    def __init__(self, table):
        self.table = table
        self.rows = {}

    def record(self):
        sid = self.table.snapshot_manager.latest_id()
        self.rows[sid] = rows(self.table.new_scan().to_arrow())
        return sid

    def write(self, data, overwrite=False):
        self.table.write_arrow(data, overwrite=overwrite)
        return self.record()

    def check(self):
        """Every snapshot still listed reads what it read when made, and the directory holds
        exactly the files something kept references (the expired snapshots' own files are gone)."""
        t = self.table
        for sid in t.snapshot_manager.listed_ids():
            assert rows(t.new_scan().with_snapshot(sid).to_arrow()) == self.rows[sid], sid
        assert on_disk(t) == referenced(t)


def referenced(table):
    """referenced_files relative to the table root, as on_disk gives them."""
    return {os.path.relpath(p, table.path) for p in referenced_files(table)}


def on_disk(table):
    out = set()
    for directory, _, names in os.walk(table.path):
        out.update(os.path.relpath(os.path.join(directory, n), table.path) for n in names if not n.startswith("."))
    return out


def table_of(catalog, kind, **options):
    opts = {"write-only": "true", **{k: str(v) for k, v in options.items()}}
    if kind == "append":
        return catalog.create_table_from_arrow("db.t", SCHEMA, partition_keys=["dt"], options=opts)
    if kind == "pk-dv":
        opts.update({"deletion-vectors.enabled": "true", "bucket": "1"})
    elif kind == "pk-dynamic":
        opts.update({"bucket": "-1", "changelog-producer": "input"})
    else:
        opts.update({"bucket": "2", "changelog-producer": "input"})
    return catalog.create_table_from_arrow("db.t", SCHEMA, partition_keys=["dt"], primary_keys=["id", "dt"],
                                           options=opts)


def busy_history(table):
    """Writes, updates, compactions, an overwrite and deletes: files come and go."""
    h = History(table)
    for i in range(4):
        h.write(batch(list(range(i * 3, i * 3 + 5)), dt="a" if i % 2 else "b", value=float(i)))
    table.compact(full=True)
    h.record()
    h.write(batch([100, 101], dt="c"), overwrite=True)
    h.write(batch([1, 2, 3], dt="a", value=9.0))
    if not table.schema.is_primary_key_table:
        table.delete_where(equal("id", 2))
        h.record()
    table.compact(full=True)
    h.record()
    h.write(batch([7], dt="c"))
    return h


# -- retention rules ------------------------------------------------------------------------------

@pytest.mark.parametrize("kind", ["append", "pk", "pk-dv", "pk-dynamic"])
def test_expiry_keeps_every_kept_snapshot_whole_and_removes_the_rest(catalog, kind):
    h = busy_history(table_of(catalog, kind))
    t = h.table
    latest = t.snapshot_manager.latest_id()
    assert on_disk(t) == referenced(t)  # nothing to expire yet: every file is referenced
    before = on_disk(t)
    assert expire_snapshots(t, retain_min=2, now_millis=FAR_FUTURE) == latest - 2
    assert t.snapshot_manager.listed_ids() == [latest - 1, latest]
    h.check()
    assert on_disk(t) < before  # the expired snapshots' manifests and deleted data files are gone
    assert t.io.read_text(f"{t.paths.snapshot_dir}/EARLIEST") == str(latest - 1)
    assert expire_snapshots(t, retain_min=1, now_millis=FAR_FUTURE) == 1
    h.check()


def test_retain_min_is_the_default_floor(catalog):
    h = History(table_of(catalog, "append"))
    for i in range(13):
        h.write(batch([i]))
    assert expire_snapshots(h.table, now_millis=FAR_FUTURE) == 3  # snapshot.num-retained.min = 10
    assert h.table.snapshot_manager.earliest_id() == 4
    h.check()


def test_retain_max_expires_young_snapshots(catalog):
    h = History(table_of(catalog, "append"))
    for i in range(6):
        h.write(batch([i]))
    assert expire_snapshots(h.table) == 0  # all younger than snapshot.time-retained (1 h)
    assert expire_snapshots(h.table, retain_max=4, retain_min=1) == 2
    assert h.table.snapshot_manager.listed_ids() == [3, 4, 5, 6]
    h.check()


def test_time_retained_counts_from_the_next_snapshot(catalog):
    h = History(table_of(catalog, "append"))
    for i in range(3):
        h.write(batch([i]))
    time.sleep(0.05)
    cutoff = int(time.time() * 1000)
    time.sleep(0.05)
    for i in range(3, 6):
        h.write(batch([i]))
    # snapshot 3 stays: the snapshot after it is younger than the cutoff
    assert expire_snapshots(h.table, retain_min=1, older_than=cutoff) == 2
    assert h.table.snapshot_manager.listed_ids() == [3, 4, 5, 6]
    h.check()


def test_max_deletes_bounds_one_run(catalog):
    h = History(table_of(catalog, "append", **{"snapshot.expire.limit": 2}))
    for i in range(8):
        h.write(batch([i]))
    assert expire_snapshots(h.table, retain_min=1, max_deletes=3, now_millis=FAR_FUTURE) == 3
    assert expire_snapshots(h.table, retain_min=1, now_millis=FAR_FUTURE) == 2  # snapshot.expire.limit
    assert h.table.snapshot_manager.earliest_id() == 6
    h.check()


def test_bad_bounds_fail_in_one_line(catalog):
    t = table_of(catalog, "append")
    t.write_arrow(batch([1]))
    with pytest.raises(PaimonError, match=r"retain_max \(1\) must not be less than retain_min \(2\)"):
        expire_snapshots(t, retain_max=1, retain_min=2)
    with pytest.raises(PaimonError, match="max_deletes must not be negative"):
        expire_snapshots(t, max_deletes=-1)
    with pytest.raises(PaimonError, match="retain_min must not be negative"):
        expire_snapshots(t, retain_min=-1)
    t.write_arrow(batch([2]))
    assert expire_snapshots(t, max_deletes=0, now_millis=FAR_FUTURE) == 0  # as Paimon: 0 is a bound too
    # as Paimon: retain_min 0 reaches past the latest snapshot, where its expiry finds no end and stops
    assert expire_snapshots(t, retain_min=0, now_millis=FAR_FUTURE) == 0
    assert expire_snapshots(t, retain_min=0, now_millis=0) == 0  # the time bound stops it first: as usual
    assert t.snapshot_manager.earliest_id() == 1


# -- what protects files ---------------------------------------------------------------------------

def test_tags_keep_their_files(catalog):
    h = History(table_of(catalog, "pk"))
    t = h.table
    h.write(batch([1, 2, 3]))
    h.write(batch([4]))
    t.tag_manager.create("v2", t.snapshot_manager.latest())
    tagged = rows(t.new_scan().to_arrow())
    h.write(batch([5, 6], dt="e"), overwrite=True)  # every file of the tag is deleted from the table
    t.compact(full=True)
    h.record()
    h.write(batch([7], dt="e"))
    assert expire_snapshots(t, retain_min=1, now_millis=FAR_FUTURE) == 4
    assert rows(t.new_scan().with_tag("v2").to_arrow()) == tagged
    h.check()
    t.tag_manager.delete("v2")
    assert on_disk(t) > referenced(t)  # the tag's files are orphans now, for orphan cleanup


def test_branches_keep_the_files_they_read(catalog):
    h = History(table_of(catalog, "append"))
    t = h.table
    h.write(batch([1, 2]))
    t.tag_manager.create("base", t.snapshot_manager.latest())
    t.branch_manager.create("b", t, tag="base")
    t.tag_manager.delete("base")  # the branch keeps its own copy of the tag and snapshot
    branch = t.switch_to_branch("b")
    branch.write_arrow(batch([3], dt="x"))
    on_branch = rows(branch.new_scan().to_arrow())
    h.write(batch([9]), overwrite=True)
    h.write(batch([10]))
    assert expire_snapshots(t, retain_min=1, now_millis=FAR_FUTURE) == 2
    assert rows(t.switch_to_branch("b").new_scan().to_arrow()) == on_branch
    h.check()
    # and the branch's expiry keeps what the main branch reads
    branch.write_arrow(batch([4], dt="x"), overwrite=True)
    assert expire_snapshots(branch, retain_min=1, now_millis=FAR_FUTURE) == 2
    h.check()


@pytest.mark.parametrize("kind", ["append", "pk"])
def test_a_branch_from_a_deleted_tag_keeps_its_files_through_main_expiry_and_orphan_cleanup(catalog, kind):
    """Regression: tag, branch from the tag, delete the tag, write main (overwrite, compaction),
    expire main. The branch's only record of its base is its own copy of the tag and snapshot;
    neither expiry nor orphan cleanup on main may delete a file that base reads."""
    from paimon_sql.maintenance.remove_orphan_files import remove_orphan_files
    t = table_of(catalog, kind)
    t.write_arrow(batch([1, 2]))
    t.write_arrow(batch([3], dt="x"))
    t.tag_manager.create("base", t.snapshot_manager.latest())
    t.branch_manager.create("b", t, tag="base")
    t.tag_manager.delete("base")
    on_branch = rows(t.switch_to_branch("b").new_scan().to_arrow())
    assert on_branch == rows(batch([1, 2])) + rows(batch([3], dt="x"))
    t.write_arrow(batch([9]), overwrite=True)
    t.write_arrow(batch([10]))
    if kind == "pk":
        t.compact(full=True)
    before = on_disk(t)
    assert expire_snapshots(t, retain_min=1, retain_max=1, now_millis=FAR_FUTURE) >= 3
    assert not before <= on_disk(t)  # expiry deleted files main no longer reads
    time.sleep(0.01)
    remove_orphan_files(t, older_than_millis=int(time.time() * 1000))
    branch = t.switch_to_branch("b")
    assert rows(branch.new_scan().to_arrow()) == on_branch
    assert referenced(branch) <= on_disk(t)


def test_consumers_keep_the_snapshots_they_read_next(catalog):
    h = History(table_of(catalog, "append"))
    for i in range(6):
        h.write(batch([i]))
    h.table.consumer_manager.record("reader", 3)
    assert expire_snapshots(h.table, retain_min=1, now_millis=FAR_FUTURE) == 2
    assert h.table.snapshot_manager.earliest_id() == 3
    h.table.consumer_manager.delete("reader")
    assert expire_snapshots(h.table, retain_min=1, now_millis=FAR_FUTURE) == 3
    h.check()


def test_statistics_files_go_with_the_last_snapshot_naming_them(catalog):
    h = History(table_of(catalog, "append"))
    t = h.table
    h.write(batch([1]))
    write_statistics(t, 1, None, {})
    first = t.snapshot_manager.latest().statistics
    h.record()
    write_statistics(t, 1, None, {})
    h.record()
    h.write(batch([2]))
    assert f"statistics/{first}" in on_disk(t)
    assert expire_snapshots(t, retain_min=1, now_millis=FAR_FUTURE) == 3
    assert f"statistics/{first}" not in on_disk(t)
    assert f"statistics/{t.snapshot_manager.latest().statistics}" in on_disk(t)
    h.check()


# -- interrupted runs -----------------------------------------------------------------------------

class DyingIO(FileIO):
    """A FileIO whose process dies (raises) at its ``fail_at``-th delete."""

    def __init__(self, fail_at):
        super().__init__(FileIO.for_path("/").fs)
        self.fail_at = fail_at
        self.deletes = 0

    def delete(self, path):
        self.deletes += 1
        if self.deletes == self.fail_at:
            raise KeyboardInterrupt("killed")
        super().delete(path)


@pytest.mark.parametrize("kind", ["pk-dv", "pk"])
def test_an_interrupted_run_is_finished_by_the_next(catalog, kind):
    h = busy_history(table_of(catalog, kind))
    t = h.table
    latest = t.snapshot_manager.latest_id()
    doomed = len(on_disk(t) - {f"snapshot/snapshot-{i}" for i in range(1, latest - 1)})
    for fail_at in range(1, doomed + 10, 3):
        dying = FileStoreTable(DyingIO(fail_at), t.path, t.schema, t.name)
        try:
            expire_snapshots(dying, retain_min=2, now_millis=FAR_FUTURE)
            break  # nothing left to delete before the fatal delete
        except KeyboardInterrupt:
            pass
        for sid in (latest - 1, latest):  # the snapshots kept never miss a file
            assert rows(t.new_scan().with_snapshot(sid).to_arrow()) == h.rows[sid]
    expire_snapshots(t, retain_min=2, now_millis=FAR_FUTURE)
    assert t.snapshot_manager.listed_ids() == [latest - 1, latest]
    h.check()


# -- after each commit ----------------------------------------------------------------------------

def test_commits_expire_snapshots_as_paimon_writers_do(catalog):
    t = catalog.create_table_from_arrow("db.t", SCHEMA, options={
        "snapshot.num-retained.min": "2", "snapshot.num-retained.max": "3"})
    h = History(t)
    for i in range(6):
        h.write(batch([i]))
    assert t.snapshot_manager.listed_ids() == [4, 5, 6]
    assert t.io.read_text(f"{t.paths.snapshot_dir}/EARLIEST") == "4"
    h.check()


def test_commits_expire_by_time_retained(catalog):
    t = catalog.create_table_from_arrow("db.t", SCHEMA, options={
        "snapshot.num-retained.min": "1", "snapshot.time-retained": "1 ms"})
    h = History(t)
    for i in range(4):
        time.sleep(0.005)
        h.write(batch([i]))
    # snapshot 2 went (snapshot 3 was older than 1 ms); 3 goes once 4 is, maybe not yet at 4's commit
    assert t.snapshot_manager.listed_ids() in ([3, 4], [4])
    h.check()


def test_write_only_turns_automatic_expiry_off(catalog):
    t = catalog.create_table_from_arrow("db.t", SCHEMA, options={
        "snapshot.num-retained.min": "1", "snapshot.num-retained.max": "1", "write-only": "true"})
    for i in range(4):
        t.write_arrow(batch([i]))
    assert t.snapshot_manager.listed_ids() == [1, 2, 3, 4]


# -- interop --------------------------------------------------------------------------------------

@pytest.mark.interop
@pytest.mark.parametrize("kind", ["append", "pk-dv"])
def test_pypaimon_reads_the_table_after_expiry(pypaimon, catalog, warehouse, kind):
    h = busy_history(table_of(catalog, kind))
    t = h.table
    t.tag_manager.create("first", t.snapshot_manager.snapshot(2))
    assert expire_snapshots(t, retain_min=2, now_millis=FAR_FUTURE) > 0
    kept = t.snapshot_manager.listed_ids()
    for sid in kept + [None]:  # None: the latest, found from the hints we left
        theirs = pypaimon(op="read", warehouse=warehouse, table="db.t", snapshot=sid)
        assert sorted(tuple(r[c] for c in SCHEMA.names) for r in theirs) == h.rows[sid or kept[-1]]
    tagged = pypaimon(op="read", warehouse=warehouse, table="db.t", tag="first")
    assert sorted(tuple(r[c] for c in SCHEMA.names) for r in tagged) == h.rows[2]


def test_a_failing_expiry_never_fails_the_commit_it_follows(catalog, monkeypatch, caplog):
    """The rows are committed: an expiry error after it is logged, not raised (a retry would
    write the rows twice), and the next commit expires as usual."""
    import pyarrow as pa

    from paimon_sql.exceptions import CorruptMetadataError
    from paimon_sql.maintenance import expire_snapshots as expire
    t = catalog.create_table_from_arrow("db.e", pa.schema([("id", pa.int64())]),
                                        options={"snapshot.num-retained.min": "1", "snapshot.num-retained.max": "1"})

    def broken(table, *args, **kwargs):
        raise CorruptMetadataError("manifest m-1 is missing")
    monkeypatch.setattr(expire, "expire_snapshots", broken)
    assert t.write_arrow(pa.table({"id": [1]})) == 1
    assert t.write_arrow(pa.table({"id": [2]})) == 2
    assert "snapshot expiry after the commit failed" in caplog.text
    monkeypatch.undo()
    t.write_arrow(pa.table({"id": [3]}))
    assert t.snapshot_manager.earliest_id() == 3 and sorted(t.to_arrow().column("id").to_pylist()) == [1, 2, 3]
