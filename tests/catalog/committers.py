"""Worker processes (tests/catalog/catalog_worker.py) started at one moment, for the concurrency tests
of the catalog suite and the object-store commits, and the check that no commit was lost."""

import json
import subprocess
import sys
import time
from pathlib import Path

from paimon_sql.catalog import load_catalog

WORKER = Path(__file__).with_name("catalog_worker.py")


def run_together(warehouse: str, options: dict, barrier: Path, op: str, procs: int, **extra) -> list:
    """Start ``procs`` worker processes doing ``op`` at the same moment (each waits at ``barrier``
    until all are ready); their JSON answers, in process order."""
    barrier.mkdir()
    config = {"warehouse": warehouse, "options": options, "barrier": str(barrier), "op": op, "procs": procs, **extra}
    workers = [subprocess.Popen([sys.executable, str(WORKER), json.dumps({**config, "proc": p})],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for p in range(procs)]
    deadline = time.time() + 120
    while len(list(barrier.glob("ready-*"))) < procs:
        assert time.time() < deadline and all(w.poll() is None for w in workers), [w.communicate() for w in workers]
        time.sleep(0.01)
    (barrier / "go").touch()
    answers = []
    for w in workers:
        out, err = w.communicate(timeout=300)
        assert w.returncode == 0, err[-3000:]
        answers.append(json.loads(out.strip().splitlines()[-1]))
    return answers


def commit_concurrently(warehouse: str, options: dict, barrier: Path, procs: int, commits: int) -> None:
    """``procs`` processes each commit ``commits`` single-row snapshots to ``db.t``, all starting at one moment."""
    assert run_together(warehouse, options, barrier, "commit", procs, commits=commits) == ["ok"] * procs


def assert_nothing_lost(warehouse: str, options: dict, procs: int, commits: int) -> None:
    """Snapshot ids consecutive, one per commit of each process, and every committed row present once."""
    table = load_catalog(warehouse, options).get_table("db.t")
    snapshots = table.snapshot_manager
    assert snapshots.listed_ids() == list(range(1, procs * commits + 1))
    users = [snapshots.snapshot(i).commit_user for i in snapshots.listed_ids()]
    assert sorted(users) == sorted(f"p{p}" for p in range(procs) for _ in range(commits))
    ids = table.new_scan().to_arrow().column("id").to_pylist()
    assert sorted(ids) == [p * 1000 + n for p in range(procs) for n in range(commits)]
