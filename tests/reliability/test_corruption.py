"""Corrupt files (issue 19): every metadata and data file a read opens, truncated, garbled, emptied or
missing, fails that read with one line of a paimon_sql.exceptions class naming the file, through the
core API, SQL, the shell and the server; the other tables of the warehouse stay readable and
writable. A damaged file index is read past (it may only stop skipping): those reads return the
right rows. One warehouse holds a table per case, damaged once. The core API reads every case;
SQL, the shell and the server (one process each, started while the core tests run) read one case
per file kind at CI size, every case under scripts/reliability.sh."""

import contextlib
import json
import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import dataclass

import pyarrow as pa
import pytest
from e2e.server_support import start_server
from pyhive import hive
from spark.conftest import rows, session, spark  # noqa: F401  (fixtures: one SparkSession per run)

from paimon_sql import exceptions
from paimon_sql.catalog import load_catalog
from paimon_sql.data import predicate as P
from paimon_sql.schema.schema_change import SetOption
from paimon_sql.session import spark_error
from reliability.conftest import FULL, QUICK_JVM, record

HOWS = ("truncated", "garbled", "emptied", "missing")
# file kind -> the ways it is damaged ("missing" where a read must notice: a missing latest snapshot
# is a stale LATEST hint, read past by design; an embedded index has no file of its own)
KINDS = {
    "snapshot": HOWS[:3], "parquet": HOWS, "schema": HOWS, "manifest-list": HOWS, "manifest": HOWS,
    "orc": HOWS, "avro": HOWS, "dv": HOWS, "index-manifest": HOWS, "index": HOWS,
    "embedded-index": ("garbled", "emptied"),
}
READ_PAST = ("index", "embedded-index")  # a damaged file index rules nothing out: rows are still right
READ_PAST_ROWS = [(7,)]
CASES = [(kind, how) for kind, hows in KINDS.items() for how in hows]
FAILING = [c for c in CASES if c[0] not in READ_PAST]
# one case per kind, the ways taken in turn: every way is among them, and a garbled Parquet file
# (Spark's own reader fails on it, not the size check)
CLIENT_CASES = CASES if FULL else [(kind, hows[i % len(hows)]) for i, (kind, hows) in enumerate(KINDS.items())]
CORE_ERROR = {kind: exceptions.CorruptDataFileError if kind in ("parquet", "orc", "avro")
              else exceptions.CorruptMetadataError for kind in KINDS}
SCHEMA = pa.schema([("id", pa.int64()), ("s", pa.string())])
DV = {"deletion-vectors.enabled": "true"}
BLOOM = {"file-index.bloom-filter.columns": "s", "file-index.bloom-filter.s.items": "100"}
OPTIONS = {
    "orc": {"file.format": "orc"}, "avro": {"file.format": "avro"}, "dv": DV, "index-manifest": DV,
    "index": {**BLOOM, "file-index.in-manifest-threshold": "1"},
    "embedded-index": {**BLOOM, "file-index.in-manifest-threshold": "10000", "manifest.compression": "none"},
}
SHELL = os.path.join(os.path.dirname(sys.executable), "paimon-sql")


def table_name(kind, how):
    return f"{kind}_{how}".replace("-", "_")


def query(kind, how):
    where = " WHERE s = 's7'" if kind in READ_PAST else ""
    return f"SELECT id FROM {table_name(kind, how)}{where} ORDER BY id"


def batch(ids):
    ids = list(ids)
    return pa.table({"id": ids, "s": [f"s{i}" for i in ids]}, schema=SCHEMA)


def damage(path, how):
    """truncated: the first half; garbled: same size, the middle third inverted; emptied: 0 bytes."""
    if how == "missing":
        os.remove(path)
        return
    data = open(path, "rb").read()
    third = len(data) // 3
    out = {"truncated": data[: len(data) // 2], "emptied": b"",
           "garbled": data[:third] + bytes(b ^ 0xFF for b in data[third: 2 * third]) + data[2 * third:]}[how]
    open(path, "wb").write(out)


def damage_embedded(t, how):
    """Every data file's embedded index blob, in place in its (uncompressed) manifest."""
    for f in (e.file for e in t.new_scan().plan_entries()):
        blob = f.embedded_index
        fill = bytes(b ^ 0xFF for b in blob) if how == "garbled" else bytes(len(blob))
        for name in os.listdir(f"{t.path}/manifest"):
            path = f"{t.path}/manifest/{name}"
            data = open(path, "rb").read()
            if blob in data:
                open(path, "wb").write(data.replace(blob, fill))


def victims(t, kind, how):
    """The files of ``kind`` that reading table ``t`` must open (the one an error names first)."""
    snap = t.snapshot_manager.latest()
    data = [t.paths.data_file_path([], e.bucket, e.file.file_name) for e in t.new_scan().plan_entries()]
    if kind == "snapshot":
        return [t.paths.snapshot_path(snap.id)]
    if kind == "schema":  # without its only schema file a table does not exist: missing is the older one
        return [t.paths.schema_path(0 if how == "missing" else t.schema_manager.latest().id)]
    if kind == "manifest-list":
        return [t.paths.manifest_path(snap.delta_manifest_list)]
    if kind == "manifest":
        return [t.paths.manifest_path(t.manifest_list(snap.delta_manifest_list)[0].file_name)]
    if kind == "dv":
        (entry,) = t.index_manifest_entries(snap.index_manifest)
        return [t.paths.index_path(entry.file_name)]
    if kind == "index-manifest":
        return [t.paths.manifest_path(snap.index_manifest)]
    if kind == "index":  # every file's: an index that wrongly rules its file out would lose the row
        return [path + ".index" for path in data]
    return data[:1]


def build(path):
    """The warehouse: table ``good`` and one damaged table per case; case -> the file name its
    error must carry (None: a read-past index)."""
    cat = load_catalog(path)
    cat.create_database("default", ignore_if_exists=True)
    cat.create_table_from_arrow("default.good", SCHEMA).write_arrow(batch(range(5)))
    named = {}
    for kind, how in CASES:
        t = cat.create_table_from_arrow(f"default.{table_name(kind, how)}", SCHEMA, options=OPTIONS.get(kind, {}))
        t.write_arrow(batch(range(5)))
        t.write_arrow(batch(range(5, 10)))
        if kind in ("dv", "index-manifest"):
            t.delete_where(P.equal("id", 3))
        if kind == "schema":  # schema-1 is the table's; its data files' schema-0 is read too
            t.schema_manager.commit_changes([SetOption("snapshot.num-retained.max", "50")])
        if kind == "embedded-index":
            damage_embedded(t, how)
            named[(kind, how)] = None
            continue
        files = victims(t, kind, how)
        for file in files:
            damage(file, how)
        named[(kind, how)] = None if kind in READ_PAST else os.path.basename(files[0])
    return named


def shell_run(path):
    """One ``paimon-sql`` process over the warehouse, the statements on stdin (as typed at its
    prompt: a failing statement does not end the shell)."""
    script = "".join(query(k, h) + ";\n" for k, h in CLIENT_CASES)
    script += "INSERT INTO good VALUES (102, 'shell');\nSELECT id FROM good WHERE s = 'shell';\n"
    return subprocess.run([SHELL, "--warehouse", path, "--master", "local[1]", "--output", "json",
                           "--conf", "spark.ui.enabled=false", "--conf", "spark.sql.shuffle.partitions=1", *QUICK_JVM],
                          input=script, capture_output=True, text=True, timeout=600)


@dataclass
class Warehouse:
    path: str
    named: dict  # case -> the file name its error must carry (None: a read-past index)
    shell: object  # Future of the shell's CompletedProcess
    port: object  # Future of the server's port


@pytest.fixture(scope="module")
def corrupted(tmp_path_factory):
    """The damaged warehouse; the shell run and the server start begin at once, beside the tests."""
    path = str(tmp_path_factory.mktemp("corruption") / "warehouse")
    named = build(path)
    with ThreadPoolExecutor(2) as pool, contextlib.ExitStack() as stack:
        port = pool.submit(stack.enter_context, start_server(path, "--master", "local[1]", "--refresh-interval", "0"))
        yield Warehouse(path, named, pool.submit(shell_run, path), port)
        wait([port])  # started (test_server reports a failure) before the stack stops it


@pytest.fixture
def warehouse(corrupted):
    """The damaged warehouse, for tests/spark/conftest.py's ``session``."""
    return corrupted.path


def assert_names(message, file):
    assert "\n" not in message and "Traceback" not in message, message
    assert file in message, f"{file} not named in: {message}"


# -- core API: every case ------------------------------------------------------------------------------

def core_read(cat, kind, how):
    t = cat.get_table(f"default.{table_name(kind, how)}")
    scan = t.new_scan().filter(P.equal("s", "s7")) if kind in READ_PAST else t.new_scan()
    return [(i,) for i in sorted(scan.to_arrow().column("id").to_pylist())]


def test_core(corrupted):
    """Every case; after each, the warehouse's healthy table reads and takes a write."""
    cat = load_catalog(corrupted.path)
    good = cat.get_table("default.good")
    for kind, how in CASES:
        file = corrupted.named[(kind, how)]
        if file is None:
            assert core_read(cat, kind, how) == READ_PAST_ROWS, (kind, how)
        else:
            with pytest.raises(CORE_ERROR[kind]) as failed:
                core_read(cat, kind, how)
            assert_names(str(failed.value), file)
        before = good.to_arrow().num_rows
        good.write_arrow(batch([100]))
        assert good.to_arrow().num_rows == before + 1
    record("corruption", interface="core", corruptions=len(CASES), files_named=len(FAILING),
           read_past=len(CASES) - len(FAILING), other_tables_ok=True)


# -- SQL in process, the shell, the server: CLIENT_CASES ---------------------------------------------

def test_sql(session, corrupted):
    """Each case through Session.sql; then the good table takes a write and reads (the core test
    checks it after every case; here a Spark job each would cost seconds)."""
    named = []
    for kind, how in CLIENT_CASES:
        file = corrupted.named[(kind, how)]
        try:
            got = rows(session, query(kind, how))
        except Exception as e:  # noqa: BLE001 - a task's error reaches collect() as PySpark's
            assert file is not None, f"{kind}-{how}: {e}"
            error = spark_error(e, query(kind, how))  # the line the shell and the server print
            assert isinstance(error, exceptions.PaimonError)
            assert_names(str(error), file)
            named.append(file)
        else:
            assert file is None and got == READ_PAST_ROWS, f"{kind}-{how}: {got}"
    session.sql("INSERT INTO good VALUES (101, 'sql')")
    assert rows(session, "SELECT id FROM good WHERE s = 'sql'") == [(101,)]
    listed = {r[1] for r in rows(session, "SHOW TABLES")}  # damaged tables are listed, not hidden
    assert listed >= {"good"} | {table_name(*c) for c in CASES}
    record("corruption", interface="sql", corruptions=len(CLIENT_CASES), files_named=len(named),
           read_past=len(CLIENT_CASES) - len(named), other_tables_ok=True)


def test_shell(corrupted):
    """One ``paimon-sql`` run: each failing statement is one ``Error:`` line naming its file, the
    shell goes on to the next; read-past indexes give their rows; the good table takes a write."""
    done = corrupted.shell.result()
    errors = [line for line in done.stderr.splitlines() if line.startswith("Error: ")]
    failing = [corrupted.named[c] for c in CLIENT_CASES if corrupted.named[c] is not None]
    assert len(errors) == len(failing), done.stderr[-3000:]
    for line, file in zip(errors, failing):
        assert_names(line, file)
    assert "Traceback" not in done.stderr and "\tat " not in done.stderr
    outputs = [json.loads(found) for found in re.findall(r"\[.*\]", done.stdout)]
    assert outputs == [[{"id": 7}]] * (len(CLIENT_CASES) - len(failing)) + [[{"id": 102}]], done.stdout
    record("corruption", interface="shell", corruptions=len(CLIENT_CASES), files_named=len(errors),
           read_past=len(CLIENT_CASES) - len(failing), other_tables_ok=True)


def test_server(corrupted):
    """One server, one connection: each failing statement's error names its file; the connection
    and the server go on serving, reads and a write of the good table included."""
    cur = hive.connect("127.0.0.1", corrupted.port.result(), auth="NOSASL").cursor()
    failing = []
    for kind, how in CLIENT_CASES:
        file = corrupted.named[(kind, how)]
        if file is None:
            cur.execute(query(kind, how))
            assert cur.fetchall() == READ_PAST_ROWS
            continue
        with pytest.raises(hive.OperationalError) as failed:
            cur.execute(query(kind, how))
        assert_names(failed.value.args[0].status.errorMessage, file)
        failing.append(file)
    cur.execute("INSERT INTO good VALUES (103, 'server')")
    cur.execute("SELECT id FROM good WHERE s = 'server'")
    assert cur.fetchall() == [(103,)]
    record("corruption", interface="server", corruptions=len(CLIENT_CASES), files_named=len(failing),
           read_past=len(CLIENT_CASES) - len(failing), other_tables_ok=True)
