"""Rows already on the driver (INSERT ... VALUES, a MERGE of a literal source into rows read on the
driver) are written there, without a Spark write job (spark/local_write.py), into the files and
snapshot a job writes. Rows Spark computes from tables, and several rows into a table without
buckets (one file per task, as paimon-spark), still go through the job."""

import pytest

from paimon_sql.spark import jvm_classes, native_write
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
def test_rows_on_the_driver_are_written_by_it(session, jobs, layout):
    session.sql(f"CREATE TABLE t (id BIGINT, v DECIMAL(5, 2), p STRING) {layout}")
    session.sql(f"CREATE TABLE u (id BIGINT, v DECIMAL(5, 2), p STRING) {layout}")
    session.sql("INSERT INTO t VALUES (1, 1.5, 'a'), (2, 2, 'b'), (5, 1, 'a'), (6, 1, 'b'), (7, 1, 'a')")
    session.sql("INSERT INTO t VALUES (2, 3.25, 'b')")
    session.sql("INSERT INTO t VALUES (3, 1, 'c')")
    assert len(jobs) == 0
    session.sql("INSERT INTO t SELECT id, 1, 'c' FROM range(4, 5)")  # a row Spark computes: the job
    assert len(jobs) == 1
    # the same five rows by a Spark job: the same files (one per partition and bucket)
    session.sql("INSERT INTO u SELECT id, CASE id WHEN 1 THEN 1.5 WHEN 2 THEN 2 ELSE 1 END, "
                "CASE WHEN id IN (1, 5, 7) THEN 'a' ELSE 'b' END FROM range(1, 8) WHERE id NOT IN (3, 4)")
    assert len(jobs) == 2
    files = "SELECT partition, bucket, record_count FROM `{}$files` VERSION AS OF 1 ORDER BY 1, 2"
    assert rows(session, files.format("t")) == rows(session, files.format("u"))
    assert len(rows(session, files.format("t"))) >= (1 if "'-1'" in layout else 2)  # dynamic: bucket 0 fills first
    expected = [(1, "1.50", "a"), (2, "3.25", "b"), (3, "1.00", "c"), (4, "1.00", "c")] if "primary-key" in layout \
        else [(1, "1.50", "a"), (2, "2.00", "b"), (2, "3.25", "b"), (3, "1.00", "c"), (4, "1.00", "c")]
    expected += [(5, "1.00", "a"), (6, "1.00", "b"), (7, "1.00", "a")]
    got = [(r[0], str(r[1]), r[2]) for r in rows(session, "SELECT * FROM t ORDER BY id, v")]
    assert got == sorted(expected)
    assert rows(session, "SELECT count(*) FROM `t$snapshots` WHERE commit_kind = 'APPEND'") == [(4,)]
    files = rows(session, "SELECT record_count FROM `t$files` ORDER BY record_count")
    assert sum(n for (n,) in files) == len(got) + ("primary-key" in layout)  # key 2's first row is in its file


def test_several_rows_into_a_table_without_buckets_are_the_jobs(session, jobs):
    """A table without buckets gets a file per task from a Spark job (the reference layout): only a
    single row is the driver's."""
    session.sql("CREATE TABLE t (id BIGINT, v STRING) TBLPROPERTIES ('file.format' = 'orc')")  # not Spark's Parquet writer
    session.sql("INSERT INTO t VALUES (1, 'a')")
    assert len(jobs) == 0
    session.sql("INSERT INTO t VALUES (2, 'b'), (3, 'c')")
    assert len(jobs) == 1
    assert rows(session, "SELECT * FROM t ORDER BY id") == [(1, "a"), (2, "b"), (3, "c")]


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
    assert len(jobs) == 0


def test_one_row_runs_no_spark_job_and_stores_what_the_job_stores(session, spark):
    """The row is taken from the driver's local relation (paimon-sql's LocalBatches), not by Spark's
    Arrow collection, which schedules a job even for one row (queued behind every running job on a
    busy server). Every kind of column stores as the write job stores it, in a non-UTC session."""
    columns = ("id BIGINT, ts TIMESTAMP, ntz TIMESTAMP_NTZ, d DATE, n DECIMAL(20, 4), c CHAR(4), s STRING, "
               "b BINARY, a ARRAY<STRING>, m MAP<STRING, INT>, st STRUCT<x: INT, y: STRING>, f FLOAT")
    values = ["(1, TIMESTAMP '2024-03-10 02:30:00', TIMESTAMP_NTZ '2024-03-10 02:30:00', DATE '2024-03-10', "
              "12345678.1234, 'ab', 'é', X'00FF', array('q', NULL), map('k', 1), named_struct('x', 1, 'y', 'z'), "
              "CAST('NaN' AS FLOAT))",
              "(2, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)"]
    session.sql("SET spark.sql.session.timeZone = America/Los_Angeles")
    try:
        for t in ("one", "job"):
            session.sql(f"CREATE TABLE {t} ({columns}) TBLPROPERTIES ('primary-key' = 'id', 'bucket' = '1')")
        session.sql(f"INSERT INTO job VALUES {', '.join(values)}")  # two rows: the write job
        context = spark.sparkContext
        context.setJobGroup("one-row-inserts", "one-row INSERTs")
        try:
            for v in values:
                session.sql(f"INSERT INTO one VALUES {v}")
        finally:
            context.setLocalProperty("spark.jobGroup.id", None)
        assert list(context.statusTracker().getJobIdsForGroup("one-row-inserts")) == []
        stored = "SELECT to_json(struct(*)) FROM {} ORDER BY id"  # NaN and binary as text
        assert rows(session, stored.format("one")) == rows(session, stored.format("job"))
        assert "NaN" in rows(session, stored.format("one"))[0][0]
    finally:
        session.sql("SET spark.sql.session.timeZone = UTC")


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


JOINS = ["JOIN", "LEFT JOIN", "RIGHT JOIN", "FULL JOIN", "LEFT SEMI JOIN", "LEFT ANTI JOIN"]


@pytest.mark.parametrize("join", JOINS + ["CROSS JOIN"])
def test_joins_of_rows_on_the_driver_are_folded_there_as_spark_joins_them(spark, join):
    """A join of two local relations (a MERGE's one-row source and the target rows read on the
    driver) is evaluated on the driver (LocalBatches), with no job, to the rows Spark's join gives:
    NULL keys, unmatched rows of either side, several matches."""
    left = "(VALUES (1, 'a'), (2, 'b'), (NULL, 'n'), (2, 'c')) AS x(k, v)"
    right = "(VALUES (2, 20), (3, 30), (NULL, 0), (2, 21)) AS y(k, w)"
    on = "" if join == "CROSS JOIN" else " ON x.k = y.k AND coalesce(y.w, 0) >= 0"
    df = spark.sql(f"SELECT * FROM {left} {join} {right}{on}")
    context = spark.sparkContext
    context.setJobGroup("folded-joins", "joins folded on the driver")
    try:
        got = jvm_classes.local_table(df)
    finally:
        context.setLocalProperty("spark.jobGroup.id", None)
    assert list(context.statusTracker().getJobIdsForGroup("folded-joins")) == []
    assert got is not None
    key = lambda r: tuple((v is None, v) for v in r)  # noqa: E731
    folded = list(zip(*[c.to_pylist() for c in got.columns]))
    assert sorted(folded, key=key) == sorted(map(tuple, df.collect()), key=key)


@pytest.mark.parametrize("key", [1, 7])
def test_a_one_row_merge_runs_no_spark_job(session, spark, key):
    """MERGE of one row, matched or not: the join of its source and the target's rows read on the
    driver is folded there, so neither the rows nor their write schedule a job."""
    session.sql("CREATE TABLE m (id INT, v STRING) TBLPROPERTIES ('primary-key' = 'id', 'bucket' = '1')")
    session.sql("INSERT INTO m VALUES (1, 'a'), (2, 'b')")
    context = spark.sparkContext
    context.setJobGroup("one-row-merge", "a one-row MERGE")
    try:
        session.sql(f"MERGE INTO m USING (SELECT {key} AS id, 'new' AS v) s ON m.id = s.id "
                    "WHEN MATCHED THEN UPDATE SET v = s.v WHEN NOT MATCHED THEN INSERT *")
    finally:
        context.setLocalProperty("spark.jobGroup.id", None)
    assert list(context.statusTracker().getJobIdsForGroup("one-row-merge")) == []
    expected = {1: [(1, "new"), (2, "b")], 7: [(1, "a"), (2, "b"), (7, "new")]}[key]
    assert rows(session, "SELECT id, v FROM m ORDER BY id") == expected
