"""Incremental batch reads (delta, changelog, diff; ids, tags, timestamps; table functions) and the
Structured Streaming source picking up later commits."""

from contextlib import contextmanager

import pytest

from paimon_sql.exceptions import PaimonError
from spark.conftest import rows


@pytest.fixture
def pk(session):
    """db.t (primary key id): 1 +(1,a)+(2,b); 2 +(2,b2)+(3,c) [tag t2]; 3 -(1); 4 +(4,d) [tag t4]."""
    session.sql("CREATE DATABASE db")
    session.sql("CREATE TABLE db.t (id INT, v STRING) TBLPROPERTIES ('primary-key' = 'id', 'bucket' = '2')")
    session.sql("INSERT INTO db.t VALUES (1, 'a'), (2, 'b')")
    session.sql("INSERT INTO db.t VALUES (2, 'b2'), (3, 'c')")
    session.sql("ALTER TABLE db.t CREATE TAG t2")
    session.sql("DELETE FROM db.t WHERE id = 1")
    session.sql("INSERT INTO db.t VALUES (4, 'd')")
    session.sql("ALTER TABLE db.t CREATE TAG t4")
    return session


def test_delta_between_snapshot_ids(pk):
    assert rows(pk, "SELECT * FROM paimon_incremental_query('db.t', 1, 2) ORDER BY id") == [(2, "b2"), (3, "c")]
    # as Paimon 2.0 reads the delta: each file's rows as stored, not merged, the DELETE's -D row too
    assert rows(pk, "SELECT * FROM paimon_incremental_query('db.t', 2, 4) ORDER BY id") == [(1, "a"), (4, "d")]
    assert rows(pk, "SELECT id FROM db.t /*+ OPTIONS('incremental-between' = '0,4') */ ORDER BY id") == \
        [(1,), (1,), (2,), (2,), (3,), (4,)]
    # retractions are kept by $audit_log over the same range
    assert rows(pk, "SELECT rowkind, id FROM db.t$audit_log /*+ OPTIONS('incremental-between' = '2,4') */ "
                    "ORDER BY id") == [("-D", 1), ("+I", 4)]


def test_diff_between_tags_and_snapshots(pk):
    # both ends tags: diff of the two tagged snapshots
    assert rows(pk, "SELECT * FROM paimon_incremental_query('db.t', 't2', 't4') ORDER BY id") == [(4, "d")]
    assert rows(pk, "SELECT rowkind, id, v FROM paimon_incremental_query('db.t$audit_log', 't2', 't4') "
                    "ORDER BY id") == [("-D", 1, "a"), ("+I", 4, "d")]
    diff = "/*+ OPTIONS('incremental-between' = '1,4', 'incremental-between-scan-mode' = 'diff') */"
    assert rows(pk, f"SELECT rowkind, id, v FROM db.t$audit_log {diff} ORDER BY id") == \
        [("-D", 1, "a"), ("+U", 2, "b2"), ("+I", 3, "c"), ("+I", 4, "d")]


def test_changelog_mode_reads_changelog_files(session):
    session.sql("CREATE DATABASE db")
    session.sql("CREATE TABLE db.c (id INT, v STRING) TBLPROPERTIES ('primary-key' = 'id', 'bucket' = '1', "
                "'changelog-producer' = 'input')")
    session.sql("INSERT INTO db.c VALUES (1, 'a'), (2, 'b')")
    session.sql("INSERT INTO db.c VALUES (1, 'a2')")
    session.sql("INSERT INTO db.c VALUES (3, 'c')")
    assert rows(session, "SELECT * FROM paimon_incremental_query('db.c', 1, 3) ORDER BY id") == [(1, "a2"), (3, "c")]
    mode = "'incremental-between-scan-mode' = 'changelog'"
    assert rows(session, f"SELECT id FROM db.c /*+ OPTIONS('incremental-between' = '0,1', {mode}) */ ORDER BY id") \
        == [(1,), (2,)]


def test_append_table_by_ids_and_timestamps(session):
    session.sql("CREATE DATABASE db")
    session.sql("CREATE TABLE db.a (id INT, v STRING)")
    for i in range(1, 4):
        session.sql(f"INSERT INTO db.a VALUES ({i}, 'v{i}')")
    assert rows(session, "SELECT id FROM paimon_incremental_query('db.a', 1, 3) ORDER BY id") == [(2,), (3,)]
    times = [r[0] for r in rows(session, "SELECT commit_time FROM db.a$snapshots ORDER BY snapshot_id")]
    got = rows(session, f"SELECT id FROM paimon_incremental_between_timestamp('db.a', '{times[0]}', '{times[2]}') "
                        "ORDER BY id")
    assert got == [(2,), (3,)]
    millis = [r[0] for r in rows(session, "SELECT unix_millis(to_timestamp(commit_time)) FROM db.a$snapshots "
                                          "ORDER BY snapshot_id")]
    hint = f"/*+ OPTIONS('incremental-between-timestamp' = '{millis[1]},{millis[2]}') */"
    assert rows(session, f"SELECT id FROM db.a {hint}") == [(3,)]


def test_incremental_errors(pk):
    with pytest.raises(PaimonError, match="ending snapshot id 2 should be >= starting snapshot id 4"):
        pk.sql("SELECT * FROM paimon_incremental_query('db.t', 4, 2)")
    with pytest.raises(PaimonError, match="Didn't find two tags for start 'nope' and end 't4'"):
        pk.sql("SELECT * FROM paimon_incremental_query('db.t', 'nope', 't4')")
    with pytest.raises(PaimonError, match="snapshot 9 does not exist"):
        pk.sql("SELECT * FROM paimon_incremental_query('db.t', 1, 9)").collect()
    with pytest.raises(PaimonError, match="scan-mode must be one of"):
        pk.sql("SELECT * FROM db.t /*+ OPTIONS('incremental-between'='1,2', "
               "'incremental-between-scan-mode'='bogus') */")


def test_streaming_picks_up_three_later_commits(pk, tmp_path):
    spark = pk.spark
    stream = (spark.readStream.format("paimon").option("warehouse", pk.warehouse).option("consumer-id", "job1")
              .load("db.t"))
    with memory_sink(stream, "paimon_stream_out", str(tmp_path / "checkpoint")) as query:
        query.processAllAvailable()  # the latest snapshot, whole
        assert sorted(rows(pk, "SELECT * FROM paimon_stream_out")) == [(2, "b2"), (3, "c"), (4, "d")]
        for i in range(3):
            pk.sql(f"INSERT INTO db.t VALUES ({10 + i}, 'n{i}')")
            query.processAllAvailable()
        got = sorted(rows(pk, "SELECT * FROM paimon_stream_out"))
        assert got == [(2, "b2"), (3, "c"), (4, "d"), (10, "n0"), (11, "n1"), (12, "n2")]
    assert rows(pk, "SELECT * FROM db.t$consumers") == [("job1", 8)]


def test_audit_log_stream_carries_row_kinds(pk, tmp_path):
    """load("db.t$audit_log") streams changes with their kind: a later DELETE arrives as -D."""
    stream = spark_stream(pk, "db.t$audit_log").option("scan.mode", "latest").load()
    with memory_sink(stream, "paimon_cdc_out", str(tmp_path / "cdc")) as query:
        query.processAllAvailable()
        pk.sql("INSERT INTO db.t VALUES (5, 'e')")
        query.processAllAvailable()
        pk.sql("DELETE FROM db.t WHERE id = 2")
        query.processAllAvailable()
        assert sorted(rows(pk, "SELECT rowkind, id, v FROM paimon_cdc_out")) == [("+I", 5, "e"), ("-D", 2, "b2")]
    # the batch DataFrame API takes the same names
    batch = pk.spark.read.format("paimon").option("warehouse", pk.warehouse).load("db.t$ro")
    assert sorted(tuple(r) for r in batch.collect()) == sorted(rows(pk, "SELECT * FROM db.t$ro"))
    with pytest.raises(Exception, match="query other system tables with SQL"):
        pk.spark.read.format("paimon").option("warehouse", pk.warehouse).load("db.t$files").schema


@contextmanager
def memory_sink(stream, name: str, checkpoint: str):
    """A running query writing ``stream`` into the in-memory table ``name``; stopped and dropped after."""
    query = (stream.writeStream.format("memory").queryName(name).outputMode("append")
             .option("checkpointLocation", checkpoint).start())
    try:
        yield query
    finally:
        query.stop()
        stream.sparkSession.catalog.dropTempView(name)


def spark_stream(session, name):
    return session.spark.readStream.format("paimon").option("warehouse", session.warehouse).option("path", name)


def test_binlog_stream_pairs_updates(session, tmp_path):
    """With a changelog producer an update arrives as -U then +U: $binlog shows it as one +U row
    holding [before, after]."""
    session.sql("CREATE DATABASE db")
    session.sql("CREATE TABLE db.c (id INT, v STRING) TBLPROPERTIES ('primary-key' = 'id', 'bucket' = '1', "
                "'changelog-producer' = 'lookup')")
    session.sql("INSERT INTO db.c VALUES (1, 'a')")
    stream = spark_stream(session, "db.c$binlog").option("scan.mode", "latest").load()
    with memory_sink(stream, "paimon_binlog_out", str(tmp_path / "binlog")) as query:
        query.processAllAvailable()
        session.sql("INSERT INTO db.c VALUES (1, 'b'), (2, 'x')")
        query.processAllAvailable()
        got = sorted(rows(session, "SELECT rowkind, id, v FROM paimon_binlog_out"))
    assert got == [("+I", [2], ["x"]), ("+U", [1, 1], ["a", "b"])]
    # a batch read: merged rows, one value each
    assert sorted(rows(session, "SELECT rowkind, id, v FROM db.c$binlog")) == [("+I", [1], ["b"]), ("+I", [2], ["x"])]


def test_stream_from_timestamp_starts_after_that_snapshot(pk, tmp_path):
    millis = pk.catalog.get_table("db.t").snapshot_manager.snapshot(4).time_millis
    stream = (spark_stream(pk, "db.t").option("scan.mode", "from-timestamp")
              .option("scan.timestamp-millis", str(millis)).load())
    with memory_sink(stream, "paimon_ts_out", str(tmp_path / "ts")) as query:
        query.processAllAvailable()
        pk.sql("INSERT INTO db.t VALUES (7, 'g')")
        query.processAllAvailable()
        assert rows(pk, "SELECT * FROM paimon_ts_out") == [(7, "g")]
