"""Helpers shared by test modules (fixtures live in conftest.py files)."""

import os
import select
import socket
import subprocess
import tempfile
import time
from typing import Optional

import pyarrow as pa

# Every JVM the tests start (the test process's Spark session, the shells, servers and cluster
# drivers it spawns, which inherit SPARK_SUBMIT_OPTS; the Hive metastore; the Java oracles)
# compiles with C1 only and collects with the serial collector: a test runs short statements over
# small data, where C2's compile threads and G1's concurrent ones cost more CPU than they save
# (measured on 2 cores: -23% on eight Spark modules, docs/testing.md). JVM flags change no result;
# a user's Spark keeps the JVM's defaults. Spark's JVMs also map the class archive of jvm_archive.py.
TEST_JVM_OPTIONS = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"

# the schema most tests use: the benchmark's shape (id, name, value, dt)
SCHEMA = pa.schema([pa.field("id", pa.int64(), False), ("name", pa.string()), ("value", pa.float64()),
                    pa.field("dt", pa.string(), False)])


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def serve(command: list, port: int, name: str, timeout: float = 30, env: Optional[dict] = None) -> subprocess.Popen:
    """Start a test server (``command``, in ``env`` when given) and wait until it accepts connections
    on 127.0.0.1:``port``."""
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
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


class LineProcess:
    """A child process spoken to in lines (a JSON command or batch on its stdin, answers on its
    stdout), started by the first line and kept until ``close()``: the oracles' drivers serve many
    commands in one process, whose start-up is most of what a command costs."""

    def __init__(self, command: list, name: str, env: Optional[dict] = None, noise: tuple = ()):
        """``name`` opens failure messages; stderr lines containing any of ``noise`` are left out."""
        self.command, self.name, self.env, self.noise = command, name, env, noise
        self.proc = None

    def write(self, line: str) -> None:
        if self.proc is None:
            self.stderr = tempfile.TemporaryFile()
            self.proc = subprocess.Popen(self.command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         stderr=self.stderr, env=self.env, bufsize=0)
            self.pending = b""
        try:
            self.proc.stdin.write(line.encode() + b"\n")
            self.proc.stdin.flush()
        except BrokenPipeError:
            pass  # died: reading finds the end of its output and reports why

    def read_line(self, timeout: float = 300) -> bytes:
        """The next line of its stdout; AssertionError with its stderr when it exited or was silent
        for ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        fd = self.proc.stdout.fileno()
        while b"\n" not in self.pending:
            ready, _, _ = select.select([fd], [], [], max(deadline - time.monotonic(), 0))
            chunk = os.read(fd, 1 << 16) if ready else None
            if not chunk:
                self._failed(f"did not answer within {timeout:.0f} s" if chunk is None else "exited")
            self.pending += chunk
        line, self.pending = self.pending.split(b"\n", 1)
        return line

    def _failed(self, what: str):
        self.proc.kill()
        self.proc.wait()
        self.stderr.seek(0)
        text = self.stderr.read().decode(errors="replace")
        self.close()
        errors = [line for line in text.splitlines() if not any(n in line for n in self.noise)]
        raise AssertionError(f"{self.name} {what}:\n" + "\n".join(errors)[-4000:])

    def close(self) -> None:
        """Ends the process: its stdin closed, it exits (killed after a minute)."""
        if self.proc is not None:
            self.proc.stdin.close()
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
            self.proc.stdout.close()
            self.stderr.close()
            self.proc = None
