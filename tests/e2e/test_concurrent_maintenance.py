"""Maintenance beside a live writer, in separate OS processes: one process commits in a loop
(with a compaction now and then), another expires snapshots and removes orphan files in a loop,
a third reads the latest snapshot in a loop. Afterwards every committed row is in the table,
no read failed and no file a kept snapshot names is missing.

The loops end on what they did, not after a time: the writer once it has committed ``COMMITS``
times (a minor and a full compaction among them) and the maintainer has expired snapshots and
removed a stray; the others once the writer is done and the reader has read ``READS`` times
(``CONCURRENT_SECONDS`` makes them all go on for at least that long).

Expiry keeps snapshots whose successor is younger than two seconds (``older_than``), as
``snapshot.time-retained`` would: a reader's snapshot must outlive its read (docs/snapshot-lifecycle.md).
Orphan removal runs with its default ``older_than`` (one day ago), which is what protects the
writer's staged, not yet committed files; the last test shows what a short one does to them
(in one process, deterministically: file times are set, not waited for). So that it has old files
to judge, the maintainer makes the latest snapshot's files and a stray look two days old before
each run: only the references keep the committed ones."""

import json
import os
import subprocess
import sys
import textwrap
import time

import pyarrow as pa
import pytest

from paimon_sql.maintenance.remove_orphan_files import remove_orphan_files
from paimon_sql.store.references import References, branch_tables
from paimon_sql.table.table import table_at

SCHEMA = pa.schema([pa.field("id", pa.int64(), False), ("v", pa.int64()), pa.field("dt", pa.string(), False)])

COMMITS, READS = 14, 10  # 14: compactions after the 7th (minor) and the 14th (full) commit

WORKER = textwrap.dedent('''
    import json, os, sys, time
    import pyarrow as pa
    from paimon_sql.store.references import snapshot_files
    from paimon_sql.maintenance.expire_snapshots import expire_snapshots
    from paimon_sql.maintenance.remove_orphan_files import remove_orphan_files
    from paimon_sql.table.table import table_at

    role, path, seconds, logs = sys.argv[1], sys.argv[2], float(sys.argv[3]), json.loads(sys.argv[4])
    extra = json.loads(sys.argv[5]) if len(sys.argv) > 5 else {}
    log = open(logs[role], "a")
    schema = pa.schema([pa.field("id", pa.int64(), False), ("v", pa.int64()), pa.field("dt", pa.string(), False)])
    start = time.time()
    guard = start + seconds + 300  # conditions that never hold end the run here, and the test says which

    def emit(**record):
        log.write(json.dumps(record) + "\\n")
        log.flush()

    def records(name):
        out = []
        if os.path.exists(logs[name]):
            for line in open(logs[name]):
                try:
                    out.append(json.loads(line))
                except ValueError:  # a line being written
                    pass
        return out

    def done(n):
        if time.time() > guard:
            return True
        if time.time() < start + seconds:
            return False
        if role == "writer":
            ran = records("maintainer")
            return n >= COMMITS and any(r.get("expired") for r in ran) and any(r.get("planted") for r in ran)
        return any("done" in r for r in records("writer")) and (role != "reader" or n >= READS)

    n = 0
    while not done(n):
        n += 1
        try:
            table = table_at(path)
            if role == "writer":
                ids = list(range(n * 10, n * 10 + 3))
                write = table.new_write()
                write.write_arrow(pa.table({"id": ids, "v": [n] * 3, "dt": ["ab"[n % 2]] * 3}, schema=schema))
                table.new_commit().commit(write.prepare_commit())
                emit(committed=ids)
                if n % 7 == 0:
                    table.compact(full=n % 14 == 0)
            elif role == "maintainer":
                latest = table.snapshot_manager.latest()
                planted = bool(extra.get("age_committed") and latest)
                if planted:  # committed files and a stray look two days old:
                    old = time.time() - 2 * 86400  # references alone must keep the committed ones
                    stray = f"{path}/dt=a/bucket-0/data-stray-{n}.parquet"
                    os.makedirs(os.path.dirname(stray), exist_ok=True)
                    open(stray, "wb").close()
                    for f in snapshot_files(table, latest) | {stray}:
                        os.utime(f, (old, old))
                now = int(time.time() * 1000)
                expired = expire_snapshots(table, retain_min=2, older_than=now - 2000)
                removed, _ = remove_orphan_files(table)
                emit(expired=expired, removed=removed, planted=planted)
            else:
                snap = table.snapshot_manager.latest_id()
                emit(read=table.to_arrow().num_rows, snapshot=snap)
        except Exception as e:  # recorded, and the loop goes on: the test judges
            emit(error=f"{role}: {type(e).__name__}: {e}")
    if role == "writer":
        emit(done=n)
''')


def start(role, path, seconds, logs, **extra):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    worker = f"COMMITS, READS = {COMMITS}, {READS}\n" + WORKER
    return subprocess.Popen([sys.executable, "-c", worker, role, path, str(seconds),
                             json.dumps({k: str(v) for k, v in logs.items()}), json.dumps(extra)],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def records(log):
    return [json.loads(line) for line in open(log)] if os.path.exists(log) else []


def run(path, tmp_path, seconds, writer=None, maintainer=None):
    logs = {role: tmp_path / f"{role}.log" for role in ("writer", "maintainer", "reader")}
    procs = [start("writer", path, seconds, logs, **(writer or {})),
             start("maintainer", path, seconds, logs, **(maintainer or {})),
             start("reader", path, seconds, logs)]
    for p in procs:
        out, _ = p.communicate(timeout=seconds + 420)
        assert p.returncode == 0, out[-3000:]
    return {role: records(log) for role, log in logs.items()}


def missing_files(table):
    """Files a listed snapshot or tag of any branch names that are not on disk."""
    out = []
    for bt in branch_tables(table):
        refs = References(bt)
        for sid in bt.snapshot_manager.listed_ids():
            out += [p for p in refs.whole(bt.snapshot_manager.snapshot(sid)) if not os.path.exists(p)]
    return out


@pytest.fixture
def table(catalog):
    return catalog.create_table_from_arrow("db.t", SCHEMA, partition_keys=["dt"], primary_keys=["id", "dt"],
                                           options={"bucket": "2", "changelog-producer": "input"})


def test_commits_beside_expiry_and_orphan_removal_lose_nothing(table, tmp_path):
    seconds = float(os.environ.get("CONCURRENT_SECONDS", "0"))
    logs = run(table.path, tmp_path, seconds, maintainer={"age_committed": True})
    errors = [r["error"] for role in logs.values() for r in role if "error" in r]
    assert not errors, errors[:5]
    assert len([r for r in logs["writer"] if "committed" in r]) >= COMMITS
    committed = {i for r in logs["writer"] for i in r.get("committed", ())}
    expired = sum(r.get("expired", 0) for r in logs["maintainer"])
    reads = [r for r in logs["reader"] if "read" in r]
    removed = sum(r.get("removed", 0) for r in logs["maintainer"])
    assert len(committed) >= 30 and expired > 0 and len(reads) >= 10, (len(committed), expired, len(reads))
    assert removed >= sum(r["planted"] for r in logs["maintainer"]) > 0, removed  # each run's stray at least
    t = table_at(table.path)
    assert set(t.to_arrow().column("id").to_pylist()) == committed
    assert not missing_files(t)
    assert t.snapshot_manager.earliest_id() > 1  # expiry really ran beside the commits
    assert not [n for d, _, names in os.walk(t.path) for n in names if "stray" in n]
    print(f"{len(committed) // 3} commits, {expired} snapshots expired, {len(reads)} reads, "
          f"{len(logs['maintainer'])} maintenance runs, {removed} old orphans removed")


def test_a_short_older_than_deletes_a_writers_staged_files(table):
    """Paimon documents the risk: orphan removal with ``older_than`` shorter than a write takes
    deletes the files the write has staged and not committed yet. Here a write stages its files,
    they are made to look two hours old (as a long write's would), and removal runs: with its
    default (one day ago) it keeps them, with ``older_than`` one hour ago it deletes them, and the
    commit then names files that are gone: the table cannot be read."""
    table.write_arrow(pa.table({"id": [1, 2], "v": [1, 1], "dt": ["a", "b"]}, schema=SCHEMA))
    committed = set(data_files(table.path))
    write = table.new_write()
    write.write_arrow(pa.table({"id": [3, 4], "v": [2, 2], "dt": ["a", "b"]}, schema=SCHEMA))
    messages = write.prepare_commit()
    staged = sorted(set(data_files(table.path)) - committed)
    old = time.time() - 2 * 3600
    for f in data_files(table.path):
        os.utime(f, (old, old))
    assert remove_orphan_files(table)[0] == 0
    removed, _ = remove_orphan_files(table, older_than_millis=int((time.time() - 3600) * 1000))
    assert removed == len(staged) > 0
    table.new_commit().commit(messages)
    t = table_at(table.path)
    assert sorted(missing_files(t)) == staged
    with pytest.raises(Exception, match="missing"):
        t.to_arrow()


def data_files(path):
    return [os.path.join(d, n) for d, _, names in os.walk(path) for n in names if n.startswith("data-")]
