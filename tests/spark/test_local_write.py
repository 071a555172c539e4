"""A single row already on the driver (INSERT ... VALUES (...)) is written there, without a Spark
write job (spark/local_write.py), into the file and snapshot a job writes. Several rows, and
rows Spark computes, still go through the job (one file per task or bucket, as paimon-spark)."""

import pytest

from paimon_sql.spark import native_write
from paimon_sql.spark import write as spark_write
from spark.conftest import rows


@pytest.fixture
def jobs(monkeypatch):
    """Writes through a Spark job, counted; they still run."""
    count = []
    save = spark_write._save

    def counted(*args, **kwargs):
        count.append(1)
        return save(*args, **kwargs)
    monkeypatch.setattr(spark_write, "_save", counted)
    return count


@pytest.mark.parametrize("layout", ["TBLPROPERTIES ('primary-key' = 'id', 'bucket' = '2')",
                                    "PARTITIONED BY (p) TBLPROPERTIES ('bucket' = '2', 'bucket-key' = 'id')",
                                    "TBLPROPERTIES ('primary-key' = 'id', 'bucket' = '-1')"],
                         ids=["fixed-bucket", "bucketed-append", "dynamic-bucket"])
def test_one_row_is_written_by_the_driver(session, jobs, layout):
    session.sql(f"CREATE TABLE t (id BIGINT, v DECIMAL(5, 2), p STRING) {layout}")
    session.sql("INSERT INTO t VALUES (1, 1.5, 'a'), (2, 2, 'b')")
    assert len(jobs) == 1  # two rows: the job
    session.sql("INSERT INTO t VALUES (2, 3.25, 'b')")
    session.sql("INSERT INTO t VALUES (3, 1, 'c')")
    assert len(jobs) == 1
    session.sql("INSERT INTO t SELECT id, 1, 'c' FROM range(4, 5)")  # a row Spark computes: the job
    assert len(jobs) == 2
    expected = [(1, "1.50", "a"), (2, "3.25", "b"), (3, "1.00", "c"), (4, "1.00", "c")] if "primary-key" in layout \
        else [(1, "1.50", "a"), (2, "2.00", "b"), (2, "3.25", "b"), (3, "1.00", "c"), (4, "1.00", "c")]
    got = [(r[0], str(r[1]), r[2]) for r in rows(session, "SELECT * FROM t ORDER BY id, v")]
    assert got == expected
    assert rows(session, "SELECT count(*) FROM `t$snapshots` WHERE commit_kind = 'APPEND'") == [(4,)]
    files = rows(session, "SELECT record_count FROM `t$files` ORDER BY record_count")
    assert sum(n for (n,) in files) == len(got) + ("primary-key" in layout)  # key 2's first row is in its file


def test_one_row_keeps_spark_checks(session, jobs):
    """Spark evaluates the stored value's casts as the job would: an overflow fails, nothing is written."""
    session.sql("CREATE TABLE t (id BIGINT, v DECIMAL(3, 1)) TBLPROPERTIES ('primary-key' = 'id', 'bucket' = '1')")
    with pytest.raises(Exception, match="(?i)overflow|cannot be represented|NUMERIC_VALUE_OUT_OF_RANGE"):
        session.sql("INSERT INTO t VALUES (1, 12345.6)")
    assert rows(session, "SELECT count(*) FROM t") == [(0,)]
    assert rows(session, "SELECT count(*) FROM `t$snapshots`") == [(0,)]


def test_insert_overwrite_of_one_row_replaces_the_partition(session, jobs):
    session.sql("CREATE TABLE t (id BIGINT, p STRING) PARTITIONED BY (p) TBLPROPERTIES ('bucket' = '1', "
                "'bucket-key' = 'id')")
    session.sql("INSERT INTO t VALUES (1, 'a'), (2, 'b')")
    session.sql("INSERT OVERWRITE t PARTITION (p = 'a') VALUES (3)")
    assert rows(session, "SELECT * FROM t ORDER BY id") == [(2, "b"), (3, "a")]
    assert len(jobs) == 1


def test_an_append_table_without_buckets_too(session, monkeypatch):
    """Spark's own Parquet writer (native_write) writes its rows; one row is the driver's."""
    calls = []
    native = native_write.write
    monkeypatch.setattr(native_write, "write", lambda *a, **k: calls.append(1) or native(*a, **k))
    session.sql("CREATE TABLE t (id BIGINT, p STRING)")
    session.sql("INSERT INTO t VALUES (1, 'a')")
    assert calls == []
    assert rows(session, "SELECT record_count, file_format FROM `t$files`") == [(1, "parquet")]
    session.sql("INSERT INTO t VALUES (2, 'b'), (3, 'c')")
    assert calls == [1]
    assert rows(session, "SELECT * FROM t ORDER BY id") == [(1, "a"), (2, "b"), (3, "c")]


def test_one_row_writes_from_many_threads_lose_nothing(session, spark, warehouse):
    """The driver commits each one-row INSERT itself: eight sessions on one Spark, as the server's
    clients are, each in a thread of its own; every row lands once, one APPEND snapshot each."""
    import paimon_sql
    from concurrent.futures import ThreadPoolExecutor
    from spark.conftest import release
    session.sql("CREATE TABLE k (id BIGINT, v STRING) TBLPROPERTIES ('primary-key' = 'id', 'bucket' = '2')")
    session.sql("CREATE TABLE a (id BIGINT, v STRING)")
    others = [paimon_sql.connect(warehouse, spark=spark) for _ in range(8)]

    def work(i: int) -> None:
        for j in range(5):
            others[i].sql(f"INSERT INTO k VALUES ({i * 100 + j}, 'x')")
            others[i].sql(f"INSERT INTO a VALUES ({i * 100 + j}, 'y')")
    try:
        with ThreadPoolExecutor(8) as pool:
            list(pool.map(work, range(8)))
    finally:
        for s in others:
            release(s)
    for t in ("k", "a"):
        assert rows(session, f"SELECT count(*), count(DISTINCT id) FROM {t}") == [(40, 40)]
        assert rows(session, f"SELECT count(*) FROM `{t}$snapshots` WHERE commit_kind = 'APPEND'") == [(40,)]
