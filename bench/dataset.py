"""The benchmark rows, shared by our side and pypaimon's (imports only pyarrow and numpy), and timing."""

import time

import numpy as np
import pyarrow as pa

SCHEMA = pa.schema([pa.field("id", pa.int64(), False), ("name", pa.string()), ("value", pa.float64()),
                    pa.field("dt", pa.string(), False)])
DATES = np.array(["2024-01-01", "2024-01-02", "2024-01-03", "2024-01-04"])


def rows(ids: np.ndarray) -> pa.Table:
    """(id, 'name-<id>', id/2, one of 4 dates) for each id."""
    return pa.table({"id": ids, "name": pa.array([f"name-{i}" for i in ids]), "value": ids.astype(np.float64) * 0.5,
                     "dt": pa.array(DATES[ids % 4])}, schema=SCHEMA)


def upsert_ids(n: int, upsert: int) -> np.ndarray:
    """Half updates spread over the existing ids, half new ids."""
    updates = np.arange(0, n, n // (upsert // 2))[: upsert // 2]
    return np.concatenate([updates, np.arange(n, n + upsert // 2)]).astype(np.int64)


def best(fn, repeat: int = 3) -> float:
    """Seconds of the fastest of ``repeat`` runs of ``fn``."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)
