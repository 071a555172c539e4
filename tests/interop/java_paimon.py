"""Real Java Apache Paimon for the interop tests: our small drivers (tests/interop/java/), one JVM
serving every batch of commands a test module sends (``Driver``).

The bundles and the drivers' compilation are tests/oracles/paimon_java.py's: Paimon 1.0 (from the
``paimon-python-ali`` wheel) or 2.0 (from Maven Central); the modules of JavaPaimon run each case
against both, through the fixtures ``paimon_version`` and ``java`` here (modules import them).
Anything missing — java, javac, a download — raises ``JavaUnavailable`` with the reason: the tests
fail, they never skip.
"""

import json
import os
from pathlib import Path

import pytest
from oracles import OracleUnavailable as JavaUnavailable  # noqa: F401  (the name the tests catch)
from oracles.paimon_java import VERSIONS, driver_command
from support import LineProcess

SOURCE = Path(__file__).resolve().parent / "java" / "PaimonDriver.java"


def hive_client_jars() -> str:
    """The Hive metastore client jars pip's pyspark ships, for drivers of Java's HiveCatalog."""
    import pyspark
    jars = os.path.join(os.path.dirname(pyspark.__file__), "jars")
    if not any(Path(jars).glob("hive-metastore-*.jar")):
        raise JavaUnavailable(f"no Hive client jars under {jars}")
    return f"{jars}/*"


class Driver(LineProcess):
    """A Java driver's JVM serving batches from stdin (DriverSupport.serve: ``<driver> -``), each
    batch on catalogs of its own. Used as a context manager, one JVM serves every batch until the
    ``with`` ends (a JVM's start-up is seconds of CPU, most of what a batch costs); otherwise each
    batch has a JVM of its own, as a one-shot run."""

    END = b"--end--"

    def __init__(self, command: list):
        super().__init__(command + ["-"], "Java Paimon", noise=("SLF4J", "StatusLogger"))
        self.keep = False

    def send(self, payload) -> None:
        """Starts a batch (one JSON document); its answers come from ``answer()``. ``write`` puts
        any other line on the driver's stdin (what a running command reads, e.g. a release)."""
        self.write(json.dumps(payload))

    def answer(self, timeout: float = 300):
        """The batch's next JSON line; ``Driver.END`` after its last."""
        line = self.read_line(timeout)
        return self.END if line == self.END else json.loads(line) if line.strip() else self.answer(timeout)

    def rest(self, timeout: float = 300) -> list:
        """The batch's remaining answers (then the JVM ends, unless kept)."""
        out = []
        for result in iter(lambda: self.answer(timeout), self.END):
            out.append(result)
        if not self.keep:
            self.close()
        return out

    def batch(self, payload, timeout: float = 300) -> list:
        """The JSON lines the driver answered ``payload`` with."""
        self.send(payload)
        return self.rest(timeout)

    def on(self, warehouse: str, commands: list) -> list:
        """The results of ``commands`` run as one batch on the catalog of ``warehouse``
        (drivers that take ``{"warehouse", "commands"}``); AssertionError naming Java's errors."""
        results = self.batch({"warehouse": warehouse, "commands": commands})
        errors = [r["error"] for r in results if isinstance(r, dict) and "error" in r]
        assert not errors, errors
        return results

    def __enter__(self):
        self.keep = True
        return self

    def __exit__(self, *exc):
        self.keep = False
        self.close()


class JavaPaimon(Driver):
    """Runs lists of driver commands (see PaimonDriver.java) and returns their results; in a
    ``with``, one JVM for all the lists."""

    def __init__(self, version: str = "1.0", after=()):
        """``version``: the Java Paimon (tests/oracles/paimon_java.py VERSIONS); ``after``: more
        classpath entries (a codec the bundle leaves to its host)."""
        super().__init__(driver_command(SOURCE, after=after, version=version))
        self.version = version

    def run(self, commands: list) -> list:
        """Results in order; a command that failed gives ``{"error": "<exception>"}`` (see ``ok``)."""
        return self.batch(commands)

    def __call__(self, op: str, warehouse: str, table: str, **args):
        """One command (a batch of its own); its result, or AssertionError with Java's exception."""
        return ok(self.run([dict(op=op, warehouse=warehouse, table=table, **args)])[0])


def started(version: str, after=()) -> JavaPaimon:
    """JavaPaimon ``version``; when it cannot run, the test fails saying what is missing (never skips)."""
    try:
        return JavaPaimon(version, after)
    except JavaUnavailable as e:
        pytest.fail(f"Java Paimon {version} is needed for these tests: {e}", pytrace=False)


@pytest.fixture(scope="module", params=VERSIONS)
def paimon_version(request):
    """Each case that uses Java Paimon runs against 1.0 (what old readers of our tables run) and 2.0
    (what writers run today). Module scope: pytest runs a module's cases one version after the
    other, so each version needs one JVM per module."""
    return request.param


@pytest.fixture(scope="module")
def java(paimon_version):
    """One Java Paimon JVM of the module's version, serving every batch (each on fresh catalogs)."""
    with started(paimon_version) as java:
        yield java


def ok(result):
    """The result of one command, or AssertionError naming the exception Java Paimon raised."""
    if isinstance(result, dict) and "error" in result:
        raise AssertionError(f"Java Paimon failed: {result['error']}")
    return result
