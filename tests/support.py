"""Helpers shared by test modules (fixtures live in conftest.py files)."""

import socket

import pyarrow as pa

# the schema most tests use: the benchmark's shape (id, name, value, dt)
SCHEMA = pa.schema([pa.field("id", pa.int64(), False), ("name", pa.string()), ("value", pa.float64()),
                    pa.field("dt", pa.string(), False)])


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
