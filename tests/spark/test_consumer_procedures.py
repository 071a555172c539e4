"""CALL sys.reset_consumer / clear_consumers through SQL: effects seen in $consumers and in where a
streaming read with the consumer's id resumes; refusals are one line and change nothing."""

import pytest

from paimon_sql.exceptions import PaimonError
from tests.spark.conftest import rows
from tests.spark.test_incremental_and_streaming import memory_sink


@pytest.fixture
def table(session):
    """db.t: four appends (snapshots 1-4), one row each."""
    session.sql("CREATE DATABASE db")
    session.sql("CREATE TABLE db.t (id INT, name STRING)")
    for i in range(1, 5):
        session.sql(f"INSERT INTO db.t VALUES ({i}, 'n{i}')")
    return session


def call(session, text):
    return rows(session, f"CALL sys.{text}")


def consumers(session, name="t"):
    return rows(session, f"SELECT consumer_id, next_snapshot_id FROM db.`{name}$consumers` ORDER BY consumer_id")


def test_reset_consumer_sets_where_a_stream_resumes(table, tmp_path):
    assert call(table, "reset_consumer('db.t', 'job1', 3)") == [(True,)]
    assert consumers(table) == [("job1", 3)]
    stream = (table.spark.readStream.format("paimon").option("warehouse", table.warehouse)
              .option("consumer-id", "job1").load("db.t"))
    with memory_sink(stream, "consumer_out", str(tmp_path / "checkpoint")) as query:
        query.processAllAvailable()
        assert sorted(rows(table, "SELECT * FROM consumer_out")) == [(3, "n3"), (4, "n4")]


def test_reset_without_a_snapshot_deletes_the_consumer(table):
    call(table, "reset_consumer('db.t', 'job1', 2)")
    call(table, "reset_consumer(table => 'db.t', consumerId => 'job2', nextSnapshotId => 4)")
    assert call(table, "reset_consumer(table => 'db.t', consumerId => 'job1')") == [(True,)]
    assert consumers(table) == [("job2", 4)]
    assert call(table, "reset_consumer('db.t', 'gone')") == [(True,)]  # as Java: no such consumer, no error
    assert consumers(table) == [("job2", 4)]


def test_clear_consumers_by_whole_id_regexes(table):
    for c in ("job1", "job2", "job_keep", "other", "xjob"):
        call(table, f"reset_consumer('db.t', '{c}', 2)")
    assert call(table, "clear_consumers('db.t', 'job.*', 'job_keep')") == [(True,)]
    assert [c for c, _ in consumers(table)] == ["job_keep", "other", "xjob"]  # 'xjob': the whole id must match
    call(table, "clear_consumers(table => 'db.t', excludingConsumers => 'x.*')")
    assert consumers(table) == [("xjob", 2)]
    call(table, "clear_consumers('db.t')")
    assert consumers(table) == []


def test_consumers_of_a_branch_are_its_own(table):
    call(table, "create_tag('db.t', 'v3', 3)")
    call(table, "create_branch('db.t', 'b', 'v3')")
    call(table, "reset_consumer('db.t', 'job', 2)")
    call(table, "reset_consumer('db.t$branch_b', 'job', 3)")
    assert consumers(table, "t$branch_b") == [("job", 3)]
    call(table, "clear_consumers('db.t$branch_b')")
    assert consumers(table, "t$branch_b") == [] and consumers(table) == [("job", 2)]


@pytest.mark.parametrize("text, message", [
    ("reset_consumer('db.t', ' ', 2)", "consumerId must not be blank"),
    ("reset_consumer('db.t', 'job1', 0)", "nextSnapshotId 0: table 'db.t' has no such snapshot"),
    ("reset_consumer('db.t', 'job1', 5)", "nextSnapshotId 5: table 'db.t' has no such snapshot"),
    ("reset_consumer('db.nope', 'job1', 2)", "table 'db.nope' not found"),
    ("clear_consumers('db.t', 'job(')", "includingConsumers is not a regular expression: 'job('"),
    ("clear_consumers('db.t', '.*', '[')", "excludingConsumers is not a regular expression: '['"),
])
def test_refusals_are_one_line_and_change_nothing(table, text, message):
    call(table, "reset_consumer('db.t', 'job1', 2)")
    with pytest.raises(PaimonError) as e:
        call(table, text)
    assert message in str(e.value) and "\n" not in str(e.value)
    assert consumers(table) == [("job1", 2)]
