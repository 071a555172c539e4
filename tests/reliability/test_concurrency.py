"""Concurrent committers lose nothing (issue 19, "Concurrency"; docs/reliability.md, docs/concurrency.md).

Four writer processes (committer.py) start together and each commit into one append table
(``db.events``, new ids only) and one primary-key table (``db.kv``, two keys of the commit's own and
two of six keys every writer writes), through the core API and — one process on the local
filesystem — through SQL INSERTs; one writer runs with ``commit.max-retries`` = 0, so it gives up
at its first lost race. A fifth process compacts both tables and expires their snapshots
(``CALL sys.compact`` / ``sys.expire_snapshots``'s core) the whole time. Then, from the tables
and the processes' logs:

- snapshot ids are consecutive from EARLIEST to LATEST (the expired ones all below EARLIEST), each
  acknowledged commit has its own data snapshot, and every snapshot still there was made by an
  acknowledged commit;
- the append table holds every acknowledged id exactly once and no id of a failed commit; the
  primary-key table holds, for each key, the value of the last acknowledged commit writing it in
  snapshot order, and nothing of a failed commit;
- every failed commit raised CommitConflictError with a one-line message naming the table;
- no file is left that no snapshot names (remove_orphan_files finds nothing).

Deterministic tests provoke the race that keeps losing (a rival commits a snapshot just before each
publish attempt) and check the backoff (``commit.min-retry-wait`` doubled up to
``commit.max-retry-wait``, plus up to 20% jitter), ``commit.max-retries`` and ``commit.timeout``.
Sizes: 4 × 6 commits per table locally (the SQL writer 2; 4 × 2 on S3) in CI, 4 × 50 with
``scripts/reliability.sh`` (then one writer on S3 uses SQL too).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import uuid
from collections import Counter
from pathlib import Path

import pyarrow as pa
import pytest
from conftest import s3_bucket
from spark.conftest import session, spark  # noqa: F401  (fixtures)

from paimon_sql.catalog import load_catalog
from paimon_sql.exceptions import CommitConflictError
from paimon_sql.maintenance.expire_snapshots import expire_snapshots
from paimon_sql.maintenance.remove_orphan_files import remove_orphan_files
from reliability.committer import EVENTS, KV, MAINTAINER, create_tables
from reliability.conftest import FULL, record, size

COMMITTER = Path(__file__).with_name("committer.py")
ROOT = COMMITTER.parent.parent.parent
GIVES_UP_AT_ONCE = {"commit.max-retries": "0"}


# -- running the committers ---------------------------------------------------------------------

def run_committers(warehouse: str, options: dict, work: Path, roles: list, retain: int) -> list:
    """Start one process per role (a committer.py config: ``role``, ``commits``, ``write_options``,
    ``pause``), release them together, wait; every process's log records."""
    barrier = work / "barrier"
    barrier.mkdir(parents=True)
    writers = [p for p, role in enumerate(roles) if role["role"] != "maintain"]
    procs = []
    for p, role in enumerate(roles):
        config = {"warehouse": warehouse, "options": options, "proc": p, "seed": 19, "barrier": str(barrier),
                  "writers": writers, "retain": retain, "log": str(work / f"log-{p}.jsonl"), **role}
        with open(work / f"out-{p}.txt", "w") as out:  # a file, not a pipe: Spark's chatter never blocks it
            procs.append(subprocess.Popen([sys.executable, str(COMMITTER), json.dumps(config)], cwd=str(ROOT),
                                          stdout=out, stderr=subprocess.STDOUT))

    def crashed():
        return [(p, (work / f"out-{p}.txt").read_text()[-3000:]) for p, proc in enumerate(procs)
                if proc.poll() not in (None, 0)]
    try:
        deadline = time.time() + 180
        while len(list(barrier.glob("ready-*"))) < len(roles):
            assert not crashed(), f"committer process(es) crashed: {crashed()}"
            assert time.time() < deadline, "committers not ready within 180 s"
            time.sleep(0.01)
        (barrier / "go").touch()
        deadline = time.time() + 300 + 10 * max(r.get("commits", 0) for r in roles)
        for proc in procs:
            proc.wait(timeout=max(1, deadline - time.time()))
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    assert not crashed(), f"committer process(es) crashed: {crashed()}"
    return [json.loads(line) for p in range(len(roles)) for line in (work / f"log-{p}.jsonl").read_text().splitlines()]


# -- the oracle ---------------------------------------------------------------------------------

def check_table(table, records: list) -> dict:
    """The checks of the module docstring for one table; returns its figures."""
    name = table.name
    writes = [r for r in records if r["table"] == name and "kind" not in r]
    # the maintainer's compactions that committed or failed (not those that found nothing to do)
    maintenance = [r for r in records if r["table"] == name and r.get("kind") == "compact"
                   and (r["status"] == "failed" or r["snapshot"] is not None)]
    ok = [r for r in writes if r["status"] == "ok"]
    failed = [r for r in writes + maintenance if r["status"] == "failed"]

    for r in failed:
        assert r["error"] == "CommitConflictError", r
        assert "\n" not in r["message"] and f"table {name}" in r["message"], r["message"]
    for r in records:
        if r.get("kind") == "expire":
            assert r["status"] == "ok", r

    sm = table.snapshot_manager
    ids = sm.listed_ids()
    earliest, latest = sm.earliest_id(), sm.latest_id()
    assert ids == list(range(earliest, latest + 1)), f"{name}: snapshot ids not consecutive: {ids}"
    data_ids = [r["snapshot"] for r in ok]
    assert None not in data_ids, f"{name}: an acknowledged commit's data snapshot was not found: {ok}"
    assert len(set(data_ids)) == len(data_ids) and max(data_ids) <= latest, f"{name}: data snapshots {data_ids}"
    by_id = {r["snapshot"]: r for r in ok}
    acknowledged = {r["tag"] for r in ok} | {r["tag"] for r in maintenance if r["status"] == "ok"}
    for sid in ids:
        snap = sm.snapshot(sid)
        if sid in by_id:
            assert snap.commit_kind == "APPEND", (name, sid, snap.commit_kind)
            if by_id[sid]["tag"].startswith("core"):
                assert snap.commit_user == by_id[sid]["tag"], (name, sid, snap.commit_user)
        elif snap.commit_user.startswith(("core", MAINTAINER)):
            assert snap.commit_kind == "COMPACT" and snap.commit_user in acknowledged, (name, sid, snap.commit_user)
        else:  # an SQL commit's (its user is a UUID): only a COMPACT snapshot of the write, after its data
            assert snap.commit_kind == "COMPACT", (name, sid, snap.commit_user, snap.commit_kind)

    data = table.new_scan().to_arrow()
    if name == EVENTS:
        expected = Counter(i for r in ok for i in r["rows"])
        found = Counter(data.column("id").to_pylist())
        assert found == expected, (f"{name}: missing {sorted(expected - found)}, extra or duplicated "
                                   f"{sorted(found - expected)}")
        lost = len(expected - found)
    else:
        expected = {}
        for r in sorted(ok, key=lambda r: r["snapshot"]):
            expected.update((k, r["tag"]) for k in r["rows"])
        keys = data.column("k").to_pylist()
        assert len(keys) == len(set(keys)), f"{name}: a key appears more than once"
        found = dict(zip(keys, data.column("v").to_pylist()))
        differ = {k: (found.get(k), expected.get(k)) for k in found.keys() | expected.keys()
                  if found.get(k) != expected.get(k)}
        assert not differ, f"{name}: key → (value read, value of the last acknowledged commit): {differ}"
        lost = len(set(expected) - set(found))
    assert not set(data.column("v").to_pylist()) & {r["tag"] for r in failed}, f"{name}: rows of a failed commit"
    assert remove_orphan_files(table, int(time.time() * 1000), dry_run=True) == (0, 0), f"{name}: files left over"

    attempts = [r["attempts"] for r in writes + maintenance if r.get("attempts")]
    attempted = len(writes) + len(maintenance)
    return {"commits_attempted": attempted, "succeeded": attempted - len(failed), "failed": len(failed),
            "retried": sum(a > 1 for a in attempts), "retries": sum(a - 1 for a in attempts),
            "max_attempts": max(attempts, default=0), "rows_lost": lost, "snapshots": latest, "expired": earliest - 1}


def concurrency_run(warehouse: str, options: dict, work: Path, roles: list, retain: int, storage: str) -> dict:
    """Run the committers on fresh tables, check both tables, record and return the figures."""
    catalog = load_catalog(warehouse, options)
    create_tables(catalog)
    started = time.time()
    records = run_committers(warehouse, options, work, roles, retain)
    figures = [check_table(catalog.get_table(name), records) for name in (EVENTS, KV)]
    total = {k: sum(f[k] for f in figures) for k in figures[0]}
    total["max_attempts"] = max(f["max_attempts"] for f in figures)
    writes = sum(2 * r["commits"] for r in roles if r["role"] != "maintain")
    assert sum(1 for r in records if "t0" in r) == writes  # every writer's every commit was tried and logged
    record("concurrency", storage=storage, writers=", ".join(f"{r['role']} x {r['commits']}" for r in roles
                                                             if r["role"] != "maintain"),
           seconds=round(time.time() - started, 1), **total)
    return total


def writer(role: str = "core", commits: int = 0, write_options=None) -> dict:
    """A writer process's config: ``commits`` per table; a pause after each commit so that the core
    writers' commits spread over the time the SQL writer's slower ones take."""
    return {"role": role, "commits": commits, "write_options": write_options, "pause": 0.3 if role == "core" else 0}


def test_concurrent_committers_on_the_local_filesystem(tmp_path):
    commits = size(6, 50)
    roles = [writer(commits=commits), writer(commits=commits), writer(commits=commits, write_options=GIVES_UP_AT_ONCE),
             writer("sql", size(2, 50)), {"role": "maintain", "pause": 0.5}]
    figures = concurrency_run(str(tmp_path / "warehouse"), {}, tmp_path, roles, retain=5, storage="local")
    assert figures["expired"] > 0 and figures["rows_lost"] == 0


@pytest.fixture(scope="module")
def s3(s3_server):
    return s3_bucket(s3_server, "reliability")


def test_concurrent_committers_on_s3(s3, tmp_path):
    commits = size(2, 50)  # the S3 server answers one request at a time: a commit takes ~10x longer than locally
    last = writer("sql", commits) if FULL else writer(commits=commits)
    roles = [writer(commits=commits), writer(commits=commits), writer(commits=commits, write_options=GIVES_UP_AT_ONCE),
             last, {"role": "maintain", "pause": 0.5}]
    figures = concurrency_run(f"s3://reliability/{uuid.uuid4().hex}", s3, tmp_path, roles, retain=4, storage="s3")
    assert figures["expired"] > 0 and figures["rows_lost"] == 0


# -- a commit that keeps losing -----------------------------------------------------------------

SCHEMA = pa.schema([("id", pa.int64())])


@pytest.fixture
def rival_race(tmp_path, monkeypatch):
    """``race(options)`` → (loser table, waits): the loser's every publish attempt finds that a rival
    (another handle on the same table, in this process) has just committed the snapshot id it
    built — the race lost between planning and publishing, deterministically. ``waits`` collects the
    backoff sleeps (ms) of the loser's commit."""
    catalog = load_catalog(str(tmp_path / "warehouse"))
    catalog.create_database("db")
    waits = []
    real_sleep = time.sleep

    def sleep(seconds):
        if sys._getframe(1).f_code.co_name == "_back_off":
            waits.append(seconds * 1000)
        real_sleep(seconds)
    monkeypatch.setattr(time, "sleep", sleep)

    def race(options):
        loser = catalog.create_table_from_arrow("db.t", SCHEMA, options=options)
        rival = catalog.get_table("db.t")
        publish = loser.snapshot_manager.try_commit

        def rival_first(snapshot, *base_and_statistics):
            rival.write_arrow(pa.table({"id": [snapshot.id]}, SCHEMA))
            return publish(snapshot, *base_and_statistics)
        monkeypatch.setattr(loser.snapshot_manager, "try_commit", rival_first)
        return loser, waits
    return race


def lose(table):
    """A commit of row -1 that loses every race: its error, attempts and duration (ms)."""
    write = table.new_write()
    write.write_arrow(pa.table({"id": [-1]}, SCHEMA))
    commit = table.new_commit("loser")
    started = time.monotonic()
    with pytest.raises(CommitConflictError) as failed:
        commit.commit_or_abort(write.prepare_commit())
    return str(failed.value), commit.attempts, (time.monotonic() - started) * 1000


def assert_nothing_visible(table, rival_commits: int):
    sm = table.snapshot_manager
    assert sm.listed_ids() == list(range(1, rival_commits + 1))
    assert "loser" not in {s.commit_user for s in sm.snapshots()}
    assert sorted(table.new_scan().to_arrow().column("id").to_pylist()) == list(range(1, rival_commits + 1))
    assert remove_orphan_files(table, int(time.time() * 1000), dry_run=True) == (0, 0)  # its files are gone too


def test_a_commit_that_keeps_losing_backs_off_then_gives_up_after_max_retries(rival_race):
    table, waits = rival_race({"commit.max-retries": "6", "commit.min-retry-wait": "10 ms",
                               "commit.max-retry-wait": "40 ms"})
    message, attempts, took = lose(table)
    assert message == ("table db.t: gave up committing after 6 retries (7 attempts, 'commit.max-retries' = 6): "
                       "other writers kept committing first; nothing was committed")
    assert attempts == 7 and len(waits) == 6
    bases = [10, 20, 40, 40, 40, 40]  # doubled from the minimum wait, up to the maximum
    jitter = [w - b for w, b in zip(waits, bases)]
    assert all(0 <= j < b / 5 + 1e-6 for j, b in zip(jitter, bases)), waits  # up to 20% on top
    assert any(j > 0 for j in jitter), waits  # random: all six zero has a chance of 1 in 32,768
    assert took >= sum(waits)
    assert_nothing_visible(table, 7)
    record("concurrency_max_retries", commits_attempted=1, succeeded=0, retried=1, failed=1, attempts=attempts,
           waits_ms=[round(w, 1) for w in waits], took_ms=round(took))


def test_max_retries_zero_gives_up_at_the_first_lost_race(rival_race):
    table, waits = rival_race({"commit.max-retries": "0"})
    message, attempts, _ = lose(table)
    assert "gave up committing after 0 retries (1 attempts, 'commit.max-retries' = 0)" in message
    assert attempts == 1 and waits == []
    assert_nothing_visible(table, 1)


def test_commit_timeout_bounds_the_retrying(rival_race):
    table, waits = rival_race({"commit.max-retries": "1000", "commit.timeout": "150 ms",
                               "commit.min-retry-wait": "10 ms", "commit.max-retry-wait": "20 ms"})
    message, attempts, took = lose(table)
    assert message.startswith(f"table db.t: gave up committing after {attempts} attempts in ")
    assert message.endswith(" ms ('commit.timeout' = 150 ms): other writers kept committing first; nothing was "
                            "committed")
    assert 150 <= took < 150 + 1000 and len(waits) == attempts - 1
    assert_nothing_visible(table, attempts)


def test_an_sql_insert_that_keeps_losing_fails_with_the_named_error(session, warehouse):
    """Through SQL (the run's Spark session): every attempt finds ``snapshot-2`` taken by a rival
    whose file never becomes readable (a dangling link); the INSERT fails after its one retry with
    the core's one-line error and leaves no row, snapshot or file."""
    session.sql("CREATE TABLE t (id BIGINT) TBLPROPERTIES ('commit.max-retries' = '1')")
    session.sql("INSERT INTO t VALUES (1)")
    table = load_catalog(warehouse).get_table("default.t")
    taken = Path(table.path, "snapshot", "snapshot-2")
    os.symlink(Path(table.path, "nowhere"), taken)
    with pytest.raises(CommitConflictError) as failed:
        session.sql("INSERT INTO t VALUES (2)")
    assert str(failed.value) == ("table default.t: gave up committing after 1 retries (2 attempts, 'commit.max-retries'"
                                 " = 1): other writers kept committing first; nothing was committed")
    taken.unlink()
    assert table.snapshot_manager.listed_ids() == [1]
    assert table.new_scan().to_arrow().column("id").to_pylist() == [1]
    assert remove_orphan_files(table, int(time.time() * 1000), dry_run=True) == (0, 0)


# -- expiry beside a commit ---------------------------------------------------------------------

KV_ROW = pa.schema([pa.field("k", pa.int64(), False), ("v", pa.string())])


def kv_rows(table, k: int, v: str):
    table.write_arrow(pa.table({"k": [k], "v": [v]}, KV_ROW))


def test_a_write_outlives_the_expiry_of_the_snapshots_committed_since_it_was_planned(tmp_path):
    """The commit rebases a primary-key write above the sequence numbers of the commits made since
    its base snapshot; when those snapshots expired meanwhile, every live file of the bucket counts
    as concurrent, and the last committer still wins."""
    catalog = load_catalog(str(tmp_path / "warehouse"))
    catalog.create_database("db")
    table = catalog.create_table_from_arrow("db.kv", KV_ROW, primary_keys=["k"], options={"bucket": "1"})
    kv_rows(table, 1, "first")
    write = table.new_write()
    write.write_arrow(pa.table({"k": [1], "v": ["late"]}, KV_ROW))
    messages = write.prepare_commit()  # planned on snapshot 1
    for v in ("rival-2", "rival-3", "rival-4"):
        kv_rows(table, 1, v)
    assert expire_snapshots(table, retain_max=1, retain_min=1) == 3
    commit = table.new_commit("late")
    assert commit.commit(messages) == 5 and commit.attempts == 1
    assert table.new_scan().to_arrow().to_pylist() == [{"k": 1, "v": "late"}]


@pytest.mark.parametrize("handle", ["fresh", "same"])
def test_a_commit_whose_latest_snapshot_expires_while_it_reads_it_retries(tmp_path, monkeypatch, handle):
    """Between reading the latest snapshot and publishing the next, two rival commits and an expiry
    remove that snapshot and the id after it. The attempt lost its race: whether it then finds the
    snapshot's manifests gone (a fresh table handle) or has them cached (the handle that wrote),
    it retries on the newer snapshot — never a missing-file error, never a snapshot-2 recreated
    below the latest."""
    catalog = load_catalog(str(tmp_path / "warehouse"))
    catalog.create_database("db")
    writer = catalog.create_table_from_arrow("db.t", SCHEMA)
    rival = catalog.get_table("db.t")
    rival.write_arrow(pa.table({"id": [1]}, SCHEMA))
    write = writer.new_write()
    write.write_arrow(pa.table({"id": [4]}, SCHEMA))
    messages = write.prepare_commit()
    table = catalog.get_table("db.t") if handle == "fresh" else writer
    commit = table.new_commit("late")  # before the hook: opening a commit reads the latest snapshot too
    read_latest = table.snapshot_manager.latest

    def latest_then_expired():
        latest = read_latest()
        if latest.id == 1:
            for i in (2, 3):
                rival.write_arrow(pa.table({"id": [i]}, SCHEMA))
            assert expire_snapshots(rival, retain_max=1, retain_min=1) == 2
        return latest
    monkeypatch.setattr(table.snapshot_manager, "latest", latest_then_expired)
    assert commit.commit(messages) == 4 and commit.attempts == 2
    assert table.snapshot_manager.listed_ids() == [3, 4]
    assert sorted(table.new_scan().to_arrow().column("id").to_pylist()) == [1, 2, 3, 4]
    assert remove_orphan_files(table, int(time.time() * 1000), dry_run=True) == (0, 0)
