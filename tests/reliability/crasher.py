"""Operations killed with SIGKILL at named points (the crash suite, test_crashes.py).

Each operation — a write (append or primary-key table), a compaction, ``expire_snapshots``, a
rollback — runs through the core API in its own process, which dies by ``SIGKILL`` at a named
point: a hook wrapped around the internal function concerned (the commit's manifest-list write,
the snapshot file's create, expiry's deletion loop, ...) calls ``os.kill(os.getpid(), SIGKILL)``,
so nothing after that point runs (no ``finally``, no flush). Hooks live in this test process
only, never in production code. With no point the process is killed by its parent after a
random delay instead.

Starting a Python process that imports pyarrow and paimon_sql costs ~1 s, more than the whole
operation, so ``python crasher.py`` is a fork server: it imports once, then per task (one JSON line
on stdin) forks a child that runs the operation, kills it ``delay`` seconds after the operation
began (its table open) when asked, and answers one JSON line: the child's pid, whether SIGKILL
ended it, and its result when it finished. The children import nothing new (no Spark).
"""

from __future__ import annotations

import json
import os
import signal
import sys
import tempfile
import time
import traceback

import pyarrow as pa

from paimon_sql.catalog import load_catalog
from paimon_sql.commit.table_commit import TableCommit
from paimon_sql.compact import merge_tree_compact as compact_module
from paimon_sql.io.file_io import FileIO
from paimon_sql.maintenance.expire_snapshots import expire_snapshots
from paimon_sql.maintenance.rollback import rollback_to_snapshot, rollback_to_tag
from paimon_sql.snapshot.snapshot_manager import SnapshotManager

APPEND_SCHEMA = pa.schema([pa.field("id", pa.int64(), False), ("v", pa.int64())])
PK_SCHEMA = pa.schema([pa.field("k", pa.int32(), False), ("v", pa.int64())])
EXPIRE_RETAIN = 2  # the expire task keeps the latest two snapshots
STARTED = b"."  # what a child writes to its parent once its table is open


# -- the operations (the parent runs the same ones in process for acknowledged commits) ---------

def open_table(warehouse: str, name: str):
    return load_catalog(warehouse).get_table(f"db.{name}")


def write_rows(table, rows, user: str):
    """Commit ``rows`` ([[id or k, v], ...]) as one write under ``user``; the last snapshot id it made
    (a primary-key write may compact too: a second snapshot)."""
    schema = PK_SCHEMA if table.schema.is_primary_key_table else APPEND_SCHEMA
    data = pa.table({schema.names[0]: [r[0] for r in rows], "v": [r[1] for r in rows]}, schema=schema)
    return table.write_arrow(data, commit_user=user)


def run(task: dict, started=lambda: None):
    """Run ``task``; ``started()`` once the table is open (the operation proper begins)."""
    table = open_table(task["warehouse"], task["table"])
    started()
    op = task["op"]
    if op == "write":
        return write_rows(table, task["rows"], task["user"])
    if op == "compact":
        return table.compact(None, full=True, commit_user=task["user"])
    if op == "expire":
        return expire_snapshots(table, retain_max=EXPIRE_RETAIN, retain_min=1)
    if op == "rollback":
        if "tag" in task:
            return rollback_to_tag(table, task["tag"])[1]
        return rollback_to_snapshot(table, task["target"])[1]
    raise ValueError(f"unknown operation {op}")


# -- the named points -------------------------------------------------------------------------

def die() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def _before(cls, name: str) -> None:
    """Die when ``cls.name`` is first called."""
    def hooked(*args, **kwargs):
        die()
    setattr(cls, name, hooked)


def _after(cls, name: str, when=lambda args, result: True) -> None:
    """Die when a call of ``cls.name`` returns and ``when(args, result)``."""
    original = getattr(cls, name)

    def hooked(*args, **kwargs):
        result = original(*args, **kwargs)
        if when(args, result):
            die()
        return result
    setattr(cls, name, hooked)


def _is_snapshot(path: str) -> bool:
    return "/snapshot/snapshot-" in path


def _is_table_file(path: str) -> bool:
    """A data file or a manifest (what expiry and rollback delete besides snapshots and tags)."""
    return "/manifest/" in path or "/bucket-" in path


def _rewrote(message) -> bool:
    """Whether a compaction wrote new files (not only moved files up a level)."""
    return bool({f.file_name for f in message.compact_after} - {f.file_name for f in message.compact_before})


def _nth_delete(n: int, which) -> None:
    """Die after the ``n``-th deleted file for which ``which(path)`` holds."""
    count = [0]

    def when(args, result):
        if which(args[1]):
            count[0] += 1
        return count[0] >= n
    _after(FileIO, "delete", when)


def install(point: str, nth: int) -> None:
    """Arm the hook of ``point``; ``nth`` picks which deletion of a deletion loop dies."""
    if point == "after_data_files":  # prepare_commit wrote the data files; the commit has not started
        _before(TableCommit, "_commit_all")
    elif point == "after_manifests":  # the manifests are written, no manifest list yet
        _before(TableCommit, "_write_list")
    elif point == "before_snapshot":  # manifests and manifest lists written, no snapshot file
        _before(SnapshotManager, "try_commit")
    elif point == "after_snapshot":  # the snapshot file exists, LATEST not yet updated
        _after(FileIO, "try_create", lambda args, created: created and _is_snapshot(args[1]))
    elif point == "after_hint":  # committed and hinted; the caller never hears of it
        _after(SnapshotManager, "try_commit", lambda args, created: created)
    elif point == "mid_compaction":  # one bucket's compacted files written, the other's in flight
        _after(compact_module, "compact_unit", lambda args, message: message is not None and _rewrote(message))
    elif point in ("mid_expire", "mid_rollback"):  # some data files / manifests deleted
        _nth_delete(nth, _is_table_file)
    elif point in ("mid_expire_snapshots", "mid_rollback_snapshots", "mid_rollback_to_tag"):  # snapshot files
        _nth_delete(nth, _is_snapshot)
    elif point != "random":
        raise ValueError(f"unknown crash point {point}")


# -- the fork server --------------------------------------------------------------------------

def _child(task: dict, out: int) -> None:
    try:
        install(task["point"], task.get("nth", 1))
        reply = {"result": run(task, lambda: os.write(out, STARTED))}
        code = 0
    except BaseException:  # noqa: BLE001 - reported to the test, which fails on it
        reply, code = {"error": traceback.format_exc()}, 1
    os.write(out, json.dumps(reply).encode())
    os._exit(code)


def _serve_one(task: dict, delay) -> dict:
    read_end, write_end = os.pipe()
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        os.close(read_end)
        _child(task, write_end)
    os.close(write_end)
    first = os.read(read_end, len(STARTED))  # the table is open (or the child failed): the clock starts
    start = time.monotonic()
    status = None
    if delay is not None:
        while status is None and time.monotonic() - start < delay:
            done, polled = os.waitpid(pid, os.WNOHANG)
            if done:
                status = polled
            else:
                time.sleep(0.001)
        if status is None:
            os.kill(pid, signal.SIGKILL)
    with os.fdopen(read_end, "rb") as f:
        text = (b"" if first == STARTED else first) + f.read()  # until the child is gone
    if status is None:
        _, status = os.waitpid(pid, 0)
    reply = json.loads(text) if text else {}
    killed = os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL
    return {"pid": pid, "killed": killed, "exit": os.WEXITSTATUS(status) if os.WIFEXITED(status) else None,
            "seconds": time.monotonic() - start, **reply}


def warm_up() -> None:
    """Run every operation once on a scratch table, so that what they import on first use (pandas,
    through pyarrow) is loaded here once, not in each child."""
    with tempfile.TemporaryDirectory() as warehouse:
        catalog = load_catalog(warehouse)
        catalog.create_database("db")
        catalog.create_table_from_arrow("db.pk", PK_SCHEMA, primary_keys=["k"], options={"bucket": "2"})
        catalog.create_table_from_arrow("db.append", APPEND_SCHEMA)
        for name in ("pk", "append"):
            base = {"warehouse": warehouse, "table": name, "user": "warm-up"}
            for i in range(4):
                run({**base, "op": "write", "rows": [[i, i], [i + 1, i]]})
            for op in ("compact", "expire"):
                run({**base, "op": op})
            run({**base, "op": "rollback", "target": open_table(warehouse, name).snapshot_manager.latest_id() - 1})


def serve() -> None:
    warm_up()
    print(json.dumps({"ready": True}), flush=True)
    for line in sys.stdin:
        request = json.loads(line)
        print(json.dumps(_serve_one(request["task"], request.get("delay"))), flush=True)


if __name__ == "__main__":
    serve()
