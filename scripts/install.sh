#!/usr/bin/env bash
# Create .venv with paimon-sql (editable) and its runtime dependencies only: no test stack, no root.
# Needs Python 3.10+ and Java 17+ (PySpark runs Spark in a JVM). Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-python3}"
"$PY" -c 'import sys; sys.exit(sys.version_info < (3, 10))' 2>/dev/null || {
  echo "paimon-sql needs Python 3.10 or newer as '$PY': set PYTHON=/path/to/python3.10+" >&2
  exit 1; }
JAVA="${JAVA_HOME:+$JAVA_HOME/bin/}java"
java_major=$("$JAVA" -version 2>&1 | sed -n 's/.* version "\([0-9]*\).*/\1/p' | head -1) || true
[ "${java_major:-0}" -ge 17 ] 2>/dev/null || {
  echo "paimon-sql needs Java 17 or newer for PySpark: '$JAVA' is ${java_major:+Java }${java_major:-missing}; install a JDK 17+ (Debian: apt-get install openjdk-17-jre-headless) or set JAVA_HOME" >&2
  exit 1; }
[ -x .venv/bin/python ] || "$PY" -m venv .venv
pip=(.venv/bin/python -m pip install -q --disable-pip-version-check)
# PyPI has PySpark as source only: pip builds a ~450 MB wheel of it first. Its jars are compressed
# already, so the wheel stores them (~15 s less CPU than deflating them again).
pyspark=$(grep -o '"pyspark[^"]*"' pyproject.toml | head -1 | tr -d '"')
"${pip[@]}" --config-settings=--build-option=--compression=stored "$pyspark" 2>/dev/null || "${pip[@]}" "$pyspark"
"${pip[@]}" -e .
# byte-compiled up front, whatever pip did: every Python worker Spark starts imports pyarrow, pandas and
# paimon_sql, and where .pyc files are never written (PYTHONDONTWRITEBYTECODE=1, common in containers)
# each worker compiled them again — seconds per worker, paid by every first statement (issue 46)
.venv/bin/python -m compileall -q -j 0 "$(.venv/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')" \
  paimon_sql procedures systables >/dev/null || true
# Spark's Python processes import PySpark from its pyspark.zip, sources only, so each compiled what it
# imported (~1.2 s of CPU per streaming query's source runner): bytecode added to the archive
.venv/bin/python -m paimon_sql.spark.compiled_pyspark
