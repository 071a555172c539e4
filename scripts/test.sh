#!/usr/bin/env bash
# Install everything the tests need (scripts/setup-tests.sh) and run the whole suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup-tests.sh
export PYSPARK_PYTHON="$PWD/.venv/bin/python"
# two pytest processes, a test file each at a time (module fixtures start their servers once):
# on two cores 30 min (docs/testing.md; one process would take much longer); `-n 0` runs in one.
# Without paths pytest runs tests/ (pyproject's testpaths); with paths, only those.
exec .venv/bin/python -m pytest -q -n 2 --dist loadfile "$@"
