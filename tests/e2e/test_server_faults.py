"""A server killed (SIGKILL, its Spark with it) while clients write (issue 47): the clients get an
error, never a hang; after a restart every table reads its last committed snapshot, every
acknowledged write is there once, nothing half-written is visible, and ``remove_orphan_files``
takes away what the killed commits had staged. Through bench/server_load.py's clients and checks."""

import datetime as dt
import multiprocessing
import os
import signal
import sys
import time
from pathlib import Path

from pyhive import hive

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import server_load as L  # noqa: E402
from server import free_port  # noqa: E402

CLIENTS = 4


def unreferenced(warehouse: Path, name: str) -> set:
    """Files under the table's directory no snapshot, tag or schema needs (what a killed commit staged)."""
    from paimon_sql.catalog import load_catalog
    from paimon_sql.store.references import referenced_files
    table = load_catalog(str(warehouse)).get_table(f"load.{name}")
    kept = {os.path.normpath(p.replace("file://", "")) for p in referenced_files(table)}
    root = warehouse / "load.db" / name
    return {str(p) for p in root.rglob("*") if p.is_file() and os.path.normpath(str(p)) not in kept}


def test_a_server_killed_while_clients_write_loses_nothing_acknowledged(tmp_path):
    warehouse = L.prepare(tmp_path, 2000)
    policy = tmp_path / "policy.json"
    policy.write_text('{"admins": ["ops"], "grants": [{"to": ["*"], "read": ["load"], "write": ["load.w", "load.m"]}]}')
    port = free_port()
    ctx = multiprocessing.get_context("fork")
    with L.serving(L.ours_command(warehouse, port, {}, policy), port, tmp_path / "first.log",
                   {"PYSPARK_PYTHON": sys.executable}) as proc, ctx.Pool(CLIENTS) as pool:
        until = time.time() + 25
        runs = pool.starmap_async(L.client_loop, [(port, i, None, until, 2000, {"insert": 1, "merge": 1})
                                                  for i in range(CLIENTS)])
        time.sleep(12)  # writes under way (the first ones start Python workers)
        os.killpg(proc.pid, signal.SIGKILL)
        results = runs.get(timeout=120)  # no client hangs on the dead server
    assert any(r["inserted"] or r["merged"] for r in results), "nothing was acknowledged before the kill"
    assert all(r["errors"] for r in results)  # each client heard of the kill
    port = free_port()
    with L.serving(L.ours_command(warehouse, port, {}, policy), port, tmp_path / "second.log",
                   {"PYSPARK_PYTHON": sys.executable}):
        checked = L.check_writes(port, None, results)
        assert (checked["lost"], checked["doubled"], checked["merge_keys_wrong"]) == (0, 0, 0), checked
        conn = hive.connect("127.0.0.1", port, auth="NOSASL", username="ops")  # an admin of the policy
        cursor = conn.cursor()
        staged = {name: unreferenced(warehouse, name) for name in ("w", "m")}
        now = dt.datetime.now().strftime("%Y-%m-%d %H:%M:%S")  # what the killed server wrote is older
        for name in ("w", "m"):
            cursor.execute(f"CALL sys.remove_orphan_files(table => 'load.{name}', older_than => '{now}')")
            cursor.fetchall()
        cursor.execute("SELECT count(*) FROM load.w")
        (rows,), = cursor.fetchall()
        assert all(unreferenced(warehouse, name) == set() for name in ("w", "m")), staged
        assert rows >= checked["inserts_acknowledged"]
        assert L.check_writes(port, None, results) == checked  # removing orphans removed nothing read
        conn.close()


_FETCHER = """
import sys
from pyhive import hive
cursor = hive.connect("127.0.0.1", int(sys.argv[1]), auth="NOSASL", username="reader").cursor()
cursor.execute("SELECT id, id * 2 AS b FROM range(10000000)")
print(len(cursor.fetchmany(1000)), flush=True)
sys.stdin.read()  # until killed
"""


def test_a_client_killed_mid_fetch_leaves_the_server_holding_nothing(tmp_path):
    """A client killed after its first rows of a 10M-row result: the server closes its session and
    operation (the connection closed), Spark's job for the rest ends, and its status says so."""
    import subprocess
    warehouse = L.prepare(tmp_path, 100)
    port = free_port()
    log, policy = tmp_path / "server.log", tmp_path / "policy.json"
    policy.write_text('{"grants": [{"to": ["*"], "read": ["load"]}]}')
    with L.serving(L.ours_command(warehouse, port, {}, policy), port, log,
                   {"PYSPARK_PYTHON": sys.executable}) as proc:
        status = L.status_reader(proc.pid, log)
        fetcher = subprocess.Popen([sys.executable, "-c", _FETCHER, str(port)], stdin=subprocess.PIPE,
                                   stdout=subprocess.PIPE, text=True)
        assert fetcher.stdout.readline().strip() == "1000"
        during = status()
        assert during.startswith("1 sessions (1 users, 1 addresses), 1 operations"), during
        # the same signal handed to a thread other than the main one (which waits in accept(), and
        # no client connects meanwhile) is still answered: its handler runs within accept()'s wake
        said = log.read_text().count("paimon-sql-server status:")
        _signal_thread(proc.pid, signal.SIGUSR1)
        deadline = time.monotonic() + 10
        while log.read_text().count("paimon-sql-server status:") == said and time.monotonic() < deadline:
            time.sleep(0.1)
        assert log.read_text().count("paimon-sql-server status:") == said + 1
        fetcher.kill()
        fetcher.wait()
        deadline, now = time.monotonic() + 60, during
        while time.monotonic() < deadline:
            now = status()
            if L.NOTHING_HELD.fullmatch(now or ""):
                break
            time.sleep(1)
        assert L.NOTHING_HELD.fullmatch(now or ""), now


def _signal_thread(pid: int, signum: int) -> None:
    """``signum`` to one thread of ``pid`` that is not its main thread and does not block it
    (glibc's tgkill: a signal to the process would go to the main thread first)."""
    import ctypes
    bit = 1 << (signum - 1)
    for tid in sorted(int(t) for t in os.listdir(f"/proc/{pid}/task")):
        status = Path(f"/proc/{pid}/task/{tid}/status").read_text()
        blocked = int(next(x for x in status.splitlines() if x.startswith("SigBlk:")).split()[1], 16)
        if tid != pid and not blocked & bit:
            libc = ctypes.CDLL(None, use_errno=True)
            assert libc.tgkill(pid, tid, signum) == 0, os.strerror(ctypes.get_errno())
            return
    raise AssertionError(f"no thread of {pid} but its main one takes signal {signum}")
