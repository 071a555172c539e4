"""Shared fixtures: one local Spark session for the whole run, a fresh warehouse per test, pypaimon (the oracle)
in its own venv, and a moto S3 server."""

import os
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pytest
from pypaimon_process import PyPaimonProcess
from jvm_archive import spark_jvm_options
from support import free_port, serve

ROOT = Path(__file__).resolve().parent.parent
PYPAIMON_VENV = ROOT / ".venv-pypaimon"
PYPAIMON_VERSION = "2.1.0"
os.environ.setdefault("SPARK_SUBMIT_OPTS", spark_jvm_options())  # every Spark JVM the tests start (jvm_archive.py)


@pytest.fixture(scope="session")
def spark():
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession
    spark = (SparkSession.builder.master("local[2]").appName("paimon-sql-tests")
             .config("spark.sql.shuffle.partitions", "2").config("spark.ui.enabled", "false")
             .config("spark.ui.showConsoleProgress", "false")
             # tiny data: compiling each query's whole-stage Java code costs more than it saves (docs/testing.md)
             .config("spark.sql.codegen.wholeStage", "false").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    yield spark
    spark.stop()


@pytest.fixture
def warehouse(tmp_path):
    return str(tmp_path / "warehouse")


@pytest.fixture
def catalog(warehouse):
    from paimon_sql.catalog import load_catalog
    cat = load_catalog(warehouse)
    cat.create_database("db")
    return cat


class Outside:
    """A second warehouse next to ours (``other/sec.db/secret`` with data, tag ``keep``, branch
    ``b1`` and consumer ``c1``) and a record of every path our FileIO touches from now on.

    ``assert_untouched()`` checks that everything beside our warehouse is byte-identical, that
    nothing new appeared there, and that no path this process opened, listed, wrote or deleted
    lies outside our warehouse."""

    def __init__(self, warehouse: str, monkeypatch):
        from paimon_sql.catalog import load_catalog
        from paimon_sql.io import FileIO
        self.warehouse = os.path.realpath(warehouse)
        self.base = os.path.dirname(self.warehouse)
        cat = load_catalog(os.path.join(self.base, "other"))
        cat.create_database("sec")
        table = cat.create_table_from_arrow("sec.secret", pa.schema([("id", pa.int64())]))
        table.write_arrow(pa.table({"id": [42]}))
        table.tag_manager.create("keep", table.snapshot_manager.latest())
        table.consumer_manager.record("c1", 1)
        table.branch_manager.create("b1", table)
        self.before = self._tree()
        self.touched = []
        real = FileIO._p
        monkeypatch.setattr(FileIO, "_p", lambda io, path: self.touched.append(path) or real(io, path))

    def escape(self, start: str, target: str) -> str:
        """A name that, written after ``start`` (a path in our warehouse ending in the name's
        prefix, e.g. ``.../tag/tag-``), lands on ``target`` (relative to the directory above the
        warehouse): ``x/../../<...>/target``."""
        return "x/" + os.path.relpath(os.path.join(self.base, target), os.path.realpath(start + "x"))

    def _tree(self) -> dict:
        """Every directory (-> None) and file (-> its bytes) beside the warehouse."""
        out = {}
        for root, dirs, files in os.walk(self.base):
            dirs[:] = [d for d in dirs if os.path.join(root, d) != self.warehouse]
            out.update({os.path.join(root, d): None for d in dirs})
            for f in files:
                out[os.path.join(root, f)] = Path(root, f).read_bytes()
        return out

    def assert_untouched(self) -> None:
        assert self._tree() == self.before
        outside = [p for p in self.touched
                   if os.path.commonpath([os.path.realpath(p), self.warehouse]) != self.warehouse]
        assert outside == []


@pytest.fixture
def outside(warehouse, monkeypatch):
    return Outside(warehouse, monkeypatch)


def _ensure_pypaimon() -> str:
    python = PYPAIMON_VENV / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(PYPAIMON_VENV)], check=True)
    probe = subprocess.run([str(python), "-c", "import pypaimon"], capture_output=True)
    if probe.returncode != 0:
        subprocess.run([str(python), "-m", "pip", "install", "-q", f"pypaimon=={PYPAIMON_VERSION}"], check=True)
    return str(python)


@pytest.fixture(scope="session")
def pypaimon():
    """pypaimon 2.1 (the oracle) in its venv, one process for the run (tests/pypaimon_process.py)."""
    process = PyPaimonProcess(_ensure_pypaimon())
    yield process
    process.close()


@pytest.fixture(scope="session")
def paimon_spark_process():
    """paimon-spark (Apache Paimon 2.0's Spark connector) in a child process on PySpark 4.1.2, one for the run:
    the interop modules that exchange tables with it (tests/interop/relay.py) send it their batches."""
    from differential.conftest import EngineProcess
    from oracles.paimon_spark import jar
    engine = EngineProcess("paimon-spark", ["paimon-spark", str(jar())])
    yield engine
    engine.close()


# moto's server, single-threaded: moto honours ``If-None-Match: *`` but checks and stores in two
# steps, which its usual threaded server may interleave between two requests (a real store decides
# atomically); one request at a time makes the check exact, so concurrent commits are tested truly
SERIAL_MOTO = ("import sys\n"
               "from werkzeug.serving import run_simple\n"
               "from moto.moto_server.werkzeug_app import DomainDispatcherApplication, MotoRequestHandler, "
               "create_backend_app\n"
               "run_simple('127.0.0.1', int(sys.argv[1]), DomainDispatcherApplication(create_backend_app), "
               "threaded=False, request_handler=MotoRequestHandler)\n")


@pytest.fixture(scope="session")
def s3_server():
    """A real S3-compatible server (moto's, single-threaded) on 127.0.0.1; yields catalog options for it."""
    port = free_port()
    proc = serve([sys.executable, "-c", SERIAL_MOTO, str(port)], port, "moto")
    yield {"s3.endpoint": f"http://127.0.0.1:{port}", "s3.access-key": "test", "s3.secret-key": "test",
           "s3.region": "us-east-1"}
    proc.terminate()
    proc.wait(timeout=10)


def s3_bucket(s3_server: dict, name: str) -> dict:
    """Creates bucket ``name`` on the run's S3 server; returns the server's catalog options."""
    import pyarrow.fs as pafs
    pafs.S3FileSystem(access_key="test", secret_key="test", endpoint_override=s3_server["s3.endpoint"].split("//")[1],
                      scheme="http", allow_bucket_creation=True).create_dir(name)
    return s3_server
