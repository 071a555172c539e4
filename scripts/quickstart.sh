#!/usr/bin/env bash
# Install paimon-sql alone (scripts/install.sh: no test stack, no root) and run the SQL quickstart
# against ./warehouse (or $PAIMON_SQL_WAREHOUSE).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
export PYSPARK_PYTHON="$PWD/.venv/bin/python"
# a run of seconds: the JIT's quick tier and the serial collector start Spark's JVM faster
exec .venv/bin/paimon-sql --warehouse "${PAIMON_SQL_WAREHOUSE:-./warehouse}" \
  --conf "spark.driver.extraJavaOptions=-XX:TieredStopAtLevel=1 -XX:+UseSerialGC" -f sql_examples/quickstart.sql
