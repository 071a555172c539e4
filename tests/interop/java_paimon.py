"""Real Java Apache Paimon for the interop tests: our small drivers (tests/interop/java/), one JVM
per batch of commands.

The bundles and the drivers' compilation are tests/oracles/paimon_java.py's: Paimon 1.0 (from the
``paimon-python-ali`` wheel) unless a test asks for 2.0 (from Maven Central). Anything missing —
java, javac, a download — raises ``JavaUnavailable`` with the reason: the tests fail, they never skip.
"""

import json
import os
import subprocess
import tempfile
from pathlib import Path

from oracles import OracleUnavailable as JavaUnavailable  # noqa: F401  (the name the tests catch)
from oracles.paimon_java import driver_command

SOURCE = Path(__file__).resolve().parent / "java" / "PaimonDriver.java"


def hive_client_jars() -> str:
    """The Hive metastore client jars pip's pyspark ships, for drivers of Java's HiveCatalog."""
    import pyspark
    jars = os.path.join(os.path.dirname(pyspark.__file__), "jars")
    if not any(Path(jars).glob("hive-metastore-*.jar")):
        raise JavaUnavailable(f"no Hive client jars under {jars}")
    return f"{jars}/*"


class JavaPaimon:
    """Runs lists of driver commands (see PaimonDriver.java) in one JVM and returns their results."""

    def __init__(self, after=()):
        """``after``: more classpath entries (a codec the bundle leaves to its host)."""
        self.command = driver_command(SOURCE, after=after)

    def run(self, commands: list) -> list:
        """Results in order; a command that failed gives ``{"error": "<exception>"}`` (see ``ok``)."""
        with tempfile.NamedTemporaryFile("w", suffix=".json") as f:
            json.dump(commands, f)
            f.flush()
            proc = subprocess.run(self.command + [f.name], capture_output=True, text=True, timeout=300)
        if proc.returncode != 0:
            errors = [line for line in proc.stderr.splitlines() if "SLF4J" not in line and "StatusLogger" not in line]
            raise AssertionError("Java Paimon failed:\n" + "\n".join(errors)[-4000:])
        return [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]

    def __call__(self, op: str, warehouse: str, table: str, **args):
        """One command in its own JVM; its result, or AssertionError with Java's exception."""
        return ok(self.run([dict(op=op, warehouse=warehouse, table=table, **args)])[0])


def ok(result):
    """The result of one command, or AssertionError naming the exception Java Paimon raised."""
    if isinstance(result, dict) and "error" in result:
        raise AssertionError(f"Java Paimon failed: {result['error']}")
    return result
