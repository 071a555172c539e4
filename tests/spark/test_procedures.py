"""CALL sys.<name>(...) through Session.sql: the procedure layer, SHOW/DESCRIBE PROCEDURE, and compact."""

import time
import types

import pytest

from paimon_sql.exceptions import PaimonError, TableNotFoundError
from paimon_sql.procedures import ProcedureError
from tests.spark.conftest import rows

COMPACT = ("sys.compact(table STRING, [partitions STRING], [compact_strategy STRING], [order_strategy STRING], "
           "[order_by STRING], [where STRING], [options STRING], [partition_idle_time STRING], [buckets STRING])")


def pk_table(session, name="t", inserts=3, extra=""):
    """A primary-key table partitioned by p (one bucket), each insert one level-0 file per partition."""
    session.sql(f"CREATE TABLE {name} (id INT, v STRING, p INT) PARTITIONED BY (p) "
                f"TBLPROPERTIES ('primary-key'='id,p', 'bucket'='1'{extra})")
    for i in range(inserts):
        session.sql(f"INSERT INTO {name} VALUES (1, 'v{i}', 1), ({i}, 'w{i}', 2), (9, 'x{i}', 3)")


def kinds(session, name="t"):
    return [k for (k,) in rows(session, f"SELECT commit_kind FROM {name}$snapshots ORDER BY snapshot_id")]


def files(session, name="t"):
    """{partition: sorted levels of its live files}."""
    out = {}
    for part, level in rows(session, f"SELECT partition, level FROM {name}$files"):
        out.setdefault(part, []).append(level)
    return {k: sorted(v) for k, v in out.items()}


# -- the layer ---------------------------------------------------------------------------------

def test_show_procedures_lists_compact(session):
    assert ("sys.compact",) in rows(session, "SHOW PROCEDURES")
    assert session.sql("SHOW PROCEDURES").columns == ["procedure"]


def test_describe_procedure_shows_signature_output_and_description(session):
    lines = [line for (line,) in rows(session, "DESCRIBE PROCEDURE sys.compact")]
    assert lines[:3] == ["Procedure: sys.compact", f"Signature: {COMPACT}", "Output: result BOOLEAN"]
    assert lines[3].startswith("Description: Compact")
    assert rows(session, "DESC PROCEDURE paimon.sys.COMPACT") == rows(session, "DESCRIBE PROCEDURE compact")


def test_call_returns_paimon_output_columns_named_or_positional_any_case(session):
    pk_table(session)
    df = session.sql("CALL sys.compact(table => 'default.t')")
    assert df.columns == ["result"] and df.schema["result"].dataType.simpleString() == "boolean"
    assert [tuple(r) for r in df.collect()] == [(True,)]
    assert rows(session, "call PAIMON.SYS.COMPACT('t', NULL, 'minor')") == [(True,)]
    assert rows(session, "CALL sys.Compact(TABLE => 't', Compact_Strategy => 'full')") == [(True,)]


def test_unknown_procedure_suggests_the_closest(session):
    with pytest.raises(ProcedureError, match=r"^unknown procedure 'sys.compat' \(did you mean sys.compact, sys.copy\?\)$"):
        session.sql("CALL sys.compat(table => 't')")
    with pytest.raises(ProcedureError, match=r"^unknown procedure 'db.compact'"):
        session.sql("CALL db.compact(table => 't')")


@pytest.mark.parametrize("args, problem", [
    ("tabel => 't'", "unknown argument 'tabel'"),
    ("partitions => 'p=1'", "missing argument 'table'"),
    ("table => 't', table => 't'", "argument 'table' given twice"),
    ("table => 't', partitions => 1.5", "argument 'partitions' must be STRING, got 1.5"),
    ("table => 't', compact_strategy => 'major'", "compact_strategy must be 'full' or 'minor', got 'major'"),
    ("table => 't', order_strategy => 'zorder', order_by => 'id'",
     "sort compaction (order_strategy 'zorder') only supports append tables with bucket = -1 (unaware bucket); "
     "'default.t' is a primary-key table"),
    ("table => 't', partition_idle_time => 'soon'",
     "partition_idle_time must be a duration such as '1 d' or '30 min', got 'soon'"),
    ("table => 't', partitions => 'p=1', where => 'p = 1'", "partitions and where cannot be used together"),
    ("table => 't', where => 'v = 1'", "where 'v = 1' may only use partition columns (p), not v"),
    ("table => 't', partitions => 'v=1'", "partitions must be 'key=value,...;...' over partition columns (p), got 'v=1'"),
    ("table => 't', options => 'no-equals'", "options must be 'key=value,...', got 'no-equals'"),
    ("table => 't', buckets => 'a'", "buckets must be bucket numbers separated by ',', got 'a'"),
])
def test_bad_calls_fail_in_one_line_and_change_nothing(session, args, problem):
    pk_table(session, inserts=2)
    before = rows(session, "SELECT snapshot_id FROM t$snapshots")
    with pytest.raises(ProcedureError) as e:
        session.sql(f"CALL sys.compact({args})")
    assert str(e.value) == f"CALL sys.compact: {problem}; expected {COMPACT}"
    assert rows(session, "SELECT snapshot_id FROM t$snapshots") == before


def test_a_missing_table_or_a_bad_option_fails_and_changes_nothing(session):
    pk_table(session, inserts=2)
    with pytest.raises(TableNotFoundError, match="^table 'nope' not found$"):
        session.sql("CALL sys.compact(table => 'nope')")
    with pytest.raises(PaimonError):
        session.sql("CALL sys.compact(table => 't', options => 'num-sorted-run.compaction-trigger=many')")
    assert kinds(session) == ["APPEND", "APPEND"]


# -- compact -----------------------------------------------------------------------------------

def test_full_compaction_of_a_primary_key_table(session):
    pk_table(session)
    data = rows(session, "SELECT * FROM t ORDER BY p, id")
    assert files(session) == {"{1}": [0, 0, 0], "{2}": [0, 0, 0], "{3}": [0, 0, 0]}
    assert rows(session, "CALL sys.compact(table => 't')") == [(True,)]
    assert kinds(session) == ["APPEND"] * 3 + ["COMPACT"]
    assert files(session) == {"{1}": [5], "{2}": [5], "{3}": [5]}
    assert rows(session, "SELECT * FROM t ORDER BY p, id") == data


def test_a_failing_bucket_task_fails_the_compaction_and_leaves_no_file_behind(session):
    import glob
    import os

    from paimon_sql.sql import parse
    pk_table(session)
    table = session.find_table(parse.table_reference("default.t"))
    lost = sorted(glob.glob(f"{table.path}/p=2/bucket-0/data-*"))[0]
    os.remove(lost)  # partition 2's bucket cannot be read: its task fails, the others succeed
    on_disk = set(glob.glob(f"{table.path}/**/data-*", recursive=True))
    with pytest.raises(PaimonError, match=r"^compaction of table default.t failed, nothing committed: bucket 0: "
                                          r"\w+Error: .*") as e:
        session.sql("CALL sys.compact(table => 't')")
    assert "\n" not in str(e.value) and kinds(session) == ["APPEND"] * 3
    assert set(glob.glob(f"{table.path}/**/data-*", recursive=True)) == on_disk  # the other buckets' files went


def test_minor_compaction_follows_the_trigger_and_options_apply_to_this_run_only(session):
    pk_table(session)
    session.sql("CALL sys.compact(table => 't', compact_strategy => 'minor')")  # 3 runs < trigger 5
    assert kinds(session) == ["APPEND"] * 3
    session.sql("CALL sys.compact(table => 't', compact_strategy => 'minor', "
                "options => 'num-sorted-run.compaction-trigger=2')")
    assert kinds(session) == ["APPEND"] * 3 + ["COMPACT"]
    assert all(0 not in levels for levels in files(session).values())
    assert "num-sorted-run.compaction-trigger" not in dict(rows(session, "SELECT key, value FROM t$options"))


def test_partitions_selects_specs_with_and_within_and_or_between(session):
    session.sql("CREATE TABLE t (id INT, p INT, q STRING) PARTITIONED BY (p, q) "
                "TBLPROPERTIES ('primary-key'='id,p,q', 'bucket'='1')")
    for _ in range(2):
        session.sql("INSERT INTO t VALUES (1, 1, 'a'), (1, 1, 'b'), (1, 2, 'a'), (1, 3, 'a')")
    session.sql("CALL sys.compact(table => 't', partitions => 'p=1,q=b;p=3')")
    assert files(session) == {"{1, a}": [0, 0], "{1, b}": [5], "{2, a}": [0, 0], "{3, a}": [5]}


def test_where_selects_partitions_by_a_spark_predicate(session):
    pk_table(session, inserts=2)
    session.sql("CALL sys.compact(table => 't', where => 'p >= 2 AND p <> 3')")
    assert files(session) == {"{1}": [0, 0], "{2}": [5], "{3}": [0, 0]}
    session.sql("CALL sys.compact(table => 't', where => 'p > 100')")  # no partition: nothing to do
    assert kinds(session) == ["APPEND", "APPEND", "COMPACT"]


def test_buckets_restricts_compaction_to_those_buckets(session):
    session.sql("CREATE TABLE t (id INT, v INT) TBLPROPERTIES ('primary-key'='id', 'bucket'='2')")
    for i in range(2):
        session.sql(f"INSERT INTO t SELECT id, {i} FROM range(20) AS r(id)")
    session.sql("CALL sys.compact(table => 't', buckets => '1')")
    levels = {}
    for bucket, level in rows(session, "SELECT bucket, level FROM t$files"):
        levels.setdefault(bucket, []).append(level)
    assert sorted(levels[0]) == [0, 0] and levels[1] == [5]


def test_unaware_bucket_append_table_compacts_as_paimons_coordinator(session):
    """bucket = -1: full or minor alike, small files are compacted once a partition has
    compaction.min.file-num (5) of them, or they reach twice the target size together."""
    session.sql("CREATE TABLE a (id INT, p INT) PARTITIONED BY (p)")
    for i in range(3):
        session.sql(f"INSERT INTO a VALUES ({i}, 1), ({i}, 2)")
    data = rows(session, "SELECT * FROM a ORDER BY p, id")
    for strategy in ("full", "minor"):
        session.sql(f"CALL sys.compact(table => 'a', compact_strategy => '{strategy}')")  # 3 files < 5
    assert kinds(session, "a") == ["APPEND"] * 3
    session.sql("CALL sys.compact(table => 'a', partitions => 'p=1', options => 'compaction.min.file-num=3')")
    assert kinds(session, "a") == ["APPEND"] * 3 + ["COMPACT"]
    assert sorted(rows(session, "SELECT partition, record_count FROM a$files")) == \
        [("{1}", 3), ("{2}", 1), ("{2}", 1), ("{2}", 1)]  # p=2 untouched
    session.sql("CALL sys.compact(table => 'a', options => 'compaction.min.file-num=3')")
    assert files(session, "a") == {"{1}": [0], "{2}": [0]}
    assert rows(session, "SELECT * FROM a ORDER BY p, id") == data


def test_partition_idle_time_compacts_only_partitions_without_recent_files(session, monkeypatch):
    pk_table(session, inserts=2)
    session.sql("CALL sys.compact(table => 't', partition_idle_time => '1 h')")  # every partition just written
    assert kinds(session) == ["APPEND", "APPEND"]
    session.sql("INSERT INTO t VALUES (1, 'late', 1)")
    time.sleep(1.1)  # creation times are whole seconds: p=2's next file is at least a second younger
    session.sql("INSERT INTO t VALUES (2, 'late', 2)")
    # the procedure's clock 3.5 s after p=2's newest file, however long the statements took: p=2 has a
    # file under 4 s old, p=1 and p=3 not
    (newest,), = rows(session, "SELECT max(creation_time) FROM t$files")
    from paimon_sql.procedures import compact
    monkeypatch.setattr(compact, "time", types.SimpleNamespace(time=lambda: newest.timestamp() + 3.5))
    session.sql("CALL sys.compact(table => 't', partition_idle_time => '4 s')")
    assert files(session) == {"{1}": [5], "{2}": [0, 0, 0], "{3}": [5]}
