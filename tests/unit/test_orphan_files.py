"""remove_orphan_files: stray files older than the cut-off go from every directory kind;
referenced and young files never do, not even while snapshots expire concurrently."""

import os
import threading
import time

import pyarrow as pa
import pytest

from paimon_sql.data.predicate import equal
from paimon_sql.exceptions import PaimonError
from paimon_sql.maintenance.remove_orphan_files import remove_orphan_files
from paimon_sql.store.references import referenced_files
from paimon_sql.table.statistics import write_statistics

DAY = 24 * 3600


def _age(root, seconds=2 * DAY):
    """Make every file under ``root`` look ``seconds`` old."""
    then = time.time() - seconds
    for d, _, names in os.walk(root):
        for n in names:
            os.utime(os.path.join(d, n), (then, then))


def _tree(root):
    return {os.path.relpath(os.path.join(d, f), root) for d, _, fs in os.walk(root) for f in fs}


def _rows(table, snapshot_id=None):
    return sorted(tuple(r.values()) for r in table.to_arrow(snapshot_id).to_pylist())


@pytest.fixture
def table(catalog):
    """A partitioned append table with deletion vectors (index files), statistics, a tag and a
    branch: every kind of referenced file."""
    t = catalog.create_table_from_arrow("db.t", pa.schema([("id", pa.int64()), ("p", pa.string())]),
                                        partition_keys=["p"],
                                        options={"bucket": "1", "bucket-key": "id", "deletion-vectors.enabled": "true"})
    t.write_arrow(pa.table({"id": [1, 2, 3], "p": ["a", "a", "b"]}))
    t.tag_manager.create("t1", t.snapshot_manager.latest())
    t.branch_manager.create("b1", t, tag="t1")
    t.write_arrow(pa.table({"id": [4], "p": ["b"]}))
    t.delete_where(equal("id", 2))
    write_statistics(t, 3, None, {})
    return t


def _strays(table):
    root = table.path
    names = ["manifest/manifest-stray-0", "index/index-stray-0", "statistics/stat-stray-0",
             "p=a/bucket-0/data-stray-0.parquet", "p=zz/bucket-0/data-stray-1.parquet",
             "snapshot/.snapshot-9.0123.tmp", "changelog/junk", "branch/branch-b1/snapshot/junk"]
    for i, n in enumerate(names):
        os.makedirs(os.path.dirname(f"{root}/{n}"), exist_ok=True)
        with open(f"{root}/{n}", "wb") as f:
            f.write(b"x" * (10 + i))
    return names, sum(10 + i for i in range(len(names)))


def test_strays_of_every_kind_go_and_referenced_files_stay(table):
    strays, size = _strays(table)
    assert os.listdir(f"{table.path}/index") and os.listdir(f"{table.path}/statistics")
    before = _tree(table.path)
    expected, tagged = _rows(table), _rows(table, 1)
    _age(table.path)
    assert remove_orphan_files(table, dry_run=True) == (len(strays), size)
    assert _tree(table.path) == before  # a dry run deletes nothing
    assert remove_orphan_files(table) == (len(strays), size)
    assert _tree(table.path) == before - set(strays)
    assert not os.path.exists(f"{table.path}/p=zz")  # emptied partition directory removed
    assert os.path.isdir(f"{table.path}/p=a/bucket-0")
    assert _rows(table) == expected and _rows(table, 1) == tagged
    assert _rows(table.switch_to_branch("b1")) == tagged
    assert remove_orphan_files(table) == (0, 0)


def test_young_files_survive_the_default_cut_off(table):
    """A concurrent writer's staged, not yet committed file is young: kept, and its commit works."""
    write = table.new_write()
    write.write_arrow(pa.table({"id": [9], "p": ["c"]}))
    messages = write.prepare_commit()
    staged = {p for p in _tree(table.path) if "p=c" in p}
    assert staged
    strays, _ = _strays(table)
    os.utime(f"{table.path}/{strays[0]}", (time.time() - 2 * DAY,) * 2)
    assert remove_orphan_files(table) == (1, 10)  # only the stray manifest is old
    assert staged <= _tree(table.path)
    assert not os.path.exists(f"{table.path}/{strays[0]}") and os.path.exists(f"{table.path}/{strays[3]}")
    table.new_commit().commit(messages)
    assert (9, "c") in _rows(table)


def test_older_than_in_the_future_is_refused(table):
    with pytest.raises(PaimonError, match="older_than must not be later than now"):
        remove_orphan_files(table, older_than_millis=int(time.time() * 1000) + 3_600_000)


def test_orphan_removal_while_snapshots_expire(catalog):
    """Paimon #7710: a commit and the expiry of the snapshot before it land between orphan
    removal listing the snapshots and reading them. A thread commits and expires down to one
    snapshot, again and again, while orphan removal runs in a loop; afterwards every kept
    snapshot reads the rows it recorded and the table holds only referenced files."""
    from paimon_sql.maintenance.expire_snapshots import expire_snapshots
    t = catalog.create_table_from_arrow("db.e", pa.schema([("id", pa.int64()), ("v", pa.int64())]),
                                        primary_keys=["id"], options={"bucket": "1", "write-only": "true"})
    expected = {}
    for i in range(8):
        t.write_arrow(pa.table({"id": [i % 3, 100 + i], "v": [i, i]}))
        if i % 4 == 3:
            t.compact(full=True)
    expected[t.snapshot_manager.latest_id()] = _rows(t)
    _age(t.path)
    cut_off = int(time.time() * 1000) - 1000  # the thread's files are younger: protected
    errors = []

    def commit_and_expire():
        try:
            rows = expected[t.snapshot_manager.latest_id()]
            for i in range(25):
                sid = t.write_arrow(pa.table({"id": [1000 + i], "v": [i]}))
                rows = sorted(rows + [(1000 + i, i)])
                expected[sid] = rows
                expire_snapshots(t, retain_max=1, retain_min=1, older_than=int(time.time() * 1000) + 1000)
        except Exception as e:  # reported by the main thread
            errors.append(e)

    thread = threading.Thread(target=commit_and_expire)
    thread.start()
    runs = 0
    while thread.is_alive():
        try:
            remove_orphan_files(t, older_than_millis=cut_off)
            runs += 1
        except PaimonError as e:  # refusing is safe; deleting a live file is not
            assert "nothing was deleted" in str(e)
    thread.join()
    assert not errors and runs > 3
    kept = t.snapshot_manager.listed_ids()
    assert len(kept) == 1
    for sid in kept:
        assert _rows(t, sid) == expected[sid]
    remove_orphan_files(t, older_than_millis=int(time.time() * 1000))
    assert _rows(t) == expected[kept[-1]]
    assert {os.path.join(t.path, p) for p in _tree(t.path) if "bucket-" in p} <= referenced_files(t)


def test_snapshot_expired_between_listing_and_reading(catalog, monkeypatch):
    """The exact interleaving of #7710, made deterministic: orphan removal has listed snapshot N
    (the only one) and is about to read it when another writer commits N+1 and expires N. The
    old files N+1 still uses must survive."""
    from paimon_sql.maintenance.expire_snapshots import expire_snapshots
    schema = pa.schema([("id", pa.int64()), ("v", pa.int64())])
    t = catalog.create_table_from_arrow("db.r", schema, primary_keys=["id"],
                                        options={"bucket": "1", "write-only": "true"})
    t.write_arrow(pa.table({"id": [1, 2], "v": [1, 2]}))
    t.write_arrow(pa.table({"id": [3], "v": [3]}))
    other = catalog.get_table("db.r")
    expire_snapshots(other, retain_max=1, retain_min=1, older_than=int(time.time() * 1000) + 1000)
    _age(t.path)
    cut_off = int(time.time() * 1000) - 1000
    sm, real = t.snapshot_manager, t.snapshot_manager.snapshot
    only = sm.latest_id()

    def snapshot(sid):
        if sid == only and sm.latest_id() == only:
            other.write_arrow(pa.table({"id": [4], "v": [4]}))
            expire_snapshots(other, retain_max=1, retain_min=1, older_than=int(time.time() * 1000) + 1000)
        return real(sid)

    monkeypatch.setattr(sm, "snapshot", snapshot)
    remove_orphan_files(t, older_than_millis=cut_off)
    monkeypatch.undo()
    assert sm.listed_ids() == [only + 1]
    assert _rows(t) == [(1, 1), (2, 2), (3, 3), (4, 4)]


def test_a_directory_removed_under_a_writer_is_made_again(catalog, monkeypatch):
    """Orphan removal deletes empty bucket and partition directories. One it deletes just after a
    writer made it, before the writer's file is open, is made again: the write succeeds."""
    t = catalog.create_table_from_arrow("db.w", pa.schema([("id", pa.int64()), ("p", pa.string())]),
                                        partition_keys=["p"], options={"bucket": "1", "bucket-key": "id"})
    real, removed = t.io.fs, []

    class RemovedOnce:  # the cleanup's two rmdirs land between the writer's mkdir and its open
        def __getattr__(self, name):
            return getattr(real, name)

        def create_dir(self, path, recursive=True):
            real.create_dir(path, recursive=recursive)
            if "/bucket-" in path and not removed:
                os.rmdir(path)
                os.rmdir(os.path.dirname(path))
                removed.append(path)

    monkeypatch.setattr(t.io, "fs", RemovedOnce())
    t.write_arrow(pa.table({"id": [1], "p": ["x"]}))
    monkeypatch.undo()
    assert removed and _rows(t) == [(1, "x")]
