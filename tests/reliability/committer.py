"""One process of the concurrency suite (test_concurrency.py): ``python committer.py '<json config>'``.

It opens the warehouse (local or S3, the config's catalog ``options``), says it is ready
(``<barrier>/ready-<proc>``) and waits for ``<barrier>/go`` so that all processes start together.
Then, by ``role``:

- ``core``: ``commits`` commits into each of the append table ``db.events`` and the primary-key
  table ``db.kv`` (alternating; a random pause of up to ``pause`` seconds after each), through the
  core API (TableWrite, then TableCommit under the commit's own user, its tag); the config's
  ``write_options`` apply to its writes (e.g. ``commit.max-retries`` = 0: it gives up at its first
  lost race);
- ``sql``: the same rows as INSERT statements of a paimon_sql Session (one Spark JVM);
- ``maintain``: until every writer is done (``<barrier>/done-<proc>``), rounds of compaction
  (``CALL sys.compact``'s core, under the maintainer's own commit users) and ``expire_snapshots``
  (``retain`` snapshots kept) of both tables, ``pause`` seconds apart.

Before the barrier each writer writes once to tables of its own (the first write of a process
loads most of the code, seconds a writer would otherwise spend outside the race).

Each commit's outcome is one JSON line of the process's log (``log``): table, tag, status ``ok``
or ``failed``, its data snapshot id (the APPEND snapshot its rows are in, found among the
snapshots made while it ran, so that the test can order primary-key writes), the publish attempts
its TableCommit made, the error's class and message, and its rows. A row's value is its
commit's tag, so every row read back names the commit that wrote it.
"""

from __future__ import annotations

import json
import random
import sys
import time
from pathlib import Path

import pyarrow as pa

EVENTS, KV = "db.events", "db.kv"
EVENTS_SCHEMA = pa.schema([pa.field("id", pa.int64(), False), ("v", pa.string())])
KV_SCHEMA = pa.schema([pa.field("k", pa.int64(), False), ("v", pa.string())])
KV_OPTIONS = {"bucket": "2"}
SHARED_KEYS = 6  # keys 0..5 of db.kv are written by every writer (overlapping); others by one commit each
MAINTAINER = "maint"  # commit users of the maintenance process start with this


def create_tables(catalog) -> None:
    catalog.create_database("db", ignore_if_exists=True)
    catalog.create_table_from_arrow(EVENTS, EVENTS_SCHEMA)
    catalog.create_table_from_arrow(KV, KV_SCHEMA, primary_keys=["k"], options=KV_OPTIONS)


def rows_of(table: str, proc: int, n: int, rng: random.Random) -> list:
    """Commit ``n`` of writer ``proc``: three new event ids; or two keys of its own and two shared."""
    if table == EVENTS:
        return [proc * 100_000 + n * 10 + i for i in range(3)]
    return [(proc + 1) * 100_000 + n * 10 + i for i in range(2)] + sorted(rng.sample(range(SHARED_KEYS), 2))


def data_snapshot(table, before: int, mine) -> int | None:
    """The APPEND snapshot after ``before`` whose commit user satisfies ``mine`` (None: expired already)."""
    from paimon_sql.exceptions import SnapshotNotFoundError
    sm = table.snapshot_manager
    found = []
    for sid in range(before + 1, (sm.latest_id() or 0) + 1):
        try:
            snap = sm.snapshot(sid)
        except SnapshotNotFoundError:
            continue
        if snap.commit_kind == "APPEND" and mine(snap.commit_user):
            found.append(sid)
    if len(found) > 1:
        raise AssertionError(f"{table.name}: several data snapshots {found} of one commit")
    return found[0] if found else None


class Committer:
    def __init__(self, config: dict):
        from paimon_sql.catalog import load_catalog
        self.config = config
        self.proc = config["proc"]
        self.catalog = load_catalog(config["warehouse"], config["options"])
        self.log = open(config["log"], "a")

    def record(self, **entry) -> None:
        self.log.write(json.dumps({"proc": self.proc, **entry}) + "\n")
        self.log.flush()

    def commit(self, name: str, tag: str, rows: list, write) -> None:
        """Run ``write(table, tag, rows, entry)`` (it returns which commit users are its own); log its outcome."""
        from paimon_sql.exceptions import PaimonError
        table = self.catalog.get_table(name).copy(self.config.get("write_options"))
        before = table.snapshot_manager.latest_id() or 0
        entry = {"table": name, "tag": tag, "rows": rows, "t0": time.time()}
        try:
            mine = write(table, tag, rows, entry)
            entry.update(status="ok", snapshot=data_snapshot(table, before, mine))
        except PaimonError as e:
            entry.update(status="failed", error=type(e).__name__, message=str(e))
        entry["t1"] = time.time()
        self.record(**entry)

    # -- the roles ------------------------------------------------------------------------------

    def run_writes(self, write) -> None:
        rng = random.Random(f"{self.config['seed']}:{self.proc}")
        for n in range(self.config["commits"]):
            for name in (EVENTS, KV):
                tag = f"{self.config['role']}{self.proc}-{name[3:]}-{n}"
                self.commit(name, tag, rows_of(name, self.proc, n, rng), write)
                time.sleep(rng.uniform(0, self.config["pause"]))  # spread over the slower (SQL) writers' time
        Path(self.config["barrier"], f"done-{self.proc}").touch()

    def maintain(self) -> None:
        """Compaction and expiry rounds beside the writers, until they are done."""
        from paimon_sql.compact.merge_tree_compact import compact_messages
        from paimon_sql.exceptions import PaimonError
        from paimon_sql.maintenance.expire_snapshots import expire_snapshots
        barrier, retain = Path(self.config["barrier"]), self.config["retain"]
        n = 0
        while not all((barrier / f"done-{p}").exists() for p in self.config["writers"]):
            for name in (KV, EVENTS):
                table = self.catalog.get_table(name)
                commit = table.new_commit(f"{MAINTAINER}-compact-{name[3:]}-{n}")
                entry = {"table": name, "tag": commit.commit_user, "kind": "compact"}
                try:  # every third round a full compaction (CALL sys.compact's compact_strategy 'full')
                    entry.update(status="ok", snapshot=commit.commit_or_abort(compact_messages(table, full=n % 3 == 2)))
                except PaimonError as e:
                    entry.update(status="failed", error=type(e).__name__, message=str(e))
                self.record(attempts=commit.attempts, **entry)
                entry = {"table": name, "kind": "expire"}
                try:
                    entry.update(status="ok", expired=expire_snapshots(table, retain_max=retain, retain_min=retain))
                except PaimonError as e:
                    entry.update(status="failed", error=type(e).__name__, message=str(e))
                self.record(**entry)
            n += 1
            time.sleep(self.config["pause"])  # a round every few commits, not a busy loop taking the writers' CPU


def core_write(table, tag: str, rows: list, entry: dict):
    """TableWrite → TableCommit under the user ``tag`` (its publish attempts go to ``entry``)."""
    column = "id" if table.name.endswith("events") else "k"
    data = pa.table({column: rows, "v": [tag] * len(rows)}, schema=EVENTS_SCHEMA if column == "id" else KV_SCHEMA)
    write = table.new_write()
    try:
        write.write_arrow(data)
        messages = write.prepare_commit()
    except BaseException:
        write.abort()
        raise
    commit = table.new_commit(tag)
    try:
        commit.commit_or_abort(messages)
    finally:
        entry["attempts"] = commit.attempts
    return lambda user: user == tag


def warm_up(config: dict) -> None:
    """One commit into each kind of table of a scratch warehouse of this process's own."""
    from paimon_sql.catalog import load_catalog
    catalog = load_catalog(str(Path(config["barrier"]).parent / f"warm-{config['proc']}"))
    create_tables(catalog)
    for name in (EVENTS, KV):
        core_write(catalog.get_table(name), "warm", [1], {})
        catalog.get_table(name).new_scan().to_arrow()


def sql_write(config: dict):
    """A paimon_sql Session's INSERT statements (its Spark JVM starts here, before the race, and
    writes once to a copy of each table)."""
    import paimon_sql
    session = paimon_sql.connect(config["warehouse"], catalog_options=config["options"], conf={
        "spark.master": "local[1]", "spark.ui.enabled": "false", "spark.sql.shuffle.partitions": "1",
        # a short-lived JVM: the quick compiler only and one GC thread halve its CPU (it shares 2 cores)
        "spark.driver.extraJavaOptions": "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"})
    for name in (EVENTS, KV):
        session.sql(f"CREATE TABLE {name}_warm LIKE {name}")
        session.sql(f"INSERT INTO {name}_warm VALUES (1, 'warm')")

    def write(table, tag: str, rows: list, entry: dict):
        column = "id" if table.name.endswith("events") else "k"
        session.sql(f"INSERT INTO {table.name} ({column}, v) VALUES " + ", ".join(f"({r}, '{tag}')" for r in rows))
        # Spark commits under a fresh UUID: the only data snapshot by a user not ours is this one
        return lambda user: not user.startswith(("core", MAINTAINER))
    return write


def main(config: dict) -> None:
    committer = Committer(config)
    write = sql_write(config) if config["role"] == "sql" else core_write
    if config["role"] == "core":
        warm_up(config)
    barrier = Path(config["barrier"])
    (barrier / f"ready-{config['proc']}").touch()
    deadline = time.time() + 300
    while not (barrier / "go").exists():
        if time.time() > deadline:
            raise SystemExit("committer: no start signal within 300 s")
        time.sleep(0.005)
    if config["role"] == "maintain":
        committer.maintain()
    else:
        committer.run_writes(write)


if __name__ == "__main__":
    main(json.loads(sys.argv[1]))
