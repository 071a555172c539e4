"""Procedure benchmark (issue: procedures), all in one run: one Spark session, a temp warehouse.

a. ``CALL sys.compact`` (full) through Spark of a primary-key table (bucket = 4) holding three
   overlapping sorted runs (three inserts of the same N keys) vs the core
   ``table.compact(full=True)`` in this process on a byte-identical copy (target <= 1.2x).
b. Point queries ``a = x AND b = y`` on a 100-file append table of random (a, b): files planned
   (min/max stats) before and after ``CALL sys.compact(order_strategy => 'zorder', order_by => 'a,b')``
   (target: after <= 20 % of before).
c. ``CALL sys.expire_snapshots`` of 250 / 500 / 1,000 snapshots of a primary-key table whose
   compactions leave data files for expiry to delete: seconds, and the growth (2x for linear).
d. ``CALL sys.remove_orphan_files`` with 25k / 50k / 100k junk files (3 days old) in the table's
   data directories: seconds, and the growth.

Mutating operations run on a fresh copy per run: (a) three times per side, the rest once.
Figures move with the machine's load; it is printed with them.

    .venv/bin/python bench/procedures.py [--rows N=10_000_000] [--only a,b,c,d]
"""

import argparse
import os
import shutil
import tempfile
import time

import numpy as np
import pyarrow as pa
from dataset import SCHEMA, rows

import paimon_sql
from paimon_sql.data import binary_row
from paimon_sql.data import predicate as P

DB = "bench"


def seconds(fn):
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


def load():
    return "load average " + " ".join(f"{x:.2f}" for x in os.getloadavg())


def copy_table(session, name, copy):
    """``copy``: the same files as table ``name`` (paths in Paimon's metadata are relative)."""
    src = session.catalog.get_table(f"{DB}.{name}").path
    shutil.copytree(src, os.path.join(os.path.dirname(src), copy))
    return session.catalog.get_table(f"{DB}.{copy}")


def data_dirs(table):
    """The directories of the latest snapshot's data files (one per partition and bucket)."""
    types = [f.type for f in table.schema.fields_of(table.schema.partition_keys)]
    return sorted({os.path.dirname(table.paths.data_file_path(binary_row.from_bytes(e.partition, types), e.bucket,
                                                              e.file.file_name))
                   for e in table.new_scan().plan_entries()})


def three_runs(session, name, n):
    """Primary-key table ``name`` (bucket = 4) with every one of ``n`` keys in each of three runs."""
    t = session.catalog.create_table_from_arrow(f"{DB}.{name}", SCHEMA, primary_keys=["id"], options={"bucket": "4"})
    base = rows(np.arange(n, dtype=np.int64))
    for i in range(3):
        t.write_arrow(base.set_column(2, "value", pa.array(np.arange(n, dtype=np.float64) + i)))


def compaction(session, n):
    """a. Spark CALL vs the core compaction, each on its own byte-identical copy of a 3-run
    primary-key table, alternated Spark, core, core, Spark, Spark, core; the best of each three.
    A small table is compacted through Spark first: the session's Python workers start once, as
    in any long-lived session, not within a measured CALL."""
    three_runs(session, "warm", 1000)
    session.sql(f"CALL sys.compact(table => '{DB}.warm')").collect()
    three_runs(session, "pk", n)
    times = {"spark": [], "core": []}
    for i, side in enumerate(("spark", "core", "core", "spark", "spark", "core")):
        copy = copy_table(session, "pk", f"pk{i}")
        if side == "spark":
            took, _ = seconds(lambda: session.sql(f"CALL sys.compact(table => '{DB}.pk{i}')").collect())
        else:
            took, _ = seconds(lambda: copy.compact(full=True))
        times[side].append(took)
        copy = session.catalog.get_table(f"{DB}.pk{i}")
        assert copy.snapshot_manager.latest().commit_kind == "COMPACT"
        assert {e.file.level for e in copy.new_scan().plan_entries()} == {5}
        shutil.rmtree(copy.path)  # the next copy's room on disk
    return [(f"compact full, pk bucket=4, 3 runs of {n:,} keys", min(times["spark"]), min(times["core"]), 1.2,
             times)]


def zorder(session, spark):
    """b. Files a point query plans on 100 files of random (a, b), before and after a z-order compaction."""
    schema = pa.schema([("a", pa.int32()), ("b", pa.int32()), ("v", pa.string())])
    t = session.catalog.create_table_from_arrow(f"{DB}.z", schema)
    rng = np.random.default_rng(7)
    for i in range(100):
        a, b = rng.integers(0, 1000, 20_000, dtype=np.int32), rng.integers(0, 1000, 20_000, dtype=np.int32)
        t.write_arrow(pa.table({"a": a, "b": b, "v": pa.array([f"r{i}"] * 20_000)}, schema=schema))
    assert len(t.new_scan().plan_entries()) == 100
    points = [(int(rng.integers(0, 1000)), int(rng.integers(0, 1000))) for _ in range(20)]

    def planned():
        table = session.catalog.get_table(f"{DB}.z")
        return np.mean([table.new_scan().filter(P.and_(P.equal("a", a), P.equal("b", b))).plan().stats.files_planned
                        for a, b in points])
    before = planned()
    keys = ("spark.sql.shuffle.partitions", "spark.sql.adaptive.coalescePartitions.enabled")
    saved = [spark.conf.get(k) for k in keys]
    spark.conf.set(keys[0], "20")  # ~20 files written, as paimon-spark writes one per shuffle partition
    spark.conf.set(keys[1], "false")
    try:
        took, _ = seconds(lambda: session.sql(f"CALL sys.compact(table => '{DB}.z', order_strategy => 'zorder', "
                                              f"order_by => 'a,b')").collect())
    finally:
        for k, v in zip(keys, saved):
            spark.conf.set(k, v)
    after = planned()
    total = len(session.catalog.get_table(f"{DB}.z").new_scan().plan_entries())
    return before, after, total, took


def expiry(session, counts):
    """c. Seconds to expire each count of snapshots, from copies of one table of max(counts) + 1."""
    schema = pa.schema([pa.field("id", pa.int64(), False), ("v", pa.int64())])
    retain = str(max(counts) + 10)  # commits keep every snapshot
    t = session.catalog.create_table_from_arrow(f"{DB}.e", schema, primary_keys=["id"], options={
        "bucket": "1", "snapshot.num-retained.min": retain, "snapshot.num-retained.max": retain})
    appends = 0
    while appends <= max(counts):  # upserts of the same keys: the writer's compactions replace files
        t.write_arrow(pa.table({"id": np.arange(100), "v": np.full(100, appends)}, schema=schema))
        appends += 1
    total = len(list(t.snapshot_manager.snapshots()))
    out = []
    for n in (10,) + tuple(counts):  # the first CALL (10 snapshots) warms the session up, unmeasured
        copy = copy_table(session, "e", f"e{n}")
        took, result = seconds(lambda: session.sql(
            f"CALL sys.expire_snapshots(table => '{DB}.e{n}', retain_max => {total - n}, retain_min => 1, "
            f"max_deletes => {total})").collect())
        assert result[0][0] == n and len(list(copy.snapshot_manager.snapshots())) == total - n
        out.append((n, took))
    return total, out[1:]


def orphans(session, counts):
    """d. Seconds to remove each count of 3-day-old junk files spread over a table's data directories."""
    out = []
    old = time.time() - 3 * 86400
    for n in (10,) + tuple(counts):  # the first CALL (10 files) warms the session up, unmeasured
        schema = pa.schema([pa.field("p", pa.int32(), False), ("v", pa.int64())])
        t = session.catalog.create_table_from_arrow(f"{DB}.o{n}", schema, partition_keys=["p"])
        t.write_arrow(pa.table({"p": np.arange(1000, dtype=np.int32) % 100, "v": np.arange(1000)}, schema=schema))
        dirs = data_dirs(t)
        for i in range(n):
            path = os.path.join(dirs[i % len(dirs)], f"junk-{i}.orc")
            with open(path, "wb") as f:
                f.write(b"junk")
            os.utime(path, (old, old))
        took, result = seconds(lambda: session.sql(f"CALL sys.remove_orphan_files(table => '{DB}.o{n}')").collect())
        assert result[0][0] == n and t.new_scan().to_arrow().num_rows == 1000
        out.append((n, took))
    return out[1:]


def growth(points):
    """'250: 1.20 s, 500: 2.31 s (x1.93), ...': each time against the previous size's."""
    return ", ".join(f"{n:,}: {s:.2f} s" + (f" (x{s / points[i - 1][1]:.2f} for x{n / points[i - 1][0]:.0f})"
                                             if i else "")
                     for i, (n, s) in enumerate(points))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=10_000_000, help="keys per insert in (a)")
    parser.add_argument("--only", default="a,b,c,d", help="which measurements, e.g. 'a' or 'c,d'")
    args = parser.parse_args()
    only = set(args.only.split(","))
    tmp = tempfile.mkdtemp(prefix="paimon-proc-bench-")
    session = paimon_sql.connect(os.path.join(tmp, "wh"), conf={
        "spark.master": "local[2]", "spark.ui.showConsoleProgress": "false", "spark.driver.memory": "4g"})
    session.spark.sparkContext.setLogLevel("ERROR")
    try:
        session.sql(f"CREATE DATABASE {DB}")
        print(f"2 cores, local[2]; seconds; at start: {load()}")
        if "a" in only:
            for label, spark_s, core_s, target, runs in compaction(session, args.rows):
                each = "; ".join(f"{side} " + ", ".join(f"{t:.2f}" for t in ts) for side, ts in runs.items())
                print(f"a. {label}: CALL via Spark {spark_s:.2f}, core in-process {core_s:.2f} (best of runs: "
                      f"{each}), ratio {spark_s / core_s:.2f}x (target <= {target}x)  [{load()}]")
        if "b" in only:
            before, after, total, took = zorder(session, session.spark)
            print(f"b. point query a=x AND b=y, 100-file append table: {before:.1f} files planned before, "
                  f"{after:.1f} of {total} after zorder ({after / before:.1%}, target <= 20%); "
                  f"the CALL took {took:.2f}  [{load()}]")
        if "c" in only:
            total, points = expiry(session, (250, 500, 1000))
            print(f"c. expire_snapshots (of {total} snapshots): {growth(points)}  [{load()}]")
        if "d" in only:
            print(f"d. remove_orphan_files: {growth(orphans(session, (25_000, 50_000, 100_000)))}  [{load()}]")
    finally:
        session.close()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
