#!/usr/bin/env bash
# The reliability and security suites (tests/reliability/) at the full size issue 19 names: 4 × 50
# concurrent commits, 200+ SIGKILLs, 1,000 small commits, thousands of fuzzed statements, a 50M-row
# INSERT. Also the two property suites at full size: 160 generated queries against Spark
# (tests/spark/test_generated_queries.py) and 20 random lifecycle programs per table kind
# (tests/unit/test_lifecycle_safety.py). CI runs the same suites at a reduced size (docs/testing.md).
# Prints each reliability suite's figures (docs/reliability.md).
#   bash scripts/reliability.sh [pytest args]
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup-tests.sh
figures="${PAIMON_SQL_RELIABILITY_FIGURES:-$PWD/reliability-figures.jsonl}"
: > "$figures"
export PAIMON_SQL_RELIABILITY=full PAIMON_SQL_RELIABILITY_FIGURES="$figures" PYSPARK_PYTHON="$PWD/.venv/bin/python"
status=0
.venv/bin/python -m pytest -q -p no:cacheprovider tests/reliability tests/spark/test_generated_queries.py \
    tests/unit/test_lifecycle_safety.py "$@" || status=$?
.venv/bin/python - "$figures" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    print(r.pop("suite"), r.pop("full") and "(full)" or "(ci size)", ", ".join(f"{k}={v}" for k, v in r.items()))
PY
exit $status
