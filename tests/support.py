"""Helpers shared by test modules (fixtures live in conftest.py files)."""

import socket
import subprocess
import time

import pyarrow as pa

# the schema most tests use: the benchmark's shape (id, name, value, dt)
SCHEMA = pa.schema([pa.field("id", pa.int64(), False), ("name", pa.string()), ("value", pa.float64()),
                    pa.field("dt", pa.string(), False)])


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def serve(command: list, port: int, name: str, timeout: float = 30) -> subprocess.Popen:
    """Start a test server (``command``) and wait until it accepts connections on 127.0.0.1:``port``."""
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + timeout
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return proc
        except OSError:
            if time.time() > deadline or proc.poll() is not None:
                proc.kill()
                raise RuntimeError(f"{name} did not start on port {port}") from None
            time.sleep(0.1)


def parquet_leaves(path: str) -> dict:
    """{dotted column path: its Parquet leaf (ColumnSchema)} of a Parquet file."""
    import pyarrow.parquet as pq
    schema = pq.ParquetFile(path).schema
    return {schema.column(i).path: schema.column(i) for i in range(len(schema))}


def assert_java_decimal(leaf, precision: int, scale: int) -> None:
    """A Parquet leaf holds DECIMAL(precision, scale) as Java Paimon's ParquetSchemaConverter writes
    it: INT32 up to precision 9, INT64 up to 18, else FIXED_LEN_BYTE_ARRAY of the fewest bytes
    (its computeMinBytesForDecimalPrecision), annotated DECIMAL(p, s)."""
    import json
    fewest = next(n for n in range(1, 17) if 2 ** (8 * n - 1) >= 10 ** precision)
    physical = "INT32" if precision <= 9 else "INT64" if precision <= 18 else "FIXED_LEN_BYTE_ARRAY"
    assert leaf.physical_type == physical, (leaf.path, precision)
    if physical == "FIXED_LEN_BYTE_ARRAY":
        assert leaf.length == fewest, (leaf.path, precision)
    assert json.loads(leaf.logical_type.to_json()) == {"Type": "Decimal", "precision": precision, "scale": scale}
    assert leaf.converted_type == "DECIMAL"
