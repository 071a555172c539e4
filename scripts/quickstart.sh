#!/usr/bin/env bash
# Install paimon-sql and run the quickstart against ./warehouse (or $PAIMON_SQL_WAREHOUSE).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export PYSPARK_PYTHON="$PWD/.venv/bin/python"
exec .venv/bin/python sql_examples/quickstart.py "${PAIMON_SQL_WAREHOUSE:-./warehouse}"
