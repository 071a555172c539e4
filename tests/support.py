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


def _thrift_compact(data: bytes, pos: int, kind: int = 12):
    """One Thrift compact-protocol value of type ``kind`` at ``pos`` (a struct as {field id: value});
    returns (value, next position). Enough of the protocol to read Parquet's page headers."""
    def varint(pos):
        shift = out = 0
        while True:
            b = data[pos]
            out |= (b & 0x7F) << shift
            pos, shift = pos + 1, shift + 7
            if not b & 0x80:
                return out, pos
    if kind in (1, 2):
        return kind == 1, pos
    if kind == 3:
        return data[pos], pos + 1
    if kind in (4, 5, 6):
        n, pos = varint(pos)
        return (n >> 1) ^ -(n & 1), pos
    if kind == 7:
        return data[pos:pos + 8], pos + 8
    if kind == 8:
        n, pos = varint(pos)
        return data[pos:pos + n], pos + n
    if kind in (9, 10):
        head, pos = data[pos], pos + 1
        size = head >> 4
        if size == 15:
            size, pos = varint(pos)
        items = []
        for _ in range(size):
            item, pos = _thrift_compact(data, pos, head & 0x0F)
            items.append(item)
        return items, pos
    if kind == 11:
        size, pos = varint(pos)
        if size == 0:
            return {}, pos
        types, pos = data[pos], pos + 1
        out = {}
        for _ in range(size):
            k, pos = _thrift_compact(data, pos, types >> 4)
            out[k], pos = _thrift_compact(data, pos, types & 0x0F)
        return out, pos
    fields, last = {}, 0
    while True:
        head, pos = data[pos], pos + 1
        if head == 0:
            return fields, pos
        delta, ftype = head >> 4, head & 0x0F
        if delta:
            last += delta
        else:
            last, pos = _thrift_compact(data, pos, 4)
        fields[last], pos = _thrift_compact(data, pos, ftype)


def parquet_page_rows(path: str, column: str, row_group: int = 0) -> list:
    """The values of each data page of one column chunk of a Parquet file, read from the page
    headers (pyarrow has no page-level API)."""
    import pyarrow.parquet as pq
    chunk = pq.ParquetFile(path).metadata.row_group(row_group)
    chunk = next(chunk.column(i) for i in range(chunk.num_columns) if chunk.column(i).path_in_schema == column)
    start = chunk.dictionary_page_offset if chunk.has_dictionary_page else chunk.data_page_offset
    with open(path, "rb") as f:
        f.seek(start)
        data = f.read(chunk.total_compressed_size)
    pos, rows = 0, []
    while pos < len(data):
        header, pos = _thrift_compact(data, pos)
        if header[1] in (0, 3):  # DATA_PAGE, DATA_PAGE_V2: num_values is field 1 of either header
            rows.append(header[5 if header[1] == 0 else 8][1])
        pos += header[3]
    return rows


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
