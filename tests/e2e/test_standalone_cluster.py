"""INSERT and SELECT on a Spark standalone cluster (a master and two workers on 127.0.0.1) give
the same result as local mode: nothing may hide in the driver process."""

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


@pytest.fixture
def cluster(tmp_path):
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
