"""pypaimon's side of bench/core.py; runs in .venv-pypaimon and prints one JSON object of timings."""

import json
import sys
import time

import numpy as np
import pyarrow as pa
from pypaimon import CatalogFactory, Schema

warehouse, n, upsert_n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
SCHEMA = pa.schema([pa.field("id", pa.int64(), False), ("name", pa.string()), ("value", pa.float64()),
                    pa.field("dt", pa.string(), False)])


def data(ids):
    return pa.table({"id": ids, "name": pa.array([f"name-{i}" for i in ids]), "value": ids.astype(np.float64) * 0.5,
                     "dt": pa.array(np.array(["2024-01-01", "2024-01-02", "2024-01-03", "2024-01-04"])[ids % 4])},
                    schema=SCHEMA)


def commit(t, d):
    wb = t.new_batch_write_builder()
    w, c = wb.new_write(), wb.new_commit()
    w.write_arrow(d)
    c.commit(w.prepare_commit())
    w.close()
    c.close()


def read(t):
    rb = t.new_read_builder()
    return rb.new_read().to_arrow(rb.new_scan().plan().splits())


cat = CatalogFactory.create({"warehouse": warehouse})
cat.create_database("b", True)
out = {}
ids = np.arange(n, dtype=np.int64)
base = data(ids)
cat.create_table("b.append", Schema.from_pyarrow_schema(SCHEMA, partition_keys=["dt"]), False)
t = cat.get_table("b.append")
s = time.perf_counter(); commit(t, base); out["append_write"] = time.perf_counter() - s
s = time.perf_counter(); rows = read(t).num_rows; out["append_read"] = time.perf_counter() - s
assert rows == n
cat.create_table("b.pk", Schema.from_pyarrow_schema(SCHEMA, primary_keys=["id"], options={"bucket": "4"}), False)
t = cat.get_table("b.pk")
s = time.perf_counter(); commit(t, base); out["pk_write"] = time.perf_counter() - s
s = time.perf_counter(); rows = read(t).num_rows; out["pk_read"] = time.perf_counter() - s
up = np.concatenate([np.arange(0, n, n // (upsert_n // 2))[: upsert_n // 2], np.arange(n, n + upsert_n // 2)])
s = time.perf_counter(); commit(t, data(up.astype(np.int64))); out["upsert"] = time.perf_counter() - s
s = time.perf_counter(); rows = read(t).num_rows; out["mor_read"] = time.perf_counter() - s
assert rows == n + upsert_n // 2, rows
json.dump(out, sys.stdout)
