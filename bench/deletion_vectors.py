"""Deletion-vector benchmark (issue: file indexes and deletion vectors), side by side, no Spark.

N rows (default 10M) in an append table; DELETE of 1% of the rows (spread over every file):
- with deletion vectors vs copy-on-write of the touched files (target: <= 0.1x);
- a full scan after the DELETE vs before it (target: <= 1.2x).

    .venv/bin/python bench/deletion_vectors.py [rows]
"""

import os
import shutil
import sys
import tempfile
import time

import numpy as np
import pyarrow as pa
from dataset import SCHEMA, best

from paimon_sql.catalog import load_catalog
from paimon_sql.data import predicate as P

N = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000_000


def rows(ids):
    names = pa.compute.binary_join_element_wise("name-", pa.array(ids).cast(pa.string()), "")
    dates = np.array(["2024-01-01", "2024-01-02", "2024-01-03", "2024-01-04"])
    return pa.table({"id": ids, "name": names, "value": ids * 0.5, "dt": pa.array(dates[ids % 4])}, schema=SCHEMA)



def main():
    tmp = tempfile.mkdtemp(prefix="paimon-dv-bench-")
    try:
        cat = load_catalog(os.path.join(tmp, "wh"))
        cat.create_database("b")
        data = rows(np.arange(N, dtype=np.int64))
        doomed = np.arange(0, N, 100, dtype=np.int64)
        times = {}
        for mode, options in (("dv", {"deletion-vectors.enabled": "true"}), ("cow", {})):
            runs = []
            for i in range(3):
                t = cat.create_table_from_arrow(f"b.{mode}{i}", SCHEMA, options={"target-file-size": "64 mb",
                                                                                 **options})
                t.write_arrow(data)
                files = len(t.new_scan().plan_entries())
                if mode == "dv" and i == 0:
                    times["scan_before"] = best(lambda: t.new_scan().to_arrow(), repeat=7)
                s = time.perf_counter()
                deleted = t.delete_where(P.is_in("id", doomed.tolist()))
                runs.append(time.perf_counter() - s)
                assert deleted == len(doomed)
                if mode == "dv" and i == 0:
                    times["scan_after"] = best(lambda: t.new_scan().to_arrow(), repeat=7)
                    assert t.new_scan().to_arrow().num_rows == N - len(doomed)
            times[mode] = min(runs)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"rows={N:,} in {files} files; DELETE of {len(doomed):,} rows (1%, every file touched); "
          "2 cores; seconds, best of 3 (scans: best of 7)")
    print(f"{'measure':<44}{'ours':>8}{'baseline':>10}{'ratio':>8}{'target':>8}")
    for name, v, b, target in [("DELETE with deletion vectors vs copy-on-write", times["dv"], times["cow"], 0.1),
                               ("full scan after the DELETE vs before", times["scan_after"], times["scan_before"],
                                1.2)]:
        print(f"{name:<44}{v:>8.2f}{b:>10.2f}{v / b:>7.2f}x{target:>7.1f}x")


if __name__ == "__main__":
    main()
