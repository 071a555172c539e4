"""CALL sys.compact_database: full compaction of every table the regular expressions choose."""

import glob
import os

import pytest

from paimon_sql.exceptions import PaimonError
from tests.spark.conftest import rows


def table(session, name):
    session.sql(f"CREATE TABLE {name} (id INT, v STRING) TBLPROPERTIES ('primary-key' = 'id', 'bucket' = '1')")
    for i in range(2):
        session.sql(f"INSERT INTO {name} VALUES (1, 'v{i}'), ({i + 2}, 'w')")


def kinds(session, name):
    return [k for (k,) in rows(session, f"SELECT commit_kind FROM {name}$snapshots ORDER BY snapshot_id")]


@pytest.fixture
def tables(session):
    session.sql("CREATE DATABASE sales")
    session.sql("CREATE DATABASE ops")
    for name in ("sales.orders", "sales.tmp_orders", "ops.orders", "default.t"):
        table(session, name)
    return ("sales.orders", "sales.tmp_orders", "ops.orders", "default.t")


def compacted(session, names):
    return {n for n in names if kinds(session, n)[-1] == "COMPACT"}


def test_regexes_match_whole_names_database_then_db_table(session, tables):
    data = {n: rows(session, f"SELECT * FROM {n} ORDER BY id") for n in tables}
    out = session.sql("CALL sys.compact_database(including_databases => 'sales|ops', "
                      "including_tables => '.*orders', excluding_tables => 'sales\\.tmp_.*')")
    assert out.columns == ["result"]
    assert [tuple(r) for r in out.collect()] == [("Compact database finished. Success: 2, Failed: 0",)]
    assert compacted(session, tables) == {"sales.orders", "ops.orders"}
    assert rows(session, "SELECT DISTINCT level FROM sales.orders$files") == [(5,)]  # full compaction
    # 'sale' is not the whole name 'sales'; 'orders' not the whole 'sales.orders'
    assert rows(session, "CALL sys.compact_database(including_databases => 'sale')") == \
        [("Compact database finished. Success: 0, Failed: 0",)]
    assert rows(session, "CALL sys.compact_database(including_tables => 'orders')") == \
        [("Compact database finished. Success: 0, Failed: 0",)]
    assert rows(session, "CALL sys.compact_database()") == [("Compact database finished. Success: 4, Failed: 0",)]
    assert compacted(session, tables) == set(tables)
    assert {n: rows(session, f"SELECT * FROM {n} ORDER BY id") for n in tables} == data


def test_a_failing_table_is_counted_and_the_others_still_run(session, tables):
    table(session, "ops.broken")
    for path in glob.glob(os.path.join(session.warehouse, "ops.db", "broken", "bucket-0", "data-*")):
        os.remove(path)  # its compaction cannot read its files
    out = rows(session, "CALL sys.compact_database(including_databases => 'ops')")
    assert out == [("Compact database finished. Success: 1, Failed: 1",)]
    assert compacted(session, ["ops.orders", "ops.broken"]) == {"ops.orders"}
    assert len(kinds(session, "ops.broken")) == 2


@pytest.mark.parametrize("call, problem", [
    ("including_databases => '('", "including_databases '(' is not a regular expression"),
    ("excluding_tables => '[a'", "excluding_tables '[a' is not a regular expression"),
    ("options => 'nonsense'", "options must be 'key=value,...', got 'nonsense'"),
])
def test_bad_arguments_fail_in_one_line_and_compact_nothing(session, tables, call, problem):
    with pytest.raises(PaimonError) as e:
        session.sql(f"CALL sys.compact_database({call})")
    assert str(e.value).startswith(f"CALL sys.compact_database: {problem}") and "\n" not in str(e.value)
    assert compacted(session, tables) == set()
