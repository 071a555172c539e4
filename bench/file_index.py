"""File index and merge-on-write benchmark (issue: file indexes and deletion vectors), no Spark.

1. N rows (default 10M) in 100 data files of an append table, twice: with a bloom filter on a
   high-cardinality string column ``s`` (a shuffled unique key) and a bitmap on a low-cardinality
   one ``c`` (10 values per file, 1000 in all), and without indexes. Every file also holds the
   values 'a' and 'z' in ``c`` so min/max stats cannot tell files apart: only the indexes can.
   ``WHERE s = x`` and ``WHERE c = y``: data files read, and time vs the unindexed table
   (targets: <= 5% of files, <= 0.2x).
2. A primary-key table in merge-on-write mode (deletion vectors) after 30% of its keys were updated,
   full scan vs the same rows in a merge-on-read table after full compaction (target: <= 1.3x).

    .venv/bin/python bench/file_index.py [rows]
"""

import os
import shutil
import sys
import tempfile
import time

import numpy as np
import pyarrow as pa
from dataset import best

from paimon_sql.catalog import load_catalog
from paimon_sql.data import predicate as P

N = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000_000
FILES = 100
SCHEMA = pa.schema([("id", pa.int64()), ("s", pa.string()), ("c", pa.string()), ("v", pa.float64())])
INDEXED = {"file-index.bloom-filter.columns": "s", "file-index.bloom-filter.s.items": str(N // FILES),
           "file-index.bloom-filter.s.fpp": "0.01", "file-index.bitmap.columns": "c"}



def file_batch(k: int, keys: np.ndarray) -> pa.Table:
    per = len(keys)
    ids = np.arange(k * per, (k + 1) * per, dtype=np.int64)
    s = pa.compute.binary_join_element_wise("key-", pa.array(keys).cast(pa.string()), "")
    cats = np.array([f"c{k * 10 + j:04d}" for j in range(10)] + ["a", "z"])
    c = cats[np.r_[10, 11, np.arange(per - 2) % 10]]
    return pa.table({"id": ids, "s": s, "c": pa.array(c), "v": ids * 0.5}, schema=SCHEMA)


def files_read(table, predicate) -> int:
    scan = table.new_scan().filter(predicate)
    reader = scan.reader()
    return sum(len(reader.files_to_read(s)) for s in scan.plan().splits)


def index_part(cat, out):
    per = N // FILES
    keys = np.random.default_rng(7).permutation(N)
    tables = {name: cat.create_table_from_arrow(f"b.{name}", SCHEMA, options=options)
              for name, options in (("plain", {}), ("indexed", INDEXED))}
    for name, t in tables.items():
        s = time.perf_counter()
        for k in range(FILES):
            t.write_arrow(file_batch(k, keys[k * per:(k + 1) * per]))
        out[f"write_{name}"] = time.perf_counter() - s
    probe_key = f"key-{keys[N // 2 + 17]}"
    for label, predicate in (("s", P.equal("s", probe_key)), ("c", P.equal("c", "c0421"))):
        counts = {n: files_read(t, predicate) for n, t in tables.items()}
        rows = {n: t.new_scan().filter(predicate).to_arrow().num_rows for n, t in tables.items()}
        assert rows["plain"] == rows["indexed"] > 0, rows
        times = {n: best(lambda t=t: t.new_scan().filter(predicate).to_arrow()) for n, t in tables.items()}
        out[label] = (counts, times, rows["plain"])


def mow_part(cat, out):
    schema = pa.schema([pa.field("id", pa.int64(), False), ("s", pa.string()), ("v", pa.float64())])
    ids = np.arange(N, dtype=np.int64)
    base = pa.table({"id": ids, "s": pa.compute.binary_join_element_wise("s-", pa.array(ids).cast(pa.string()), ""),
                     "v": ids * 0.5}, schema=schema)
    upd = np.sort(np.random.default_rng(3).choice(N, int(N * 0.3), replace=False)).astype(np.int64)
    update = pa.table({"id": upd, "s": pa.array(np.full(len(upd), "updated", object)), "v": upd * 2.0}, schema=schema)
    options = {"bucket": "4", "target-file-size": "128 mb"}
    mow = cat.create_table_from_arrow("b.mow", schema, primary_keys=["id"],
                                      options={**options, "deletion-vectors.enabled": "true"})
    mor = cat.create_table_from_arrow("b.mor", schema, primary_keys=["id"], options=options)
    for t in (mow, mor):
        s = time.perf_counter()
        t.write_arrow(base)
        t.write_arrow(update)
        out[f"upsert_{t.name}"] = time.perf_counter() - s
    mor.compact(full=True)
    assert mow.new_scan().to_arrow().num_rows == mor.new_scan().to_arrow().num_rows == N
    out["mow"] = best(lambda: mow.new_scan().to_arrow())
    out["compacted"] = best(lambda: mor.new_scan().to_arrow())
    snap = mow.snapshot_manager.latest()
    out["dv_rows"] = sum(r.cardinality for e in mow.index_manifest_entries(snap.index_manifest) for r in e.dv_ranges)


def main():
    tmp = tempfile.mkdtemp(prefix="paimon-index-bench-")
    out = {}
    try:
        cat = load_catalog(os.path.join(tmp, "wh"))
        cat.create_database("b")
        index_part(cat, out)
        mow_part(cat, out)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"rows={N:,}; {FILES} data files per table; 2 cores; seconds, best of 3")
    print(f"writes: plain {out['write_plain']:.1f}s, indexed {out['write_indexed']:.1f}s "
          f"({out['write_indexed'] / out['write_plain']:.2f}x)")
    print(f"{'query':<34}{'files read':>12}{'ours':>8}{'unindexed':>11}{'ratio':>8}{'target':>8}")
    for label, text in (("s", "WHERE s = <key> (bloom filter)"), ("c", "WHERE c = <value> (bitmap)")):
        counts, times, _ = out[label]
        ratio = times["indexed"] / times["plain"]
        print(f"{text:<34}{counts['indexed']:>5} of {counts['plain']:<4}{times['indexed']:>8.3f}"
              f"{times['plain']:>11.3f}{ratio:>7.2f}x{0.2:>7.1f}x")
    print(f"merge-on-write full scan ({out['dv_rows']:,} rows deleted by vectors) vs compacted merge-on-read: "
          f"{out['mow']:.2f}s vs {out['compacted']:.2f}s = {out['mow'] / out['compacted']:.2f}x (target 1.3x); "
          f"write+upsert {out['upsert_b.mow']:.1f}s vs {out['upsert_b.mor']:.1f}s")


if __name__ == "__main__":
    main()
