"""Scale without surprises (issue 19): a large INSERT through SQL and a many-commit primary-key
table compacted by ``CALL sys.compact``, rows exact, memory bounded
(tests/reliability/scale_run.py does the work and measures; see there for each figure).

CI: 200,000 rows and 20 commits in the run's Spark session; ``scripts/reliability.sh``: 50 million
rows and 200 commits of 100,000 rows. The bounds hold at both sizes, which is the point: they do
not grow with the data.

- driver Python growth <= 256 MB: the driver plans and commits; rows never pass through it (50M
  rows are ~1.5 GB as Arrow, so a driver that gathered even a sixth of them would fail);
- each Python worker <= 1.5 GB: the interpreter with pyarrow and pyspark (~150 MB), plus a writer
  task's buffer of ``write-buffer-size`` (256 MB) rows, which a flush holds about 5 times over
  (the rows, their concatenation, each bucket's gathered slice, per-row numpy codes and sequence
  numbers, Parquet's pages) — measured 1.3 GB at 50M rows; a compaction task merges one bucket;
- the JVM <= 2 GB: its heap is capped (``spark.driver.memory``, 1 GB by default).
"""

from reliability.conftest import record, size
from reliability.scale_run import run
from spark.conftest import session, spark  # noqa: F401  (fixtures: the run's one Spark session)

ROWS = size(200_000, 50_000_000)
COMMITS = size(20, 200)
COMMIT_ROWS = size(2_000, 100_000)
MB = {"driver_python_growth": 256, "workers_max": 1536, "jvm": 2048}


def test_large_insert_and_many_commit_compaction_stay_exact_within_bounded_memory(session, warehouse):
    session.sql("CREATE DATABASE db")
    figures = run(session, warehouse, ROWS, COMMITS, COMMIT_ROWS)
    record("scale", **figures)
    assert figures["insert_ok"] and figures["compact_ok"], figures
    for phase in ("insert", "compact"):
        rss = figures["rss_mb"][phase]
        assert rss["workers"] > 0, (phase, rss)  # the sampler found the Python workers
        over = {k: rss[k] for k, bound in MB.items() if rss[k] > bound}
        assert not over, f"{phase}: peak RSS (MB) over the bounds {MB}: {over}"
