"""How the server takes a result from Spark (paimon_sql/server/operations.py ``arrow_batches``): a
result of few partitions in one job, each partition whole (CappedBatches in paimon-sql's jar), and
streamed a partition at a time when a partition is over its share or there are many; the rows the
same every way, in order."""

import uuid

import pyarrow as pa

from paimon_sql.server import operations as O


def fetched(spark, df):
    """(the rows' ids, the Spark jobs it took)."""
    group = f"fetch-{uuid.uuid4().hex}"
    sc = spark.sparkContext
    sc.setJobGroup(group, "a test's fetch")
    try:
        table = pa.Table.from_batches(list(O.arrow_batches(df, "UTC")), O._arrow_schema(df, "UTC"))
    finally:
        sc.setLocalProperty("spark.jobGroup.id", None)
    return table.column("id").to_pylist(), len(sc.statusTracker().getJobIdsForGroup(group))


def test_a_small_result_of_few_partitions_is_one_job(session):
    spark = session.spark
    df = spark.range(0, 1000, 1, 4).selectExpr("id", "CAST(id AS STRING) s").where("id % 3 <> 1")
    ids, jobs = fetched(spark, df)
    assert ids == [i for i in range(1000) if i % 3 != 1] and jobs == 1


def test_a_partition_over_its_share_sends_the_result_streaming(session, monkeypatch):
    spark = session.spark
    monkeypatch.setattr(O, "_ONE_JOB_BYTES", 4 * 2000)  # 2,000 bytes a partition: far less than 25,000 ids
    ids, jobs = fetched(spark, spark.range(0, 100_000, 1, 4).selectExpr("id", "CAST(id AS STRING) s"))
    assert ids == list(range(100_000))
    assert jobs == 1 + 4  # the capped job, then a job per partition


def test_many_partitions_are_streamed(session):
    spark = session.spark
    n = O._ONE_JOB_PARTITIONS + 2
    ids, jobs = fetched(spark, spark.range(0, 5 * n, 1, n).selectExpr("id"))
    assert ids == list(range(5 * n)) and jobs == n


def test_an_empty_result(session):
    ids, jobs = fetched(session.spark, session.spark.range(0, 10, 1, 2).selectExpr("id").where("id < 0"))
    assert ids == [] and jobs == 1
