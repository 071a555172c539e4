#!/usr/bin/env bash
# Install everything the tests need (scripts/setup-tests.sh) and run the whole suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup-tests.sh
export PYSPARK_PYTHON="$PWD/.venv/bin/python"
exec .venv/bin/python -m pytest -q tests "$@"
