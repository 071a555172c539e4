#!/usr/bin/env bash
# Install paimon-sql and run the SQL quickstart against ./warehouse (or $PAIMON_SQL_WAREHOUSE).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export PYSPARK_PYTHON="$PWD/.venv/bin/python"
exec .venv/bin/paimon-sql --warehouse "${PAIMON_SQL_WAREHOUSE:-./warehouse}" -f sql_examples/quickstart.sql
