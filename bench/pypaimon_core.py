"""pypaimon's side of bench/core.py; runs in .venv-pypaimon and prints one JSON object of timings."""

import json
import os
import sys
import time

import numpy as np
from dataset import SCHEMA, rows, upsert_ids
from pypaimon import CatalogFactory, Schema

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "interop"))
from pypaimon_driver import commit  # noqa: E402  (the interop driver's helpers)
from pypaimon_driver import read_table as read

warehouse, n, upsert_n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])


def timed(key, fn):
    start = time.perf_counter()
    result = fn()
    out[key] = time.perf_counter() - start
    return result


cat = CatalogFactory.create({"warehouse": warehouse})
cat.create_database("b", True)
out = {}
base = rows(np.arange(n, dtype=np.int64))
cat.create_table("b.append", Schema.from_pyarrow_schema(SCHEMA, partition_keys=["dt"]), False)
t = cat.get_table("b.append")
timed("append_write", lambda: commit(t, base))
assert timed("append_read", lambda: read(t)).num_rows == n
cat.create_table("b.pk", Schema.from_pyarrow_schema(SCHEMA, primary_keys=["id"], options={"bucket": "4"}), False)
t = cat.get_table("b.pk")
timed("pk_write", lambda: commit(t, base))
assert timed("pk_read", lambda: read(t)).num_rows == n
timed("upsert", lambda: commit(t, rows(upsert_ids(n, upsert_n))))
assert timed("mor_read", lambda: read(t)).num_rows == n + upsert_n // 2
json.dump(out, sys.stdout)
