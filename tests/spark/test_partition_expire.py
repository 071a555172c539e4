"""Partition expiry: CALL sys.expire_partitions (paimon-spark's parameters and output) and the
automatic expiry after a commit (partition.expiration-time, partition.expiration-check-interval,
partition.expiration-strategy, partition.expiration-max-num, partition.expiration-batch-size,
partition.timestamp-formatter, partition.timestamp-pattern), seen in $partitions, $snapshots and
the data; and consumer expiry after a commit (consumer.expiration-time), seen in $consumers."""

import datetime as dt
import logging
import os
import time

import pytest

from paimon_sql.exceptions import PaimonError
from tests.spark.conftest import rows


def _table(session, name="default.t"):
    from paimon_sql.sql import parse
    return session.find_table(parse.table_reference(name))


def partitions(session, table="t"):
    return [p for (p,) in rows(session, f"SELECT partition FROM {table}$partitions ORDER BY partition")]


def kinds(session, table="t"):
    return [k for (k,) in rows(session, f"SELECT commit_kind FROM {table}$snapshots ORDER BY snapshot_id")]


def dated(session, days=("20200101", "20200102", "20991231"), props=""):
    session.sql(f"CREATE TABLE t (id INT, dt STRING) PARTITIONED BY (dt) {props}")
    session.sql("INSERT INTO t VALUES " + ", ".join(f"({i}, '{d}')" for i, d in enumerate(days)))


# -- CALL sys.expire_partitions ---------------------------------------------------------------------

def test_values_time_drops_old_partitions_in_one_overwrite_snapshot(session):
    dated(session)
    df = session.sql("CALL sys.expire_partitions(table => 'default.t', expiration_time => '1 d', "
                     "timestamp_formatter => 'yyyyMMdd')")
    assert df.columns == ["expired_partitions"]
    assert df.schema["expired_partitions"].dataType.simpleString() == "string"
    assert [tuple(r) for r in df.collect()] == [("dt=20200101",), ("dt=20200102",)]
    assert partitions(session) == ["dt=20991231"]
    assert kinds(session) == ["APPEND", "OVERWRITE"]
    assert rows(session, "SELECT id, dt FROM t") == [(2, "20991231")]
    assert rows(session, "SELECT count(*) FROM t VERSION AS OF 1") == [(3,)]  # history is kept


def test_nothing_expired_says_so_and_commits_nothing(session):
    dated(session, ("20991231",))
    assert rows(session, "CALL sys.expire_partitions('t', '1 d', 'yyyyMMdd')") == [("No expired partitions.",)]
    assert kinds(session) == ["APPEND"]


def test_max_expires_takes_the_first_by_value_and_options_argument(session):
    dated(session)
    assert rows(session, "CALL sys.expire_partitions('t', '1 d', 'yyyyMMdd', NULL, NULL, 1)") == [("dt=20200101",)]
    assert partitions(session) == ["dt=20200102", "dt=20991231"]
    got = rows(session, "CALL sys.expire_partitions(table => 't', options => "
                        "'partition.expiration-time=1 d,partition.timestamp-formatter=yyyyMMdd')")
    assert got == [("dt=20200102",)]
    assert partitions(session) == ["dt=20991231"]


def test_timestamp_pattern_joins_several_partition_columns(session):
    session.sql("CREATE TABLE t (id INT, dt STRING, hour INT) PARTITIONED BY (dt, hour)")
    session.sql("INSERT INTO t VALUES (1, '2020-01-01', 9), (2, '2020-01-01', 10), (3, '2099-01-01', 9)")
    got = rows(session, "CALL sys.expire_partitions(table => 't', expiration_time => '1 d', "
                        "timestamp_pattern => '$dt $hour:00:00', timestamp_formatter => 'yyyy-MM-dd H:mm:ss')")
    assert got == [("dt=2020-01-01, hour=10",), ("dt=2020-01-01, hour=9",)]  # sorted as text, as Paimon
    assert rows(session, "SELECT id FROM t") == [(3,)]


def test_a_partition_whose_time_cannot_be_read_is_left_alone(session, caplog):
    dated(session, ("20200101", "later", "2020-01-02"))
    with caplog.at_level(logging.WARNING, "paimon_sql.maintenance.expire_partitions"):
        got = rows(session, "CALL sys.expire_partitions(table => 't', expiration_time => '1 d')")
    assert got == [("dt=2020-01-02",)]  # the default formatter reads yyyy-MM-dd only
    assert partitions(session) == ["dt=20200101", "dt=later"]
    assert "no time could be read from 2 partition(s)" in caplog.text


def test_update_time_expires_partitions_not_written_for_the_expiration_time(session, monkeypatch):
    session.sql("CREATE TABLE t (id INT, p STRING) PARTITIONED BY (p)")
    session.sql("INSERT INTO t VALUES (1, 'old')")
    time.sleep(1.1)  # file creation times are whole seconds: 'new' is at least a second younger
    session.sql("INSERT INTO t VALUES (2, 'new')")
    # the procedure's clock 1.5 s after the newest file, however long the statements took
    (newest,), = rows(session, "SELECT max(creation_time) FROM t$files")
    from paimon_sql.procedures import expire_partitions as procedure
    real = procedure.expire_partitions
    monkeypatch.setattr(procedure, "expire_partitions",
                        lambda table: real(table, now=newest + dt.timedelta(seconds=1.5)))
    got = rows(session, "CALL sys.expire_partitions(table => 't', expiration_time => '2 s', "
                        "expire_strategy => 'update-time')")
    assert got == [("p=old",)]
    assert partitions(session) == ["p=new"]


@pytest.mark.parametrize("create, call, problem", [
    ("", "table => 't'", "partitions expire only in a partitioned table with 'partition.expiration-time' set"),
    ("", "table => 't', expiration_time => 'soon'", "option 'partition.expiration-time' expects a Duration value"),
    ("", "table => 't', expiration_time => '1 d', expire_strategy => 'oldest'",
     "partition.expiration-strategy must be values-time or update-time, got 'oldest'"),
    ("", "table => 't', expiration_time => '1 d', timestamp_formatter => 'yyyyMMdd a'",
     "pattern letter 'a' is not supported"),
    ("", "table => 't', expiration_time => '1 d', max_expires => 0", "partition.expiration-max-num must be at least 1"),
    ("", "table => 't', options => 'partition.expiration-time'", "options must be 'key=value,...'"),
    ("", "table => 'nope', expiration_time => '1 d'", "table 'nope' not found"),
    ("CREATE TABLE u (id INT)", "table => 'u', expiration_time => '1 d'", "partitions expire only in a partitioned"),
])
def test_bad_calls_fail_in_one_line_and_change_nothing(session, create, call, problem):
    dated(session)
    if create:
        session.sql(create)
    with pytest.raises(PaimonError) as e:
        session.sql(f"CALL sys.expire_partitions({call})")
    assert problem in str(e.value) and "\n" not in str(e.value)
    assert kinds(session) == ["APPEND"] and len(partitions(session)) == 3


# -- after a commit ---------------------------------------------------------------------------------

EXPIRING = ("TBLPROPERTIES ('partition.expiration-time' = '1 d', 'partition.timestamp-formatter' = 'yyyyMMdd'{})")


def test_a_commit_expires_partitions_at_most_once_per_check_interval(session):
    dated(session, ("20200101", "20991231"), EXPIRING.format(""))
    assert partitions(session) == ["dt=20991231"]  # this process's first commit to the table checked
    assert kinds(session) == ["APPEND", "OVERWRITE"]
    session.sql("INSERT INTO t VALUES (5, '20200105')")
    assert partitions(session) == ["dt=20200105", "dt=20991231"]  # checked less than an hour ago
    session.sql("ALTER TABLE t SET TBLPROPERTIES ('partition.expiration-check-interval' = '0 s')")
    session.sql("INSERT INTO t VALUES (6, '20991230')")
    assert partitions(session) == ["dt=20991230", "dt=20991231"]
    assert kinds(session) == ["APPEND", "OVERWRITE", "APPEND", "APPEND", "OVERWRITE"]


def test_max_num_and_batch_size_after_a_commit(session):
    dated(session, ("20200101", "20200102", "20200103", "20991231"))
    session.sql("ALTER TABLE t SET TBLPROPERTIES ('partition.expiration-time' = '1 d', "
                "'partition.timestamp-formatter' = 'yyyyMMdd', 'partition.expiration-max-num' = '2', "
                "'partition.expiration-batch-size' = '1')")
    session.sql("INSERT INTO t VALUES (9, '20991231')")
    assert partitions(session) == ["dt=20200103", "dt=20991231"]
    assert kinds(session) == ["APPEND", "APPEND", "OVERWRITE", "OVERWRITE"]  # one snapshot per batch


def test_strategy_and_pattern_options_after_a_commit(session):
    session.sql("CREATE TABLE t (id INT, y STRING, m STRING) PARTITIONED BY (y, m) TBLPROPERTIES ("
                "'partition.expiration-time' = '1 d', 'partition.timestamp-pattern' = '$y-$m-01', "
                "'partition.expiration-strategy' = 'update-time', 'partition.expiration-check-interval' = '0 s')")
    session.sql("INSERT INTO t VALUES (1, '2020', '01'), (2, '2099', '01')")
    assert partitions(session) == ["y=2020/m=01", "y=2099/m=01"]  # written just now: not expired by update time
    session.sql("ALTER TABLE t SET TBLPROPERTIES ('partition.expiration-strategy' = 'values-time')")
    session.sql("INSERT INTO t VALUES (3, '2099', '02')")
    assert partitions(session) == ["y=2099/m=01", "y=2099/m=02"]


def test_write_only_turns_it_off_and_a_failing_expiry_never_fails_the_write(session, caplog):
    dated(session, ("20200101",), EXPIRING.format(", 'write-only' = 'true'"))
    assert partitions(session) == ["dt=20200101"]
    session.sql("ALTER TABLE t SET TBLPROPERTIES ('write-only' = 'false', "
                "'partition.timestamp-formatter' = 'yyyyMMdd G')")
    with caplog.at_level(logging.WARNING, "paimon_sql.maintenance.expire_partitions"):
        session.sql("INSERT INTO t VALUES (2, '20200102')")
    assert rows(session, "SELECT count(*) FROM t") == [(2,)]
    assert "partition expiry after the commit failed" in caplog.text and "pattern letter 'G'" in caplog.text


# -- consumer.expiration-time -------------------------------------------------------------------

def consumers_and_two_commits(session, props=""):
    """Snapshot 1, consumers 'idle' (reads 1, last written two hours ago) and 'busy' (reads 2),
    then snapshot 2; snapshots keep only the latest unless a consumer still reads an older one."""
    session.sql("CREATE TABLE t (id INT) TBLPROPERTIES ('snapshot.num-retained.min' = '1', "
                f"'snapshot.num-retained.max' = '1'{props})")
    session.sql("INSERT INTO t VALUES (1)")
    table = _table(session)
    table.consumer_manager.record("idle", 1)
    table.consumer_manager.record("busy", 2)
    hours_ago = time.time() - 7200
    os.utime(table.paths.consumer_path("idle"), (hours_ago, hours_ago))
    session.sql("INSERT INTO t VALUES (2)")


def test_a_commit_deletes_idle_consumers_then_expires_the_snapshots_they_held(session):
    consumers_and_two_commits(session, ", 'consumer.expiration-time' = '1 h'")
    assert rows(session, "SELECT consumer_id, next_snapshot_id FROM t$consumers") == [("busy", 2)]
    assert rows(session, "SELECT snapshot_id FROM t$snapshots") == [(2,)]  # same commit, after the consumers


def test_without_the_option_an_idle_consumer_stays_and_holds_its_snapshot(session):
    consumers_and_two_commits(session)
    assert rows(session, "SELECT consumer_id FROM t$consumers ORDER BY consumer_id") == [("busy",), ("idle",)]
    assert rows(session, "SELECT snapshot_id FROM t$snapshots ORDER BY snapshot_id") == [(1,), (2,)]
