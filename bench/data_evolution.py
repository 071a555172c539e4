"""Data evolution: a one-column SQL UPDATE of a wide table (50 columns: a BIGINT id and 49 DOUBLEs),
with ``data-evolution.enabled`` (the column is written beside the rows) and without (a plain append
table with deletion vectors: the updated rows are written whole). Bytes written by the UPDATE's
snapshot and its time, for an UPDATE of every row and of 1% of the rows; then a full scan after.

    PYSPARK_PYTHON=.venv/bin/python .venv/bin/python bench/data_evolution.py [rows]
"""

import os
import shutil
import sys
import tempfile
import time

import numpy as np
import pyarrow as pa

import paimon_sql

N = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
COLUMNS = 50
RUNS = 3
KINDS = {"data evolution": {"row-tracking.enabled": "true", "data-evolution.enabled": "true",
                            "deletion-vectors.enabled": "true"},
         "full rows": {"deletion-vectors.enabled": "true"}}
UPDATES = {"every row": "UPDATE b.{t} SET c1 = c1 + 1",
           "1% of rows": "UPDATE b.{t} SET c1 = c1 + 1 WHERE id % 100 = 0"}


def data() -> pa.Table:
    rng = np.random.default_rng(7)
    cols = {"id": pa.array(np.arange(N, dtype=np.int64))}
    cols.update({f"c{i}": pa.array(rng.random(N)) for i in range(1, COLUMNS)})
    return pa.table(cols)


def bytes_of(path: str) -> int:
    return sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(path) for f in fs)


def main():
    tmp = tempfile.mkdtemp(prefix="paimon-de-bench-")
    rows = data()
    results = {}
    try:
        s = paimon_sql.connect(warehouse=os.path.join(tmp, "wh"),
                               conf={"spark.master": "local[2]", "spark.sql.shuffle.partitions": "4",
                                     "spark.driver.memory": "4g"})
        s.catalog.create_database("b", ignore_if_exists=True)
        n = 0
        for update, sql in UPDATES.items():
            for _ in range(RUNS):
                for kind, options in KINDS.items():  # alternated, a fresh table each run
                    n += 1
                    name = f"t{n}"
                    t = s.catalog.create_table_from_arrow(f"b.{name}", rows.schema,
                                                          options={"target-file-size": "256 mb", **options})
                    t.write_arrow(rows)
                    path = os.path.join(tmp, "wh", "b.db", name)
                    size = bytes_of(path)
                    start = time.perf_counter()
                    s.sql(sql.format(t=name))
                    took = time.perf_counter() - start
                    written = bytes_of(path) - size
                    start = time.perf_counter()
                    s.sql(f"SELECT * FROM b.{name}").write.format("noop").mode("overwrite").save()
                    scan = time.perf_counter() - start
                    best = results.get((update, kind))
                    if best is None or took < best[0]:
                        results[(update, kind)] = (took, written, scan)
                    s.sql(f"DROP TABLE b.{name}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"rows={N:,}, {COLUMNS} columns; UPDATE of one column through SQL, local[2]; best of {RUNS}")
    print(f"{'update':12} {'table':15} {'seconds':>8} {'MB written':>11} {'scan after':>11}")
    for (update, kind), (took, written, scan) in results.items():
        print(f"{update:12} {kind:15} {took:8.2f} {written / 1e6:11.1f} {scan:11.2f}")
    for update in UPDATES:
        de, full = results[(update, "data evolution")], results[(update, "full rows")]
        print(f"{update}: data evolution / full rows = {de[0] / full[0]:.2f}x time, "
              f"{de[1] / max(full[1], 1):.3f}x bytes")


if __name__ == "__main__":
    main()
