"""paimon-sql-server vs Spark's own Thrift Server (issue 16): same rows, same client, one run.

The rows (id BIGINT, value DOUBLE, name STRING, dt DATE) are written once as a Paimon append table
(through ``paimon_sql``) and once as plain Parquet files. Spark's Thrift Server (HiveThriftServer2
from the pip pyspark's jars, a Derby metastore in the temp dir) serves the Parquet files as a table
``t``; ``python -m paimon_sql.server`` serves the Paimon table ``t``. Both run ``local[2]`` with the
same driver memory and shuffle partitions; both run at once, started one after the other, and are
measured alternately (each run on one server, then the same on the other) through pyhive (NOSASL):

a. fetch every row (``SELECT * FROM t``, ``cursor.arraysize`` rows per FetchResults, fetchmany loop):
   seconds, min and median of the runs, ratio ours / Spark's (target <= 1.0), and the server's peak
   resident memory during the fetches (the process and its children: our server's JVM is a child).
b. small-query latency: ``SELECT count(*) FROM t WHERE id < 100`` and ``SELECT 1``, median of the
   runs after three warm-up runs (target <= 1.0).

    .venv/bin/python bench/server.py [--rows N=1_000_000] [--fetch-runs 3] [--latency-runs 30]
                                     [--arraysize 10000] [--only spark|ours]
"""

import argparse
import contextlib
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

import pyspark
from pyhive import hive
from thrift.transport.TTransport import TTransportException

import paimon_sql

SOURCE = ("SELECT id, id * 0.5 AS value, concat('name-', id) AS name, "
          "date_add(DATE'2024-01-01', CAST(id % 366 AS INT)) AS dt FROM range({n})")
COLUMNS = "id BIGINT, value DOUBLE, name STRING, dt DATE"
QUERIES = ("SELECT count(*) FROM t WHERE id < 100", "SELECT 1")
SPARK_CONF = {"spark.master": "local[2]", "spark.driver.memory": "2g", "spark.sql.shuffle.partitions": "8",
              "spark.ui.enabled": "false"}
SPARK_HOME = os.path.dirname(pyspark.__file__)
PAGE = os.sysconf("SC_PAGE_SIZE")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def load() -> str:
    return "load average " + " ".join(f"{x:.2f}" for x in os.getloadavg())


def tree_rss(pid: int) -> int:
    """Resident bytes of ``pid`` and all its descendants (0 for processes gone meanwhile)."""
    return sum(pages for _, pages in _tree(pid)) * PAGE


def tree_count(pid: int) -> int:
    """Processes in ``pid``'s tree, itself included (0 when it is gone)."""
    return len(_tree(pid))


def _tree(pid: int) -> list:
    """(pid, resident pages) of ``pid`` and all its descendants still there."""
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        try:
            with open(f"/proc/{p}/statm") as f:
                pages = int(f.read().split()[1])
            for task in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{task}/children") as f:
                    todo.extend(int(c) for c in f.read().split())
            out.append((p, pages))
        except (FileNotFoundError, ProcessLookupError):
            pass
    return out


class PeakRss:
    """Samples :func:`tree_rss` every 50 ms in a thread while the ``with`` block runs."""

    def __init__(self, pid: int):
        self.pid, self.peak, self._stop = pid, 0, threading.Event()

    def _sample(self):
        while not self._stop.is_set():
            self.peak = max(self.peak, tree_rss(self.pid))
            self._stop.wait(0.05)

    def __enter__(self):
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, tree_rss(self.pid))


def write_tables(tmp: str, n: int) -> tuple:
    """The rows as a Paimon table ``default.t`` in a warehouse and as Parquet files; their paths."""
    warehouse, parquet = os.path.join(tmp, "wh"), os.path.join(tmp, "parquet")
    s = paimon_sql.connect(warehouse, conf=dict(SPARK_CONF))
    s.spark.sparkContext.setLogLevel("ERROR")
    try:
        s.sql(f"CREATE TABLE t ({COLUMNS})")
        s.sql(f"INSERT INTO t {SOURCE.format(n=n)}")
        s.spark_sql(SOURCE.format(n=n)).write.parquet(parquet)
    finally:
        s.close()
    return warehouse, parquet


def spark_thrift_server(tmp: str, port: int) -> list:
    """The command line of Spark's Thrift Server from the pip pyspark (start-thriftserver.sh's class)."""
    jars = os.path.join(SPARK_HOME, "jars")
    if not any(j.startswith("spark-hive-thriftserver") for j in os.listdir(jars)):
        sys.exit(f"no spark-hive-thriftserver jar in {jars}: this pyspark cannot run Spark's Thrift Server")
    conf = {**SPARK_CONF, "spark.sql.warehouse.dir": os.path.join(tmp, "spark-warehouse")}
    conf.pop("spark.master")
    conf.pop("spark.driver.memory")
    cmd = [os.path.join(SPARK_HOME, "bin", "spark-submit"),
           "--class", "org.apache.spark.sql.hive.thriftserver.HiveThriftServer2",
           "--master", SPARK_CONF["spark.master"], "--driver-memory", SPARK_CONF["spark.driver.memory"],
           "--driver-java-options", f"-Dderby.system.home={tmp}"]
    for k, v in conf.items():
        cmd += ["--conf", f"{k}={v}"]
    for k, v in {"hive.server2.thrift.port": port, "hive.server2.thrift.bind.host": "127.0.0.1",
                 "hive.server2.authentication": "NOSASL",
                 "javax.jdo.option.ConnectionURL":
                     f"jdbc:derby:;databaseName={os.path.join(tmp, 'metastore_db')};create=true"}.items():
        cmd += ["--hiveconf", f"{k}={v}"]
    return cmd


def paimon_sql_server(warehouse: str, port: int) -> list:
    conf = dict(SPARK_CONF)
    cmd = [sys.executable, "-m", "paimon_sql.server", "--warehouse", warehouse, "--port", str(port),
           "--auth", "nosasl", "--master", conf.pop("spark.master")]
    for k, v in conf.items():
        cmd += ["--conf", f"{k}={v}"]
    return cmd


@contextlib.contextmanager
def serving(cmd: list, port: int, log_path: str, cwd: str):
    """Runs ``cmd`` in its own process group until a pyhive connection succeeds; yields (process,
    startup seconds, connection); stops the whole group at exit."""
    start = time.perf_counter()
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, cwd=cwd, start_new_session=True)
    try:
        deadline = start + 300
        while True:
            if proc.poll() is not None:
                with open(log_path, errors="replace") as f:
                    tail = f.read()[-3000:]
                sys.exit(f"{cmd[0]} exited with {proc.returncode} before serving:\n{tail}")
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                conn = hive.connect("127.0.0.1", port, auth="NOSASL")
                break
            except (OSError, TTransportException):
                if time.perf_counter() > deadline:
                    raise
                time.sleep(0.5)
        startup = time.perf_counter() - start
        try:
            yield proc, startup, conn
        finally:
            conn.close()
    finally:
        stop_group(proc)


def stop_group(proc: subprocess.Popen) -> None:
    """Stop a server started in a process group of its own: SIGTERM to the group, SIGKILL after 30 s."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, 15)
    try:
        proc.wait(30)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, 9)
        proc.wait()


def fetch_all(cursor, arraysize: int) -> int:
    cursor.execute("SELECT * FROM t")
    n = 0
    while rows := cursor.fetchmany(arraysize):
        n += len(rows)
    return n


def fetch_run(server, args, result) -> None:
    """One full fetch through ``server``'s connection: its time, the client's CPU time, peak RSS."""
    proc, conn = server
    cursor = conn.cursor()
    cursor.arraysize = args.arraysize
    with PeakRss(proc.pid) as rss:
        start, cpu = time.perf_counter(), time.process_time()
        n = fetch_all(cursor, args.arraysize)
        result["fetch"].append(time.perf_counter() - start)
        result["client"].append(time.process_time() - cpu)
    if n != args.rows:
        sys.exit(f"fetched {n:,} rows, expected {args.rows:,}")
    result["rss"] = max(result.get("rss", 0), rss.peak)


def query_run(server, query: str, expected: list) -> float:
    """Seconds of one small query, from execute to its last row."""
    cursor = server[1].cursor()
    start = time.perf_counter()
    cursor.execute(query)
    rows = cursor.fetchall()
    elapsed = time.perf_counter() - start
    if rows != expected:
        sys.exit(f"{query} gave {rows}, expected {expected}")
    return elapsed


def measure(servers: dict, args) -> dict:
    """Runs alternate between the servers (the order flipping each round), so that the machine's load,
    which other work moves, weighs on both alike; small queries after three warm-up runs each."""
    results = {side: {"fetch": [], "client": []} for side in servers}
    order = list(servers)
    for i in range(args.fetch_runs):
        for side in order[::-1] if i % 2 else order:
            fetch_run(servers[side], args, results[side])
    for q, expected in zip(QUERIES, ([(min(100, args.rows),)], [(1,)])):
        for side in order:
            for _ in range(3):
                query_run(servers[side], q, expected)
            results[side][q] = []
        for i in range(args.latency_runs):
            for side in order[::-1] if i % 2 else order:
                results[side][q].append(query_run(servers[side], q, expected))
    return results


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--fetch-runs", type=int, default=3)
    ap.add_argument("--latency-runs", type=int, default=30)
    ap.add_argument("--arraysize", type=int, default=10_000)
    ap.add_argument("--only", choices=("spark", "ours"))
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="paimon-server-bench-")
    startup = {}
    try:
        warehouse, parquet = write_tables(tmp, args.rows)
        with contextlib.ExitStack() as stack:
            servers = {}
            for side in ("spark", "ours"):  # started one after the other: startup times of their own
                if args.only not in (None, side):
                    continue
                port = free_port()
                cmd = spark_thrift_server(tmp, port) if side == "spark" else paimon_sql_server(warehouse, port)
                proc, startup[side], conn = stack.enter_context(
                    serving(cmd, port, os.path.join(tmp, f"{side}.log"), tmp))
                if side == "spark":
                    conn.cursor().execute(f"CREATE TABLE t USING parquet LOCATION '{parquet}'")
                servers[side] = (proc, conn)
            results = measure(servers, args)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    report(args, results, startup)


def report(args, results: dict, startup: dict):
    print(f"rows {args.rows:,} x 4 (bigint, double, string, date); pyhive NOSASL, arraysize {args.arraysize:,}; "
          f"local[2], 2 cores; {load()}")
    print(f"{'measure':<50}{'paimon-sql-server':>20}{'Spark Thrift Server':>22}{'ratio':>10}{'target':>8}")
    print(f"{'':<50}{'min / median':>20}{'min / median':>22}{'(medians)':>10}")
    rows = [(f"a. fetch all rows, s ({args.fetch_runs} runs)", "fetch", 1, 1.0),
            ("   of which the client's CPU (pyhive), s", "client", 1, None)]
    rows += [(f"b. {q}, ms ({args.latency_runs})", q, 1000, 1.0) for q in QUERIES]
    for label, key, scale, target in rows:
        cells = {side: (min(r[key]) * scale, statistics.median(r[key]) * scale) for side, r in results.items()}
        text = {side: f"{lo:.3f} / {med:.3f}" if scale == 1 else f"{lo:.1f} / {med:.1f}"
                for side, (lo, med) in cells.items()}
        ratio = f"{cells['ours'][1] / cells['spark'][1]:.2f}x" if len(cells) == 2 else "-"
        goal = f"{target:.2f}x" if target else "-"
        print(f"{label:<50}{text.get('ours', '-'):>20}{text.get('spark', '-'):>22}{ratio:>10}{goal:>8}")
    rss = {side: r["rss"] / 2**20 for side, r in results.items()}
    ratio = f"{rss['ours'] / rss['spark']:.2f}x" if len(rss) == 2 else "-"
    mb = {side: f"{v:.0f}" for side, v in rss.items()}
    print(f"{'peak RSS during the fetches, MB (with children)':<50}"
          f"{mb.get('ours', '-'):>20}{mb.get('spark', '-'):>22}{ratio:>10}")
    up = {side: f"{v:.1f}" for side, v in startup.items()}
    print(f"{'server start until a client connects, s':<50}{up.get('ours', '-'):>20}{up.get('spark', '-'):>22}")


if __name__ == "__main__":
    main()
