"""Core format benchmark (issue: core table format), side by side in one run.

1M rows (id bigint, name string, value double, dt string with 4 values):
append write + full read; primary-key write (bucket=4) + full read; upsert of 100k rows (50k
updates, 50k inserts) + merge-on-read; against raw pyarrow Parquet (zstd) and pypaimon 2.1.0.

    .venv/bin/python bench/core.py [rows] [upsert_rows]
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np
import pyarrow.parquet as pq
from dataset import SCHEMA, rows, upsert_ids

from paimon_sql.catalog import load_catalog

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
N = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
UPSERT = int(sys.argv[2]) if len(sys.argv) > 2 else 100_000
def timed(fn, setup=None, repeat=3):
    """Best of ``repeat`` runs (2 shared cores are noisy); ``setup`` makes each run's fresh target."""
    best, result = None, None
    for _ in range(repeat):
        arg = setup() if setup else None
        s = time.perf_counter()
        result = fn(arg) if setup else fn()
        took = time.perf_counter() - s
        best = took if best is None else min(best, took)
    return best, result


def ours(tmp, base, upsert):
    cat = load_catalog(os.path.join(tmp, "ours"))
    cat.create_database("b")
    out = {}
    made = []

    def fresh(**kw):
        def make():
            made.append(cat.create_table_from_arrow(f"b.t{len(made)}", SCHEMA, **kw))
            return made[-1]
        return make

    out["append_write"], _ = timed(lambda t: t.write_arrow(base), fresh(partition_keys=["dt"]))
    t = made[-1]
    out["append_read"], got = timed(lambda: t.new_scan().to_arrow())
    assert got.num_rows == N
    pk = {"primary_keys": ["id"], "options": {"bucket": "4"}}
    out["pk_write"], _ = timed(lambda t: t.write_arrow(base), fresh(**pk))
    t = made[-1]
    out["pk_read"], got = timed(lambda: t.new_scan().to_arrow())
    assert got.num_rows == N

    def loaded():
        t = fresh(**pk)()
        t.write_arrow(base)
        return t
    out["upsert"], _ = timed(lambda t: t.write_arrow(upsert), loaded)
    t = made[-1]
    out["mor_read"], got = timed(lambda: t.new_scan().to_arrow())
    assert got.num_rows == N + UPSERT // 2
    return out


def raw(tmp, base):
    path = os.path.join(tmp, "raw.parquet")
    w, _ = timed(lambda: pq.write_table(base, path, compression="zstd"))
    r, _ = timed(lambda: pq.read_table(path))
    return {"write": w, "read": r}


def pypaimon(tmp):
    python = os.path.join(ROOT, ".venv-pypaimon", "bin", "python")
    if not os.path.exists(python):
        return None
    proc = subprocess.run([python, os.path.join(ROOT, "bench", "pypaimon_core.py"), os.path.join(tmp, "pp"), str(N),
                           str(UPSERT)], capture_output=True, text=True)
    if proc.returncode != 0:
        print(proc.stderr[-2000:], file=sys.stderr)
        return None
    return json.loads(proc.stdout)


def main():
    base = rows(np.arange(N, dtype=np.int64))
    upsert = rows(upsert_ids(N, UPSERT))
    tmp = tempfile.mkdtemp(prefix="paimon-bench-")
    try:
        r = raw(tmp, base)
        o = ours(tmp, base, upsert)
        p = pypaimon(tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"rows={N} upsert={UPSERT} (times in seconds)")
    print(f"{'operation':<14}{'ours':>9}{'raw pyarrow':>13}{'pypaimon':>10}{'ours/raw':>10}{'pypaimon/ours':>15}")
    baseline = {"append_write": r["write"], "append_read": r["read"], "pk_write": r["write"], "pk_read": r["read"],
                "upsert": None, "mor_read": r["read"]}
    for k, v in o.items():
        b = baseline[k]
        pv = p.get(k) if p else None
        print(f"{k:<14}{v:>9.3f}{(f'{b:.3f}' if b else '-'):>13}{(f'{pv:.3f}' if pv else '-'):>10}"
              f"{(f'{v / b:.2f}x' if b else '-'):>10}{(f'{pv / v:.1f}x' if pv else '-'):>15}")
    if p:
        print(f"merge-on-read rows/s: ours {(N + UPSERT // 2) / o['mor_read']:,.0f}, "
              f"pypaimon {(N + UPSERT // 2) / p['mor_read']:,.0f}")


if __name__ == "__main__":
    main()
