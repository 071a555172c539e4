"""Concurrent committers on an S3 warehouse lose nothing: by conditional puts (If-None-Match: *), or,
with them disabled, under the JDBC catalog's lock; without either, a commit is refused.

The server is moto's, run single-threaded: moto honours ``If-None-Match: *`` but checks and stores
in two steps, which its usual threaded server may interleave between two requests (a real store
decides atomically); one request at a time makes moto's check exact.
"""

import socket
import subprocess
import sys
import time
import uuid

import pyarrow as pa
import pyarrow.fs as pafs
import pytest
from catalog.committers import assert_nothing_lost, commit_concurrently
from conftest import free_port

from paimon_sql.catalog import load_catalog
from paimon_sql.exceptions import InvalidOptionError

SERIAL_MOTO = ("import sys\n"
               "from werkzeug.serving import run_simple\n"
               "from moto.moto_server.werkzeug_app import DomainDispatcherApplication, MotoRequestHandler, "
               "create_backend_app\n"
               "run_simple('127.0.0.1', int(sys.argv[1]), DomainDispatcherApplication(create_backend_app), "
               "threaded=False, request_handler=MotoRequestHandler)\n")
PROCS, COMMITS = 3, 6


@pytest.fixture(scope="module")
def serial_s3():
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-c", SERIAL_MOTO, str(port)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    deadline = time.time() + 30
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            break
        except OSError:
            if time.time() > deadline:
                proc.kill()
                raise RuntimeError("moto did not start")
            time.sleep(0.1)
    pafs.S3FileSystem(access_key="test", secret_key="test", endpoint_override=f"127.0.0.1:{port}", scheme="http",
                      allow_bucket_creation=True).create_dir("commits")
    yield {"s3.endpoint": f"http://127.0.0.1:{port}", "s3.access-key": "test", "s3.secret-key": "test",
           "s3.endpoint.region": "us-east-1"}
    proc.terminate()
    proc.wait(timeout=10)


def _table(warehouse: str, options: dict):
    catalog = load_catalog(warehouse, options)
    catalog.create_database("db")
    return catalog.create_table_from_arrow("db.t", pa.schema([("id", pa.int64())]))


def test_concurrent_committers_with_conditional_puts_lose_nothing(serial_s3, tmp_path):
    warehouse = f"s3://commits/{uuid.uuid4().hex}"
    _table(warehouse, serial_s3)
    commit_concurrently(warehouse, serial_s3, tmp_path / "barrier", PROCS, COMMITS)
    assert_nothing_lost(warehouse, serial_s3, PROCS, COMMITS)


def test_without_conditional_puts_the_jdbc_lock_serialises_committers(serial_s3, tmp_path):
    warehouse = f"s3://commits/{uuid.uuid4().hex}"
    options = {**serial_s3, "s3.create.conditional.enabled": "false", "metastore": "jdbc",
               "uri": f"jdbc:sqlite:{tmp_path}/catalog.db", "lock.enabled": "true"}
    _table(warehouse, options)
    commit_concurrently(warehouse, options, tmp_path / "barrier", PROCS, COMMITS)
    assert_nothing_lost(warehouse, options, PROCS, COMMITS)


def test_without_conditional_puts_or_a_lock_a_commit_is_refused(serial_s3):
    warehouse = f"s3://commits/{uuid.uuid4().hex}"
    options = {**serial_s3, "s3.create.conditional.enabled": "false"}
    with pytest.raises(InvalidOptionError, match="concurrent commits need 'lock.enabled' = 'true' with a jdbc "
                                                 "or hive catalog") as refused:
        _table(warehouse, options)
    assert "\n" not in str(refused.value) and "test" not in str(refused.value)  # one line, no credentials
    single = load_catalog(warehouse, {**options, "lock.enabled": "false"})  # one writer, by the user's word
    table = single.create_table_from_arrow("db.t", pa.schema([("id", pa.int64())]))
    table.write_arrow(pa.table({"id": [7]}))
    assert table.new_scan().to_arrow().column("id").to_pylist() == [7]
