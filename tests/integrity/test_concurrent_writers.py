"""Concurrent writers keep the table consistent (issue 20, "Data integrity first").

For each table kind — append (bucket-unaware), append with deletion vectors, primary key with two
fixed buckets, merge-on-write primary key (two buckets, deletion vectors) — several OS processes
(``worker.py``) start together at a file barrier and run seeded random operations against the same
table through the core API: INSERT, UPDATE, DELETE, and for primary-key tables compaction. Each
operation commits under its own commit user and logs its logical change and whether it was
acknowledged. Then the oracle checks, from the table's snapshots alone:

- every snapshot was committed by a known operation that was acknowledged (an operation that failed
  with CommitConflictError changed nothing; no other error is allowed);
- every acknowledged data operation has exactly one data snapshot (APPEND) — none is lost;
- for EVERY snapshot S, reading the table at S equals a plain Python model (primary key: dict
  key → row; append: multiset of rows) replaying the changes of the operations visible at S, in the
  order of their data snapshots; each primary key appears at most once;
- read-your-writes: an acknowledged write is visible in the latest snapshot right after its commit
  returned (normally the last snapshot the commit made).

Visibility: a change is visible from its operation's data snapshot, except in merge-on-write tables,
where level-0 files are not read: there a key's change is visible from the first snapshot in which
the level-0 file holding it is no longer live at level 0 (compacted — by the write's own COMPACT
snapshot, or by any other commit's compaction that got there first).

Size: ``PAIMON_SQL_CONCURRENCY_OPS`` operations per process (default 12; the full run is 100),
``PAIMON_SQL_CONCURRENCY_PROCS`` processes (default 4), ``PAIMON_SQL_CONCURRENCY_SEED`` (default 20)
seeds the operation sequences; a failure prints the seed and where the worker logs are. Timing is
not reproducible (that is the point), so a failure may need a few runs with its seed to recur::

    PAIMON_SQL_CONCURRENCY_OPS=100 .venv/bin/python -m pytest -q tests/integrity

See docs/concurrency.md for the guarantee this tests.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from .worker import KINDS, create_table

OPS = int(os.environ.get("PAIMON_SQL_CONCURRENCY_OPS", "12"))
PROCS = int(os.environ.get("PAIMON_SQL_CONCURRENCY_PROCS", "4"))
SEED = int(os.environ.get("PAIMON_SQL_CONCURRENCY_SEED", "20"))
WORKER = Path(__file__).resolve().parent / "worker.py"
ROOT = WORKER.parent.parent.parent

DATA_KINDS = ("APPEND", "OVERWRITE")


# -- running the writers ------------------------------------------------------------------------

def run_workers(warehouse: str, kind: str, work: Path) -> list:
    """Start PROCS workers, release them together, wait; returns every op record of every worker."""
    procs, logs = [], []
    go = work / "go"
    for i in range(PROCS):
        log = work / f"ops-{i}.jsonl"
        logs.append(log)
        config = {"warehouse": warehouse, "kind": kind, "proc": i, "seed": SEED, "ops": OPS, "log": str(log),
                  "ready": str(work / f"ready-{i}"), "go": str(go)}
        procs.append(subprocess.Popen([sys.executable, str(WORKER), json.dumps(config)], cwd=str(ROOT),
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    try:
        deadline = time.time() + 120
        while not all((work / f"ready-{i}").exists() for i in range(PROCS)):
            crashed = [p for p in procs if p.poll() is not None]
            if crashed or time.time() > deadline:
                break
            time.sleep(0.01)
        go.touch()
        outputs = [p.communicate(timeout=60 + 10 * OPS) for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    failed = [(i, p.returncode, outputs[i][1][-3000:]) for i, p in enumerate(procs) if p.returncode != 0]
    assert not failed, f"{kind}: worker process(es) crashed (seed {SEED}): {failed}"
    records = []
    for log in logs:
        if log.exists():
            records += [json.loads(line) for line in log.read_text().splitlines() if line.strip()]
    return records


# -- the oracle ---------------------------------------------------------------------------------

def _short(text, n=300) -> str:
    text = str(text)
    return text if len(text) <= n else text[:n] + "..."


class Oracle:
    def __init__(self, table, kind: str, records: list):
        self.table, self.kind = table, kind
        self.pk, options = KINDS[kind]
        self.mow = self.pk and options.get("deletion-vectors.enabled") == "true"
        self.ops = {r["user"]: r for r in records}
        self.problems: list = []
        sm = table.snapshot_manager
        self.ids = sm.listed_ids()
        self.snaps = {sid: sm.snapshot(sid) for sid in self.ids}
        self.by_user: dict = {}
        for sid in self.ids:
            self.by_user.setdefault(self.snaps[sid].commit_user, []).append(sid)

    def describe(self, sid: int) -> str:
        s = self.snaps[sid]
        op = self.ops.get(s.commit_user)
        what = f"{op['name']} {json.dumps(op['change'])}" if op else "unknown op"
        return f"snapshot {sid} ({s.commit_kind} by {s.commit_user}: {_short(what, 200)})"

    # -- attribution ------------------------------------------------------------------------

    def check_attribution(self) -> None:
        if self.ids != list(range(1, len(self.ids) + 1)):
            self.problems.append(f"snapshot ids are not 1..N: {self.ids}")
        for user, sids in self.by_user.items():
            op = self.ops.get(user)
            if op is None:
                self.problems.append(f"snapshot(s) {sids} by commit user {user!r}, which no operation used")
            elif op["status"] != "ok":
                self.problems.append(f"snapshot(s) {sids} committed by op {user}, which was NOT acknowledged "
                                     f"({op['status']}: {_short(op.get('error'), 400)})")
        for user, op in sorted(self.ops.items()):
            if op["status"] == "error":
                self.problems.append(f"op {user} ({op['name']}) raised an unexpected error: "
                                     f"{_short(op['error'], 1500)}")
            elif op["status"] == "skipped":
                self.problems.append(f"op {user} ({op['name']}) found the table in an impossible state: {op['error']}")
            kinds = [self.snaps[s].commit_kind for s in self.by_user.get(user, [])]
            data = [s for s in self.by_user.get(user, []) if self.snaps[s].commit_kind in DATA_KINDS]
            if not op["change"]:  # compaction: no data snapshot
                if data:
                    self.problems.append(f"compaction op {user} committed data snapshot(s) {data}")
            elif op["status"] == "ok" and not data:
                self.problems.append(f"acknowledged op {user} ({op['name']} {_short(json.dumps(op['change']))}) "
                                     f"is in no snapshot (its snapshots: {kinds}): the change was lost")
            elif len(data) > 1:
                self.problems.append(f"op {user} committed {len(data)} data snapshots {data}")
            returned = op.get("snapshot")
            if op["status"] == "ok" and returned is not None and returned not in self.by_user.get(user, []):
                what = self.describe(returned) if returned in self.snaps else "missing"
                self.problems.append(f"op {user} returned snapshot {returned}, which its commit user did "
                                     f"not commit ({what})")

    # -- visibility ---------------------------------------------------------------------------

    def changes(self) -> list:
        """(data snapshot, op user, unit, change) for every op with a data snapshot, in snapshot order;
        a unit is one key (primary key) or the whole op (append)."""
        out = []
        for user, sids in self.by_user.items():
            op = self.ops.get(user)
            data = [s for s in sids if self.snaps[s].commit_kind in DATA_KINDS]
            if op is None or not op["change"] or not data:
                continue
            d = data[0]
            if self.pk:
                for row in op["change"]["upsert"]:
                    out.append((d, user, row[0], ("upsert", tuple(row))))
                for k in op["change"]["delete"]:
                    out.append((d, user, k, ("delete", None)))
            else:
                out.append((d, user, None, (op["change"]["insert"], op["change"]["delete"])))
        return sorted(out, key=lambda c: (c[0], c[1]))

    def visibility(self, changes: list) -> dict:
        """(user, unit) → first snapshot at which the change is visible (None: never)."""
        if not self.mow:
            return {(user, unit): d for d, user, unit, _ in changes}
        from paimon_sql.format.file_format import read_file
        level0 = {}  # snapshot → names of its live level-0 files
        for sid in self.ids:
            level0[sid] = {e.file.file_name for e in self.table.new_scan().with_snapshot(sid).plan_entries()
                           if e.file.level == 0}
        key_col = "_KEY_k"
        out, file_of = {}, {}
        for d in sorted({c[0] for c in changes}):
            snap = self.snaps[d]
            for meta in self.table.manifest_list(snap.delta_manifest_list):
                for e in self.table.manifest_entries(meta.file_name):
                    if e.kind != 0 or e.file.level != 0:
                        continue
                    path = self.table.paths.data_file_path([], e.bucket, e.file.file_name, e.file.external_path)
                    keys = read_file(self.table.io, path, e.file.file_name.rsplit(".", 1)[-1], [key_col])
                    for k in keys.column(key_col).to_pylist():
                        file_of[(d, k)] = e.file.file_name
        for d, user, unit, _ in changes:
            name = file_of.get((d, unit))
            if name is None:
                self.problems.append(f"op {user}: key {unit} is in no level-0 file its data snapshot {d} added")
                out[(user, unit)] = d
                continue
            out[(user, unit)] = next((s for s in self.ids if s >= d and name not in level0[s]), None)
        return out

    def check_read_your_writes(self, changes: list, visible: dict) -> None:
        """An acknowledged change is visible in the latest snapshot right after its commit returned
        (normally its own last snapshot; in merge-on-write tables another writer's compaction may
        have made it visible first, and then the op's own compaction has nothing left to do)."""
        for d, user, unit, _ in changes:
            op = self.ops[user]
            if op["status"] != "ok":
                continue
            latest = op.get("latest") or self.by_user[user][-1]
            v = visible[(user, unit)]
            if v is None or v > latest:
                where = "never (not even in the last snapshot)" if v is None else f"only from snapshot {v}"
                self.problems.append(f"acknowledged op {user} ({op['name']}, its snapshots {self.by_user[user]}, "
                                     f"latest snapshot when it returned {latest}): its change"
                                     f"{'' if unit is None else f' of key {unit}'} becomes visible {where}")

    # -- content --------------------------------------------------------------------------------

    def expected(self, sid: int, changes: list, visible: dict):
        if self.pk:
            model = {}
            for _, user, k, (what, row) in changes:
                v = visible[(user, k)]
                if v is None or v > sid:
                    continue
                if what == "upsert":
                    model[k] = row
                else:
                    model.pop(k, None)
            return model
        model = Counter()
        for _, user, _, (insert, delete) in changes:
            v = visible[(user, None)]
            if v is None or v > sid:
                continue
            for row in delete:
                model[tuple(row)] -= 1
            for row in insert:
                model[tuple(row)] += 1
        return +model if all(n >= 0 for n in model.values()) else model

    def actual(self, sid: int):
        rows = self.table.new_scan().with_snapshot(sid).to_arrow().to_pylist()
        if self.pk:
            seen = Counter(r["k"] for r in rows)
            dup = sorted((r["k"], r["v"], r["op"]) for r in rows if seen[r["k"]] > 1)
            model = {r["k"]: (r["k"], r["v"], r["op"]) for r in rows}
            return model, dup
        return Counter((r["id"], r["v"], r["op"]) for r in rows), []

    def diff(self, want, got) -> str:
        if self.pk:
            keys = sorted(set(want) | set(got))
            lines = [f"  key {k}: expected {want.get(k)}, read {got.get(k)}" for k in keys if want.get(k) != got.get(k)]
        else:
            missing = want - got
            extra = got - want
            lines = [f"  missing {row} x{n}" for row, n in sorted(missing.items())]
            lines += [f"  unexpected {row} x{n}" for row, n in sorted(extra.items())]
            lines += [f"  model has negative count {row} x{n}" for row, n in want.items() if n < 0]
        return "\n".join(lines[:30]) + (f"\n  ... {len(lines) - 30} more" if len(lines) > 30 else "")

    def history(self, units, changes: list, visible: dict) -> str:
        """The changes that touched the keys (primary key) or row ids (append) that differ."""
        lines = []
        for unit in sorted(units)[:4]:
            lines.append(f"  history of {'key' if self.pk else 'id'} {unit} (data snapshot, visible from, op, change):")
            for d, user, k, change in changes:
                if self.pk and k == unit:
                    lines.append(f"    {d}, {visible[(user, k)]}, {user}, {change[0]} {change[1] or ''}")
                elif not self.pk and any(row[0] == unit for part in change for row in part):
                    lines.append(f"    {d}, {visible[(user, None)]}, {user}, insert {change[0]} delete {change[1]}")
        return "\n".join(lines)

    def check_content(self, changes: list, visible: dict) -> None:
        bad, first = [], None
        for sid in self.ids:
            got, dup = self.actual(sid)
            want = self.expected(sid, changes, visible)
            if dup or want != got:
                what = f"a key appears more than once, rows read: {dup}\n" if dup else ""
                if want != got:
                    what += "content differs from the replay:\n" + self.diff(want, got) + "\n"
                bad.append(sid)
                if first is None:
                    if self.pk:
                        units = {r[0] for r in dup} | {k for k in set(want) | set(got) if want.get(k) != got.get(k)}
                    else:
                        units = {row[0] for row in set(want) ^ set(got) | {r for r, n in want.items() if n != got[r]}}
                    first = (sid, what + self.history(units, changes, visible))
        if first:
            sid, what = first
            prev = f"; the snapshot before it was {self.describe(sid - 1)}" if sid - 1 in self.snaps else ""
            self.problems.insert(0, f"FIRST DIFFERING SNAPSHOT: {self.describe(sid)}{prev}: {what}\n"
                                    f"  ({len(bad)} of {len(self.ids)} snapshots differ: {bad[:40]})")

    def check(self) -> list:
        self.check_attribution()
        changes = self.changes()
        visible = self.visibility(changes)
        self.check_read_your_writes(changes, visible)
        self.check_content(changes, visible)
        return self.problems


# -- the test -------------------------------------------------------------------------------------

@pytest.mark.parametrize("kind", KINDS)
def test_concurrent_writers(kind, tmp_path):
    warehouse = str(tmp_path / "warehouse")
    work = tmp_path / "work"
    work.mkdir()
    table = create_table(warehouse, kind)
    records = run_workers(warehouse, kind, work)
    assert len(records) == PROCS * OPS, f"{kind}: {len(records)} op records, expected {PROCS * OPS}"
    problems = Oracle(table, kind, records).check()
    status = Counter(r["status"] for r in records)
    summary = (f"table kind {kind}: {PROCS} processes x {OPS} ops, seed {SEED} "
               f"(PAIMON_SQL_CONCURRENCY_SEED={SEED} PAIMON_SQL_CONCURRENCY_OPS={OPS} to rerun); "
               f"ops {dict(status)}, {len(table.snapshot_manager.listed_ids())} snapshots; "
               f"worker logs in {work}")
    shown = problems[:12]
    more = f"\n... and {len(problems) - len(shown)} more problem(s)" if len(problems) > len(shown) else ""
    assert not problems, summary + "\n" + "\n".join(f"- {p}" for p in shown) + more
