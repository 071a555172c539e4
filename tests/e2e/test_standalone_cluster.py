"""INSERT and SELECT on a Spark standalone cluster (a master and two workers on 127.0.0.1) give
the same result as local mode: nothing may hide in the driver process. CALL sys.compact runs each
bucket's compaction in a task on the executors, as Spark's event log shows."""

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pyspark
import pytest
from support import free_port

from e2e.test_cli import run

SPARK_CLASS = Path(pyspark.__file__).parent / "bin" / "spark-class"
SCRIPT = ("CREATE TABLE t (id BIGINT, v STRING, dt STRING, PRIMARY KEY (id, dt) NOT ENFORCED) "
          "PARTITIONED BY (dt) WITH ('bucket' = '3'); "
          "INSERT INTO t SELECT id, concat('v', id), CASE WHEN id % 2 = 0 THEN 'a' ELSE 'b' END FROM range(200); "
          "INSERT INTO t SELECT id, 'new', CASE WHEN id % 2 = 0 THEN 'a' ELSE 'b' END FROM range(150, 250); "
          "SELECT dt, count(*) AS n, sum(CASE WHEN v = 'new' THEN 1 ELSE 0 END) AS updated FROM t "
          "GROUP BY dt ORDER BY dt")


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


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("cluster")
    env = dict(os.environ, SPARK_LOCAL_IP="127.0.0.1", PYSPARK_PYTHON=sys.executable,
               SPARK_WORKER_DIR=str(tmp_path / "work"), SPARK_LOG_DIR=str(tmp_path / "logs"))
    port = free_port()
    procs = [subprocess.Popen([str(SPARK_CLASS), "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                               "--port", str(port), "--webui-port", str(free_port())], env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)]
    try:
        _wait_port(port, procs[0])
        for _ in range(2):
            procs.append(subprocess.Popen(
                [str(SPARK_CLASS), "org.apache.spark.deploy.worker.Worker", f"spark://127.0.0.1:{port}",
                 "--host", "127.0.0.1", "--cores", "1", "--memory", "1g", "--webui-port", str(free_port())],
                env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        time.sleep(5)
        yield f"spark://127.0.0.1:{port}"
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            p.wait(timeout=30)


def test_cluster_matches_local(cluster, tmp_path):
    local = run(str(tmp_path / "local"), "--output", "json", "-e", SCRIPT)
    assert local.returncode == 0, local.stderr[-2000:]
    env_args = ["--conf", f"spark.pyspark.python={sys.executable}", "--conf", "spark.executor.memory=768m"]
    remote = run(str(tmp_path / "cluster"), "--output", "json", *env_args, "-e", SCRIPT, master=cluster)
    assert remote.returncode == 0, remote.stderr[-2000:]
    assert json.loads(remote.stdout) == json.loads(local.stdout) == [
        {"dt": "a", "n": 125, "updated": 50}, {"dt": "b", "n": 125, "updated": 50}]


COMPACT_SCRIPT = ("CREATE TABLE t (id BIGINT, v STRING, dt STRING, PRIMARY KEY (id, dt) NOT ENFORCED) "
                  "PARTITIONED BY (dt) WITH ('bucket' = '3'); "
                  "INSERT INTO t SELECT id, concat('v', id), IF(id % 2 = 0, 'a', 'b') FROM range(200); "
                  "INSERT INTO t SELECT id, 'new', IF(id % 2 = 0, 'a', 'b') FROM range(150, 250); "
                  "SELECT count(*) AS n, sum(id) AS ids, sum(IF(v = 'new', 1, 0)) AS updated FROM t; "
                  "SELECT count(*) AS files, count(DISTINCT partition, bucket) AS buckets, max(level) AS top FROM t$files; "
                  "CALL sys.compact(table => 't'); "
                  "SELECT count(*) AS n, sum(id) AS ids, sum(IF(v = 'new', 1, 0)) AS updated FROM t; "
                  "SELECT count(*) AS files, count(DISTINCT partition, bucket) AS buckets, min(level) AS low FROM t$files; "
                  "SELECT commit_kind FROM t$snapshots ORDER BY snapshot_id")


def _events(log_dir):
    """The events the application logged to ``log_dir`` (Spark's JSON event log, one file or a
    rolling log's directory of ``events_*`` files)."""
    logs = sorted(p for p in Path(log_dir).rglob("*")
                  if p.is_file() and not p.name.startswith((".", "appstatus")))  # not .crc checksums
    return [json.loads(line) for log in logs for line in log.read_text().splitlines()]


def test_compact_runs_each_bucket_in_an_executor_task(cluster, tmp_path):
    log_dir = tmp_path / "events"
    log_dir.mkdir()
    conf = ["--conf", f"spark.pyspark.python={sys.executable}", "--conf", "spark.executor.memory=768m",
            "--conf", "spark.eventLog.enabled=true", "--conf", f"spark.eventLog.dir={log_dir.as_uri()}",
            "--conf", "spark.eventLog.compress=false"]
    proc = run(str(tmp_path / "wh"), "--output", "json", *conf, "-e", COMPACT_SCRIPT, master=cluster)
    assert proc.returncode == 0, proc.stderr[-2000:]
    before, files_before, called, after, files_after, kinds = [json.loads(x) for x in proc.stdout.splitlines()]
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
