"""One concurrent writer of the concurrency property test (see test_concurrent_writers.py).

Run as a separate OS process: ``python worker.py '<json config>'``. It opens the shared table through
the core API, waits at a file barrier so that all writers start together, then runs a seeded random
sequence of operations. Every operation is committed under its own commit user (``<kind>-p<proc>-op<n>``)
so that each snapshot of the table can be attributed to exactly one operation. After each operation
one JSON line goes to the worker's log: the op, its commit user, the logical change it makes and its
status — ``ok`` (acknowledged; ``latest`` is the latest snapshot id right after it returned),
``conflict`` (CommitConflictError: must have changed nothing), ``error`` (anything else: a bug) or
``skipped`` (the worker found the table in a state it cannot be in, and did not commit).

Logical changes, as the oracle replays them:

- primary-key tables: ``{"upsert": [[k, v, op], ...], "delete": [k, ...]}`` on a small key space
  shared by all writers, so they overwrite each other's keys;
- append tables: ``{"insert": [[id, v, op], ...], "delete": [[id, v, op], ...]}``; ids are unique to
  the process, and a process deletes / updates (delete + insert in one commit) only rows it inserted
  itself and saw acknowledged.
"""

from __future__ import annotations

import json
import os
import random
import sys
import time
import traceback

import pyarrow as pa

KEYS = 20  # primary-key tables: the key space all writers share

# table kind → (primary key?, table options)
KINDS = {
    "append": (False, {}),
    "append_dv": (False, {"deletion-vectors.enabled": "true"}),
    "pk": (True, {"bucket": "2"}),
    "pk_mow": (True, {"bucket": "2", "deletion-vectors.enabled": "true"}),
}

PK_SCHEMA = pa.schema([pa.field("k", pa.int32(), False), ("v", pa.int64()), ("op", pa.string())])
APPEND_SCHEMA = pa.schema([pa.field("id", pa.int64(), False), ("v", pa.int64()), ("op", pa.string())])

INSERT, UPDATE_AFTER, DELETE = 0, 2, 3  # row kinds


def create_table(warehouse: str, kind: str):
    """The empty table a run of ``kind`` writes to (``db.<kind>``)."""
    from paimon_sql.catalog import load_catalog
    catalog = load_catalog(warehouse)
    catalog.create_database("db", ignore_if_exists=True)
    pk, options = KINDS[kind]
    if pk:
        return catalog.create_table_from_arrow(f"db.{kind}", PK_SCHEMA, primary_keys=["k"], options=options)
    return catalog.create_table_from_arrow(f"db.{kind}", APPEND_SCHEMA, options=options)


def open_table(warehouse: str, kind: str):
    from paimon_sql.catalog import load_catalog
    return load_catalog(warehouse).get_table(f"db.{kind}")


class Skip(Exception):
    """The table is not as this process left it: do not commit (the oracle reports the cause)."""


class Worker:
    def __init__(self, table, kind: str, proc: int, seed: int, log_path: str):
        self.table, self.kind, self.proc = table, kind, proc
        self.pk = KINDS[kind][0]
        self.rng = random.Random(f"{seed}:{kind}:{proc}")  # what to do
        self.jitter = random.Random(f"{seed}:{kind}:{proc}:jitter")  # when (sleeps)
        self.log_path = log_path
        self.mine = {}  # append tables: id → row this process inserted and saw acknowledged
        self.next_id = 0
        self.n = 0

    # -- the loop ---------------------------------------------------------------------------

    def run(self, ops: int) -> None:
        for _ in range(ops):
            self.one()
            time.sleep(self.jitter.uniform(0, 0.01))

    def one(self) -> None:
        op = f"p{self.proc}-op{self.n:03d}"
        user = f"{self.kind}-{op}"
        self.n += 1
        name, change, action = self._choose(op)
        record = {"op": op, "user": user, "proc": self.proc, "name": name, "change": change,
                  "t0": time.time()}
        try:
            record["snapshot"] = action(user)
            record["status"] = "ok"
            record["latest"] = self.table.snapshot_manager.latest_id()  # read-your-writes: visible here
        except Skip as e:
            record["status"], record["error"] = "skipped", str(e)
        except Exception as e:  # noqa: BLE001 - everything is logged, the oracle judges
            from paimon_sql.exceptions import CommitConflictError
            if isinstance(e, CommitConflictError):
                record["status"], record["error"] = "conflict", str(e)
            else:
                record["status"], record["error"] = "error", traceback.format_exc()
        record["t1"] = time.time()
        if record["status"] == "ok" and not self.pk:
            for row in change["delete"]:
                del self.mine[row[0]]
            for row in change["insert"]:
                self.mine[row[0]] = tuple(row)
        with open(self.log_path, "a") as f:
            f.write(json.dumps(record) + "\n")

    def _choose(self, op: str):
        r = self.rng.random()
        if self.pk:
            keys = sorted(self.rng.sample(range(KEYS), self.rng.randint(1, 4)))
            if r < 0.35:
                rows = [[k, self.rng.randrange(10 ** 6), op] for k in keys]
                return "insert", {"upsert": rows, "delete": []}, lambda u: self._pk_write(u, rows, INSERT)
            if r < 0.6:
                rows = [[k, self.rng.randrange(10 ** 6), op] for k in keys]
                return "update", {"upsert": rows, "delete": []}, lambda u: self._pk_write(u, rows, UPDATE_AFTER)
            if r < 0.8:
                rows = [[k, 0, op] for k in keys]
                return "delete", {"upsert": [], "delete": keys}, lambda u: self._pk_write(u, rows, DELETE)
            full = self.rng.random() < 0.5
            return "compact-full" if full else "compact", {}, lambda u: self._compact(u, full)
        ids = sorted(self.mine)
        if r < 0.4 or not ids:
            rows = []
            for _ in range(self.rng.randint(1, 4)):
                rows.append([self.proc * 1_000_000 + self.next_id, self.rng.randrange(10 ** 6), op])
                self.next_id += 1
            return "insert", {"insert": rows, "delete": []}, lambda u: self._append_write(u, rows, [])
        old = [list(self.mine[i]) for i in sorted(self.rng.sample(ids, min(len(ids), self.rng.randint(1, 3))))]
        if r < 0.7:
            new = [[row[0], self.rng.randrange(10 ** 6), op] for row in old]
            return "update", {"insert": new, "delete": old}, lambda u: self._append_write(u, new, old)
        return "delete", {"insert": [], "delete": old}, lambda u: self._append_write(u, [], old)

    def _pause(self) -> None:
        """Between prepare and commit: lets other writers commit on the same base snapshot."""
        time.sleep(self.jitter.uniform(0, 0.03))

    # -- primary-key tables -------------------------------------------------------------------

    def _pk_write(self, user: str, rows, kind: int):
        data = pa.table({"k": [r[0] for r in rows], "v": [r[1] for r in rows], "op": [r[2] for r in rows]},
                        schema=PK_SCHEMA)
        write = self.table.new_write()
        try:
            write.write_arrow(data, row_kinds=pa.array([kind] * len(rows), pa.int8()))
            messages = write.prepare_commit()
        except BaseException:
            write.abort()
            raise
        self._pause()
        return self.table.new_commit(user).commit_or_abort(messages)

    def _compact(self, user: str, full: bool):
        return self.table.compact(None, full, commit_user=user)

    # -- append tables ------------------------------------------------------------------------

    def _append_write(self, user: str, insert, delete):
        from paimon_sql.write.row_delete import delete_messages
        table = self.table
        messages = delete_messages(table, self._positions([row[0] for row in delete])) if delete else []
        if insert:
            data = pa.table({"id": [r[0] for r in insert], "v": [r[1] for r in insert],
                             "op": [r[2] for r in insert]}, schema=APPEND_SCHEMA)
            write = table.new_write()
            try:
                write.write_arrow(data)
                messages += write.prepare_commit()
            except BaseException:
                write.abort()
                table.new_commit(user).abort(messages)
                raise
        self._pause()
        return table.new_commit(user).commit_or_abort(messages)

    def _positions(self, ids):
        """Where this process's rows ``ids`` are now (latest snapshot): exactly one live row each."""
        from paimon_sql.data import predicate as P
        from paimon_sql.write.row_delete import positions_of
        scan = self.table.new_scan().filter(P.is_in("id", ids)).select("id")
        reader = scan.reader()
        parts = [reader.read_positions(split) for split in scan.plan().splits]
        found = pa.concat_tables(parts) if parts else pa.table({"id": pa.array([], pa.int64())})
        seen = sorted(found.column("id").to_pylist())
        if seen != sorted(ids):
            raise Skip(f"rows of this process with ids {sorted(ids)} found as {seen} in the latest snapshot")
        return positions_of(self.table, found)


def run_worker(config: dict) -> None:
    table = open_table(config["warehouse"], config["kind"])
    worker = Worker(table, config["kind"], config["proc"], config["seed"], config["log"])
    open(config["ready"], "w").close()
    deadline = time.time() + 120
    while not os.path.exists(config["go"]):
        if time.time() > deadline:
            raise SystemExit("worker: no start signal within 120 s")
        time.sleep(0.002)
    worker.run(config["ops"])


if __name__ == "__main__":
    run_worker(json.loads(sys.argv[1]))
