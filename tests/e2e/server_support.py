"""The one way server tests start paimon-sql-server, run beeline against it, and reach it over Thrift.

``start_server`` runs ``python -m paimon_sql.server`` as a subprocess on 127.0.0.1 with ``--port 0`` and
reads the port it bound from its ``listening on`` line, so parallel servers never race for a port. Modules
that need no options of their own share one per pytest process (``server_port`` of conftest.py); others start
theirs from a module-scoped fixture. Its JVM gets the shell tests' quick JIT tier and serial collector
(``QUICK_JVM``): a test module's queries are small, and a server module ran 20-30% faster with them.
"""

import base64
import contextlib
import csv
import os
import re
import signal
import ssl
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Iterator, List, Optional, Tuple

import pyspark
import thrift_sasl
from pyhive.hive import get_installed_sasl
from TCLIService import TCLIService, ttypes
from thrift.protocol.TBinaryProtocol import TBinaryProtocol
from thrift.transport import THttpClient, TSocket, TSSLSocket, TTransport

from e2e.test_cli import QUICK_JVM, QUICK_OPTS

from paimon_sql.server import transport

BEELINE = str(Path(pyspark.__file__).parent / "bin" / "beeline")
_LISTENING = re.compile(r"paimon-sql-server listening on \S+:(\d+)")
_REST = re.compile(r"paimon-sql-server REST catalog at (http://\S+)")
_PROMPT = re.compile(r"^\d+: jdbc:hive2://\S*> ")
STARTUP_TIMEOUT = 600  # a hang's limit, not a speed check: a loaded machine starts servers slowly


@contextlib.contextmanager
def start_server(warehouse: str, *extra_args: str) -> Iterator[int]:
    """A running server over ``warehouse`` (extra command-line arguments after the defaults, so they may
    override them); yields its port and stops it (SIGTERM, then SIGKILL) at exit."""
    with _running(warehouse, extra_args) as (port, _):
        yield port


@contextlib.contextmanager
def start_rest_server(warehouse: str, token_file: str, *extra_args: str) -> Iterator[Tuple[int, str]]:
    """:func:`start_server` serving Paimon's REST catalog too (``--rest-port 0``, tokens of ``token_file``):
    yields (Thrift port, REST URL)."""
    with _running(warehouse, ("--rest-port", "0", "--rest-token-file", token_file, *extra_args)) as (port, log):
        yield port, _REST.search(log).group(1)


@contextlib.contextmanager
def _running(warehouse: str, extra_args) -> Iterator[Tuple[int, str]]:
    """The server's (port, its log up to its ``listening on`` line)."""
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable)
    with tempfile.TemporaryFile(mode="w+") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "paimon_sql.server", "--warehouse", warehouse, "--host", "127.0.0.1",
             "--port", "0", "--master", "local[2]", "--conf", "spark.sql.shuffle.partitions=2",
             "--conf", "spark.ui.enabled=false", "--conf", QUICK_JVM, *extra_args],
            stdout=subprocess.DEVNULL, stderr=log, env=env)
        try:
            yield _wait_listening(proc, log)
        finally:
            _stop(proc)


def _stop(proc: subprocess.Popen) -> None:
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def _wait_listening(proc: subprocess.Popen, log) -> Tuple[int, str]:
    deadline = time.monotonic() + STARTUP_TIMEOUT
    while time.monotonic() < deadline:
        log.seek(0)
        text = log.read()
        found = _LISTENING.search(text)
        if found:
            return int(found.group(1)), text
        if proc.poll() is not None:
            raise RuntimeError(f"paimon-sql-server exited with {proc.returncode}:\n{text[-3000:]}")
        time.sleep(0.2)
    log.seek(0)
    raise RuntimeError(f"paimon-sql-server did not listen within {STARTUP_TIMEOUT} s:\n{log.read()[-3000:]}")


def beeline(port: int, sql: str, params: str = "auth=noSasl", user: Optional[str] = None,
            password: Optional[str] = None, timeout: int = 600, silent: bool = True) -> subprocess.CompletedProcess:
    """Run ``sql`` through pip pyspark's beeline (Hive JDBC 2.3) at ``jdbc:hive2://127.0.0.1:<port>/default;
    <params>``; output as CSV (``--outputformat=csv2``), errors (and, unless ``silent``, the statements'
    operation logs) on stderr. Its JVM gets QUICK_OPTS too: a beeline run is a JVM start and a statement or two."""
    args = [BEELINE, "-u", f"jdbc:hive2://127.0.0.1:{port}/default;{params}", f"--silent={str(silent).lower()}",
            "--outputformat=csv2", "--showHeader=true", "-e", sql]
    if user is not None:
        args += ["-n", user]
    if password is not None:
        args += ["-p", password]
    env = dict(os.environ, SPARK_HOME=str(Path(pyspark.__file__).parent), SPARK_BEELINE_OPTS=QUICK_OPTS)
    return subprocess.run(args, capture_output=True, text=True, timeout=timeout, env=env)


def beeline_rows(done: subprocess.CompletedProcess) -> List[List[str]]:
    """The CSV rows (header first) beeline printed, without its prompt."""
    lines = [_PROMPT.sub("", line) for line in done.stdout.splitlines()]
    return [row for row in csv.reader(lines) if row]


def thrift_client(port, user=None, password=None, ca_cert=None, http_path=None):
    """A TCLIService client as pyhive builds one: TBufferedTransport for NOSASL, thrift_sasl PLAIN when a
    user is given; over TLS trusting ``ca_cert`` when given; with ``http_path``, Thrift over HTTP(S) with
    Basic credentials instead."""
    context = ssl.create_default_context(cafile=ca_cert) if ca_cert else None
    if http_path is not None:
        trans = THttpClient.THttpClient(f"{'https' if ca_cert else 'http'}://localhost:{port}/{http_path}",
                                        ssl_context=context)
        if user is not None:
            token = base64.b64encode(f"{user}:{password}".encode()).decode()
            trans.setCustomHeaders({"Authorization": f"Basic {token}"})
    else:
        if context:
            sock = TSSLSocket.TSSLSocket("localhost", port, ssl_context=context)
        else:
            sock = TSocket.TSocket("127.0.0.1", port)
        if user is None:
            trans = TTransport.TBufferedTransport(sock)
        else:
            trans = thrift_sasl.TSaslClientTransport(
                lambda: get_installed_sasl(host="127.0.0.1", sasl_auth="PLAIN", username=user, password=password),
                "PLAIN", sock)
    trans.open()
    return TCLIService.Client(TBinaryProtocol(trans))


class Relay:
    """A TCLIService handler that forwards each call to the server at ``port`` over one connection (NOSASL
    unless ``client_args`` say otherwise; calls one at a time): sessions live on it, whichever client
    connection their calls come on.

    Behind an in-process ``transport.listen`` it lets a test reach one real server through another
    transport or login (http, TLS, passwords) without starting a Spark for each."""

    def __init__(self, port, **client_args):
        self.port, self.client_args = port, client_args  # client_args: see thrift_client
        self.upstream = None  # connected at the first call: the server drops a connection silent for 30 s
        self.lock = threading.Lock()

    def __getattr__(self, name):
        if not hasattr(TCLIService.Iface, name):
            raise AttributeError(name)

        def call(req):
            with self.lock:
                if self.upstream is None:
                    self.upstream = thrift_client(self.port, **self.client_args)
                return getattr(self.upstream, name)(req)
        return call


class WhoAmI:
    """A handler that answers OpenSession with the connection's user as the session id, and records the
    users of the connections that ended."""

    def __init__(self):
        self.closed = []

    def OpenSession(self, req):
        user = (transport.current().user or "-").encode()
        return ttypes.TOpenSessionResp(
            status=ttypes.TStatus(statusCode=ttypes.TStatusCode.SUCCESS_STATUS),
            serverProtocolVersion=req.client_protocol,
            sessionHandle=ttypes.TSessionHandle(ttypes.THandleIdentifier(guid=user, secret=b"s")))

    def connection_closed(self):
        self.closed.append(transport.current().user)
