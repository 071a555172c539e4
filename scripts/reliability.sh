#!/usr/bin/env bash
# The reliability and security suites (tests/reliability/) at the full size issue 19 names: 4 × 50
# concurrent commits, 200+ SIGKILLs, 1,000 small commits, thousands of fuzzed statements, a 50M-row
# INSERT. CI runs the same suites at a reduced size. Prints each suite's figures (docs/reliability.md).
#   bash scripts/reliability.sh [pytest args]
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup-tests.sh
figures="${PAIMON_SQL_RELIABILITY_FIGURES:-$PWD/reliability-figures.jsonl}"
: > "$figures"
export PAIMON_SQL_RELIABILITY=full PAIMON_SQL_RELIABILITY_FIGURES="$figures" PYSPARK_PYTHON="$PWD/.venv/bin/python"
status=0
.venv/bin/python -m pytest -q -p no:cacheprovider tests/reliability "$@" || status=$?
.venv/bin/python - "$figures" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    print(r.pop("suite"), r.pop("full") and "(full)" or "(ci size)", ", ".join(f"{k}={v}" for k, v in r.items()))
PY
exit $status
