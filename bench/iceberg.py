"""What Iceberg-compatible metadata costs a commit (issue 35), ours against Java Paimon 2.0.

A partitioned append table (4 partitions) takes ``COMMITS`` commits of ``ROWS`` rows each, with
``metadata.iceberg.storage`` = ``table-location`` and without. Each
side's figure is the time of the whole series, best of three fresh tables; the cost of the
metadata is the difference. Java runs in one warm JVM (our IcebergDriver in tests/interop/java,
with the full JIT, not the tests' quick tier), fed one batch per series, so its figures include
reading the batch's JSON; ours call the core API (no Spark). Both write Deflate manifests (the
Java driver's classpath has no Snappy).

    .venv/bin/python bench/iceberg.py [commits] [rows]
"""

import os
import sys
import tempfile
import time
from pathlib import Path

import pyarrow as pa

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [os.path.join(ROOT, "tests"), os.path.join(ROOT, "tests", "interop")]

from java_paimon import Driver  # noqa: E402
from oracles.paimon_java import driver_command  # noqa: E402

from paimon_sql.catalog import load_catalog  # noqa: E402

COMMITS = int(sys.argv[1]) if len(sys.argv) > 1 else 50
ROWS = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
SCHEMA = pa.schema([("id", pa.int64()), ("name", pa.string()), ("dt", pa.string())])
SOURCE = Path(ROOT, "tests", "interop", "java", "IcebergDriver.java")
ICEBERG = {"metadata.iceberg.storage": "table-location", "metadata.iceberg.manifest-compression": "deflate"}
KEEP = {"snapshot.num-retained.min": "10", "snapshot.num-retained.max": "10"}


def batch(i: int) -> list:
    ids = range(i * ROWS, (i + 1) * ROWS)
    return [[n, f"name{n}", f"d{n % 4}"] for n in ids]


def ours(root: str, options: dict) -> float:
    catalog = load_catalog(root)
    catalog.create_database("b", ignore_if_exists=True)
    table = catalog.create_table_from_arrow(f"b.t{len(os.listdir(os.path.join(root, 'b.db')))}", SCHEMA,
                                            partition_keys=["dt"], options={**KEEP, **options})
    data = [pa.table(list(zip(*batch(i))), schema=SCHEMA) for i in range(COMMITS)]
    start = time.perf_counter()
    for t in data:
        table.write_arrow(t)
    return time.perf_counter() - start


def java(driver: Driver, root: str, options: dict, n: int) -> float:
    name = f"b.j{n}"
    driver.on(root, [{"op": "create", "table": name, "options": {**KEEP, **options}}])
    commands = [{"op": "write", "table": name, "rows": batch(i)} for i in range(COMMITS)]
    start = time.perf_counter()
    driver.on(root, commands)
    return time.perf_counter() - start


def main() -> None:
    command = [a for a in driver_command(SOURCE, version="2.0") if a != "-XX:TieredStopAtLevel=1"]
    figures = {("ours", False): [], ("ours", True): [], ("java", False): [], ("java", True): []}
    with tempfile.TemporaryDirectory() as tmp, Driver(command) as driver:
        java(driver, os.path.join(tmp, "java"), {}, 0)  # warm-up: the JIT and the classes
        n = 1
        for _ in range(3):  # alternated: Java first, as peers go first
            for on in (False, True):
                figures[("java", on)].append(java(driver, os.path.join(tmp, "java"), ICEBERG if on else {}, n))
                n += 1
                figures[("ours", on)].append(ours(os.path.join(tmp, "ours"), ICEBERG if on else {}))
    best = {k: min(v) for k, v in figures.items()}
    print(f"commits={COMMITS} rows/commit={ROWS} (seconds, best of 3)")
    print(f"{'side':6} {'plain':>8} {'iceberg':>8} {'cost':>8} {'per commit':>11}")
    for side in ("java", "ours"):
        plain, on = best[(side, False)], best[(side, True)]
        print(f"{side:6} {plain:8.3f} {on:8.3f} {on - plain:8.3f} {1000 * (on - plain) / COMMITS:9.1f}ms")
    print(f"java/ours: plain {best[('java', False)] / best[('ours', False)]:.2f}x, "
          f"with iceberg {best[('java', True)] / best[('ours', True)]:.2f}x")


if __name__ == "__main__":
    main()
