"""A class-data-sharing archive (JDK 17 AppCDS, dynamic) of the classes a Spark JVM of the tests loads:
Spark's, Hadoop's, Parquet's and Py4J's classes, parsed and verified once and mapped from the archive
by every later Spark JVM of the same JDK and PySpark. A shell, a server or a cluster driver then starts
in about half the time (measured: ``paimon-sql -e 'SELECT ...'`` 20 s -> 10 s on 2 cores), and the
tests start dozens of them.

``python jvm_archive.py`` (from tests/, run by scripts/setup-tests.sh) writes the archive under
``~/.cache/paimon-sql/cds/`` when it is missing, by running one paimon-sql shell over a script that
touches the usual paths (DDL, writes of both table kinds, reads, DML, a procedure, a system table).
:func:`spark_jvm_options` adds it to the test JVM flags when it is there. A JVM that cannot use it
(another JDK, another classpath) starts without it, silently (the JVM's CDS logging is off), as fast as
before; the archive changes no result. A user's Spark never sees it.
"""

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Optional

from oracles import cache_dir
from support import TEST_JVM_OPTIONS

WORKLOAD = """
CREATE TABLE pk (id INT, name STRING, v DOUBLE, dt STRING, PRIMARY KEY (id, dt) NOT ENFORCED)
  PARTITIONED BY (dt) WITH ('bucket' = '2', 'deletion-vectors.enabled' = 'true');
CREATE TABLE ap (id INT, name STRING, v DOUBLE);
INSERT INTO pk VALUES (1, 'a', 1.0, 'x'), (2, 'b', 2.0, 'y');
INSERT INTO ap SELECT id, name, v FROM pk;
UPDATE pk SET v = 3.0 WHERE id = 1;
DELETE FROM ap WHERE id = 2;
MERGE INTO pk t USING (SELECT 2 AS id, 'y' AS dt) s ON t.id = s.id AND t.dt = s.dt WHEN MATCHED THEN DELETE;
SELECT dt, count(*), sum(v) FROM pk GROUP BY dt ORDER BY dt;
SELECT * FROM ap a JOIN pk p ON a.id = p.id WHERE p.name LIKE 'a%';
CALL sys.compact(table => 'pk');
SELECT snapshot_id, commit_kind FROM pk$snapshots;
SELECT * FROM pk VERSION AS OF 1;
"""

_FLAGS = "-Xlog:cds=off -Xlog:cds+dynamic=off"  # a JVM that cannot map it says nothing (stdout is data)


def archive_path() -> Path:
    """The archive of this JDK (the ``java`` on PATH, by its real path and size) and this PySpark."""
    import pyspark
    java = Path(shutil.which("java") or "java").resolve()
    key = f"{java}:{java.stat().st_size if java.exists() else 0}:{pyspark.__version__}"
    return cache_dir() / "cds" / f"spark-{pyspark.__version__}-{hashlib.sha256(key.encode()).hexdigest()[:12]}.jsa"


def spark_jvm_options() -> str:
    """TEST_JVM_OPTIONS, plus the archive when it has been written."""
    archive = archive_path()
    return f"{TEST_JVM_OPTIONS} -XX:SharedArchiveFile={archive} {_FLAGS}" if archive.exists() else TEST_JVM_OPTIONS


def write_archive() -> Optional[Path]:
    """Write the archive unless it is there; its path, or None with the reason on stderr."""
    archive = archive_path()
    if archive.exists():
        return archive
    archive.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=archive.parent) as tmp:
        dump = Path(tmp) / "spark.jsa"
        env = dict(os.environ, PYSPARK_PYTHON=sys.executable,
                   SPARK_SUBMIT_OPTS=f"{TEST_JVM_OPTIONS} -XX:ArchiveClassesAtExit={dump} {_FLAGS}")
        shell = Path(sys.executable).parent / "paimon-sql"
        proc = subprocess.run([str(shell), "--warehouse", str(Path(tmp) / "warehouse"), "--master", "local[2]",
                               "--conf", "spark.sql.shuffle.partitions=2", "-e", WORKLOAD],
                              capture_output=True, text=True, env=env)
        if proc.returncode != 0 or not dump.exists():
            print(f"jvm_archive: no archive (exit {proc.returncode}): {proc.stderr.strip()[-1000:]}", file=sys.stderr)
            return None
        os.replace(dump, archive)
    return archive


if __name__ == "__main__":
    sys.exit(0 if write_archive() else 1)
