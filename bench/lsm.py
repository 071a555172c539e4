"""LSM benchmark (issue: primary-key tables as a real LSM tree), side by side in one run, no Spark.

Seed 001's shape: N rows (default 10M), then 30% of the keys updated twice. The primary-key table
(bucket=4) holds them as three overlapping sorted runs per bucket: the base at the max level, the
first update at level 4, the second at level 0. The append table holds the same rows. Reported:

- merge-on-read scan of the 3-level table / scan of the append table      (target <= 2.0)
- the same scan after a full compaction / scan of the append table        (target <= 1.3)
- upsert of 1M changed rows into the N-row table / raw pyarrow write of 1M (target <= 3.0)

    .venv/bin/python bench/lsm.py [rows]
"""

import dataclasses
import os
import shutil
import sys
import tempfile
import time

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from dataset import SCHEMA

from paimon_sql.catalog import load_catalog
from paimon_sql.write.commit_message import CommitMessage

N = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000_000
UPSERT = min(1_000_000, N // 10)


def timed(fn, repeat=3):
    best, result = None, None
    for _ in range(repeat):
        s = time.perf_counter()
        result = fn()
        took = time.perf_counter() - s
        best = took if best is None else min(best, took)
    return best, result


def rows(ids: np.ndarray, version: int) -> pa.Table:
    """Vectorized rows: (id, 'n<version>-<id>', value, one of 4 dates)."""
    names = pa.compute.binary_join_element_wise(f"n{version}-", pa.array(ids).cast(pa.string()), "")
    dates = np.array(["2024-01-01", "2024-01-02", "2024-01-03", "2024-01-04"])
    return pa.table({"id": ids, "name": names, "value": ids * 0.5 + version, "dt": pa.array(dates[ids % 4])},
                    schema=SCHEMA)


def upgrade_level0(t, level: int) -> None:
    """Move each bucket's level-0 run (one write: one sorted run) to ``level`` (a COMPACT commit)."""
    messages = {}
    for e in t.new_scan().plan_entries():
        if e.file.level == 0:
            m = messages.setdefault((e.partition, e.bucket), CommitMessage(e.partition, e.bucket, e.total_buckets))
            m.compact_before.append(e.file)
            m.compact_after.append(dataclasses.replace(e.file, level=level))
    t.new_commit().commit(list(messages.values()))


def main():
    tmp = tempfile.mkdtemp(prefix="paimon-lsm-bench-")
    try:
        cat = load_catalog(os.path.join(tmp, "wh"))
        cat.create_database("b")
        rng = np.random.default_rng(1)
        base = rows(np.arange(N, dtype=np.int64), 0)
        updated = np.sort(rng.choice(N, size=int(N * 0.3), replace=False)).astype(np.int64)
        upd1, upd2 = rows(updated, 1), rows(updated, 2)

        pk = cat.create_table_from_arrow("b.pk", SCHEMA, primary_keys=["id"],
                                         options={"bucket": "4", "write-only": "true"})
        pk.write_arrow(base)
        pk.compact(full=True)
        pk.write_arrow(upd1)
        upgrade_level0(pk, 4)
        pk.write_arrow(upd2)
        levels = sorted({e.file.level for e in pk.new_scan().plan_entries()})
        ap = cat.create_table_from_arrow("b.ap", SCHEMA)
        for data in (base, upd1, upd2):
            ap.write_arrow(data)

        append_scan, got = timed(lambda: ap.new_scan().to_arrow())
        assert got.num_rows == N + 2 * len(updated)
        mor_scan, got = timed(lambda: pk.new_scan().to_arrow())
        assert got.num_rows == N
        s = time.perf_counter()
        pk.compact(full=True)
        compact_time = time.perf_counter() - s
        compacted_scan, got = timed(lambda: pk.new_scan().to_arrow())
        assert got.num_rows == N

        changed = rows(np.sort(rng.choice(N, size=UPSERT, replace=False)).astype(np.int64), 3)
        raw_path = os.path.join(tmp, "raw.parquet")
        raw_write, _ = timed(lambda: pq.write_table(changed, raw_path, compression="zstd"))
        upserts = []
        for _ in range(3):  # each run upserts into a fresh copy of the compacted 10M-row table state
            t = cat.create_table_from_arrow(f"b.u{len(upserts)}", SCHEMA, primary_keys=["id"],
                                            options={"bucket": "4", "write-only": "true"})
            t.write_arrow(base)
            t.compact(full=True)
            t = cat.get_table(f"b.u{len(upserts)}")
            t.schema.options.pop("write-only")  # the upsert runs as a normal writer (compaction on)
            t = type(t)(t.io, t.path, t.schema, t.name)
            s = time.perf_counter()
            t.write_arrow(changed)
            upserts.append(time.perf_counter() - s)
        upsert = min(upserts)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    print(f"rows={N:,} updated keys={len(updated):,} (twice) upsert={UPSERT:,}; 2 cores; seconds, best of 3")
    print(f"primary-key levels before compaction: {levels}; full compaction took {compact_time:.2f}")
    print(f"{'measure':<46}{'ours':>8}{'baseline':>10}{'ratio':>8}{'target':>8}")
    for name, v, b, target in [
        ("merge-on-read scan, 3 levels vs append scan", mor_scan, append_scan, 2.0),
        ("scan after full compaction vs append scan", compacted_scan, append_scan, 1.3),
        (f"upsert {UPSERT:,} rows vs raw pyarrow write", upsert, raw_write, 3.0),
    ]:
        print(f"{name:<46}{v:>8.2f}{b:>10.2f}{v / b:>7.2f}x{target:>7.1f}x")


if __name__ == "__main__":
    main()
