"""paimon-sql-server under a team's load (issue 47): N clients at once for T seconds, against Spark's
own Thrift Server running paimon-spark on the same tables.

Each server gets a copy of one warehouse (database ``load``): ``t``, a primary-key table of
``--rows`` rows partitioned by ``dt``, 4 buckets, after a 10 % upsert; ``w``, an append table the
clients INSERT into; ``m``, a primary-key table they MERGE into. A policy file is in force on ours
(every user reads ``load``, writes ``w`` and ``m``). Each client is a process with one pyhive
connection (``--auth ldap``: signed in against a slapd of its own, the tests' directory, round robin
over its users; ``none``: NOSASL), running until the time is up a mix of

    point   SELECT * FROM t WHERE id = k          agg      SELECT count(*), sum(b) FROM t
    filter  count(*) of a non-key filter          files    count(*) FROM `t$files`
    insert  INSERT INTO w VALUES (client, seq)    merge    MERGE INTO m one (client, key) row

and recording each statement's latency and outcome, after a warm-up of each kind once (its writes
as a client of its own, :data:`WARM`). Reported per server: statements per second,
p50/p99 per kind, errors (the first few messages), the server's resident memory and process count
(its process tree: the JVM's Python workers are in it) before, at peak and ``--settle`` seconds (180)
after the clients left, ours' sessions and operations then and halfway through (its status line, on
SIGUSR1); and the writes checked: every acknowledged
INSERT's row is in ``w`` exactly once (lost, doubled), every key's value in ``m`` is the last
acknowledged MERGE's.

    .venv/bin/python bench/server_load.py [--clients 8] [--seconds 60] [--rows 1000000]
                                          [--servers ours,sts] [--auth none|ldap] [--settle 10]
                                          [--single N]

``--single N`` measures one client instead: both servers up at once, each kind's statement run
3 times to warm up and then N times on each, alternated (paimon-spark first in each pair, the
same text on both); the medians per kind and their ratio, ours / paimon-spark's.

``sts`` needs ``.venv-paimon-spark`` (PySpark 4.1.2 with ``spark-hive-thriftserver``) and the
paimon-spark jar (``$PAIMON_SPARK_JAR``, else ``../shared/oracles/``), put on the driver's class
path (with ``--jars`` a second session fails with ``NoClassDefFoundError``).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import multiprocessing
import os
import random
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Callable, Dict, List, Optional

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
from server import free_port, stop_group, tree_count, tree_rss  # noqa: E402

JAR = os.environ.get("PAIMON_SPARK_JAR") or str(ROOT.parent / "shared" / "oracles" / "paimon-spark-4.1_2.13-2.0.0.jar")
STS_PYTHON = ROOT / ".venv-paimon-spark" / "bin" / "python"
SPARK_CONF = {"spark.driver.memory": "2g", "spark.sql.shuffle.partitions": "4", "spark.ui.enabled": "false"}
KINDS = {"point": 40, "agg": 10, "filter": 10, "files": 10, "insert": 20, "merge": 10}
MERGE_KEYS = 20  # keys per client in m
WARM = -1  # the client id of the warm-up's writes
POLICY = {"grants": [{"to": ["*"], "read": ["load"], "write": ["load.w", "load.m"]}]}


# ---------------------------------------------------------------- the tables

def prepare(root: Path, rows: int) -> Path:
    """The warehouse every server gets a copy of, written by paimon-sql's core (no Spark here)."""
    import numpy as np
    import pyarrow as pa
    from paimon_sql.catalog import load_catalog
    warehouse = root / "template"
    catalog = load_catalog(str(warehouse))
    catalog.create_database("load")

    def rows_of(ids: np.ndarray, bump: float) -> pa.Table:
        rnd = np.random.default_rng(7)
        days = np.array(["2024-01-01", "2024-01-02", "2024-01-03", "2024-01-04"])
        return pa.table({"id": ids, "b": rnd.random(len(ids)) + bump, "c": (ids % 100).astype(np.int32),
                         "s": pa.array(np.char.add("s-", (ids % 10000).astype(str))), "dt": pa.array(days[ids % 4])})
    ids = np.arange(rows, dtype=np.int64)
    t = catalog.create_table_from_arrow("load.t", rows_of(ids[:1], 0).schema, partition_keys=["dt"],
                                        primary_keys=["dt", "id"], options={"bucket": "4"})
    t.write_arrow(rows_of(ids, 0))
    t.write_arrow(rows_of(ids[ids % 10 == 0], 1))  # the upsert: merged on read
    catalog.create_table_from_arrow("load.w", pa.schema([("client", pa.int32()), ("seq", pa.int64()),
                                                         ("note", pa.string())]))
    catalog.create_table_from_arrow("load.m", pa.schema([pa.field("client", pa.int32(), False),
                                                         pa.field("k", pa.int32(), False), ("v", pa.int64())]),
                                    primary_keys=["client", "k"], options={"bucket": "2"})
    return warehouse


# ---------------------------------------------------------------- the servers

def ours_command(warehouse: Path, port: int, auth: dict, policy: Path) -> List[str]:
    cmd = [sys.executable, "-m", "paimon_sql.server", "--warehouse", str(warehouse), "--port", str(port),
           "--master", "local[2]", "--policy-file", str(policy)]
    if auth:
        cmd += ["--auth", "ldap", "--ldap-url", auth["url"], "--ldap-user-dn-pattern", auth["pattern"]]
    else:
        cmd += ["--auth", "nosasl"]
    for k, v in SPARK_CONF.items():
        cmd += ["--conf", f"{k}={v}"]
    return cmd


def sts_command(warehouse: Path, port: int, auth: dict, tmp: Path) -> List[str]:
    """Spark's Thrift Server of PySpark 4.1.2 with paimon-spark's catalog as the default one."""
    home = subprocess.run([str(STS_PYTHON), "-c", "import pyspark, os; print(os.path.dirname(pyspark.__file__))"],
                          capture_output=True, text=True, check=True).stdout.strip()
    conf = {**SPARK_CONF, "spark.sql.extensions": "org.apache.paimon.spark.extensions.PaimonSparkSessionExtensions",
            "spark.sql.catalog.paimon": "org.apache.paimon.spark.SparkCatalog",
            "spark.sql.catalog.paimon.warehouse": f"file://{warehouse}", "spark.sql.defaultCatalog": "paimon",
            "spark.sql.warehouse.dir": str(tmp / "sts-spark-warehouse")}
    driver_memory = conf.pop("spark.driver.memory")
    cmd = [os.path.join(home, "bin", "spark-submit"), "--class",
           "org.apache.spark.sql.hive.thriftserver.HiveThriftServer2", "--master", "local[2]",
           "--driver-memory", driver_memory, "--driver-class-path", JAR,
           "--driver-java-options", f"-Dderby.system.home={tmp}"]
    for k, v in conf.items():
        cmd += ["--conf", f"{k}={v}"]
    hive = {"hive.server2.thrift.port": port, "hive.server2.thrift.bind.host": "127.0.0.1",
            "javax.jdo.option.ConnectionURL": f"jdbc:derby:;databaseName={tmp / 'sts_metastore'};create=true"}
    if auth:
        hive.update({"hive.server2.authentication": "LDAP", "hive.server2.authentication.ldap.url": auth["url"],
                     "hive.server2.authentication.ldap.userDNPattern": auth["pattern"]})
    else:
        hive["hive.server2.authentication"] = "NOSASL"
    for k, v in hive.items():
        cmd += ["--hiveconf", f"{k}={v}"]
    return cmd


@contextlib.contextmanager
def serving(cmd: List[str], port: int, log_path: Path, env: Optional[dict] = None):
    """``cmd`` in a process group of its own until its port answers; yields the process."""
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
                                env={**os.environ, **(env or {})})
    try:
        deadline = time.monotonic() + 600
        while True:
            if proc.poll() is not None:
                raise SystemExit(f"{cmd[0]} exited with {proc.returncode}:\n{log_path.read_text()[-3000:]}")
            with contextlib.suppress(OSError):
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            if time.monotonic() > deadline:
                raise SystemExit(f"{cmd[0]} did not listen within 600 s")
            time.sleep(0.5)
        yield proc
    finally:
        stop_group(proc)


# ---------------------------------------------------------------- the clients

def connect(port: int, user: Optional[tuple]):
    from pyhive import hive
    if user is None:
        return hive.connect("127.0.0.1", port, auth="NOSASL", username="load")
    return hive.connect("127.0.0.1", port, auth="LDAP", username=user[0], password=user[1])


def statement(kind: str, client: int, seq: int, rows: int, rnd: random.Random) -> str:
    if kind == "point":
        return f"SELECT * FROM load.t WHERE id = {rnd.randrange(rows)}"
    if kind == "agg":
        return "SELECT count(*), sum(b) FROM load.t"
    if kind == "filter":
        return f"SELECT count(*) FROM load.t WHERE s = 's-{rnd.randrange(10000)}'"
    if kind == "files":
        return "SELECT count(*) FROM load.`t$files`"
    if kind == "insert":
        return f"INSERT INTO load.w VALUES ({client}, {seq}, 'x')"
    return (f"MERGE INTO load.m USING (SELECT {client} AS client, {seq % MERGE_KEYS} AS k, CAST({seq} AS BIGINT) AS v) s "
            "ON m.client = s.client AND m.k = s.k WHEN MATCHED THEN UPDATE SET v = s.v WHEN NOT MATCHED THEN INSERT *")


def client_loop(port: int, client: int, user: Optional[tuple], until: float, rows: int,
                mix: Optional[Dict[str, int]] = None) -> dict:
    """One client's statements until ``until`` (time.time()): latencies and outcomes by kind, and
    the writes the server acknowledged. ``mix``: the kinds' weights (default :data:`KINDS`)."""
    rnd = random.Random(client)
    kinds, weights = list(mix or KINDS), list((mix or KINDS).values())
    out = {"latency": {k: [] for k in KINDS}, "errors": [], "inserted": [], "merged": {}, "unknown_keys": []}
    conn = connect(port, user)
    cursor = conn.cursor()
    seq = 0
    while time.time() < until:
        kind = rnd.choices(kinds, weights)[0]
        seq += 1
        start = time.perf_counter()
        try:
            cursor.execute(statement(kind, client, seq, rows, rnd))
            if kind not in ("insert", "merge"):
                cursor.fetchall()
        except Exception as e:  # the outcome of a failed write is unknown: not checked
            out["errors"].append(f"{kind}: {' '.join(str(e).split())[:300]}")
            if kind == "merge":
                out["unknown_keys"].append(seq % MERGE_KEYS)
            time.sleep(0.1)  # a server gone answers at once: no busy loop
            continue
        out["latency"][kind].append(time.perf_counter() - start)
        if kind == "insert":
            out["inserted"].append(seq)
        elif kind == "merge":
            out["merged"][seq % MERGE_KEYS] = seq
    try:
        conn.close()
    except Exception as e:  # the server is gone: its session went with it
        out["errors"].append(f"close: {' '.join(str(e).split())[:300]}")
    return out


def check_writes(port: int, user: Optional[tuple], results: List[dict]) -> dict:
    """Acknowledged INSERTs present once each; each MERGE key holding its last acknowledged value."""
    conn = connect(port, user)
    cursor = conn.cursor()
    cursor.execute("SELECT client, seq, count(*) FROM load.w GROUP BY client, seq")
    present = {(c, s): n for c, s, n in cursor.fetchall()}
    cursor.execute("SELECT client, k, v FROM load.m")
    merged = {(c, k): v for c, k, v in cursor.fetchall()}
    conn.close()
    present.pop((WARM, 0), None)
    acked = {(i, s) for i, r in enumerate(results) for s in r["inserted"]}
    wrong = [(i, k) for i, r in enumerate(results) for k, v in r["merged"].items()
             if k not in r["unknown_keys"] and merged.get((i, k)) != v]
    return {"inserts_acknowledged": len(acked), "lost": len(acked - set(present)),
            "doubled": sum(1 for n in present.values() if n > 1), "merge_keys_wrong": len(wrong)}


class Sampler:
    """The server's resident memory and process count (its process tree), every second, in a thread."""

    def __init__(self, pid: int):
        self.pid, self.samples, self.counts, self._stop = pid, [], [], threading.Event()
        self.first = tree_count(pid)
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        while not self._stop.wait(1.0):
            self.samples.append(tree_rss(self.pid))
            self.counts.append(tree_count(self.pid))

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()


def run_load(port: int, pid: int, clients: int, seconds: float, rows: int, users: Optional[List[tuple]],
             settle: float = 180, status: Callable[[], Optional[str]] = lambda: None) -> dict:
    """The load against a serving server: figures and the write check. ``status``: the server's
    status line now (None: it tells none)."""
    def user(i):
        return users[i % len(users)] if users else None
    # each kind once, so the first client is not everyone's warm-up: the writes as a client no one
    # else is (WARM), whose rows the write check passes over
    warm = connect(port, user(0))
    cursor = warm.cursor()
    for kind in KINDS:
        cursor.execute(statement(kind, WARM, 0, rows, random.Random(0)))
        if kind not in ("insert", "merge"):
            cursor.fetchall()
    warm.close()
    before, said = tree_rss(pid), {"before": status()}
    until = time.time() + seconds
    halfway = threading.Timer(seconds / 2, lambda: said.update(during=status()))
    halfway.start()
    ctx = multiprocessing.get_context("fork")
    with Sampler(pid) as sampler, ctx.Pool(clients) as pool:
        started = time.perf_counter()
        results = pool.starmap(client_loop, [(port, i, user(i), until, rows) for i in range(clients)])
        elapsed = time.perf_counter() - started
    halfway.join()
    # the clients' sessions closed: what the server holds after them (Spark ends a Python worker
    # idle for a minute: PythonWorkerFactory's IDLE_WORKER_TIMEOUT_NS)
    time.sleep(settle)
    after, said["after"] = tree_rss(pid), status()
    figures = {"clients": clients, "seconds": round(elapsed, 1)}
    done = sum(len(v) for r in results for v in r["latency"].values())
    figures["statements_per_s"] = round(done / elapsed, 2)
    for kind in KINDS:
        lat = sorted(x for r in results for x in r["latency"][kind])
        if lat:
            figures[kind] = {"n": len(lat), "p50": round(statistics.median(lat), 3),
                             "p99": round(lat[min(len(lat) - 1, int(len(lat) * 0.99))], 3)}
    errors = [e for r in results for e in r["errors"]]
    figures["errors"] = len(errors)
    figures["first_errors"] = errors[:5]
    figures["rss_mb"] = {"before": before // 2**20, "peak": max(sampler.samples or [before]) // 2**20,
                         "after": after // 2**20}
    figures["processes"] = {"before": sampler.first, "peak": max(sampler.counts or [0]),
                            "after": tree_count(pid)}
    figures["status"] = said
    figures.update(check_writes(port, user(0), results))
    return figures


# ---------------------------------------------------------------- the run

@contextlib.contextmanager
def directory(tmp: Path):
    """The tests' slapd (tests/e2e/ldap_support.py): (url, user DN pattern, [(user, password)])."""
    sys.path.insert(0, str(ROOT / "tests"))
    from e2e import ldap_support
    with ldap_support.slapd(tmp / "ldap") as d:
        users = [(u, pw) for u, (pw, _) in ldap_support.USERS.items() if "," not in u]
        yield {"url": d.ldap_url, "pattern": f"uid=%s,{ldap_support.PEOPLE_DN}"}, users


def status_reader(pid: int, log_path: Path) -> Callable[[], str]:
    """Asks ours for its status line (SIGUSR1) and reads it from its log (where the JVM writes too:
    the line is looked for anywhere, not only at a line's start); what went wrong if no line came."""
    def lines() -> List[str]:
        return re.findall(re.escape(_STATUS) + r" ?([^\n]*)", log_path.read_text(errors="replace"))

    def status() -> str:
        seen = len(lines())
        os.kill(pid, signal.SIGUSR1)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            said = lines()
            if len(said) > seen:
                return said[seen].strip()
            time.sleep(0.05)
        return "no status line within 60 s; the log ends: " + log_path.read_text(errors="replace")[-2000:]
    return status


_STATUS = "paimon-sql-server status:"
NOTHING_HELD = re.compile(r"0 sessions \(0 users, 0 addresses\), 0 operations \(0 running\), 0 Spark jobs running, "
                          r"0 planning \(limit (\d+|none)\), 0 waiting")  # ours' status line once all left


def measure(server: str, template: Path, tmp: Path, args, auth: dict, users) -> dict:
    warehouse = tmp / f"wh-{server}"
    shutil.copytree(template, warehouse)
    port = free_port()
    cmd, env = server_command(server, warehouse, port, auth, tmp)
    log_path = tmp / f"{server}.log"
    with serving(cmd, port, log_path, env) as proc:
        status = status_reader(proc.pid, log_path) if server == "ours" else (lambda: None)
        figures = run_load(port, proc.pid, args.clients, args.seconds, args.rows, users, args.settle, status)
    # stopped as a service manager stops it (SIGTERM to its process group, the JVM's included)
    log = log_path.read_text(errors="replace")
    figures["python_tracebacks"] = log.count(_TRACEBACK)
    if _TRACEBACK in log:
        figures["first_traceback"] = log[log.index(_TRACEBACK):][:3000]
    return figures


_TRACEBACK = "Traceback (most recent call last)"


def server_command(server: str, warehouse: Path, port: int, auth: dict, tmp: Path) -> tuple:
    """(command, environment) of ``server`` on ``warehouse`` (ours under the policy file :data:`POLICY`)."""
    if server == "ours":
        policy = tmp / "policy.json"
        policy.write_text(json.dumps(POLICY))
        return ours_command(warehouse, port, auth, policy), {"PYSPARK_PYTHON": sys.executable}
    return sts_command(warehouse, port, auth, tmp), {"PYSPARK_PYTHON": str(STS_PYTHON)}


def single(template: Path, tmp: Path, args, auth: dict, users) -> dict:
    """One client per server, both serving at once: per kind the median seconds of ``args.single``
    runs each after 3 warm-ups, the servers alternated (paimon-spark first), the same text on both."""
    servers = ("sts", "ours")
    user = users[0] if users else None
    with contextlib.ExitStack() as stack:
        cursors = {}
        for server in servers:
            warehouse, port = tmp / f"wh-single-{server}", free_port()
            shutil.copytree(template, warehouse)
            cmd, env = server_command(server, warehouse, port, auth, tmp)
            stack.enter_context(serving(cmd, port, tmp / f"single-{server}.log", env))
            cursors[server] = stack.enter_context(contextlib.closing(connect(port, user))).cursor()
        rnd, seq, out = random.Random(11), 0, {s: {} for s in servers}
        for kind in KINDS:
            times: Dict[str, List[float]] = {s: [] for s in servers}
            for run in range(3 + args.single):
                seq += 1
                text = statement(kind, 0, seq, args.rows, rnd)
                for server in servers:
                    start = time.perf_counter()
                    cursors[server].execute(text)
                    if kind not in ("insert", "merge"):
                        cursors[server].fetchall()
                    if run >= 3:
                        times[server].append(time.perf_counter() - start)
            for server in servers:
                out[server][kind] = round(statistics.median(times[server]), 4)
    return out


def main(argv: Optional[List[str]] = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--clients", type=int, default=8)
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--servers", default="ours,sts")
    ap.add_argument("--auth", choices=("none", "ldap"), default="none")
    ap.add_argument("--settle", type=float, default=180,
                    help="seconds after the clients left before RSS is read (Spark ends idle Python workers after "
                         "60; the server's JVM collects after 60 s without a collection and gives heap back then)")
    ap.add_argument("--single", type=int, default=0, metavar="N",
                    help="one client instead: each kind N times on both servers, alternated; medians")
    args = ap.parse_args(argv)
    tmp = Path(tempfile.mkdtemp(prefix="server-load-"))
    out = {}
    try:
        template = prepare(tmp, args.rows)
        with (directory(tmp) if args.auth == "ldap" else contextlib.nullcontext(({}, None))) as (auth, users):
            if args.single:
                out = single(template, tmp, args, auth, users)
                for kind in KINDS:
                    print(f"  {kind:<7} ours {out['ours'][kind]:.3f} s  paimon-spark {out['sts'][kind]:.3f} s  "
                          f"ratio {out['ours'][kind] / out['sts'][kind]:.2f}")
                return out
            for server in args.servers.split(","):
                out[server] = measure(server, template, tmp, args, auth, users)
                print(f"{server}: {json.dumps(out[server])}", file=sys.stderr, flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(report(out))
    return out


def report(out: Dict[str, dict]) -> str:
    lines = []
    for server, f in out.items():
        lines.append(f"{server}: {f['clients']} clients, {f['seconds']} s: {f['statements_per_s']} statements/s, "
                     f"{f['errors']} errors; RSS MB before/peak/after {f['rss_mb']['before']}/{f['rss_mb']['peak']}/"
                     f"{f['rss_mb']['after']}; processes {f['processes']['before']}/{f['processes']['peak']}/"
                     f"{f['processes']['after']}; writes: {f['inserts_acknowledged']} acknowledged, {f['lost']} lost, "
                     f"{f['doubled']} doubled, {f['merge_keys_wrong']} merge keys wrong")
        if any(f["status"].values()):
            lines.append("  status: " + "; ".join(f"{k}: {v}" for k, v in f["status"].items()))
        for kind in KINDS:
            if kind in f:
                lines.append(f"  {kind:<7} n {f[kind]['n']:>6}  p50 {f[kind]['p50']:.3f} s  p99 {f[kind]['p99']:.3f} s")
        for e in f["first_errors"]:
            lines.append(f"  error: {e}")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
