"""Apache Paimon's own REST catalog server, the one its tests run (``RESTCatalogServer`` in
``paimon-core-2.0.0-tests.jar`` from Maven Central, over a local directory, with a bearer token):
what paimon-sql's REST client (``metastore = rest``) is checked against, beside our own server.

Its catalog lives in the process (a restart forgets it), and it answers ``GET /v1/config`` only
for the warehouse name it was started with. Clients reach it with ``uri`` = the yielded URL,
``warehouse`` = :data:`WAREHOUSE`, ``token.provider`` = ``bear``, ``token`` = :data:`TOKEN`.

Example::

    with rest_server(tmp_path / "rest") as uri:
        catalog = load_catalog(..., {"metastore": "rest", "uri": uri, "warehouse": WAREHOUSE, ...})
"""

import contextlib
import queue
import subprocess
import threading
import time
from pathlib import Path
from typing import Iterator

from oracles import OracleUnavailable
from oracles.maven import artifact
from oracles.paimon_java import driver_command

WAREHOUSE = "test_wh"
TOKEN = "init_token"
DRIVER = Path(__file__).resolve().parent.parent / "interop" / "java" / "RestCatalogServerDriver.java"
# the test server's own classes and what they need beyond Paimon 2.0 (MockWebServer needs JUnit 4)
TEST_JARS = ("org.apache.paimon:paimon-core:2.0.0:jar:tests", "com.squareup.okhttp3:mockwebserver:4.12.0",
             "com.squareup.okhttp3:okhttp:4.12.0", "com.squareup.okio:okio-jvm:3.6.0",
             "org.jetbrains.kotlin:kotlin-stdlib:1.8.21", "junit:junit:4.13.2", "org.hamcrest:hamcrest-core:1.3")


def command() -> list:
    """The ``java`` command line of the server's driver (fetched and compiled once), less its arguments."""
    return driver_command(DRIVER, before=[str(artifact(c)) for c in TEST_JARS], version="2.0")


@contextlib.contextmanager
def rest_server(data: Path, timeout: float = 120) -> Iterator[str]:
    """Paimon's REST test server over directory ``data`` until the block ends; yields its URL."""
    data.mkdir(parents=True, exist_ok=True)
    command_line = command()
    log = data.parent / f"{data.name}-server.log"
    with open(log, "w") as err:
        proc = subprocess.Popen([*command_line, str(data), WAREHOUSE, TOKEN], stdout=subprocess.PIPE, stderr=err, text=True)
    lines: "queue.Queue[str]" = queue.Queue()

    def read() -> None:
        for line in proc.stdout:
            lines.put(line)
        lines.put("")  # the server ended
    threading.Thread(target=read, daemon=True).start()
    try:
        deadline, url = time.monotonic() + timeout, None
        while url is None and time.monotonic() < deadline:
            with contextlib.suppress(queue.Empty):
                line = lines.get(timeout=1)
                if not line:
                    break
                if line.startswith("serving "):
                    url = line.split()[1]
        if url is None:
            raise OracleUnavailable(f"Paimon's REST test server did not start: {log.read_text()[-2000:]}")
        yield url
    finally:
        proc.kill()
        proc.wait()
