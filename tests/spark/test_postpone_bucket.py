"""Postpone bucket tables (``bucket = -2``) through SQL, as paimon-spark 2.0 behaves (its
PostponeBucketTableTest): batch writes go straight into real buckets (``postpone.batch-write-fixed-bucket``,
default true) and are visible at once; with it false they land in ``bucket-postpone``, invisible
until ``CALL sys.compact`` assigns them buckets (``postpone.default-bucket-num``, else Spark's
default parallelism). ``$buckets`` lists the postpone files (bucket -2); ``$files``, ``$partitions`` and
SHOW PARTITIONS, which Paimon plans with its batch scan, do not, as on paimon-spark."""

from pathlib import Path

import pytest

from paimon_sql.exceptions import PaimonError
from tests.spark.conftest import rows

POSTPONE = "'primary-key' = 'k, pt', 'bucket' = '-2'"


def buckets(session, name="t", where=""):
    return [b for (b,) in rows(session, f"SELECT DISTINCT bucket FROM `{name}$buckets` {where} ORDER BY bucket")]


def test_insert_writes_real_buckets_visible_at_once(session):
    session.sql(f"CREATE TABLE t (k INT, v STRING, pt INT) PARTITIONED BY (pt) TBLPROPERTIES ({POSTPONE})")
    session.sql("INSERT INTO t SELECT id, CAST(id AS STRING), CAST(id % 2 AS INT) FROM range(0, 100)")
    assert rows(session, "SELECT count(*), sum(k) FROM t") == [(100, 4950)]
    assert buckets(session) == [0]  # 1 GB per bucket: one bucket per new partition
    assert {t for (t,) in rows(session, "SELECT DISTINCT total_buckets FROM `t$partitions`")} == {1}
    session.sql("UPDATE t SET v = 'u' WHERE k < 10")
    session.sql("DELETE FROM t WHERE k >= 90")
    session.sql("MERGE INTO t USING (SELECT 5 AS k, 'm' AS v, 1 AS pt UNION ALL SELECT 200, 'n', 0) s "
                "ON t.k = s.k AND t.pt = s.pt WHEN MATCHED THEN UPDATE SET v = s.v "
                "WHEN NOT MATCHED THEN INSERT *")
    assert rows(session, "SELECT count(*) FROM t") == [(91,)]
    assert rows(session, "SELECT v FROM t WHERE k IN (5, 6, 200) ORDER BY k") == [("m",), ("u",), ("n",)]
    assert rows(session, "SELECT DISTINCT level FROM `t$files`") == [(0,)]  # write-only, as paimon-spark
    # a postpone table's writes expire no snapshot (its compaction commits do)
    assert rows(session, "SELECT commit_kind FROM `t$snapshots` ORDER BY snapshot_id")[0] == ("APPEND",)


def test_target_row_num_per_bucket_sizes_new_partitions_only(session):
    session.sql(f"CREATE TABLE t (k INT, v STRING, pt INT) PARTITIONED BY (pt) TBLPROPERTIES ({POSTPONE}, "
                "'postpone.target-row-num-per-bucket' = '200')")
    session.sql("INSERT INTO t SELECT id, CAST(id AS STRING), IF(id < 100, 0, 1) FROM range(0, 550)")
    assert buckets(session, where="WHERE partition = '{0}'") == [0]
    assert buckets(session, where="WHERE partition = '{1}'") == [0, 1, 2]
    session.sql("INSERT INTO t SELECT id, CAST(id AS STRING), 0 FROM range(1000, 2000)")
    assert buckets(session, where="WHERE partition = '{0}'") == [0]  # a partition keeps its count
    assert rows(session, "SELECT count(*) FROM t") == [(1550,)]


def test_postpone_writes_are_invisible_until_compaction(session):
    session.sql(f"CREATE TABLE t (k INT, v STRING, pt INT) PARTITIONED BY (pt) TBLPROPERTIES ({POSTPONE}, "
                "'postpone.batch-write-fixed-bucket' = 'false', 'postpone.default-bucket-num' = '3')")
    session.sql("INSERT INTO t SELECT id, CAST(id AS STRING), CAST(id % 2 AS INT) FROM range(0, 1000)")
    session.sql("INSERT INTO t VALUES (1, 'again', 1)")
    assert rows(session, "SELECT count(*) FROM t") == [(0,)]
    assert buckets(session) == [-2]
    assert rows(session, "SELECT count(*) FROM `t$files`") == rows(session, "SELECT count(*) FROM `t$partitions`") \
        == [(0,)] and rows(session, "SHOW PARTITIONS t") == []
    paths = list(Path(session.warehouse, "default.db", "t").glob("pt=*/bucket-*/*"))
    assert paths and all(p.parent.name == "bucket-postpone" and p.suffix == ".avro" for p in paths)
    assert rows(session, "CALL sys.compact(table => 't')") == [(True,)]
    assert rows(session, "SELECT count(*), sum(k) FROM t") == [(1000, 499500)]
    assert rows(session, "SELECT v FROM t WHERE k = 1") == [("again",)]  # the later write wins
    assert buckets(session) == [0, 1, 2]
    assert rows(session, "SELECT commit_kind FROM `t$snapshots` ORDER BY snapshot_id DESC LIMIT 1") == [("COMPACT",)]
    # a fixed-bucket write after it keeps the partitions' 3 buckets
    session.sql("ALTER TABLE t SET TBLPROPERTIES ('postpone.batch-write-fixed-bucket' = 'true')")
    session.sql("INSERT INTO t VALUES (2000, 'x', 0)")
    assert buckets(session, where="WHERE partition = '{0}'") == [0, 1, 2]
    assert rows(session, "SELECT count(*) FROM t") == [(1001,)]


def test_compaction_takes_no_partitions_and_append_tables_refuse_minus_two(session):
    session.sql(f"CREATE TABLE t (k INT, v STRING, pt INT) PARTITIONED BY (pt) TBLPROPERTIES ({POSTPONE})")
    with pytest.raises(PaimonError, match="postpone"):
        session.sql("CALL sys.compact(table => 't', partitions => 'pt=1')")
    with pytest.raises(Exception, match="number of buckets needs to be greater than 0"):
        session.sql("CREATE TABLE a (k INT) TBLPROPERTIES ('bucket' = '-2')")
    with pytest.raises(Exception, match="postpone.merge-on-read"):
        session.sql("ALTER TABLE t SET TBLPROPERTIES ('postpone.merge-on-read' = 'true')")


def test_fixed_bucket_overwrite_replaces_postpone_rows_too(session):
    session.sql("CREATE TABLE t (k INT, v STRING) TBLPROPERTIES ('primary-key' = 'k', 'bucket' = '-2', "
                "'postpone.batch-write-fixed-bucket' = 'false')")
    session.sql("INSERT INTO t SELECT id, CAST(id AS STRING) FROM range(0, 1000)")
    assert rows(session, "SELECT count(*) FROM t") == [(0,)]
    session.sql("INSERT INTO t /*+ OPTIONS('postpone.batch-write-fixed-bucket' = 'true') */ "
                "SELECT id, CAST(id AS STRING) FROM range(0, 1000)")
    assert rows(session, "SELECT count(*), sum(k) FROM t") == [(1000, 499500)]
    assert buckets(session) == [-2, 0]
    session.sql("INSERT OVERWRITE t /*+ OPTIONS('postpone.batch-write-fixed-bucket' = 'true') */ "
                "SELECT id, CAST(id AS STRING) FROM range(0, 500)")
    assert rows(session, "SELECT count(*), sum(k) FROM t") == [(500, 124750)]
    assert buckets(session) == [0]
