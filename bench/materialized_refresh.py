"""Materialized tables: an incremental refresh after a 1% append to the source vs a full refresh
(INSERT OVERWRITE of the query's result), through Spark SQL, local[2]. Two shapes: a projection/
filter (new rows appended) and a GROUP BY (partial aggregates merged by the aggregation engine).

    PYSPARK_PYTHON=.venv/bin/python .venv/bin/python bench/materialized_refresh.py [rows] [query]

``query``: run only the queries whose label contains it (``"4 groups"``), e.g. at a size where the
others' full refreshes would take long.
"""

import os
import shutil
import sys
import tempfile
import time

import numpy as np
from dataset import SCHEMA, best, rows

import paimon_sql
from paimon_sql.catalog import Identifier
from paimon_sql.sql.materialized_table import refresh

N = int(sys.argv[1]) if len(sys.argv) > 1 else 4_000_000
ONLY = sys.argv[2] if len(sys.argv) > 2 else ""
QUERIES = {"projection/filter": "SELECT id, name, value * 2 AS v2, dt FROM b.src WHERE value >= 1",
           "GROUP BY dt (4 groups)": "SELECT dt, count(*) AS n, sum(value) AS total, max(id) AS top "
                                     "FROM b.src GROUP BY dt",
           "GROUP BY id (a group/row)": "SELECT id, count(*) AS n, sum(value) AS total, min(dt) AS first_dt "
                                        "FROM b.src GROUP BY id"}
# a primary-key table's default is dynamic buckets, whose key index every write loads whole: a
# GROUP BY with millions of groups refreshes faster in fixed buckets
WITH = {"GROUP BY id (a group/row)": "WITH ('bucket' = '4') "}


def main():
    tmp = tempfile.mkdtemp(prefix="paimon-mt-bench-")
    try:
        s = paimon_sql.connect(warehouse=os.path.join(tmp, "wh"),
                               conf={"spark.master": "local[2]", "spark.sql.shuffle.partitions": "4"})
        s.catalog.create_database("b", ignore_if_exists=True)
        src = s.catalog.create_table_from_arrow("b.src", SCHEMA, options={"target-file-size": "64 mb"})
        src.write_arrow(rows(np.arange(N, dtype=np.int64)))
        next_id = [N]
        print(f"source rows={N:,}; change: append of 1% ({N // 100:,} rows); Spark SQL, local[2]; seconds")
        print(f"{'materialized query':26} {'incremental':>11} {'full':>7} {'ratio':>7}  target")
        for i, (label, query) in enumerate(QUERIES.items()):
            if ONLY not in label:
                continue
            s.sql(f"CREATE MATERIALIZED TABLE b.m{i} {WITH.get(label, '')}FRESHNESS = INTERVAL '1' HOUR AS {query}")

            def table():
                return s.catalog.get_table(Identifier("b", f"m{i}"))

            def incremental():
                src.write_arrow(rows(np.arange(next_id[0], next_id[0] + N // 100, dtype=np.int64)))
                next_id[0] += N // 100
                start = time.perf_counter()
                done = refresh(s, table())
                took = time.perf_counter() - start
                assert done.first()["refresh"] == "incremental"
                return took

            def full():
                full.done = refresh(s, table(), full=True)
            inc = min(incremental() for _ in range(3))
            whole = best(full, repeat=3)
            assert full.done.first()["refresh"] == "full"
            table_rows, query_rows = s.sql(f"SELECT * FROM b.m{i}"), s.sql(query)
            assert table_rows.exceptAll(query_rows).isEmpty() and query_rows.exceptAll(table_rows).isEmpty()
            print(f"{label:26} {inc:11.2f} {whole:7.2f} {inc / whole:6.2f}x  0.1x")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
