"""Crashes at any point lose nothing and show nothing half-written (issue 19, "Crashes").

Writers (append and primary-key tables), compaction, ``expire_snapshots`` and rollback run in
child processes (``crasher.py``) that die by SIGKILL at every named point — after the data
files, after the manifests, before the snapshot file, after it (before the LATEST hint), after
the hint, mid-compaction, mid-expire, mid-rollback (to a snapshot, to a tag whose snapshot
expired) — or at a random time. Each point has its own table, killed again and again. After
every kill:

- the table opens; its latest snapshot id is the highest snapshot file whatever the hints say;
- every snapshot still live reads exactly the rows of the acknowledged commits up to it (a
  tracked model): the killed commit is visible whole when its snapshot file landed, else not at
  all — and for the named points, we know which;
- ``remove_orphan_files`` removes exactly the files nothing references (the kill's leftovers:
  it must find some where a kill left them) and nothing else, and the snapshots read the same;
- an interrupted expiry or rollback, run again, completes; the next commit gets the next id.

``test_hints_never_trusted_blindly`` damages LATEST and EARLIEST directly (missing, stale,
ahead, garbage). Size: CI 1 kill per named point plus 13 random kills (31); full size
(``PAIMON_SQL_RELIABILITY=full``) 8 per point plus 90 random (234).
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pyarrow as pa
import pytest

from paimon_sql.catalog import load_catalog
from paimon_sql.maintenance.expire_snapshots import expire_snapshots
from paimon_sql.maintenance.remove_orphan_files import remove_orphan_files
from paimon_sql.maintenance.rollback import rollback_to_snapshot, rollback_to_tag
from paimon_sql.store.references import referenced_files
from reliability.conftest import record, size
from reliability.crasher import APPEND_SCHEMA, EXPIRE_RETAIN, PK_SCHEMA, open_table, write_rows

CRASHER = Path(__file__).resolve().parent / "crasher.py"
KEYS = 40  # primary-key tables: keys drawn from this space, so writes overwrite each other
COMMIT_POINTS = ("after_data_files", "after_manifests", "before_snapshot", "after_snapshot", "after_hint")
LANDED = ("after_snapshot", "after_hint")  # the killed commit's snapshot file exists

# (point, operation, table kind)
CASES = ([(p, "write", kind) for kind in ("append", "pk") for p in COMMIT_POINTS]
         + [("mid_compaction", "compact", "pk"), ("before_snapshot", "compact", "pk"),
            ("after_snapshot", "compact", "pk"),
            ("mid_expire", "expire", "pk"), ("mid_expire_snapshots", "expire", "pk"),
            ("mid_rollback_snapshots", "rollback", "append"), ("mid_rollback", "rollback", "append"),
            ("mid_rollback_to_tag", "rollback", "append")])
RANDOM = (("write", "append"), ("write", "pk"), ("compact", "pk"), ("expire", "pk"), ("rollback", "append"))


class ForkServer:
    """``crasher.py`` running beside the test: one task per call."""

    def __init__(self, log: Path):
        self.stderr = open(log, "w")
        self.proc = subprocess.Popen([sys.executable, str(CRASHER)], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=self.stderr, text=True,
                                     cwd=str(CRASHER.parent))
        assert json.loads(self.proc.stdout.readline()) == {"ready": True}, f"crasher did not start: see {log}"

    def run(self, task: dict, delay=None) -> dict:
        self.proc.stdin.write(json.dumps({"task": task, "delay": delay}) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        assert line, f"crasher died: see {self.stderr.name}"
        return json.loads(line)

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait(timeout=30)
        self.stderr.close()


@pytest.fixture(scope="module")
def crasher(tmp_path_factory):
    server = ForkServer(tmp_path_factory.mktemp("crasher") / "stderr.log")
    yield server
    server.close()


# -- the model ------------------------------------------------------------------------------

def canonical(table: pa.Table) -> list:
    return sorted(tuple(r.values()) for r in table.to_pylist())


class Model:
    """What each snapshot of one table must read: the acknowledged commits up to it."""

    def __init__(self, kind: str):
        self.pk = kind == "pk"
        self.rows = {} if self.pk else []
        self.history = {}  # snapshot id -> canonical rows
        self.next_id = 0

    def new_rows(self, rng: random.Random, n: int = 4) -> list:
        if self.pk:
            return [[k, rng.randrange(10 ** 6)] for k in rng.sample(range(KEYS), n)]
        self.next_id += n
        return [[i, rng.randrange(10 ** 6)] for i in range(self.next_id - n, self.next_id)]

    def apply(self, rows) -> None:
        if self.pk:
            self.rows.update((k, v) for k, v in rows)
        else:
            self.rows.extend(tuple(r) for r in rows)

    def expected(self) -> list:
        return sorted(self.rows.items()) if self.pk else sorted(self.rows)

    def seen(self, ids) -> None:
        for sid in ids:
            self.history[sid] = self.expected()

    def back_to(self, sid: int) -> None:
        """After a rollback to ``sid``."""
        self.rows = dict(self.history[sid]) if self.pk else list(self.history[sid])


# -- the files of a table ---------------------------------------------------------------------

def all_files(table) -> set:
    root = table.path
    return {os.path.join(d, n) for d, _, names in os.walk(root) for n in names}


def orphans(table) -> set:
    return all_files(table) - referenced_files(table)


def now_millis() -> int:
    return int(time.time() * 1000)


# -- one table, killed again and again ----------------------------------------------------------

class Case:
    def __init__(self, warehouse: str, point: str, op: str, kind: str, seed: int):
        self.warehouse, self.point, self.op, self.kind = warehouse, point, op, kind
        self.name = f"{op}_{kind}_{point}"
        self.rng = random.Random(f"{seed}:{self.name}")
        self.model = Model(kind)
        self.round = 0
        self.kills = self.orphans_removed = 0
        self.random_outcomes = Counter()  # how far random kills let the operation get
        catalog = load_catalog(warehouse)
        catalog.create_database("db", ignore_if_exists=True)
        if kind == "pk":
            catalog.create_table_from_arrow(f"db.{self.name}", PK_SCHEMA, primary_keys=["k"], options={"bucket": "2"})
        else:
            catalog.create_table_from_arrow(f"db.{self.name}", APPEND_SCHEMA)
        self.commit()

    def table(self):
        return open_table(self.warehouse, self.name)

    def commit(self) -> int:
        """An acknowledged write in this process; returns its snapshot id."""
        rows = self.model.new_rows(self.rng)
        table = self.table()
        before = table.snapshot_manager.latest_id() or 0
        user = f"ack-{self.round}-{self.rng.randrange(10 ** 9)}"
        sid = write_rows(table, rows, user)
        sm = table.snapshot_manager
        made = [s for s in sm.listed_ids() if s > before]
        assert made == list(range(before + 1, sid + 1)) and {sm.snapshot(s).commit_user for s in made} == {user}, \
            f"{self.name}: the commit after snapshot {before} made snapshots {made}"
        self.model.apply(rows)
        self.model.seen(made)
        return sid

    def prepare(self) -> dict:
        """Give the operation work to do; its task."""
        user = f"killed-{self.round}"
        if self.op == "write":
            return {"op": "write", "rows": self.model.new_rows(self.rng), "user": user}
        if self.op == "compact":
            self.commit()  # level-0 files in both buckets
            return {"op": "compact", "user": user}
        if self.op == "expire":
            self.commit()
            table = self.table()
            table.compact(None, full=True)  # so that expiry has data files to delete
            self.model.seen([table.snapshot_manager.latest_id()])
            self.commit()
            return {"op": "expire"}
        if self.point == "mid_rollback_to_tag":  # to a tag whose snapshot expired
            for _ in range(5):
                latest = self.commit()
            table = self.table()
            tag = table.tag_manager.create(f"back{self.round}", table.snapshot_manager.snapshot(latest - 4))
            expire_snapshots(table, retain_max=3, retain_min=1)
            return {"op": "rollback", "tag": tag.name, "target": tag.snapshot.id}
        for _ in range(3):
            self.commit()
        table = self.table()
        sm = table.snapshot_manager
        target = sm.latest_id() - 3
        table.tag_manager.create(f"doomed{self.round}", sm.snapshot(target + 2))
        table.tag_manager.create(f"kept{self.round}", sm.snapshot(target))
        return {"op": "rollback", "target": target}

    def kill(self, server: ForkServer, delay=None) -> dict:
        """One round: prepare, run the operation to its death (or end), check; the crasher's reply."""
        self.round += 1
        task = {**self.prepare(), "warehouse": self.warehouse, "table": self.name,
                "point": "random" if delay is not None else self.point, "nth": 1 + self.round % 3}
        table = self.table()
        assert not orphans(table), f"{self.name}: orphan files before round {self.round}"
        files_before = all_files(table)
        previous = table.snapshot_manager.latest_id()
        listed_before = table.snapshot_manager.listed_ids()
        reply = server.run(task, delay)
        where = f"{self.name} round {self.round} ({task['point']}, {reply.get('seconds', 0):.3f} s)"
        assert "error" not in reply, f"{where}: the operation failed:\n{reply['error']}"
        assert reply["killed"] or delay is not None, f"{where}: the process reached the end alive: {reply}"
        self.kills += reply["killed"]

        table = self.table()  # opens
        sm = table.snapshot_manager
        listed = sm.listed_ids()
        latest = sm.latest_id()
        assert latest == listed[-1] and sm.earliest_id() == listed[0], \
            f"{where}: hints resolve to latest {latest}, earliest {sm.earliest_id()}; files say {listed}"
        live_from = self._account(task, reply, table, previous, latest, where)
        self._check_reads(table, live_from, where)

        # an interrupted expiry is completed by the next run, leaving no orphan: half the rounds
        # check that; the others remove orphans from the half-expired table first
        finish_first = task["op"] == "expire" and self.round % 2 == (self.point == "mid_expire")
        if finish_first:
            self._finish(task, where)
        leftovers = orphans(table)
        if task["point"] in COMMIT_POINTS[:3] or task["point"] == "mid_compaction":
            new = all_files(table) - files_before
            assert new and new <= leftovers, f"{where}: the files the kill left are not all orphans: {new - leftovers}"
        files = all_files(table)
        if delay is not None and reply["killed"]:
            done = {"files written": files - files_before, "files deleted": files_before - files,
                    "snapshots changed": listed != listed_before}
            self.random_outcomes[", ".join(k for k, v in done.items() if v) or "nothing done yet"] += 1
        removed, _ = remove_orphan_files(table, older_than_millis=now_millis())
        assert removed == len(leftovers) and all_files(table) == files - leftovers, \
            f"{where}: remove_orphan_files removed {removed} files, of {len(leftovers)} orphans: " \
            f"kept {sorted(all_files(table) & leftovers)[:3]}, lost {sorted(files - leftovers - all_files(table))[:3]}"
        self.orphans_removed += removed
        self._check_reads(self.table(), live_from, where)

        if not finish_first:
            self._finish(task, where)
        self.commit()
        return reply

    def _account(self, task, reply, table, previous: int, latest: int, where: str) -> int:
        """Bring the model to what the killed operation may have done; the first live snapshot."""
        sm = table.snapshot_manager
        new = [sid for sid in sm.listed_ids() if sid > previous]
        if task["op"] == "rollback":
            target = task["target"]
            assert target <= latest <= previous, f"{where}: latest {latest} outside the rollback's range"
            if task["point"] == "mid_rollback_snapshots":  # the newest snapshots go first
                assert latest == previous - task["nth"], f"{where}: latest {latest}, rolled back from {previous}"
            elif task["point"] == "mid_rollback_to_tag":  # the tag's snapshot is written back first
                assert sm.listed_ids() == [target, *range(previous - 2, previous - task["nth"] + 1)], \
                    f"{where}: snapshots {sm.listed_ids()} after rolling back from {previous} to tag snapshot {target}"
            elif task["point"] == "mid_rollback":  # files go after every snapshot file
                assert latest == target, f"{where}: files deleted while snapshot {latest} > {target} was live"
            self.model.back_to(latest)
            return sm.earliest_id()
        if task["op"] == "expire":
            assert not new and latest == previous, f"{where}: expiry changed the latest snapshot"
            return previous - EXPIRE_RETAIN + 1  # what expiry keeps; older ones may be half deleted
        landed = [sid for sid in new if sm.snapshot(sid).commit_user == task["user"]]
        assert landed == new, f"{where}: snapshots {sorted(set(new) - set(landed))} of no known commit"
        if task["point"] in LANDED or (not reply["killed"] and reply["result"] is not None):  # None: nothing to compact
            assert landed, f"{where}: the commit's snapshot is missing"
        elif task["point"] != "random":
            assert not landed, f"{where}: snapshot(s) {landed} landed before the point"
        if task["op"] == "write" and any(sm.snapshot(sid).commit_kind == "APPEND" for sid in landed):
            self.model.apply(task["rows"])
        self.model.seen(landed)
        return sm.earliest_id()

    def _check_reads(self, table, live_from: int, where: str) -> None:
        for sid in table.snapshot_manager.listed_ids():
            if sid >= live_from:
                assert canonical(table.to_arrow(sid)) == self.model.history[sid], f"{where}: snapshot {sid} reads wrong"
        for tag in table.tag_manager.tags():
            got = canonical(table.travel({"scan.tag-name": tag.name}).to_arrow())
            assert got == self.model.history[tag.snapshot.id], f"{where}: tag {tag.name} reads wrong"

    def _finish(self, task, where: str) -> None:
        """Run an interrupted expiry or rollback again: it completes, every snapshot left is whole."""
        table = self.table()
        if task["op"] == "expire":
            expire_snapshots(table, retain_max=EXPIRE_RETAIN, retain_min=1)
            assert len(table.snapshot_manager.listed_ids()) == EXPIRE_RETAIN, f"{where}: expiry did not complete"
        elif task["op"] == "rollback":
            if "tag" in task:
                rollback_to_tag(table, task["tag"])
            else:
                rollback_to_snapshot(table, task["target"])
            assert table.snapshot_manager.latest_id() == task["target"]
            self.model.back_to(task["target"])
        else:
            return
        self._check_reads(table, 0, where)
        assert not orphans(table), f"{where}: the completed {task['op']} left orphan files"


def test_kills_at_every_point(crasher, tmp_path):
    """Every named point, then random times, for each operation; ~30 kills in CI, 200+ full size."""
    warehouse = str(tmp_path / "warehouse")
    per_point, random_kills = size(1, 8), size(13, 90)
    cases = [Case(warehouse, p, op, kind, seed=19) for p, op, kind in CASES]
    for case in cases:
        for _ in range(per_point):
            case.kill(crasher)
    randoms = [Case(warehouse, "random", op, kind, seed=19) for op, kind in RANDOM]
    durations = {}
    rng = random.Random(19)
    killed = attempts = 0
    while killed < random_kills:
        attempts += 1
        assert attempts <= 3 * random_kills, f"only {killed} of {attempts} random kills landed"
        case = randoms[attempts % len(randoms)]
        # a random time in the operation (from its table open), scaled by its duration when it last
        # ran to the end; the first 30% is mostly planning, and 10% past the end lets some finish
        delay = durations.get(case.name, 0.1) * rng.uniform(0.3, 1.1)
        reply = case.kill(crasher, delay)
        if reply["killed"]:
            killed += 1
        else:
            durations[case.name] = reply["seconds"]
    kills = sum(c.kills for c in cases + randoms)
    assert kills >= len(CASES) * per_point + random_kills
    record("crashes", kills=kills, points=len(CASES), random_kills=killed, random_runs=attempts,
           random_outcomes=dict(sum((c.random_outcomes for c in randoms), Counter())), rows_lost=0,
           orphans_removed=sum(c.orphans_removed for c in cases + randoms), live_files_removed=0)


LATEST_DAMAGE = {"missing": None, "stale": b"4", "expired": b"1", "ahead": b"999", "empty": b"",
                 "text": b"latest", "bytes": b"\xff\xfe\x00", "negative": b"-6",
                 "huge": b"9" * 30}
EARLIEST_DAMAGE = {**LATEST_DAMAGE, "stale": None}  # stale: the second snapshot (see below)


def test_hints_never_trusted_blindly(tmp_path):
    """LATEST and EARLIEST missing, stale (naming a live or an expired snapshot), ahead of the
    snapshots or garbage: the latest and earliest ids are still those of the snapshot files, the
    table reads its latest snapshot, the next commit gets the next id and rewrites LATEST, expiry
    expires from the true earliest, and orphan removal deletes nothing."""
    case = Case(str(tmp_path / "warehouse"), "hints", "write", "append", seed=19)
    for _ in range(5):
        case.commit()
    table = case.table()
    expire_snapshots(table, retain_max=4, retain_min=1)
    hints = f"{table.paths.snapshot_dir}"
    sm = table.snapshot_manager
    assert sm.listed_ids() == [3, 4, 5, 6]

    def damage(name: str, content) -> None:
        path = f"{hints}/{name}"
        if content is None:
            os.remove(path)
        else:
            with open(path, "wb") as f:
                f.write(content)

    for what, content in LATEST_DAMAGE.items():
        latest = sm.latest_id()
        damage("LATEST", content)
        assert sm.latest_id() == latest == sm.listed_ids()[-1], f"LATEST {what}: latest {sm.latest_id()}"
        assert canonical(case.table().to_arrow()) == case.model.history[latest], f"LATEST {what}"
        assert case.commit() == latest + 1
        assert open(f"{hints}/LATEST").read() == str(sm.latest_id()), f"LATEST {what} was not rewritten"
        assert remove_orphan_files(case.table(), older_than_millis=now_millis()) == (0, 0)

    for what, content in EARLIEST_DAMAGE.items():
        earliest = sm.listed_ids()[0]
        damage("EARLIEST", str(earliest + 1).encode() if what == "stale" else content)
        assert sm.earliest_id() == earliest, f"EARLIEST {what}: earliest {sm.earliest_id()}, files {sm.listed_ids()}"
        assert remove_orphan_files(case.table(), older_than_millis=now_millis()) == (0, 0)
        case.commit()
        ids = sm.listed_ids()
        expire_snapshots(case.table(), retain_max=4, retain_min=1)
        assert sm.listed_ids() == ids[-4:], f"EARLIEST {what}: expiry left {sm.listed_ids()}"
        assert sm.earliest_id() == ids[-4] and open(f"{hints}/EARLIEST").read() == str(ids[-4])
    case._check_reads(case.table(), 0, "after the damaged hints")
