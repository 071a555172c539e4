"""A real Iceberg REST catalog for tests: Apache Iceberg's own REST test fixture
(``org.apache.iceberg.rest.RESTCatalogServer`` from ``iceberg-open-api``'s ``test-fixtures`` jar,
what the ``apache/iceberg-rest-fixture`` image runs): Jetty serving the REST API over Iceberg's
JDBC catalog, here on an SQLite file, so that a server stopped and started again on the same
directory keeps its tables.

    server = start_rest_server(tmp_path)     # server.uri == "http://127.0.0.1:<port>"
    server.stop(); server = server.restart() # same port, same catalog

The jars come from Maven Central once (``mvn dependency:copy-dependencies`` of a small POM, as the
fixture jar's own POM lists no dependencies: iceberg-core and its test jar, which holds the
servlet, Jetty 11 and SQLite's JDBC driver) into ``<cache>/maven/iceberg-rest-fixture-<version>/``;
Hadoop (the JDBC catalog's default FileIO) is the one the Java Paimon oracle fetched.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path
from typing import NamedTuple

from oracles import OracleUnavailable, cache_dir, tool
from oracles.maven import INSTALL_MAVEN, artifact
from support import TEST_JVM_OPTIONS, free_port, serve

VERSION = "1.10.0"
HADOOP = ("org.apache.hadoop:hadoop-client-api:3.4.1", "org.apache.hadoop:hadoop-client-runtime:3.4.1")
POM = """<project xmlns="http://maven.apache.org/POM/4.0.0"><modelVersion>4.0.0</modelVersion>
<groupId>local</groupId><artifactId>iceberg-rest-fixture</artifactId><version>1</version><dependencies>
<dependency><groupId>org.apache.iceberg</groupId><artifactId>iceberg-open-api</artifactId><version>{v}</version>
  <classifier>test-fixtures</classifier></dependency>
<dependency><groupId>org.apache.iceberg</groupId><artifactId>iceberg-core</artifactId><version>{v}</version></dependency>
<dependency><groupId>org.apache.iceberg</groupId><artifactId>iceberg-core</artifactId><version>{v}</version>
  <classifier>tests</classifier></dependency>
<dependency><groupId>org.eclipse.jetty</groupId><artifactId>jetty-servlet</artifactId><version>11.0.25</version></dependency>
<dependency><groupId>org.xerial</groupId><artifactId>sqlite-jdbc</artifactId><version>3.50.3.0</version></dependency>
<dependency><groupId>org.slf4j</groupId><artifactId>slf4j-simple</artifactId><version>2.0.17</version></dependency>
</dependencies></project>
"""
STARTUP_TIMEOUT = 120  # seconds: a cold JVM on a busy two-core machine


class RestServer(NamedTuple):
    uri: str
    root: str  # the SQLite catalog and the server's warehouse
    port: int
    process: subprocess.Popen

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()

    def restart(self) -> RestServer:
        """The server started again on the same port and catalog (after ``stop``)."""
        return start_rest_server(self.root, self.port)


def _jars() -> str:
    target = cache_dir() / "maven" / f"iceberg-rest-fixture-{VERSION}"
    if not (target / "done").exists():
        target.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=target.parent) as tmp:
            (Path(tmp) / "pom.xml").write_text(POM.format(v=VERSION))
            proc = subprocess.run([tool("mvn", INSTALL_MAVEN), "-q", "-B", "dependency:copy-dependencies",
                                   "-DincludeScope=runtime", f"-DoutputDirectory={target}"],
                                  capture_output=True, text=True, cwd=tmp)
            if proc.returncode != 0:
                reason = [line for line in proc.stdout.splitlines() if "ERROR" in line][:1] or [proc.stderr[-300:]]
                raise OracleUnavailable(f"Maven could not fetch Iceberg's REST fixture {VERSION}: {reason[0]}")
        (target / "done").write_text(VERSION)
    return os.pathsep.join([f"{target}/*", *(str(artifact(c)) for c in HADOOP)])


def start_rest_server(root: str, port: int = 0) -> RestServer:
    """Start the fixture on 127.0.0.1:``port`` (a free one when 0), its catalog in ``root``;
    returns once it accepts connections."""
    os.makedirs(f"{root}/warehouse", exist_ok=True)
    port = port or free_port()
    env = {**os.environ, "CATALOG_WAREHOUSE": f"{root}/warehouse", "CATALOG_URI": f"jdbc:sqlite:{root}/catalog.db",
           "CATALOG_REST_PORT": str(port), "JAVA_TOOL_OPTIONS": TEST_JVM_OPTIONS}
    command = [tool("java", "install a JDK 17+ (Debian: apt-get install openjdk-17-jdk-headless)"),
               "-cp", _jars(), "org.apache.iceberg.rest.RESTCatalogServer"]
    process = serve(command, port, "Iceberg REST catalog fixture", timeout=STARTUP_TIMEOUT, env=env)
    return RestServer(f"http://127.0.0.1:{port}", str(root), port, process)
