"""A real Hive metastore for tests: the standalone metastore server (Hive 2.3) from the jars the
pip ``pyspark`` ships, with an embedded Derby database in a temp directory, on 127.0.0.1 on a free
port.

    server = start_metastore()          # or: with hive_metastore() as server:
    server.uri                          # "thrift://127.0.0.1:<port>"
    server.options                      # {"metastore": "hive", "uri": server.uri}
    server.stop()
    shared_metastore()                  # one server for the whole test process (stopped at exit)

Starting takes a few seconds (the JVM and Derby's schema); a run starts one and every test shares it.

Settings the jars need: ``hive.async.log.enabled`` false (Hive's async logger wants the LMAX
disruptor, which pyspark does not ship) and DBCP for the transaction handler's pool (BoneCP is not
shipped either). The lock API needs the transaction tables, which ``datanucleus.schema.autoCreateAll``
does not make (only the JDO ones): a launcher (Java's single-file source mode) creates them with
Hive's own ``TxnDbUtil.prepDb`` and then runs the metastore's ``main`` in the same JVM.
"""

from __future__ import annotations

import atexit
import contextlib
import glob
import os
import shutil
import socket
import subprocess
import tempfile
import threading
import time
from contextlib import contextmanager
from typing import Callable, NamedTuple, Optional
from xml.sax.saxutils import escape

import pyspark

from support import TEST_JVM_OPTIONS, free_port

STARTUP_TIMEOUT = 120  # seconds; a cold JVM on a busy two-core machine
LAUNCHER = """
public class Metastore {
    public static void main(String[] args) throws Throwable {
        org.apache.hadoop.hive.metastore.txn.TxnDbUtil.prepDb(new org.apache.hadoop.hive.conf.HiveConf());
        org.apache.hadoop.hive.metastore.HiveMetaStore.main(args);
    }
}
"""


class HiveMetastore(NamedTuple):
    uri: str
    warehouse: str  # the metastore's own warehouse (the 'default' database's location)
    stop: Callable[[], None]

    @property
    def options(self) -> dict:
        """The catalog options of a Hive catalog on this metastore."""
        return {"metastore": "hive", "uri": self.uri}


def _jars() -> str:
    jars = os.path.join(os.path.dirname(pyspark.__file__), "jars")
    if not glob.glob(os.path.join(jars, "hive-metastore-*.jar")):
        raise RuntimeError(f"no hive-metastore jar under {jars}: the pip pyspark ships it")
    return jars


def _site(settings: dict) -> str:
    props = "".join(f"<property><name>{escape(k)}</name><value>{escape(v)}</value></property>\n"
                    for k, v in settings.items())
    return f"<?xml version=\"1.0\"?>\n<configuration>\n{props}</configuration>\n"


def start_metastore(tmpdir: Optional[str] = None) -> HiveMetastore:
    """Start a metastore whose Derby database, warehouse, config and logs live in ``tmpdir`` (a new
    temp directory when None, removed again by ``stop``); returns once it accepts connections."""
    own_dir = tmpdir is None
    root = tempfile.mkdtemp(prefix="hms-") if own_dir else str(tmpdir)
    conf, warehouse = os.path.join(root, "conf"), os.path.join(root, "warehouse")
    os.makedirs(conf, exist_ok=True)
    os.makedirs(warehouse, exist_ok=True)
    with open(os.path.join(conf, "hive-site.xml"), "w") as f:
        f.write(_site({
            "javax.jdo.option.ConnectionURL": f"jdbc:derby:;databaseName={root}/metastore_db;create=true",
            "datanucleus.schema.autoCreateAll": "true",
            "hive.metastore.schema.verification": "false",
            "hive.metastore.warehouse.dir": f"file:{warehouse}",
            "hive.async.log.enabled": "false",
            "datanucleus.connectionPoolingType": "DBCP",
        }))
    launcher = os.path.join(root, "Metastore.java")
    with open(launcher, "w") as f:
        f.write(LAUNCHER)
    port = free_port()
    log = open(os.path.join(root, "metastore.log"), "wb")
    proc = subprocess.Popen(
        ["java", "-Xmx512m", *TEST_JVM_OPTIONS.split(), f"-Dderby.system.home={root}",
         f"-Dhive.log.dir={root}",
         "-cp", f"{conf}:{_jars()}/*", launcher, "-p", str(port)],
        cwd=root, stdout=log, stderr=subprocess.STDOUT, env={**os.environ, "HIVE_CONF_DIR": conf})

    def stop() -> None:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        log.close()
        if own_dir:
            shutil.rmtree(root, ignore_errors=True)

    deadline = time.time() + STARTUP_TIMEOUT
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return HiveMetastore(f"thrift://127.0.0.1:{port}", warehouse, stop)
        except OSError:
            pass
        if proc.poll() is not None or time.time() > deadline:
            log.flush()
            with open(log.name, "rb") as f:
                tail = f.read()[-3000:].decode("utf-8", "replace")
            stop()
            raise RuntimeError(f"the Hive metastore did not start on port {port}:\n{tail}")
        time.sleep(0.2)


@contextmanager
def hive_metastore(tmpdir: Optional[str] = None):
    server = start_metastore(tmpdir)
    try:
        yield server
    finally:
        server.stop()


_shared: list = []
_shared_lock = threading.Lock()


def shared_metastore() -> HiveMetastore:
    """The one metastore of this test process, started on first use and stopped at exit, so every
    fixture that wants one (this directory's, the catalog suite's) shares a single server."""
    with _shared_lock:
        if not _shared:
            server = start_metastore()
            atexit.register(server.stop)
            _shared.append(server)
        return _shared[0]


@contextlib.contextmanager
def metastore_client(uri: str):
    """A Thrift client of the metastore at ``uri`` (thrift://host:port), from the client library, not our
    catalog: what the tests check our catalog's writes with."""
    from urllib.parse import urlparse

    from pymetastore.hive_metastore import ThriftHiveMetastore
    from thrift.protocol.TBinaryProtocol import TBinaryProtocol
    from thrift.transport import TSocket, TTransport
    address = urlparse(uri)
    transport = TTransport.TBufferedTransport(TSocket.TSocket(address.hostname, address.port))
    transport.open()
    try:
        yield ThriftHiveMetastore.Client(TBinaryProtocol(transport))
    finally:
        transport.close()
