"""Scale without surprises (issue 19): a large INSERT and a many-commit primary-key table
compacted, through SQL, with the peak memory of every process measured.

    python tests/reliability/scale_run.py --rows 50000000 --commits 200 --commit-rows 100000

runs both phases on a fresh local Spark (``local[2]``, 1 GB driver heap) and prints one JSON
object; tests/reliability/test_scale.py runs them in the test run's Spark session. Figures: rows
and seconds per phase, the checks, and the peak RSS in MB, sampled every 0.1 s from /proc (a spike
shorter than that can be missed), of

- ``driver_python``: this process, the paimon-sql driver (plans and commits; rows never pass
  through it), and ``driver_python_growth`` from the start of the phases (what they cost it,
  whatever the process held before);
- ``jvm``: Spark's JVM, in local mode driver and executor at once;
- ``workers_max`` / ``workers_sum``: the Python workers that run our write and compaction tasks
  (children of the JVM's ``pyspark.daemon`` processes): the largest one, and their sum at one
  moment;
- ``writer``: the process that made the primary-key table's commits (the core API, a child
  process, so that its buffers are not counted as the driver's).

Phases: ``insert`` — ``INSERT INTO db.big SELECT ... FROM range(rows)`` into an append table
with 4 buckets, so that the rows go through our Python writer tasks (bucket hashing, Parquet
files; an append table without buckets is written by Spark's own Parquet writer in the JVM);
read back as ``count(*)``/``sum(id)``. ``compact`` — ``commits`` core-API commits of
``commit-rows`` random keys each into a ``write-only`` 4-bucket primary-key table (so ``commits``
sorted runs pile up per bucket), then ``CALL sys.compact``: every bucket's files merge into one
sorted run at the max level; rows and values are checked against what the commits wrote.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
from typing import Dict

import numpy as np

BUCKETS = 4
KEYS_PER_COMMIT_ROW = 10  # the primary-key table's key space: 10x the rows of one commit


def _rss_kb(pid: int) -> int:
    """VmRSS of a process in kB (0 once it is gone)."""
    try:
        with open(f"/proc/{pid}/status") as f:
            return next((int(line.split()[1]) for line in f if line.startswith("VmRSS:")), 0)
    except (OSError, ValueError):
        return 0


def _parents() -> Dict[int, int]:
    """pid -> parent pid of every process (one pass over /proc)."""
    out = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat") as f:
                    out[int(name)] = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
    return out


def _exe(pid: int) -> str:
    try:
        return os.path.basename(os.readlink(f"/proc/{pid}/exe"))
    except OSError:
        return ""


class PeakRss:
    """Samples the RSS of this process (the driver), its Spark JVM and the Python workers
    (children of the JVM's ``pyspark.daemon`` processes) every ``interval`` seconds; keeps each
    one's peak, the workers' peak sum, and the driver's and JVM's RSS when sampling began."""

    def __init__(self, interval: float = 0.1):
        self.interval = interval
        self.start: Dict[str, int] = {}
        self.peak: Dict[str, int] = {"driver": 0, "jvm": 0, "workers_sum": 0}
        self.workers: Dict[int, int] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> "PeakRss":
        self.start = self.sample()
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
        self.sample()

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            self.sample()

    def sample(self) -> Dict[str, int]:
        kids: Dict[int, list] = {}
        for pid, ppid in _parents().items():
            kids.setdefault(ppid, []).append(pid)
        now = {"driver": _rss_kb(os.getpid()), "jvm": 0, "workers_sum": 0}
        for jvm in (p for p in kids.get(os.getpid(), []) if _exe(p) == "java"):
            now["jvm"] += _rss_kb(jvm)
            for worker in (w for daemon in kids.get(jvm, []) for w in kids.get(daemon, [])):
                rss = _rss_kb(worker)
                self.workers[worker] = max(self.workers.get(worker, 0), rss)
                now["workers_sum"] += rss
        for k, v in now.items():
            self.peak[k] = max(self.peak[k], v)
        return now

    def figures(self) -> Dict[str, int]:
        """Peak RSS in MB: driver (and its growth from the start), JVM, workers (largest, sum)."""
        mb = {k: v // 1024 for k, v in self.peak.items()}
        growth = (self.peak["driver"] - self.start["driver"]) // 1024
        return {"driver_python": mb["driver"], "driver_python_growth": growth,
                "jvm": mb["jvm"], "workers": len(self.workers),
                "workers_max": max(self.workers.values(), default=0) // 1024, "workers_sum": mb["workers_sum"]}


# -- the primary-key table's commits (a child process: core API, no Spark) -------------------------

def make_commits(warehouse: str, commits: int, commit_rows: int) -> dict:
    """``commits`` commits of random keys into db.pk; the rows the table must then hold. Values
    are multiples of 0.5 below 2^40, so their sum is exact in any order."""
    import pyarrow as pa

    from paimon_sql.catalog import load_catalog
    catalog = load_catalog(warehouse)
    schema = pa.schema([("id", pa.int64()), ("v", pa.string()), ("x", pa.float64())])
    table = catalog.create_table_from_arrow("db.pk", schema, primary_keys=["id"], options={
        "bucket": str(BUCKETS), "write-only": "true"})
    rng = np.random.default_rng(19)
    keys = KEYS_PER_COMMIT_ROW * commit_rows
    last = np.full(keys, -1)
    for c in range(commits):
        ids = np.unique(rng.integers(0, keys, commit_rows))
        last[ids] = c
        table.write_arrow(pa.table({"id": ids, "v": np.char.add(f"c{c}-", ids.astype(str)),
                                    "x": ids * 0.5 + c}, schema=schema))
    written = np.flatnonzero(last >= 0)
    return {"rows": int(len(written)), "sum_x": float((written * 0.5 + last[written]).sum()),
            "writer_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024}


# -- the Spark phases --------------------------------------------------------------------------------

def _one(session, text: str) -> tuple:
    return tuple(session.sql(text).collect()[0])


def insert(session, rows: int) -> dict:
    session.sql(f"CREATE TABLE db.big (id BIGINT, k INT, v STRING, x DOUBLE) TBLPROPERTIES "
                f"('bucket' = '{BUCKETS}', 'bucket-key' = 'id')")
    start = time.monotonic()
    session.sql(f"INSERT INTO db.big SELECT id, CAST(id % 1000 AS INT), concat('v', id), id * 0.5 "
                f"FROM range({rows})")
    seconds = time.monotonic() - start
    count, total = _one(session, "SELECT count(*), sum(id) FROM db.big")
    return {"insert_rows": rows, "insert_seconds": round(seconds, 1), "insert_rows_per_s": int(rows / seconds),
            "insert_ok": count == rows and total == rows * (rows - 1) // 2}


def compact(session, warehouse: str, commits: int, expected: dict) -> dict:
    from paimon_sql.catalog import load_catalog
    from paimon_sql.mergetree.levels import num_levels
    start = time.monotonic()
    session.sql("CALL sys.compact(table => 'db.pk')")
    seconds = time.monotonic() - start
    table = load_catalog(warehouse).get_table("db.pk")
    levels = {e.file.level for e in table.new_scan().plan_entries()}
    count, sum_x = _one(session, "SELECT count(*), sum(x) FROM db.pk")
    return {"commits": commits, "compact_rows": count, "compact_seconds": round(seconds, 1),
            "compact_ok": (count == expected["rows"] and sum_x == expected["sum_x"]
                           and levels == {num_levels(table.options) - 1})}


def run(session, warehouse: str, rows: int, commits: int, commit_rows: int) -> dict:
    """Both phases in ``session`` (a paimon session on ``warehouse``, which has database ``db``);
    the figures, with the peak RSS (MB) of each process while they ran."""
    out = subprocess.run([sys.executable, __file__, "--commits-only", "--warehouse", warehouse,
                          "--commits", str(commits), "--commit-rows", str(commit_rows)],
                         check=True, capture_output=True, text=True)
    expected = json.loads(out.stdout)
    with PeakRss() as inserting:
        figures = insert(session, rows)
    with PeakRss() as compacting:
        figures.update(compact(session, warehouse, commits, expected))
    return {**figures, "rss_mb": {"insert": inserting.figures(), "compact": compacting.figures(),
                                  "writer": expected["writer_mb"]}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=50_000_000)
    parser.add_argument("--commits", type=int, default=200)
    parser.add_argument("--commit-rows", type=int, default=100_000)
    parser.add_argument("--warehouse")
    parser.add_argument("--commits-only", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.commits_only:
        print(json.dumps(make_commits(args.warehouse, args.commits, args.commit_rows)))
        return
    import paimon_sql
    from paimon_sql.catalog import load_catalog
    warehouse = args.warehouse or tempfile.mkdtemp(prefix="paimon-scale-")
    load_catalog(warehouse).create_database("db")
    session = paimon_sql.connect(warehouse, conf={
        "spark.master": "local[2]", "spark.driver.memory": "1g", "spark.ui.enabled": "false",
        "spark.sql.shuffle.partitions": str(BUCKETS), "spark.ui.showConsoleProgress": "false"})
    session.spark.sparkContext.setLogLevel("ERROR")
    try:
        print(json.dumps(run(session, warehouse, args.rows, args.commits, args.commit_rows)))
    finally:
        session.spark.stop()

if __name__ == "__main__":
    main()
