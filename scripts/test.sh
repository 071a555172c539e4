#!/usr/bin/env bash
# Install everything the tests need (our venv, pypaimon's own venv) and run the whole suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
PY="${PYTHON:-python3}"
[ -x .venv-pypaimon/bin/python ] || "$PY" -m venv .venv-pypaimon
.venv-pypaimon/bin/python -c "import pypaimon" 2>/dev/null || \
  .venv-pypaimon/bin/python -m pip install -q --disable-pip-version-check 'pypaimon==2.1.0'
# Java Paimon 1.0 for tests/interop/test_java_interop.py: download the jar and compile the driver once.
.venv/bin/python tests/interop/java_paimon.py >/dev/null
export PYSPARK_PYTHON="$PWD/.venv/bin/python"
exec .venv/bin/python -m pytest -q tests "$@"
