"""The paimon-sql binary as a user runs it (subprocess): -e, -f, output formats, errors, exit codes; and the
example scripts of sql_examples/ (all but one through the shell's statement loop in this process, see
``run_in_process``: a shell start costs more than most of them), and all of them again in a shell of
paimon-sql on PySpark 4.1.2, the oldest Spark pyproject promises, which must answer alike."""

import io
import json
import os
import re
import subprocess
import sys
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest
from jvm_archive import spark_jvm_options
from oracles import paimon_spark

BIN = str(Path(sys.executable).parent / "paimon-sql")


# the JIT's quick tier, the serial collector and the class archive (tests/jvm_archive.py): a short
# script's JVM spends most of its CPU loading classes, compiling and collecting, and the test run
# shares 2 cores with it
QUICK_OPTS = spark_jvm_options()
QUICK_JVM = f"spark.driver.extraJavaOptions={QUICK_OPTS}"


def run(warehouse, *args, timeout=900, master="local[2]"):
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable)
    return subprocess.run([BIN, "--warehouse", warehouse, "--master", master,
                           "--conf", "spark.sql.shuffle.partitions=2", "--conf", QUICK_JVM, *args],
                          capture_output=True, text=True, timeout=timeout, env=env)


def run_in_process(spark, warehouse, script, output="json"):
    """``script`` as ``paimon-sql --warehouse <warehouse> -e <script> --output <output>`` runs it, but in this
    process over the run's Spark session ``spark`` (fixture of tests/conftest.py; local[2], 2 shuffle
    partitions, as ``run``'s): the shell's statement loop (``cli.run_statement`` for each statement, the
    one-line error of the first failing one, which stops the script). A CompletedProcess: what it printed,
    exit code 0 or 1. What only the process around that loop does (arguments, Spark's start, exit) is what
    the tests that call ``run`` check. Afterwards ``spark`` is as before: temporary views, cached tables,
    the databases its catalog gained (``USE db``) and the current database."""
    import paimon_sql
    from paimon_sql import cli
    from paimon_sql.sql.parse import split_statements
    from spark.conftest import release
    databases = {d.name for d in spark.catalog.listDatabases()}
    session = paimon_sql.connect(warehouse, spark=spark)
    out, err, code = io.StringIO(), io.StringIO(), 0
    try:
        with redirect_stdout(out), redirect_stderr(err):
            for statement in split_statements(script):
                try:
                    cli.run_statement(session, statement, output)
                except Exception as e:  # noqa: BLE001 - the shell's handling, as cli.main's
                    cli._report(e)
                    code = 1
                    break
    finally:
        session.release()
        release(session)
        for db in spark.catalog.listDatabases():
            if db.name not in databases:
                spark.sql(f"DROP DATABASE `{db.name}` CASCADE")
        spark.catalog.clearCache()
    return subprocess.CompletedProcess(["paimon-sql (in process)", warehouse], code, out.getvalue(), err.getvalue())


def test_script_file_json_output_and_errors(warehouse, tmp_path):
    """-f: statements over lines, comments and literals with semicolons, JSON lines; the first failing
    statement stops the script with one line on stderr and exit code 1 (the statements before it ran)."""
    script = tmp_path / "s.sql"
    script.write_text("""
        CREATE TABLE t (id INT, name STRING, PRIMARY KEY (id) NOT ENFORCED) WITH ('bucket' = '1');
        INSERT INTO t VALUES (1, 'a'), (2, NULL);  -- a comment; with a semicolon
        INSERT INTO t VALUES (2, 'b;c');
        SELECT * FROM t ORDER BY id;
        SELECT count(*) AS n FROM t;
        SELECT * FROM t WHERE id = 1; SELEC oops; SELECT 1;
    """)
    proc = run(warehouse, "-f", str(script), "--output", "json")
    assert proc.returncode == 1, proc.stderr[-2000:]
    lines = proc.stdout.strip().splitlines()
    assert [json.loads(x) for x in lines] == [[{"id": 1, "name": "a"}, {"id": 2, "name": "b;c"}], [{"n": 2}],
                                              [{"id": 1, "name": "a"}]]  # the last statement did not run
    assert "Time taken" in proc.stderr
    errors = [ln for ln in proc.stderr.splitlines() if ln.startswith("Error:")]
    assert len(errors) == 1 and "line 1" in errors[0] and "SELEC" in errors[0]


def test_failed_insert_exits_nonzero_and_commits_nothing(warehouse):
    """-e, CSV: the rows before the failing INSERT are printed, nothing after it runs, it commits nothing."""
    proc = run(warehouse, "--output", "csv", "-e",
               "CREATE TABLE t (id INT NOT NULL, v STRING); INSERT INTO t VALUES (1, 'x,y'); SELECT * FROM t; "
               "INSERT INTO t VALUES (NULL, 'z'); SELECT 1")
    assert proc.returncode == 1
    assert proc.stdout.splitlines() == ["id,v", '1,"x,y"']  # CSV quoting; the last statement did not run
    errors = [ln for ln in proc.stderr.splitlines() if ln.startswith("Error:")]
    assert len(errors) == 1 and "NOT NULL" in errors[0]
    from paimon_sql.catalog import Identifier, load_catalog
    table = load_catalog(warehouse, {}).get_table(Identifier("default", "t"))
    assert table.snapshot_manager.latest_id() == 1 and table.to_arrow().to_pylist() == [{"id": 1, "v": "x,y"}]


# Each example script starts in database ``default`` and keeps to databases of its own, so they run one after
# another over one warehouse. All but history.sql run in this process, through the shell's statement loop
# (``run_in_process``) on the run's Spark session: a shell start (a JVM, a Spark, its cold first
# statements) costs more than most scripts. history.sql then runs in a real shell (``-f``, JSON): it reads
# what quickstart.sql wrote, from a new process.
EXAMPLES = Path(__file__).resolve().parents[2] / "sql_examples"
IN_PROCESS = ("quickstart.sql", "lsm.sql", "views_cache_explain.sql", "table_types.sql", "maintenance.sql",
              "branches_and_tags.sql", "row_tracking.sql")
IN_SHELL = ("history.sql",)


def _examples_script(names):
    """The scripts ``names`` one after another, each after a ``USE default`` and a ``SELECT`` of its name
    (the marker that splits the JSON lines by script)."""
    return "".join(f"USE default;\nSELECT '{name}' AS example;\n{(EXAMPLES / name).read_text()}\n"
                   for name in names) + "SELECT '' AS example;\n"


def _sections(proc, names):
    """{name: its statements' results, or the shell's error if it did not get through it}."""
    sections, current = {}, None
    for line in proc.stdout.strip().splitlines():
        rows = json.loads(line)
        if len(rows) == 1 and list(rows[0]) == ["example"]:
            current = rows[0]["example"]
            sections[current] = []
        else:
            sections[current].append(rows)
    failed = f"the shell stopped (exit {proc.returncode}) before the end of the script:\n{proc.stderr[-2000:]}"
    return {name: sections[name] if following in sections else failed
            for name, following in zip(names, names[1:] + ("",))}


class Examples:
    """Every example script's results (``examples[name]``) over ``warehouse``: IN_PROCESS's, then IN_SHELL's;
    and ``on_pyspark_4_1[name]``, all of them in one shell on PySpark 4.1.2, run beside them."""

    def __init__(self, tmp, spark):
        self.warehouse = str(tmp / "warehouse")
        old = _shell_on_pyspark_4_1(tmp)
        self.results = _sections(run_in_process(spark, self.warehouse, _examples_script(IN_PROCESS)), IN_PROCESS)
        script = tmp / "shell.sql"
        script.write_text(_examples_script(IN_SHELL))
        self.shell = run(self.warehouse, "-f", str(script), "--output", "json")
        self.results.update(_sections(self.shell, IN_SHELL))
        self.on_pyspark_4_1 = _sections(old(), IN_PROCESS + IN_SHELL)

    def __getitem__(self, name):
        assert not isinstance(self.results[name], str), self.results[name]
        return self.results[name]


def _shell_on_pyspark_4_1(tmp):
    """Starts every example script in one shell (``-f``, JSON) of paimon-sql on PySpark 4.1.2 (its venv,
    tests/oracles/paimon_spark.py, holds this checkout), over a warehouse of its own; returns the function
    that waits for it and gives its CompletedProcess."""
    python = paimon_spark.python()
    script, out, err = tmp / "pyspark-4.1.sql", tmp / "pyspark-4.1.out", tmp / "pyspark-4.1.err"
    script.write_text(_examples_script(IN_PROCESS + IN_SHELL))
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYSPARK") and k != "SPARK_HOME"}
    env["PYSPARK_PYTHON"] = python
    command = [str(Path(python).parent / "paimon-sql"), "--warehouse", str(tmp / "warehouse-4.1"), "--master",
               "local[2]", "--conf", "spark.sql.shuffle.partitions=2", "--conf", "spark.sql.codegen.wholeStage=false",
               "-f", str(script), "--output", "json"]  # the run's session's settings (EXPLAIN shows them)
    with open(out, "w") as stdout, open(err, "w") as stderr:
        proc = subprocess.Popen(command, stdout=stdout, stderr=stderr, env=env)

    def wait():
        proc.wait(timeout=1800)
        return subprocess.CompletedProcess(command, proc.returncode, out.read_text(), err.read_text())
    return wait


# what differs between two runs by nature: the warehouse's path, uuids, and in EXPLAIN's plans Spark's
# expression and plan ids and the file names a FileScan lists (cut at a length that depends on the path)
_RUN_SPECIFIC = [(re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"), "<uuid>"),
                 (re.compile(r"#\d+"), "#<n>"), (re.compile(r"plan_id=\d+"), "plan_id=<n>"),
                 (re.compile(r"\[file:[^\]]*?\.\.\.,"), "[<files>,"),
                 # a plan's metadata value cut at Spark's maxMetadataStringLength: where depends on the ids' digits
                 (re.compile(r"\b([A-Z]\w+): (?:(?!, [A-Z]\w+: )[^\n\"\\\\])*?\.\.\.(?=[,\"\\\\]|$)"), r"\1: <cut>"),
                 # Spark 4.3's BroadcastHashJoin prints one more flag than 4.1's (the plan is the same)
                 (re.compile(r"(BroadcastHashJoin [^\n\"]*?, Build(?:Left|Right), (?:true|false)), (?:true|false)"), r"\1")]


def _comparable(results, warehouse: str) -> str:
    text = json.dumps(results, sort_keys=True).replace(warehouse, "<warehouse>")
    for pattern, replacement in _RUN_SPECIFIC:
        text = pattern.sub(replacement, text)
    return text


@pytest.fixture(scope="module")
def examples(tmp_path_factory, spark):
    return Examples(tmp_path_factory.mktemp("examples"), spark)


@pytest.mark.parametrize("name", IN_PROCESS + IN_SHELL)
def test_example_scripts_answer_alike_on_pyspark_4_1(examples, name):
    """Each example script's every result on PySpark 4.1.2 is this PySpark's (the answers the tests below
    assert), but for what differs between two runs by nature."""
    old = examples.on_pyspark_4_1[name]
    assert not isinstance(old, str), old
    ours, theirs = examples[name], old
    assert len(theirs) == len(ours)
    for i, (mine, other) in enumerate(zip(ours, theirs)):
        assert _comparable(other, str(Path(examples.warehouse).parent / "warehouse-4.1")) == \
            _comparable(mine, examples.warehouse), f"{name}, result {i}"


def test_lsm_example_script(examples):
    """sql_examples/lsm.sql: merge engines, UPDATE / DELETE / MERGE INTO."""
    stock, profile, orders = examples["lsm.sql"]
    assert stock == [{"item": "apple", "qty": 13, "price": 1.0}, {"item": "pear", "qty": 3, "price": 2.5}]
    assert profile == [{"id": 1, "name": "ann", "city": "oslo"}]
    assert orders == [{"id": 1, "status": "shipped", "amount": 11.0}, {"id": 2, "status": "paid", "amount": 20.0},
                      {"id": 4, "status": "new", "amount": 40.0}]


def test_quickstart_then_history_example_scripts(examples):
    """sql_examples/quickstart.sql then history.sql (in a shell, a process of its own): system tables, tags,
    incremental, ALTER TABLE."""
    examples["quickstart.sql"]  # ran to its end
    assert examples.shell.returncode == 0  # -f: a script without errors exits 0
    snapshots, files, partitions, tags, at_tag, delta, audit, evolved, schemas = examples["history.sql"]
    assert [s["commit_kind"] for s in snapshots] == ["APPEND", "APPEND"]
    assert sum(p["record_count"] for p in partitions) == sum(f["record_count"] for f in files) == 5
    assert tags == [{"tag": "first_load"}] and at_tag == [{"orders_at_first_load": 3}]
    assert [d["order_id"] for d in delta] == [2, 4]
    assert {a["rowkind"] for a in audit} == {"+I"}
    assert [(e["order_id"], e["channel"]) for e in evolved] == [(1, None), (2, None), (3, None), (4, None),
                                                                (5, "web")]
    assert [s["schema_id"] for s in schemas] == [0, 1]


def test_views_cache_explain_example_script(examples):
    """sql_examples/views_cache_explain.sql: temporary views, CACHE TABLE and EXPLAIN over Paimon tables."""
    before, after, totals, cached, daily, plan, insert_plan, count = examples["views_cache_explain.sql"]
    assert before == [{"purchases_before": 2}] and after == [{"purchases_after": 3}]
    assert totals == [{"day": "2024-06-01", "total": 10.0}, {"day": "2024-06-02", "total": 70.0}]
    assert cached == [{"id": 1, "amount": 11.0}]
    assert daily == [{"dt": "2024-06-01", "n": 2}, {"dt": "2024-06-02", "n": 2}]
    assert any("pushed filter: dt = '2024-06-02'" in p["plan"] for p in plan)
    assert insert_plan[:2] == [{"plan": "== Paimon write =="}, {"plan": "write append to paimon table wrapped.events"}]
    assert count == [{"rows_after_explain": 4}]


def test_row_tracking_example_script(examples):
    """sql_examples/row_tracking.sql: a data-evolution table's column update, delete, merge and compaction."""
    updated, files, compacted, final = [r for r in examples["row_tracking.sql"] if r]
    assert updated == [{"id": 1, "name": "ann", "score": 1.0, "_ROW_ID": 0},
                       {"id": 2, "name": "bob", "score": 20.0, "_ROW_ID": 1},
                       {"id": 3, "name": "cy", "score": 30.0, "_ROW_ID": 2}]
    assert [f["write_cols"] for f in files].count(["score"]) >= 1 and compacted == [{"result": True}]
    assert final == [{"id": 2, "name": "bob", "score": 20.0, "note": "b", "_ROW_ID": 1},
                     {"id": 3, "name": "CY", "score": 30.0, "note": "c", "_ROW_ID": 2},
                     {"id": 4, "name": "dee", "score": 0.0, "note": "new", "_ROW_ID": 3}]


def test_table_types_example_script(examples):
    """sql_examples/table_types.sql: catalog views, format tables, object tables and materialized tables."""
    out = examples["table_types.sql"]
    (big, history, first, views, create_view, describe, tables,
     fmt_day, fmt_parquet, fmt_create,
     obj_describe, obj_listing, obj_schema,
     mt_big, mt_agg, by_customer, mt_full, mt_partition, big_orders, mt_v1, mt_snapshots, mt_create) = out
    # views: the third order, inserted after CREATE VIEW, is seen; history and time travel inside views
    assert big == [{"order_id": 2, "amount": 20.0}, {"order_id": 3, "amount": 30.0}]
    assert history == [{"count(1)": 2}] and first == [{"count(1)": 2}]
    assert [v["viewName"] for v in views] == ["v_first", "v_history", "v_large"]
    assert "WHERE amount > 25" in create_view[0]["createtab_stmt"]
    assert [d["col_name"] for d in describe] == ["order_id", "amount"]
    assert {(t["table_name"], t["table_type"]) for t in tables} >= {("v_large", "view"), ("v_orders", "table")}
    # format tables: the overwritten partition and the other one, the same rows as Parquet
    assert fmt_day == [{"id": 2, "name": "b", "dt": "2024-01-02"}, {"id": 3, "name": None, "dt": "2024-01-02"}]
    assert fmt_parquet == [{"dt": "2024-01-01", "n": 1}, {"dt": "2024-01-02", "n": 2}]
    assert "'type' = 'format-table'" in fmt_create[0]["createtab_stmt"]
    assert [c["col_name"] for c in obj_describe][:6] == ["path", "name", "length", "mtime", "atime", "owner"]
    # object tables (Paimon 2.0): the files under the table's directory, listed at the read: none yet (its
    # own schema file is not an object)
    assert obj_listing == [] and obj_schema == [{"files": 0, "bytes": None}]
    # materialized tables: incremental after appends, full after a delete, equal to their queries
    assert mt_big[0]["refresh"] == mt_agg[0]["refresh"] == "incremental"
    assert by_customer == [{"customer": "ann", "orders": 3, "total": "29.25", "biggest": "12.00"},
                           {"customer": "bob", "orders": 1, "total": "25.50", "biggest": "25.50"},
                           {"customer": "cid", "orders": 1, "total": "99.00", "biggest": "99.00"}]
    assert mt_full[0]["refresh"] == "full" and mt_partition[0]["refresh"] == "partition"
    assert [r["order_id"] for r in big_orders] == [1, 4, 5]
    assert mt_v1 == [{"count(1)": 2}]
    assert [s["commit_kind"] for s in mt_snapshots] == ["OVERWRITE", "APPEND", "OVERWRITE"]
    assert mt_create[0]["createtab_stmt"].startswith("CREATE MATERIALIZED TABLE mt_shop.mt_by_customer")
    assert "min(amount) AS smallest" in mt_create[0]["createtab_stmt"]  # the query ALTER ... AS gave


def test_maintenance_example_script(examples):
    """sql_examples/maintenance.sql: compact, tag, expire_snapshots, rollback, remove_orphan_files, SHOW/DESCRIBE
    PROCEDURE(S), in a database of its own."""
    warehouse = examples.warehouse
    (snaps, files, compacted, snaps_compact, files_compact, events_compacted, events_files, expired, snaps_expired,
     after_delete, rolled_back, after_rollback, snaps_rollback, orphans, procedures, describe) = \
        examples["maintenance.sql"]
    assert [s["commit_kind"] for s in snaps] == ["APPEND"] * 3 and snaps[-1]["total_record_count"] == 4
    assert sorted((f["partition"], f["level"]) for f in files) == [("{2024-06-01}", 0)] * 2 + [("{2024-06-02}", 0)]
    # full compaction of dt=2024-06-01 only: one COMPACT snapshot, its two runs now one file at the top level
    assert compacted == [{"result": True}] and snaps_compact[-1] == {"snapshot_id": 4, "commit_kind": "COMPACT"}
    assert files_compact == [{"partition": "{2024-06-01}", "level": 5, "record_count": 2},
                             {"partition": "{2024-06-02}", "level": 0, "record_count": 1}]
    # minor: the three small files of 2024-06-01 merged, the single one of 2024-06-02 left alone
    assert events_compacted == [{"result": True}]
    assert events_files == [{"partition": "{2024-06-01}", "files": 1, "records": 3},
                            {"partition": "{2024-06-02}", "files": 1, "records": 1}]
    assert expired == [{"deleted_snapshots_count": 2}] and [s["snapshot_id"] for s in snaps_expired] == [3, 4]
    assert [r["id"] for r in after_delete] == [2, 3]
    # the tag's snapshot (3) is the latest again, the DELETE is gone
    assert rolled_back == [{"previous_snapshot_id": 5, "current_snapshot_id": 3}]
    assert after_rollback == [{"id": 1, "status": "new"}, {"id": 2, "status": "paid"}, {"id": 3, "status": "new"}]
    assert snaps_rollback == [{"snapshot_id": 3, "commit_kind": "APPEND"}]
    table_dir = Path(warehouse) / "maint.db" / "orders"
    assert sorted(p.name for p in (table_dir / "snapshot").iterdir()) == ["EARLIEST", "LATEST", "snapshot-3"]
    assert [p.name for p in (table_dir / "tag").iterdir()] == ["tag-good"]
    assert orphans == [{"deletedFileCount": 0, "deletedFileTotalLenInBytes": 0}]  # dry run, fixed old cut-off
    assert {"sys.compact", "sys.expire_snapshots", "sys.rollback", "sys.rollback_to_timestamp",
            "sys.rollback_to_watermark", "sys.remove_orphan_files"} <= {p["procedure"] for p in procedures}
    assert describe[0] == {"procedure_desc": "Procedure: sys.compact"}
    assert describe[1]["procedure_desc"].startswith("Signature: sys.compact(table STRING, [partitions STRING]")


def test_branches_and_tags_example_script(examples):
    """sql_examples/branches_and_tags.sql: tag, branch from the tag, branch writes apart from main,
    fast_forward, consumers, delete_branch, a fallback branch and merge_branch, in a database of its own."""
    warehouse = examples.warehouse
    (tagged, created, branches, on_branch, on_main, forwarded, after_ff, snaps, reset1, reset2, consumers, cleared,
     left, deleted, no_branches, backfill, with_fallback, merged_branch, merged) = examples["branches_and_tags.sql"]
    assert [tagged, created, forwarded, reset1, reset2, cleared, deleted] == [[{"result": True}]] * 7
    assert branches == [{"branch_name": "dev"}]
    assert [(r["id"], r["price"]) for r in on_branch] == [(1, 1.0), (2, 2.5), (4, 4.0)]
    assert [(r["id"], r["price"]) for r in on_main] == [(1, 1.0), (2, 2.0), (3, 3.0)]  # the branch write left main
    assert after_ff == on_branch and [s["snapshot_id"] for s in snaps] == [1, 2]
    assert consumers == [{"consumer_id": "audit", "next_snapshot_id": 1},
                         {"consumer_id": "job1", "next_snapshot_id": 2}]
    assert left == [{"consumer_id": "audit"}] and no_branches == [{"branches": 0}]
    events = [{"id": 1, "day": "2024-05-01"}, {"id": 2, "day": "2024-05-02"}]
    assert backfill == merged_branch == [{"result": True}] and with_fallback == merged == events
    table_dir = Path(warehouse) / "shop.db" / "items"
    assert not (table_dir / "branch" / "branch-dev").exists()
    assert (table_dir / "snapshot" / "LATEST").read_text() == "2"


def test_catalog_file_chooses_the_jdbc_catalog(warehouse, tmp_path):
    """``--catalog-file``: catalog options from a properties file (comments skipped), ``--catalog``
    winning over it; the table is registered in the catalog database it names."""
    import sqlite3
    db = tmp_path / "catalog.sqlite"
    props = tmp_path / "catalog.properties"
    props.write_text(f"# the team's catalog\nmetastore = jdbc\nuri = jdbc:sqlite:{db}\ncatalog-key = from-file\n")
    proc = run(warehouse, "--catalog-file", str(props), "--catalog", "catalog-key=team", "--output", "tsv",
               "-e", "CREATE TABLE t (id INT); INSERT INTO t VALUES (7); SELECT * FROM t")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.splitlines() == ["id", "7"]
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT catalog_key, database_name, table_name FROM paimon_tables").fetchall()
    assert rows == [("team", "default", "t")]
