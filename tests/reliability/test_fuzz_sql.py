"""Fuzzing (issue 19): statements hypothesis writes — valid and invalid, odd names and literals, huge and
empty inputs, mutations of valid statements — through ``Session.sql``, the shell and the server.

Properties, for every statement, whichever way it came in:
- a failure is one of the errors a user may see: our ``PaimonError`` classes (``Session.sql`` converts
  Spark's analysis errors to :class:`SparkSqlError`), or, while a result's rows are computed
  (``collect()``, after ``Session.sql`` returned), the pyspark.errors classes of :data:`ROW_ERRORS`;
- its message is one line, with no traceback, Java stack or Python repr of our internals in it;
- a failed statement changed no table: the warehouse's tables, and the snapshot, schema, tags and rows of
  the fixed tables, are the same after it as before it;
- the shell reports each statement with one stderr line (``Time taken`` or ``Error:``) and nothing else,
  and the server answers a trivial query every :data:`PROBE_EVERY` statements and at the end.

One shell (the interactive prompt fed statement by statement over a pipe, so each failure is known before
the next statement) and one server are started at the first test, in the background, while the
in-process statements run. CI runs a fixed set of examples (derandomized); ``scripts/reliability.sh``
runs thousands of random ones.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import queue
import re
import subprocess
import sys
import threading
from collections import Counter
from pathlib import Path

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from pyhive import hive
from pyspark.errors import (ArithmeticException, DateTimeException, IllegalArgumentException,
                            NumberFormatException, SparkRuntimeException)

from e2e.server_support import start_server
from paimon_sql.catalog import load_catalog
from paimon_sql.exceptions import PaimonError
from paimon_sql.procedures import PROCEDURES
from paimon_sql.session import spark_error
from paimon_sql.sql.parse import split_statements
from reliability.conftest import FULL, QUICK_JVM as RELIABILITY_JVM, record, size
from spark.conftest import session, spark  # noqa: F401  (fixtures: one SparkSession per run)

SHELL = str(Path(sys.executable).parent / "paimon-sql")
# the shell's and the server's JVMs: one core, and reliability.conftest's quick JVM
QUICK_JVM = ["--master", "local[1]", *RELIABILITY_JVM]
CASES = {"session": size(60, 3000), "shell": size(25, 1000), "server": size(30, 1000)}  # + the examples
PROBE_EVERY = 20
# Errors Spark raises while it computes a result's rows (Session.sql has returned its DataFrame by then):
# a statement's expressions failing on its values under ANSI mode — 1/0 and overflow, a cast of text
# that is no number or date, assert_true/raise_error and other runtime checks, a bad argument to a
# function. The shell and the server convert them to one line with ``spark_error``.
ROW_ERRORS = (ArithmeticException, NumberFormatException, DateTimeException, SparkRuntimeException,
              IllegalArgumentException)
# what a message must never hold: a traceback, a Java stack, py4j's wrapping, a Python object's repr
_NOT_ONE_LINE = re.compile(r"\n|Traceback|\tat |\bat (?:org|java|scala)\.\w|py4j|JVM stacktrace|object at 0x|"
                           r"File \"|<paimon_sql\.|\b(?:Identifier|FileStoreTable|DataField|TableSchema)\(")

# -- the fixed tables every statement may touch -----------------------------------------------------------

DB = "fz"
FIXED = {  # name -> Arrow schema, partition keys, primary keys, options, two commits' rows
    "pk": (pa.schema([("id", pa.int32()), ("v", pa.string()), ("d", pa.float64())]), [], ["id"], {"bucket": "1"},
           [[(1, "a", 1.5), (2, "it's", -0.0)], [(3, "日本", None)]]),
    "app": (pa.schema([("id", pa.int32()), ("s", pa.string()), ("p", pa.string())]), ["p"], [], {},
            [[(1, "a", "x"), (2, None, "y")], [(3, "日本", "x")]]),
}


def make_fixed_tables(warehouse: str) -> None:
    """``fz.pk`` (primary key) and ``fz.app`` (append, partitioned), two snapshots each and tag ``t1``,
    written through the core API (no Spark), so that the shell and the server start on them too."""
    cat = load_catalog(warehouse)
    cat.create_database(DB, ignore_if_exists=True)
    for name, (schema, partitions, keys, options, commits) in FIXED.items():
        table = cat.create_table_from_arrow(f"{DB}.{name}", schema, partitions, keys, options)
        for rows in commits:
            table.write_arrow(pa.Table.from_pylist([dict(zip(schema.names, r)) for r in rows], schema=schema))
        table.tag_manager.create("t1", table.snapshot_manager.latest())


def fingerprint(warehouse: str) -> dict:
    """What a failed statement must not change: the databases and tables; of each table its latest
    snapshot and schema ids and tags; of the fixed tables, also a digest of their rows."""
    cat = load_catalog(warehouse)
    out = {}
    for db in cat.list_databases():
        for name in cat.list_tables(db):
            try:
                table = cat.get_table(f"{db}.{name}")
            except PaimonError as e:  # a table a statement left unreadable: a change if it was readable
                out[(db, name)] = f"unreadable: {e}"
                continue
            if not hasattr(table, "snapshot_manager"):  # views, format and object tables
                out[(db, name)] = type(table).__name__
                continue
            tags = sorted(os.listdir(tag_dir)) if os.path.isdir(tag_dir := f"{table.path}/tag") else []
            state = [table.snapshot_manager.latest_id(), table.schema.id, tags]
            if db == DB and name in FIXED:
                rows = sorted(map(repr, table.to_arrow().to_pylist()))
                state.append(hashlib.sha1(repr(rows).encode()).hexdigest())
            out[(db, name)] = state
    return out


# -- the grammar --------------------------------------------------------------------------------------------

ODD_NAMES = [" spaced name ", "日本語", "émoji😀", "a$b", "..", "a/b", "../../etc", "x" * 300, "", "a``b", "a.b",
             "\t", "'q'", "select", "1abc", "$snapshots", "a\\b", "NUL\x00x", "\u200b"]
PLAIN_TABLES = ["fz.pk", "fz.app", "fz.PK", "`fz`.`app`", "fz.nope", "nodb.pk", "pk", "spark_catalog.fz.pk"]
SYSTEM_TABLES = ["snapshots", "schemas", "options", "files", "manifests", "tags", "branches", "consumers",
                 "partitions", "buckets", "audit_log", "binlog", "ro", "statistics", "table_indexes",
                 "aggregation_fields", "file_keys", "nope", "", "snapshots$files", "branch_b1", "branch_nope"]
COLUMNS = ["id", "v", "d", "s", "p", "nope", "ID", "`v`", "t.id", "_KEY_id", "rowkind", "__paimon_file_path"]
TYPES = ["INT", "BIGINT", "STRING", "DOUBLE", "DECIMAL(38,10)", "DECIMAL(39,0)", "DECIMAL(0,0)", "VARCHAR(0)",
         "CHAR(300)", "ARRAY<INT>", "MAP<STRING,INT>", "STRUCT<a:INT,`b c`:STRING>", "VARIANT", "TIMESTAMP_LTZ",
         "TIMESTAMP_NTZ", "INTERVAL DAY", "BINARY", "BLAH", "INT NOT NULL", "STRING COMMENT 'c'", "ARRAY<"]
OPTION_KEYS = ["bucket", "primary-key", "merge-engine", "changelog-producer", "file.format", "sequence.field",
               "snapshot.num-retained.max", "partition.expiration-time", "deletion-vectors.enabled", "bucket-key",
               "fields.v.aggregate-function", "nonexistent.option", "", "bucket ", "BUCKET", "a'b", "日本"]
OPTION_VALUES = ["1", "-1", "0", "-2", "abc", "", "99999999999999999999", "true", "parquet", "orc", "avro",
                 "partial-update", "aggregation", "input", "lookup", "1 h", "id", "nope", "NaN", "日本"]
PROCEDURE_NAMES = sorted(set(PROCEDURES) - {"migrate_table", "migrate_database"}) + [  # they move files in
    "nope", "CREATE_TAG", "sys", "", "create_tag$"]  # from paths: the security suite tries those
PARAMETERS = ["table", "tag", "snapshot", "tag_name", "branch", "older_than", "retain_max", "retain_min", "options",
              "where", "partitions", "consumer_id", "dry_run", "nope", "TABLE", "`table`"]
BAD_LITERALS = ["1e308", "1e309", "-1e309", "9" * 400, "0." + "0" * 400 + "1", "NaN", "'NaN'", "CAST('NaN' AS DOUBLE)",
                "double('inf')", "-0.0", "1.5BD", "''", "'", "'abc", '"', "'it''s'", "'\\'", "X'0G'", "X''",
                "DATE '2020-13-45'", "TIMESTAMP 'x'", "NULL", "INTERVAL 1 DAY", "array(1, 'a')", "map(1, 2, 1, 3)",
                "named_struct('a', 1)", "1/0", "CAST('x' AS INT)", "2147483648", "-2147483649", "127Y", "1L",
                "9223372036854775808L", "TRUE", "current_timestamp()", "?", ":p", "${x}", "'\\u0000'", "'\\"]
VALID = [
    "INSERT INTO fz.pk VALUES (7, 'seven', 7.5)",
    "INSERT INTO fz.app PARTITION (p = 'z') VALUES (9, 'nine')",
    "UPDATE fz.pk SET v = 'u' WHERE id = 1",
    "DELETE FROM fz.app WHERE id > 100",
    "MERGE INTO fz.pk t USING (SELECT 2 AS id, 'm' AS v, 2.0D AS d) s ON t.id = s.id "
    "WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *",
    "ALTER TABLE fz.app SET TBLPROPERTIES ('snapshot.num-retained.max' = '50')",
    "ALTER TABLE fz.pk ADD COLUMNS (extra INT)",
    "SELECT * FROM fz.pk VERSION AS OF 1",
    "SELECT * FROM fz.app TIMESTAMP AS OF '2000-01-01 00:00:00'",
    "SELECT id, v FROM fz.pk FOR SYSTEM_VERSION AS OF 't1' WHERE id > 1 ORDER BY id",
    "SELECT snapshot_id, commit_kind FROM fz.`pk$snapshots`",
    "SELECT * FROM fz.app$files",
    "CALL sys.create_tag(`table` => 'fz.pk', tag => 't2', snapshot => 1)",
    "CALL sys.expire_snapshots(`table` => 'fz.app', retain_max => 5)",
    "SHOW CREATE TABLE fz.pk", "DESCRIBE EXTENDED fz.app", "SHOW TBLPROPERTIES fz.pk", "SHOW PARTITIONS fz.app",
    "DESCRIBE fz.pk id", "SHOW TABLES IN fz", "SHOW DATABASES", "SHOW TAGS fz.pk",
    "CREATE TABLE fz.s1 (a INT, b STRING) PARTITIONED BY (b) TBLPROPERTIES ('bucket' = '-1')",
    "CREATE TABLE fz.s2 (a INT, PRIMARY KEY (a) NOT ENFORCED) WITH ('bucket' = '1')",
    "CREATE TABLE fz.s3 AS SELECT 1 AS a",
    "SELECT count(*), max(v) FROM fz.pk WHERE d > 0 GROUP BY id HAVING count(*) > 0",
]
# empty, blank and comment-only input; huge input: a 1 MB literal and a 1 MB expression, nesting deeper than
# sqlglot's recursion reaches, and 10,000 columns to select, create and insert (50 KB and 300 in CI)
EMPTY = ["", " ", "\n\t ", ";", ";;", "-- just a comment", "/* block */", "/* unclosed", "--", "\ufeff", "/**/;/**/"]
BIG, WIDE = size(50_000, 1_000_000), size(300, 10_000)
HUGE = ["SELECT length('" + "x" * BIG + "')",
        "SELECT 1" + " + 1" * (BIG // 4),
        "SELECT " + "(" * 300 + "1" + ")" * 300,
        "SELECT " + ", ".join(f"{i} AS c{i}" for i in range(WIDE)),
        "CREATE TABLE fz.wide (" + ", ".join(f"c{i} INT" for i in range(WIDE)) + ")",
        "INSERT INTO fz.pk (" + ", ".join(f"c{i}" for i in range(WIDE)) + ") VALUES (1)",
        "SELECT * FROM fz.pk WHERE id IN (" + ", ".join(str(i) for i in range(WIDE)) + ")"]


def _quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def _string(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


odd_name = st.one_of(st.sampled_from(ODD_NAMES), st.text(min_size=1, max_size=12))
name = st.one_of(odd_name.map(_quote), st.from_regex(r"[a-z_][a-z0-9_]{0,10}", fullmatch=True),
                 st.sampled_from(ODD_NAMES))  # some bare: mostly syntax errors
table = st.one_of(st.sampled_from(PLAIN_TABLES), name.map(lambda n: f"fz.{n}"), name,
                  st.tuples(st.sampled_from(["fz.pk", "fz.app", "pk", "fz.nope"]), st.sampled_from(SYSTEM_TABLES))
                  .map(lambda t: f"{t[0]}${t[1]}"),
                  st.tuples(st.sampled_from(["pk", "app"]), st.sampled_from(SYSTEM_TABLES))
                  .map(lambda t: f"fz.`{t[0]}${t[1]}`"))
literal = st.one_of(st.integers(-2 ** 70, 2 ** 70).map(str), st.floats().map(repr), st.sampled_from(BAD_LITERALS),
                    st.text(max_size=20).map(_string), st.text(max_size=8).map(lambda s: "'" + s + "'"))
column = st.one_of(st.sampled_from(COLUMNS), name)
predicate = st.one_of(st.builds(lambda c, op, v: f"{c} {op} {v}", column,
                                st.sampled_from(["=", "<", ">=", "<>", "<=>", "IN", "LIKE", "IS", "= ="]), literal),
                      st.sampled_from(["TRUE", "id IS NULL", "v = 'a' OR d > 1", "1 = 1/0", "id IN (SELECT 1)"]))


def _comma(items) -> str:
    return ", ".join(items)


@st.composite
def create_table(draw) -> str:
    cols = draw(st.lists(st.builds(lambda n, t: f"{n} {t}", name, st.sampled_from(TYPES)), max_size=4))
    key = draw(st.sampled_from(["", ", PRIMARY KEY (a) NOT ENFORCED", ", PRIMARY KEY (nope) NOT ENFORCED"]))
    options = draw(st.lists(st.tuples(st.sampled_from(OPTION_KEYS), st.sampled_from(OPTION_VALUES)), max_size=3))
    props = _comma(f"{_string(k)} = {_string(v)}" for k, v in options)
    tail = draw(st.sampled_from(["", f"TBLPROPERTIES ({props})", f"WITH ({props})", "PARTITIONED BY (a)",
                                 f"PARTITIONED BY (nope) TBLPROPERTIES ({props})", "USING parquet",
                                 "USING paimon", "LOCATION '/tmp'", "AS SELECT 1 AS a", "AS SELECT 1/0 AS a"]))
    exists = draw(st.sampled_from(["", "IF NOT EXISTS "]))
    return f"CREATE TABLE {exists}{draw(table)} (a INT{', ' if cols else ''}{_comma(cols)}{key}) {tail}"


@st.composite
def dml(draw) -> str:
    t, c, v, p = draw(table), draw(column), draw(literal), draw(predicate)
    values = _comma(draw(st.lists(literal, min_size=1, max_size=4)))
    return draw(st.sampled_from([
        f"INSERT INTO {t} VALUES ({values})", f"INSERT OVERWRITE {t} VALUES ({values})",
        f"INSERT INTO {t} ({c}) VALUES ({v})", f"INSERT INTO {t} SELECT {values}",
        f"INSERT INTO {t} PARTITION (p = {v}) VALUES ({values})",
        f"UPDATE {t} SET {c} = {v} WHERE {p}", f"UPDATE {t} SET {c} = {v}",
        f"DELETE FROM {t} WHERE {p}", f"TRUNCATE TABLE {t}",
        f"MERGE INTO {t} t USING (SELECT {v} AS id, {v} AS v) s ON t.id = s.id "
        f"WHEN MATCHED THEN UPDATE SET {c} = s.v WHEN NOT MATCHED THEN INSERT *",
        f"MERGE INTO {t} t USING {draw(table)} s ON {p} WHEN MATCHED AND {p} THEN DELETE"]))


@st.composite
def alter(draw) -> str:
    t, c, n, k, v = draw(table), draw(column), draw(name), draw(st.sampled_from(OPTION_KEYS)), \
        draw(st.sampled_from(OPTION_VALUES))
    return draw(st.sampled_from([
        f"ALTER TABLE {t} SET TBLPROPERTIES ({_string(k)} = {_string(v)})", f"ALTER TABLE {t} UNSET TBLPROPERTIES "
        f"({_string(k)})", f"ALTER TABLE {t} ADD COLUMNS ({n} {draw(st.sampled_from(TYPES))})",
        f"ALTER TABLE {t} RENAME COLUMN {c} TO {n}", f"ALTER TABLE {t} DROP COLUMN {c}",
        f"ALTER TABLE {t} ALTER COLUMN {c} TYPE {draw(st.sampled_from(TYPES))}",
        f"ALTER TABLE {t} RENAME TO fz.{n}", f"ALTER TABLE {t} CREATE TAG {n}", f"ALTER TABLE {t} DROP PARTITION "
        f"(p = {draw(literal)})", f"ALTER TABLE {t} ALTER COLUMN {c} COMMENT {draw(literal)}"]))


@st.composite
def query(draw) -> str:
    t, c, v, p = draw(table), draw(column), draw(literal), draw(predicate)
    return draw(st.sampled_from([
        f"SELECT * FROM {t}", f"SELECT {c} FROM {t} WHERE {p}", f"SELECT {v}", f"SELECT {v} AS {draw(name)}",
        f"SELECT * FROM {t} VERSION AS OF {v}", f"SELECT * FROM {t} TIMESTAMP AS OF {v}",
        f"SELECT * FROM {t} FOR SYSTEM_TIME AS OF {v}", f"SELECT count(*) FROM {t} /*+ OPTIONS('scan.snapshot-id'"
        f"={_string(draw(st.sampled_from(OPTION_VALUES)))}) */", f"SELECT {c}, count(*) FROM {t} GROUP BY {c}",
        f"WITH q AS (SELECT * FROM {t}) SELECT * FROM q WHERE {p}", f"SELECT * FROM {t} a JOIN {t} b ON {p}",
        f"SELECT * FROM {t} LIMIT {v}", f"VALUES ({v})"]))


@st.composite
def call(draw) -> str:
    args = draw(st.lists(st.one_of(literal, st.sampled_from(PLAIN_TABLES).map(_string),
                                   st.tuples(st.sampled_from(PARAMETERS), st.one_of(literal, st.sampled_from(
                                       PLAIN_TABLES).map(_string))).map(lambda a: f"{a[0]} => {a[1]}")),
                         max_size=4))
    proc = draw(st.sampled_from(PROCEDURE_NAMES))
    return f"CALL {draw(st.sampled_from(['sys.', '', 'nope.', 'SYS.', 'spark_catalog.sys.']))}{proc}({_comma(args)})"


@st.composite
def show(draw) -> str:
    t, c = draw(table), draw(column)
    return draw(st.sampled_from([
        f"SHOW CREATE TABLE {t}", f"SHOW TBLPROPERTIES {t}", f"SHOW TBLPROPERTIES {t} ({draw(literal)})",
        f"SHOW PARTITIONS {t}", f"SHOW COLUMNS IN {t}", f"SHOW TAGS {t}", f"SHOW TABLES IN {draw(name)}",
        f"SHOW TABLES LIKE {draw(literal)}", "SHOW PROCEDURES", f"DESCRIBE {t}", f"DESCRIBE EXTENDED {t}",
        f"DESC {t} {c}", f"DESCRIBE FORMATTED {t} PARTITION (p = {draw(literal)})",
        f"DESCRIBE DATABASE {draw(name)}", f"DESCRIBE PROCEDURE {draw(st.sampled_from(PROCEDURE_NAMES))}",
        f"DROP TABLE IF EXISTS fz.{draw(name)}", f"CREATE DATABASE {draw(name)}", f"USE {draw(name)}"]))


_TOKEN = re.compile(r"'(?:[^'\\]|\\.)*'|`(?:[^`]|``)*`|\w+|\S")


@st.composite
def mutated(draw) -> str:
    """A valid statement with a token dropped, doubled or swapped with the next, or cut short."""
    text = draw(st.sampled_from(VALID))
    tokens = [m.group(0) for m in _TOKEN.finditer(text)]
    i = draw(st.integers(0, len(tokens) - 1))
    how = draw(st.sampled_from(["drop", "double", "swap", "cut"]))
    if how == "cut":
        return text[:draw(st.integers(0, len(text) - 1))]
    if how == "drop":
        tokens[i:i + 1] = []
    elif how == "double":
        tokens[i:i + 1] = [tokens[i]] * 2
    else:
        tokens[i:i + 2] = tokens[i:i + 2][::-1]
    return " ".join(tokens)


QUIT = ("quit", "exit", "quit;", "exit;")  # the shell's prompt ends at these
statement = st.one_of(create_table(), dml(), alter(), query(), call(), show(), mutated(), st.sampled_from(VALID),
                      st.sampled_from(EMPTY), st.text(max_size=30)).filter(lambda s: s.strip().lower() not in QUIT)


def with_examples(texts):
    """Run ``texts`` (the empty and huge inputs) before the generated statements."""
    def add(test):
        for text in reversed(texts):
            test = example(text)(test)
        return test
    return add


def _settings(cases: int):
    return settings(max_examples=cases, derandomize=not FULL, database=None, deadline=None,
                    suppress_health_check=list(HealthCheck))


def one_line(message: str) -> bool:
    return bool(message.strip()) and not _NOT_ONE_LINE.search(message)


# -- one fuzz run's counts, and the checks every way shares --------------------------------------------------

class Run:
    def __init__(self, way: str, warehouse: str):
        self.way, self.warehouse = way, warehouse
        self.cases, self.errors = 0, Counter()
        self.before = fingerprint(warehouse)

    def failed(self, text: str, error_class: str, message: str) -> None:
        """A statement failed with ``message``: one line, and the warehouse as before it."""
        self.errors[error_class] += 1
        assert one_line(message), f"{self.way}: not one line for {text[:300]!r}:\n{message[:3000]}"
        after = fingerprint(self.warehouse)
        assert after == self.before, f"{self.way}: the failed {text[:300]!r} changed the warehouse ({message})"

    def succeeded(self) -> None:
        self.before = fingerprint(self.warehouse)

    def record(self) -> None:
        record("fuzz", way=self.way, cases=self.cases, errors_by_class=dict(self.errors), multi_line_errors=0,
               tables_changed_by_failures=0)


def _message_class(message: str) -> str:
    """The kind of an error the shell or server reported, from its text: Spark's condition, a syntax
    error, or one of ours (whose class the text does not name)."""
    m = re.match(r"\[([A-Z_]+)", message)
    return m.group(1) if m else "syntax error" if message.startswith("syntax error") else "paimon-sql"


# -- the subprocesses, started at the first test -------------------------------------------------------------

class Shell:
    """``paimon-sql`` at its interactive prompt, statements written to its stdin one at a time; each
    answers with stderr lines, gathered by a thread."""

    def __init__(self, warehouse: str, cwd: str):
        env = dict(os.environ, PYSPARK_PYTHON=sys.executable, HOME=cwd)
        self.proc = subprocess.Popen(
            [SHELL, "--warehouse", warehouse, *QUICK_JVM, "--conf", "spark.sql.shuffle.partitions=1",
             "--conf", "spark.ui.enabled=false", "--output", "json"], stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, encoding="utf-8", env=env, cwd=cwd)
        self.lines: queue.Queue = queue.Queue()
        threading.Thread(target=self._gather, daemon=True).start()
        self.startup = self.run("SELECT 1")  # Spark's start-up notices come before its answer

    def _gather(self) -> None:
        for line in self.proc.stderr:
            self.lines.put(line.rstrip("\n"))
        self.lines.put(None)

    def run(self, text: str) -> list:
        """Send one statement; the stderr lines up to the answers of the statements the prompt splits
        it into (none for a blank or comment-only one). Newlines become blanks: the prompt ends a
        statement at a line ending in ``;``, and a line ``quit`` would end it."""
        flat = re.sub(r"\r\n|\r|\n", " ", text)
        self.proc.stdin.write(flat + "\n;\n")
        self.proc.stdin.flush()
        lines, answers = [], 0
        while answers < len(split_statements(flat)):
            line = self.lines.get(timeout=300)
            assert line is not None, "the shell ended:\n" + "\n".join(lines)
            lines.append(line)
            answers += line.startswith(("Time taken", "Error:"))
        return lines

    def close(self) -> None:
        """End the prompt as a user does (end of input); kill it if it does not end."""
        self.proc.stdin.close()
        try:
            self.proc.wait(60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


class Background:
    """``start(*args)`` in a thread, whose result (or error) ``get()`` waits for."""

    def __init__(self, start, *args):
        self.result, self.error = None, None
        self.thread = threading.Thread(target=self._run, args=(start, *args), daemon=True)
        self.thread.start()

    def _run(self, start, *args):
        try:
            self.result = start(*args)
        except BaseException as e:  # handed to the test that waits for it
            self.error = e

    def get(self):
        self.thread.join()
        if self.error:
            raise self.error
        return self.result


@pytest.fixture(scope="module")
def subprocesses(tmp_path_factory):
    """The shell and the server, each over its own warehouse with the fixed tables, starting in the
    background (their Spark start-up overlaps the in-process statements)."""
    root = tmp_path_factory.mktemp("fuzz")
    shell_wh, server_wh = str(root / "shell_wh"), str(root / "server_wh")
    make_fixed_tables(shell_wh)
    make_fixed_tables(server_wh)
    server = start_server(server_wh, *QUICK_JVM)
    shell, port = Background(Shell, shell_wh, str(root)), Background(server.__enter__)
    try:
        yield {"shell": (shell, shell_wh), "server": (port, server_wh)}
    finally:
        with contextlib.suppress(Exception):
            port.get()
            server.__exit__(None, None, None)
        with contextlib.suppress(Exception):
            shell.get().close()


# -- the three ways ---------------------------------------------------------------------------------------

@pytest.fixture
def fixed_session(session, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)  # a relative path a statement names lands in the test's directory
    make_fixed_tables(session.warehouse)
    return session


def test_session(fixed_session, subprocesses):
    run = Run("session", fixed_session.warehouse)

    @_settings(CASES["session"])
    @with_examples(EMPTY + HUGE)
    @given(statement)
    def case(text):
        run.cases += 1
        try:
            df = fixed_session.sql(text)
        except PaimonError as e:
            return run.failed(text, type(e).__name__, str(e))
        except Exception as e:
            raise AssertionError(f"not a paimon-sql error for {text[:300]!r}: {type(e).__name__}: {e}"[:3000])
        try:
            df.collect()
        except ROW_ERRORS as e:
            return run.failed(text, type(e).__name__, str(spark_error(e, text)))
        except Exception as e:
            raise AssertionError(f"unexpected error while the rows of {text[:300]!r} were computed: "
                                 f"{type(e).__name__}: {e}"[:3000])
        run.succeeded()

    case()
    assert fixed_session.sql(HUGE[2]).collect()[0][0] == 1  # deeper than sqlglot reaches: Spark's to run
    with pytest.raises(PaimonError, match="^empty statement"):
        fixed_session.sql("/* nothing */ ;")
    run.record()


def test_shell(subprocesses):
    started, warehouse = subprocesses["shell"]
    shell = started.get()
    assert shell.startup[-1].startswith("Time taken") and "Fetched 1 row(s)" in shell.startup[-1], shell.startup
    run = Run("shell", warehouse)

    @_settings(CASES["shell"])
    @with_examples(EMPTY + HUGE[:1])
    @given(statement)
    def case(text):
        run.cases += 1
        lines = shell.run(text)
        answers = [ln for ln in lines if ln.startswith(("Time taken", "Error:"))]
        assert len(answers) == len(lines), f"stray stderr lines for {text[:300]!r}:\n" + "\n".join(lines)[:3000]
        errors = [ln[len("Error: "):] for ln in answers if ln.startswith("Error:")]
        for message in errors:
            run.failed(text, _message_class(message), message)
        if not errors:
            run.succeeded()

    case()
    last = shell.run("SELECT 1")
    assert last[-1].startswith("Time taken") and "Fetched 1 row(s)" in last[-1], last
    run.record()


def test_server(subprocesses):
    started, warehouse = subprocesses["server"]
    port = started.get()
    cursor = hive.connect("127.0.0.1", port, auth="NOSASL").cursor()
    run = Run("server", warehouse)

    def probe():
        probe_cursor = hive.connect("127.0.0.1", port, auth="NOSASL").cursor()
        probe_cursor.execute("SELECT 1")
        assert probe_cursor.fetchall() == [(1,)]

    @_settings(CASES["server"])
    @with_examples(EMPTY + HUGE[1:2])
    @given(statement)
    def case(text):
        run.cases += 1
        try:
            cursor.execute(text)
            if cursor.description:
                cursor.fetchall()
        except hive.OperationalError as e:
            status = e.args[0].status
            run.failed(text, _message_class(status.errorMessage), status.errorMessage)
            assert status.sqlState, f"no SQLSTATE for {text[:300]!r}: {status.errorMessage}"
        else:
            run.succeeded()
        if run.cases % PROBE_EVERY == 0:
            probe()

    case()
    probe()
    run.record()
