"""paimon-spark: Apache Paimon 2.0's own Spark connector, the oracle for everything Paimon defines
on Spark (options, procedures, system tables, dynamic options), and the PySpark it runs in.

- The jar: its Maven coordinate first, as a user elsewhere gets it; where Maven Central does not
  serve it (it does not here), the file ``$PAIMON_SPARK_JAR`` names (``.ci/run`` sets it to
  ``../shared/oracles/paimon-spark-4.1_2.13-2.0.0.jar`` when that exists).
- The PySpark: 4.1.2 (the jar is built for Spark 4.1) in ``.venv-paimon-spark``, beside the
  project's newer one. paimon-sql is installed there too (editable), so the differential suite also
  runs paimon-sql on the oldest Spark it promises.

``scripts/setup-tests.sh`` makes the venv; a test that needs either and finds neither fails with
the reason (OracleUnavailable), it never skips.
"""

import functools
import os
import subprocess
import sys
from pathlib import Path

from oracles import OracleUnavailable
from oracles.maven import artifact

COORDINATE = "org.apache.paimon:paimon-spark-4.1_2.13:2.0.0"
PYSPARK = "4.1.2"
ROOT = Path(__file__).resolve().parent.parent.parent
VENV = ROOT / ".venv-paimon-spark"


@functools.lru_cache(maxsize=None)
def jar() -> Path:
    """paimon-spark's jar: from Maven, else ``$PAIMON_SPARK_JAR``; asked once per process."""
    try:
        return artifact(COORDINATE)
    except OracleUnavailable as maven:
        named = os.environ.get("PAIMON_SPARK_JAR")
        if named and Path(named).is_file():
            return Path(named).resolve()
        why = f"PAIMON_SPARK_JAR names no file ({named})" if named else "PAIMON_SPARK_JAR is not set"
        raise OracleUnavailable(f"paimon-spark cannot be had: {maven}; and {why} "
                                f"(.ci/run sets it to ../shared/oracles/paimon-spark-4.1_2.13-2.0.0.jar)") from None


@functools.lru_cache(maxsize=None)
def python() -> str:
    """The interpreter of ``.venv-paimon-spark`` (PySpark 4.1.2 and paimon-sql), made when missing."""
    exe = VENV / "bin" / "python"
    probe = "import pyspark, paimon_sql, sys; sys.exit(pyspark.__version__ != %r)" % PYSPARK
    if exe.exists() and subprocess.run([str(exe), "-c", probe], capture_output=True).returncode == 0:
        return str(exe)
    steps = [[sys.executable, "-m", "venv", str(VENV)],
             [str(exe), "-m", "pip", "install", "-q", "--disable-pip-version-check", f"pyspark=={PYSPARK}"],
             [str(exe), "-m", "pip", "install", "-q", "--disable-pip-version-check", "-e", str(ROOT)],
             [str(exe), "-m", "paimon_sql.spark.compiled_pyspark"]]  # as scripts/install.sh does for ours
    for step in steps[0 if not exe.exists() else 1:]:
        done = subprocess.run(step, capture_output=True, text=True)
        if done.returncode != 0:
            raise OracleUnavailable(f"could not make {VENV.name} (PySpark {PYSPARK}): "
                                    f"`{' '.join(step[2:])}` failed: {done.stderr.strip()[-300:]}")
    return str(exe)
