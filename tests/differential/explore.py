"""Run a script on paimon-spark and on paimon-sql and print each statement's two answers, normalised
as the suite compares them: how a new case of the differential suite is written.

    cd tests && ../.venv/bin/python -m differential.explore script.sql        (or - for stdin)
    PAIMON_SPARK_JAR=... ; --raw prints the answers as they came, --ours-only / --theirs-only one side

Each run uses fresh warehouses under a temporary directory (kept with --keep, and printed).
"""

import argparse
import json
import logging
import sys
import tempfile
from functools import partial

from differential import corpus
from differential.conftest import EngineProcess
from differential.engine import dataframe_operation, run
from oracles.paimon_spark import jar


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("script")
    parser.add_argument("--raw", action="store_true")
    parser.add_argument("--keep", action="store_true")
    parser.add_argument("--ours-only", action="store_true")
    parser.add_argument("--theirs-only", action="store_true")
    args = parser.parse_args()
    text = sys.stdin.read() if args.script == "-" else open(args.script).read()
    case = corpus.parse("explore", text)
    base = tempfile.mkdtemp(prefix="explore-") if args.keep else tempfile.TemporaryDirectory().name
    theirs = ours = [None] * len(case.statements)
    if not args.ours_only:
        engine = EngineProcess("paimon-spark", ["paimon-spark", str(jar())])
        engine.submit([{"warehouse": f"{base}/paimon-spark", "statements": case.theirs()}])
    if not args.theirs_only:
        import paimon_sql
        session = paimon_sql.connect(f"{base}/ours", conf={"spark.master": "local[2]", "spark.ui.enabled": "false"})
        session.spark.sparkContext.setLogLevel("OFF")
        logging.getLogger("SQLQueryContextLogger").setLevel(logging.CRITICAL)  # PySpark's JSON record of each failure
        ours = run(session.sql, case.ours(), partial(dataframe_operation, session.spark, session.sql, f"{base}/ours"))
    if not args.ours_only:
        theirs = engine.answers()[0]
        engine.close()
    for statement, mine, other in zip(case.statements, ours, theirs):
        show = {}
        for label, answer, wh in (("paimon-sql", mine, "ours"), ("paimon-spark", other, "paimon-spark")):
            if answer is not None:
                show[label] = answer if args.raw else corpus.normalise(answer, f"{base}/{wh}", statement.ordered)
        same = len(show) == 2 and corpus.difference(statement, *show.values()) is None
        print(("== " if same else "!! ") + statement.text)
        for label, answer in show.items():
            if not same or len(show) == 1:
                print(f"   {label}: {json.dumps(answer, default=str)}")
    print(f"(warehouses in {base})" if args.keep else "")
    return 0


if __name__ == "__main__":
    sys.exit(main())
