"""INSERT and SELECT on a Spark standalone cluster (a master and two workers on 127.0.0.1) give
the same result as local mode: nothing may hide in the driver process. CALL sys.compact runs each
bucket's compaction in a task on the executors, as Spark's event log shows. One script does both, run
once on the cluster by the shell, and once locally by the shell's statement loop on the test run's own
Spark session (test_cli's ``run_in_process``): a Spark application (a driver and, on the cluster, an
executor per worker) costs more than the script's statements."""

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pyspark
import pytest
from support import free_port

from e2e.test_cli import QUICK_OPTS, run, run_in_process

SPARK_CLASS = Path(pyspark.__file__).parent / "bin" / "spark-class"
SCRIPT = ("CREATE TABLE t (id BIGINT, v STRING, dt STRING, PRIMARY KEY (id, dt) NOT ENFORCED) "
          "PARTITIONED BY (dt) WITH ('bucket' = '3'); "
          "INSERT INTO t SELECT id, concat('v', id), IF(id % 2 = 0, 'a', 'b') FROM range(200); "
          "INSERT INTO t SELECT id, 'new', IF(id % 2 = 0, 'a', 'b') FROM range(150, 250); "
          "SELECT dt, count(*) AS n, sum(IF(v = 'new', 1, 0)) AS updated FROM t GROUP BY dt ORDER BY dt; "
          "SELECT count(*) AS n, sum(id) AS ids, sum(IF(v = 'new', 1, 0)) AS updated FROM t; "
          "SELECT count(*) AS files, count(DISTINCT partition, bucket) AS buckets, max(level) AS top FROM t$files; "
          "CALL sys.compact(table => 't'); "
          "SELECT count(*) AS n, sum(id) AS ids, sum(IF(v = 'new', 1, 0)) AS updated FROM t; "
          "SELECT count(*) AS files, count(DISTINCT partition, bucket) AS buckets, min(level) AS low FROM t$files; "
          "SELECT commit_kind FROM t$snapshots ORDER BY snapshot_id")


def _wait_port(port, proc, seconds=60):
    deadline = time.time() + seconds
    while time.time() < deadline:
        if proc.poll() is not None:
            raise RuntimeError("spark process exited early")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return
        except OSError:
            time.sleep(0.3)
    raise RuntimeError(f"nothing listens on {port}")


def _wait_workers(webui, count, seconds=120):
    """Until the master's status page lists ``count`` ALIVE workers."""
    deadline = time.time() + seconds
    while time.time() < deadline:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{webui}/json/", timeout=5) as page:
                if sum(w["state"] == "ALIVE" for w in json.load(page)["workers"]) >= count:
                    return
        except OSError:
            pass
        time.sleep(0.3)
    raise RuntimeError(f"fewer than {count} workers registered with the master")


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("cluster")
    env = dict(os.environ, SPARK_LOCAL_IP="127.0.0.1", PYSPARK_PYTHON=sys.executable,
               SPARK_WORKER_DIR=str(tmp_path / "work"), SPARK_LOG_DIR=str(tmp_path / "logs"),
               SPARK_DAEMON_JAVA_OPTS=QUICK_OPTS)  # the master's and the workers' JVMs, as the shell's
    port, webui = free_port(), free_port()
    procs = [subprocess.Popen([str(SPARK_CLASS), "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                               "--port", str(port), "--webui-port", str(webui)], env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)]
    try:
        _wait_port(port, procs[0])
        for _ in range(2):
            procs.append(subprocess.Popen(
                [str(SPARK_CLASS), "org.apache.spark.deploy.worker.Worker", f"spark://127.0.0.1:{port}",
                 "--host", "127.0.0.1", "--cores", "1", "--memory", "1g", "--webui-port", str(free_port())],
                env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        _wait_workers(webui, 2)
        yield f"spark://127.0.0.1:{port}"
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            p.wait(timeout=30)


def _events(log_dir):
    """The events the application logged to ``log_dir`` (Spark's JSON event log, one file or a
    rolling log's directory of ``events_*`` files)."""
    logs = sorted(p for p in Path(log_dir).rglob("*")
                  if p.is_file() and not p.name.startswith((".", "appstatus")))  # not .crc checksums
    return [json.loads(line) for log in logs for line in log.read_text().splitlines()]


def _results(proc):
    assert proc.returncode == 0, proc.stderr[-2000:]
    return [json.loads(x) for x in proc.stdout.splitlines()]


@pytest.fixture(scope="module")
def runs(cluster, tmp_path_factory, spark):
    """(the cluster run's results, the local run's results, the cluster run's event log directory)."""
    tmp = tmp_path_factory.mktemp("runs")
    log_dir = tmp / "events"
    log_dir.mkdir()
    conf = ["--conf", f"spark.pyspark.python={sys.executable}", "--conf", "spark.executor.memory=768m",
            "--conf", f"spark.executor.extraJavaOptions={QUICK_OPTS}",  # short-lived, as the driver
            "--conf", "spark.eventLog.enabled=true", "--conf", f"spark.eventLog.dir={log_dir.as_uri()}",
            "--conf", "spark.eventLog.compress=false"]
    remote = run(str(tmp / "cluster"), "--output", "json", *conf, "-e", SCRIPT, master=cluster)
    local = run_in_process(spark, str(tmp / "local"), SCRIPT)
    return _results(remote), _results(local), log_dir


def test_cluster_matches_local(runs):
    remote, local, _ = runs
    assert remote == local
    assert remote[0] == [{"dt": "a", "n": 125, "updated": 50}, {"dt": "b", "n": 125, "updated": 50}]


def test_compact_runs_each_bucket_in_an_executor_task(runs):
    (_, before, files_before, called, after, files_after, kinds), _, log_dir = runs
    assert before == after == [{"n": 250, "ids": sum(range(250)), "updated": 100}]
    assert files_before == [{"files": 12, "buckets": 6, "top": 0}]  # two level-0 files in each of 6 buckets
    assert called == [{"result": True}]
    assert files_after == [{"files": 6, "buckets": 6, "low": 5}]  # one max-level file per bucket
    assert [k["commit_kind"] for k in kinds] == ["APPEND", "APPEND", "COMPACT"]

    events = _events(log_dir)
    executors = {e["Executor ID"] for e in events if e["Event"] == "SparkListenerExecutorAdded"}
    (job,) = [e for e in events if e["Event"] == "SparkListenerJobStart"
              and e.get("Properties", {}).get("spark.job.description") == "paimon compact default.t"]
    tasks = [e for e in events if e["Event"] == "SparkListenerTaskEnd" and e["Stage ID"] in job["Stage IDs"]]
    assert len(tasks) == 6  # one task per bucket: the compaction was not done in the driver
    assert all(t["Task End Reason"]["Reason"] == "Success" for t in tasks)
    ran_on = {t["Task Info"]["Executor ID"] for t in tasks}
    assert ran_on and ran_on <= executors and "driver" not in ran_on


def test_merged_rows_are_dropped_by_the_udf_on_the_executors(runs):
    """The reads after the overlapping INSERT drop the rows merging drops with paimon-sql's JVM class,
    shipped to the executors by spark.jars (its jar in the cluster run's session): no join, and the
    answers above are the local run's."""
    _, _, log_dir = runs
    plans = [e.get("physicalPlanDescription", "") for e in _events(log_dir)
             if e["Event"].endswith("SparkListenerSQLExecutionStart")]
    used = [p for p in plans if "paimon_deleted_row" in p]
    assert used and not any("LeftAnti" in p for p in used)
