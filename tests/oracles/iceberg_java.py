"""Apache Iceberg's Java library, the reference Iceberg reader, and our driver of it
(tests/interop/java/IcebergReadDriver.java).

Iceberg's own jars (core, api, common, data, parquet, bundled Guava), Caffeine and parquet-avro (of
pyspark's Parquet version) come from Maven Central (``maven.py``); Hadoop, Parquet, Avro, Jackson,
RoaringBitmap, JTS and the codecs are those pip's pyspark ships in its ``jars`` directory.
Two versions: ``LATEST`` (1.10.1), and ``V3`` (1.8.1, which Java Paimon 2.0's own tests read its
format-v3 metadata with): 1.10.1 refuses format-v3 metadata without row lineage (``next-row-id``),
which Paimon 2.0's lacks; ours carries it, as Paimon's master after 2.0 writes it.

Example: ``Driver(driver_command())`` (tests/interop/java_paimon.py's Driver speaks its protocol).
"""

import os
from pathlib import Path

from oracles import OracleUnavailable, tool
from oracles.maven import artifact
from oracles.paimon_java import INSTALL_JDK, compile_driver

LATEST, V3 = "1.10.1", "1.8.1"
CAFFEINE = "com.github.ben-manes.caffeine:caffeine:2.9.3"
ORC = {LATEST: "1.9.7", V3: "1.9.5"}  # orc-core without Hive (its "nohive" jar), as iceberg-orc depends on it
ICEBERG_JARS = ("api", "common", "bundled-guava", "core", "data", "parquet", "orc")
# jar name prefixes in pyspark/jars (their versions follow pyspark's)
FROM_PYSPARK = ("hadoop-client-api-", "hadoop-client-runtime-", "parquet-column-", "parquet-common-",
                "parquet-encoding-", "parquet-format-structures-", "parquet-hadoop-", "parquet-jackson-",
                "avro-1.", "jackson-core-", "jackson-databind-", "jackson-annotations-", "RoaringBitmap-",
                "slf4j-api-", "snappy-java-", "zstd-jni-", "aircompressor-", "commons-compress-", "commons-io-",
                "commons-lang3-", "jts-core-", "orc-shims-", "threeten-extra-")
SOURCE = Path(__file__).resolve().parent.parent / "interop" / "java" / "IcebergReadDriver.java"


def _parquet_avro(jars: list) -> Path:
    """parquet-avro (Iceberg's Parquet reader loads its read support) of the version of pyspark's Parquet."""
    version = next(j.name for j in jars if j.name.startswith("parquet-hadoop-"))[len("parquet-hadoop-"):-len(".jar")]
    return artifact(f"org.apache.parquet:parquet-avro:{version}")


def _pyspark_jars() -> list:
    import pyspark
    directory = Path(pyspark.__file__).parent / "jars"
    names = sorted(os.listdir(directory)) if directory.is_dir() else []
    jars = []
    for prefix in FROM_PYSPARK:
        found = [n for n in names if n.startswith(prefix) and n.endswith(".jar")]
        if not found:
            raise OracleUnavailable(f"no {prefix}*.jar under {directory}: Iceberg's Java reader needs pyspark's jars")
        jars.append(directory / found[-1])
    return jars


def driver_command(version: str = LATEST) -> list:
    """The ``java`` command line of IcebergReadDriver, compiled against Iceberg ``version`` once."""
    pyspark_jars = _pyspark_jars()
    iceberg = [artifact(f"org.apache.iceberg:iceberg-{name}:{version}") for name in ICEBERG_JARS]
    classpath = os.pathsep.join(map(str, [*iceberg, artifact(CAFFEINE), artifact(f"org.apache.orc:orc-core:{ORC[version]}:jar:nohive"), _parquet_avro(pyspark_jars), *pyspark_jars]))
    classes = compile_driver(SOURCE, classpath, f"iceberg-{version}", support=False)
    return [tool("java", INSTALL_JDK), "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-cp",
            os.pathsep.join([classpath, str(classes)]), SOURCE.stem]
