"""Deletion vectors through Spark SQL: a full scan (SELECT * into Spark's noop sink, local[2]) of a
10M-row append table before and after a DELETE of 1% of its rows (deletion vectors on).

    PYSPARK_PYTHON=.venv/bin/python .venv/bin/python bench/deletion_vectors_spark.py [rows]
"""

import os
import shutil
import sys
import tempfile

import numpy as np
from dataset import SCHEMA, best
from deletion_vectors import rows

import paimon_sql
from paimon_sql.data import predicate as P

N = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000_000


def main():
    tmp = tempfile.mkdtemp(prefix="paimon-dv-spark-bench-")
    try:
        s = paimon_sql.connect(warehouse=os.path.join(tmp, "wh"),
                               conf={"spark.master": "local[2]", "spark.sql.shuffle.partitions": "4"})
        s.catalog.create_database("b", ignore_if_exists=True)
        t = s.catalog.create_table_from_arrow("b.dv", SCHEMA, options={"target-file-size": "64 mb",
                                                                        "deletion-vectors.enabled": "true"})
        t.write_arrow(rows(np.arange(N, dtype=np.int64)))

        def scan():
            s.sql("SELECT * FROM b.dv").write.format("noop").mode("overwrite").save()
        scan()
        before = best(scan, repeat=5)
        t.delete_where(P.is_in("id", np.arange(0, N, 100).tolist()))
        scan()
        after = best(scan, repeat=5)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"rows={N:,}; DELETE of 1% with deletion vectors; Spark SQL full scan, local[2], best of 5")
    print(f"before {before:.2f}s, after {after:.2f}s: {after / before:.2f}x (target 1.2x)")


if __name__ == "__main__":
    main()
