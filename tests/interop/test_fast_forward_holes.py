"""Java Paimon 2.0 and paimon-sql on the hole a fast-forward leaves in main's snapshot ids
(docs/branches.md): each side builds the same sequence with its own API (java/FastForwardDriver.java;
``build`` of tests/unit/test_holes_after_fast_forward.py), main ending as [1, 4, 5, 6], then asks
each reader across the hole.

Where we agree with Java: the ids, the rows of every snapshot and of the latest, refusing snapshots
2 and 3 and a ``delta`` incremental read across the hole, the ``diff`` read, ``compacted-full``,
and, with main's real earliest snapshot seen by both (write-only commits), what expiry does.
Where we differ on purpose: Java's ``t$snapshots`` fails on the hole where ours lists the snapshots;
Java's stream waits at the hole for ever where ours fails there; and Java's fast-forward copies the
branch's EARLIEST hint (commits that run expiry write one), hiding snapshot 1 from its earliest,
``t$snapshots``, streams and expiry."""

import json
import subprocess
from pathlib import Path

import pytest
from oracles import OracleUnavailable
from oracles.paimon_java import driver_command
from spark.conftest import session, spark  # noqa: F401  (fixtures: one SparkSession per run)
from unit.test_holes_after_fast_forward import ROWS, VARIANTS, build, rows

from paimon_sql.exceptions import PaimonError
from paimon_sql.maintenance.expire_snapshots import expire_snapshots
from paimon_sql.spark.stream import PaimonStreamReader
from paimon_sql.systables.snapshots import SnapshotsTable

DRIVER = Path(__file__).resolve().parent / "java" / "FastForwardDriver.java"
AGREED = ["snapshot-1", "snapshot-2", "snapshot-3", "snapshot-4", "snapshot-5", "snapshot-6", "latest",
          "incremental-1,5", "incremental-1,5-diff", "incremental-4,6", "compacted-full"]
NEVER_OLD = 2 ** 62  # an older_than that finds every snapshot old enough, as Java's time-retain 0


def java_steps(warehouse: str, options: dict) -> dict:
    """Each step of the driver as Java Paimon 2.0 ran it: {"result": ...} or {"error": ...}."""
    try:
        command = driver_command(DRIVER, version="2.0")
    except OracleUnavailable as e:
        pytest.fail(f"Java Paimon 2.0 is needed for this test: {e}", pytrace=False)
    proc = subprocess.run(command + [warehouse, *(f"{k}={v}" for k, v in options.items())],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    steps = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    return {s.pop("what"): s for s in steps}


def our_steps(main) -> dict:
    """The driver's steps on our side, in its order (the expiries last, as they change the table)."""
    sm = main.snapshot_manager

    def state():
        return {"ids": sm.listed_ids(), "earliest": sm.earliest_id(), "latest": sm.latest_id()}

    def expire(retain_max, retain_min, max_deletes):
        expired = expire_snapshots(main, retain_max=retain_max, retain_min=retain_min, older_than=NEVER_OLD,
                                   max_deletes=max_deletes)
        return {**state(), "expired": expired}

    steps = {"state": state}
    for sid in range(1, 7):
        steps[f"snapshot-{sid}"] = lambda sid=sid: rows(main.new_scan().with_snapshot(sid).to_arrow())
    steps.update({
        "latest": lambda: rows(main.to_arrow()),
        "incremental-1,5": lambda: rows(main.copy({"incremental-between": "1,5"}).to_arrow()),
        "incremental-1,5-diff": lambda: rows(main.copy({"incremental-between": "1,5",
                                                        "incremental-between-scan-mode": "diff"}).to_arrow()),
        "incremental-4,6": lambda: rows(main.copy({"incremental-between": "4,6"}).to_arrow()),
        "snapshots-table": lambda: SnapshotsTable(main).rows().column("snapshot_id").to_pylist(),
        "stream-from-1": lambda: stream(main.copy({"scan.mode": "from-snapshot", "scan.snapshot-id": "1"})),
        "compacted-full": lambda: rows(main.copy({"scan.mode": "compacted-full"}).to_arrow()),
        "expire-first-kept-in-hole": lambda: expire(4, 4, 1000),
        "expire-max-deletes-1": lambda: expire(2, 1, 1),
        "expire": lambda: expire(2, 1, 1000),
        "snapshots-table-after-expire": lambda: SnapshotsTable(main).rows().column("snapshot_id").to_pylist(),
    })
    out = {}
    for what, step in steps.items():
        try:
            out[what] = {"result": step()}
        except PaimonError as e:
            out[what] = {"error": str(e)}
    return out


def stream(table) -> list:
    """The micro-batches our streaming source plans, as Spark drives it: each batch's rows, until one
    fails ({"error": ...}) or there is nothing new."""
    reader = PaimonStreamReader(table, table.schema.fields)
    start, batches = reader.initialOffset(), []
    while True:
        try:
            end = reader.latestOffset(start, None)
        except PaimonError as e:
            return batches + [{"error": str(e)}]
        if end == start:
            return batches
        got = [[r["k"], r["v"]] for p in reader.partitions(start, end) for b in reader.read(p) for r in b.to_pylist()]
        batches.append({"rows": sorted(got)})
        start = end


def without_hints(state: dict) -> dict:
    """Java's state without the hint files' contents (we write EARLIEST where Java leaves none)."""
    return {k: v for k, v in state.items() if k != "hints"}


def test_the_hole_as_java_leaves_it(tmp_path):
    """Commits that run no expiry: Java and we both see snapshot 1 as main's earliest."""
    theirs = java_steps(str(tmp_path / "java"), VARIANTS["write-only"])
    ours = our_steps(build(str(tmp_path / "ours"), VARIANTS["write-only"]))
    assert without_hints(theirs["state"]["result"]) == ours["state"]["result"] == \
        {"ids": [1, 4, 5, 6], "earliest": 1, "latest": 6}
    for what in AGREED:
        assert theirs[what].keys() == ours[what].keys() and theirs[what].get("result") == ours[what].get("result"), \
            (what, theirs[what], ours[what])
    assert ours["snapshot-2"]["error"].startswith("snapshot 2 does not exist")
    assert "snapshot 2 does not exist (a hole before snapshot 4" in ours["incremental-1,5"]["error"]
    assert theirs["incremental-1,5-diff"]["result"] == ROWS[5][1:]
    for what in ("expire-first-kept-in-hole", "expire-max-deletes-1", "expire"):
        assert without_hints(theirs[what]["result"]) == ours[what]["result"], what
    assert ours["expire"]["result"] == {"ids": [6], "earliest": 6, "latest": 6, "expired": 3}
    assert theirs["snapshots-table-after-expire"] == ours["snapshots-table-after-expire"] == {"result": [6]}

    # t$snapshots: Java walks the ids from earliest to latest and fails on snapshot 2; we list the four
    assert "snapshot-2 does not exist" in theirs["snapshots-table"]["error"]
    assert ours["snapshots-table"]["result"] == [1, 4, 5, 6]
    # a stream from snapshot 1: both read snapshot 1; Java then waits at 2 for ever, we fail there
    plans = theirs["stream-from-1"]["result"]
    assert [r for p in plans for r in p["rows"]] == ROWS[1]
    assert plans[-1]["plan"] == "SnapshotNotExistPlan" and plans[-1]["next"] == 2 and "error" not in plans[-1]
    batches = ours["stream-from-1"]["result"]
    assert batches[:-1] == [{"rows": ROWS[1]}]
    assert batches[-1]["error"].startswith("cannot stream table db.t on after snapshot 1: snapshot 2 does not exist")
    assert batches[-1]["error"].endswith("'scan.snapshot-id' = '4')")


def test_java_hides_what_main_kept_below_the_branch(tmp_path):
    """Commits that run expiry write the branch's EARLIEST hint (4), which Java's fast-forward copies
    into main: the same files, but Java's earliest is 4 and snapshot 1 is read only by its id."""
    theirs = java_steps(str(tmp_path / "java"), VARIANTS["expiring"])
    ours = our_steps(build(str(tmp_path / "ours"), VARIANTS["expiring"]))
    assert theirs["state"]["result"]["ids"] == ours["state"]["result"]["ids"] == [1, 4, 5, 6]
    assert (theirs["state"]["result"]["earliest"], ours["state"]["result"]["earliest"]) == (4, 1)
    for what in AGREED:
        assert theirs[what].keys() == ours[what].keys() and theirs[what].get("result") == ours[what].get("result"), \
            (what, theirs[what], ours[what])
    assert "out of available snapshotId range [4, 6]" in theirs["incremental-1,5"]["error"]
    assert (theirs["snapshots-table"]["result"], ours["snapshots-table"]["result"]) == ([4, 5, 6], [1, 4, 5, 6])
    assert [r for p in theirs["stream-from-1"]["result"] for r in p["rows"]] == [[4, 40], [5, 50], [6, 60]]
    assert theirs["expire"]["result"]["ids"] == [1, 6]  # Java never expires snapshot 1
    assert ours["expire"]["result"]["ids"] == [6]


def test_a_spark_stream_reads_up_to_the_hole_then_fails(session, tmp_path):
    """Spark drives our source through the hole: snapshot 1 arrives, then the query fails in one line."""
    build(session.warehouse, VARIANTS["write-only"])
    stream = (session.spark.readStream.format("paimon").option("warehouse", session.warehouse)
              .option("scan.mode", "from-snapshot").option("scan.snapshot-id", "1").load("db.t"))
    query = (stream.writeStream.format("memory").queryName("paimon_hole_out").outputMode("append")
             .option("checkpointLocation", str(tmp_path / "checkpoint")).start())
    try:
        with pytest.raises(Exception, match="snapshot 2 does not exist"):
            query.processAllAvailable()
        assert sorted([r.k, r.v] for r in session.spark.sql("SELECT * FROM paimon_hole_out").collect()) == ROWS[1]
    finally:
        query.stop()
        session.spark.catalog.dropTempView("paimon_hole_out")
