"""How the server takes a result from Spark (paimon_sql/server/operations.py ``arrow_batches``): a
result of few partitions in one job, each partition whole (CappedBatches in paimon-sql's jar), and
streamed a partition at a time when a partition is over its share or there are many; the rows the
same every way, in order."""

import uuid

import pyarrow as pa

from paimon_sql.server import operations as O


def unbounded(spark, n: int, partitions: int):
    """ids 0..n-1 in ``partitions`` partitions, of no row count Spark's optimizer knows (a
    generator), as a table scan's: a bounded result is collected whole before any of this."""
    return spark.range(0, n, 1, partitions).selectExpr("explode(array(id)) AS id", "CAST(id AS STRING) s")


def taken(spark, df):
    """(``df``'s rows as the server takes them, the Spark jobs that took)."""
    group = f"fetch-{uuid.uuid4().hex}"
    sc = spark.sparkContext
    sc.setJobGroup(group, "a test's fetch")
    try:
        table = pa.Table.from_batches(list(O.arrow_batches(df, "UTC")), O._arrow_schema(df, "UTC"))
    finally:
        sc.setLocalProperty("spark.jobGroup.id", None)
    return table, len(sc.statusTracker().getJobIdsForGroup(group))


def fetched(spark, df):
    """(the rows' ids, the Spark jobs it took)."""
    assert not O._bounded(df, O._ONE_PIECE_ROWS)
    table, jobs = taken(spark, df)
    return table.column("id").to_pylist(), jobs


def test_a_small_result_of_few_partitions_is_one_job(session):
    spark = session.spark
    df = unbounded(spark, 1000, 4).where("id % 3 <> 1")
    ids, jobs = fetched(spark, df)
    assert ids == [i for i in range(1000) if i % 3 != 1] and jobs == 1


def test_a_partition_over_its_share_sends_the_result_streaming(session, monkeypatch):
    spark = session.spark
    monkeypatch.setattr(O, "_ONE_JOB_BYTES", 4 * 2000)  # 2,000 bytes a partition: far less than 25,000 ids
    ids, jobs = fetched(spark, unbounded(spark, 100_000, 4))
    assert ids == list(range(100_000))
    assert jobs == 1 + 4  # the capped job, then a job per partition


def test_many_partitions_are_streamed(session):
    spark = session.spark
    n = O._ONE_JOB_PARTITIONS + 2
    ids, jobs = fetched(spark, unbounded(spark, 5 * n, n))
    assert ids == list(range(5 * n)) and jobs == n


def test_an_empty_result(session):
    ids, jobs = fetched(session.spark, unbounded(session.spark, 10, 2).where("id < 0"))
    assert ids == [] and jobs == 1


def local_fetch(spark, text: str):
    """(the rows of ``text`` as the server takes them, the Spark jobs it took, Spark's own toArrow)."""
    df = spark.sql(text)
    table, jobs = taken(spark, df)
    return table, jobs, df.toArrow().cast(table.schema)


def test_a_local_relation_is_taken_on_the_driver_without_a_job(session):
    spark = session.spark
    session.sql("CREATE TABLE t (id BIGINT, ts TIMESTAMP, d DECIMAL(12, 3), m MAP<STRING, ARRAY<INT>>, "
                "r STRUCT<a: INT, b: STRING>) TBLPROPERTIES ('primary-key' = 'id', 'bucket' = '2')")
    session.sql("INSERT INTO t VALUES (1, TIMESTAMP'2024-03-01 10:00:00', 1.5, map('k', array(1, NULL)), "
                "named_struct('a', 1, 'b', 'x')), (2, NULL, NULL, NULL, NULL)")
    for text, n in [("SELECT * FROM t WHERE id = 1", 1), ("SELECT * FROM t WHERE id IN (1, 2)", 2),
                    ("SELECT * FROM t WHERE id = 3", 0), ("SELECT * FROM VALUES (1, 'a') AS v(one, s)", 1)]:
        got, jobs, spark_own = local_fetch(spark, text)
        assert jobs == 0 and got.num_rows == n and got.equals(spark_own), text
    got, jobs, _ = local_fetch(spark, "SELECT sum(id) FROM range(10)")  # not a local relation: Spark's job
    assert jobs >= 1 and got.column(0).to_pylist() == [45]
