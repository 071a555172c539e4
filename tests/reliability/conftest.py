"""Sizes and figures shared by the reliability suites (issue 19; docs/reliability.md).

CI runs every suite at a reduced size. ``scripts/reliability.sh`` sets ``PAIMON_SQL_RELIABILITY=full``
for the sizes the issue names (4 × 50 commits, 200+ kills, 1,000 commits, 50M rows, ...), and
``PAIMON_SQL_RELIABILITY_FIGURES=<file>`` to collect each suite's figures (commits attempted,
kills, rows lost, ...) as JSON lines, which the script prints as the table docs/reliability.md shows.
"""

from __future__ import annotations

import json
import os

from jvm_archive import spark_jvm_options

FULL = os.environ.get("PAIMON_SQL_RELIABILITY") == "full"
# the shells' and servers' JVMs: the quick compiler, the serial GC and the class archive, for less than half
# the CPU of a default JVM's start-up on the two cores CI has (their statements are few and short: start-up
# is most of their work)
QUICK_JVM = ["--conf", f"spark.driver.extraJavaOptions={spark_jvm_options()}"]


def size(ci: int, full: int) -> int:
    """``full`` under ``scripts/reliability.sh``, ``ci`` otherwise."""
    return full if FULL else ci


def record(suite: str, **figures) -> None:
    """Append one suite's figures to the figures file, when the script asked for one."""
    path = os.environ.get("PAIMON_SQL_RELIABILITY_FIGURES")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps({"suite": suite, "full": FULL, **figures}) + "\n")
