"""CALL sys.expire_snapshots: paimon-spark's parameters and output, its effect seen in $snapshots
and the data, and its error paths."""

import datetime as dt
import time

import pytest

from paimon_sql.exceptions import PaimonError
from tests.spark.conftest import rows


def table_with_snapshots(session, n=5):
    session.sql("CREATE TABLE t (id INT, v STRING)")
    for i in range(n):
        session.sql(f"INSERT INTO t VALUES ({i}, 'v{i}')")


def snapshot_ids(session):
    return [s for (s,) in rows(session, "SELECT snapshot_id FROM t$snapshots ORDER BY snapshot_id")]


def test_retain_max_expires_and_the_data_stays(session):
    table_with_snapshots(session)
    before = rows(session, "SELECT * FROM t ORDER BY id")
    df = session.sql("CALL sys.expire_snapshots(table => 'default.t', retain_max => 2, retain_min => 1)")
    assert df.columns == ["deleted_snapshots_count"]
    assert df.schema["deleted_snapshots_count"].dataType.simpleString() == "int"
    assert [tuple(r) for r in df.collect()] == [(3,)]
    assert snapshot_ids(session) == [4, 5]
    assert rows(session, "SELECT * FROM t ORDER BY id") == before
    assert rows(session, "SELECT count(*) FROM t VERSION AS OF 4") == [(4,)]
    with pytest.raises(Exception, match="snapshot 3"):
        session.sql("SELECT * FROM t VERSION AS OF 3").collect()


def test_older_than_and_max_deletes_positional(session):
    table_with_snapshots(session)
    time.sleep(0.05)
    now = dt.datetime.now().isoformat(sep=" ", timespec="milliseconds")
    assert rows(session, f"CALL sys.expire_snapshots('t', 10, 1, '{now}', 2)") == [(2,)]
    assert rows(session, f"CALL sys.expire_snapshots('t', NULL, 1, '{now}')") == [(2,)]
    assert snapshot_ids(session) == [5]


def test_defaults_come_from_the_table_options_and_options_argument(session):
    table_with_snapshots(session)
    assert rows(session, "CALL sys.expire_snapshots(table => 't')") == [(0,)]  # 1 h retention, min 10
    assert rows(session, "CALL sys.expire_snapshots(table => 't', options => "
                         "'snapshot.num-retained.max=3,snapshot.num-retained.min=1')") == [(2,)]
    assert snapshot_ids(session) == [3, 4, 5]


@pytest.mark.parametrize("call, message", [
    ("retain_max => 1, retain_min => 2", r"retain_max \(1\) must not be less than retain_min \(2\)"),
    ("retain_max => 2", r"retain_max \(2\) must not be less than retain_min \(10\)"),  # as Paimon's check
    ("retain_min => -1", "retain_min must not be negative"),
    ("older_than => 'yesterday'", "older_than must be a timestamp"),
])
def test_bad_arguments_fail_in_one_line_and_change_nothing(session, call, message):
    table_with_snapshots(session, 3)
    with pytest.raises(PaimonError, match=message):
        session.sql(f"CALL sys.expire_snapshots(table => 't', {call})")
    assert snapshot_ids(session) == [1, 2, 3]
