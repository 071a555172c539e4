"""The DataFrame and streaming API as paimon-spark's: tables by location, save modes, writeTo,
and a streaming sink that commits each micro-batch exactly once across restarts."""

import os
import shutil

import pytest
from pyspark.sql import functions as F

from paimon_sql.exceptions import PaimonError, SchemaError, TableAlreadyExistsError, TableNotFoundError
from paimon_sql.spark import hooks
from paimon_sql.table.table import table_at


@pytest.fixture
def api(session):
    """A session whose SparkSession's DataFrame API is served by the hooks ``connect()`` installs."""
    hooks.install(session)
    yield session
    hooks.uninstall(session.spark)


def _rows(df):
    return sorted(tuple(r) for r in df.collect())


def _read(spark, location):
    return _rows(spark.read.format("paimon").load(location))


def _snapshots(table) -> int:
    return table.snapshot_manager.latest_id() or 0


# -- reading by location -----------------------------------------------------------------------------

def test_read_by_location_path_and_file_uri(api):
    api.sql("CREATE TABLE t (id BIGINT, v STRING) TBLPROPERTIES ('primary-key' = 'id', 'bucket' = '1')")
    api.sql("INSERT INTO t VALUES (1, 'a'), (2, 'b')")
    path = api.catalog.get_table("default.t").path
    spark = api.spark
    assert _read(spark, path) == [(1, "a"), (2, "b")]
    assert _read(spark, "file://" + path) == [(1, "a"), (2, "b")]
    assert _rows(spark.read.format("paimon").option("scan.snapshot-id", "1").load(path + "$audit_log")) == \
        [("+I", 0, 1, "a"), ("+I", 1, 2, "b")]
    assert table_at(path).name == "default.t"
    with pytest.raises(Exception, match="no Paimon table at"):
        spark.read.format("paimon").load(path + "-missing").collect()
    with pytest.raises(Exception, match="give option 'warehouse'"):
        spark.read.format("paimon").load("default.t")


def test_write_and_read_by_location_on_s3(api, s3_server):
    import pyarrow.fs as pafs
    endpoint = s3_server["s3.endpoint"].split("//")[1]
    pafs.S3FileSystem(access_key="test", secret_key="test", endpoint_override=endpoint, scheme="http",
                      allow_bucket_creation=True).create_dir("frames")
    location = "s3://frames/lake/db.db/t"
    df = api.spark.createDataFrame([(1, "a"), (2, "b")], "id BIGINT, v STRING")
    df.write.format("paimon").options(**s3_server).option("primary-key", "id").option("bucket", "1").save(location)
    assert table_at(location, s3_server).schema.primary_keys == ["id"]
    assert _rows(api.spark.read.format("paimon").options(**s3_server).load(location)) == [(1, "a"), (2, "b")]


# -- df.write ... save -------------------------------------------------------------------------------

def test_save_creates_a_table_at_a_location_and_honours_every_mode(api, tmp_path):
    spark, location = api.spark, str(tmp_path / "lake" / "db.db" / "users")
    df = spark.createDataFrame([(1, "a"), (2, "b")], "id BIGINT, v STRING")
    df.write.format("paimon").option("primary-key", "id").option("bucket", "2").option("file.format", "orc") \
        .save(location)
    table = table_at(location)
    assert (table.name, table.schema.primary_keys, table.options.bucket) == ("db.users", ["id"], 2)
    assert table.options.file_format == "orc" and _read(spark, location) == [(1, "a"), (2, "b")]

    update = spark.createDataFrame([("B", 2), ("c", 3)], "v STRING, id BIGINT")  # matched by name
    with pytest.raises(TableAlreadyExistsError, match="already exists"):
        update.write.format("paimon").save(location)  # Spark's default mode: errorifexists
    update.write.format("paimon").mode("ignore").save(location)
    assert _snapshots(table) == 1
    update.write.format("paimon").mode("append").save(location)
    assert _read(spark, location) == [(1, "a"), (2, "B"), (3, "c")]
    update.write.format("paimon").mode("overwrite").save(location)
    assert _read(spark, location) == [(2, "B"), (3, "c")] and _snapshots(table) == 3


def test_save_in_the_warehouse_with_partitions_and_dynamic_overwrite(api):
    spark = api.spark
    rows = spark.createDataFrame([(1, "x", "d1"), (2, "y", "d2")], "id INT, v STRING, dt STRING")
    rows.write.format("paimon").partitionBy("dt").mode("append").save("parts")  # a name: the session's warehouse
    table = api.catalog.get_table("default.parts")
    assert table.schema.partition_keys == ["dt"] and table.schema.primary_keys == []
    again = spark.createDataFrame([(3, "z", "d2")], "id INT, v STRING, dt STRING")
    again.write.format("paimon").mode("overwrite").option("partitionOverwriteMode", "dynamic").save("default.parts")
    assert _rows(api.sql("SELECT * FROM parts")) == [(1, "x", "d1"), (3, "z", "d2")]
    again.write.format("paimon").mode("overwrite").option("warehouse", api.warehouse).save("default.parts")
    assert _rows(api.sql("SELECT * FROM parts")) == [(3, "z", "d2")]


def test_save_refuses_what_it_cannot_honour_and_leaves_no_half_made_table(api, tmp_path):
    spark = api.spark
    df = spark.createDataFrame([(1, "a")], "id BIGINT, v STRING")
    with pytest.raises(PaimonError, match="bucketBy"):
        df.write.format("paimon").bucketBy(2, "id").save(str(tmp_path / "b"))
    df.write.format("paimon").option("primary-key", "id").save("pk")
    with pytest.raises(SchemaError, match="cannot change it"):
        df.write.format("paimon").mode("append").option("primary-key", "v").save("pk")
    with pytest.raises(SchemaError, match="partitioned by"):
        df.write.format("paimon").mode("append").partitionBy("v").save("pk")
    with pytest.raises(SchemaError, match="unknown column"):
        spark.createDataFrame([(1, 2)], "id BIGINT, w INT").write.format("paimon").mode("append").save("pk")
    nulls = spark.createDataFrame([(None, "a")], "id BIGINT, v STRING")
    with pytest.raises(Exception, match="NOT NULL"):
        nulls.write.format("paimon").option("primary-key", "id").save("fresh")
    assert not api.catalog.table_exists("default.fresh")
    assert _snapshots(api.catalog.get_table("default.pk")) == 1


# -- df.writeTo --------------------------------------------------------------------------------------

def test_write_to_create_append_and_overwrites(api):
    spark = api.spark
    first = spark.createDataFrame([(1, "a", "d1"), (2, "b", "d2")], "id BIGINT, v STRING, dt STRING")
    first.writeTo("w").partitionedBy(F.col("dt")).tableProperty("primary-key", "id,dt") \
        .tableProperty("bucket", "1").create()
    table = api.catalog.get_table("default.w")
    assert (table.schema.partition_keys, table.schema.primary_keys) == (["dt"], ["id", "dt"])
    with pytest.raises(TableAlreadyExistsError):
        first.writeTo("w").create()

    spark.createDataFrame([("d1", 3, "c")], "dt STRING, id BIGINT, v STRING").writeTo("default.w").append()
    assert _rows(api.sql("SELECT * FROM w")) == [(1, "a", "d1"), (2, "b", "d2"), (3, "c", "d1")]
    spark.createDataFrame([(4, "d", "d2")], "id BIGINT, v STRING, dt STRING").writeTo("w").overwritePartitions()
    assert _rows(api.sql("SELECT * FROM w")) == [(1, "a", "d1"), (3, "c", "d1"), (4, "d", "d2")]
    spark.createDataFrame([(5, "e", "d9")], "id BIGINT, v STRING, dt STRING").writeTo("w") \
        .overwrite(F.col("dt") == "d1")  # the matching rows go, all the data's come in
    assert _rows(api.sql("SELECT * FROM w")) == [(4, "d", "d2"), (5, "e", "d9")]
    with pytest.raises(PaimonError, match="not a partition column"):
        first.writeTo("w").overwrite(F.col("id") == 1)
    with pytest.raises(PaimonError, match="equalities on partition columns"):
        first.writeTo("w").overwrite(F.col("dt") > "d1")
    assert _snapshots(table) == 4


def test_write_to_replace_and_what_is_not_ours(api):
    spark = api.spark
    with pytest.raises(TableNotFoundError):
        spark.createDataFrame([(1,)], "a INT").writeTo("r").append()
    spark.createDataFrame([(1,)], "a INT").writeTo("r").createOrReplace()
    spark.createDataFrame([("x", 2.5)], "s STRING, f DOUBLE").writeTo("r").createOrReplace()
    table = api.catalog.get_table("default.r")
    assert table.schema.field_names == ["s", "f"] and _rows(api.sql("SELECT * FROM r")) == [("x", 2.5)]
    api.sql("INSERT INTO r VALUES ('y', 1.0)")
    api.spark.read.format("paimon").load(table.path).writeTo("r").replace()  # reads the table it replaces
    assert _rows(api.sql("SELECT * FROM r")) == [("x", 2.5), ("y", 1.0)]
    with pytest.raises(PaimonError, match="clusterBy"):
        spark.createDataFrame([(1,)], "a INT").writeTo("c").clusterBy("a").create()
    assert type(spark.range(1).writeTo("c")).__name__ == "PaimonWriterV2"
    assert type(spark.range(1).writeTo("c").option("k", "v").using("parquet")).__name__ == "DataFrameWriterV2"
    assert type(spark.range(1).writeTo("nodb.t")).__name__ == "DataFrameWriterV2"  # no such warehouse database


# -- streaming ---------------------------------------------------------------------------------------

def _add_file(directory, name, lines):
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, name + ".tmp"), "w") as f:
        f.write("\n".join(lines) + "\n")
    os.rename(os.path.join(directory, name + ".tmp"), os.path.join(directory, name))


def _run_stream(spark, source, checkpoint, target, **options):
    """One run of the query: every file not yet processed, then stop."""
    stream = spark.readStream.schema("id BIGINT, v STRING").option("maxFilesPerTrigger", 1).json(source)
    writer = stream.writeStream.format("paimon").option("checkpointLocation", checkpoint)
    query = writer.options(**options).trigger(availableNow=True).start(target)
    query.awaitTermination(120)
    assert query.exception() is None


def _lose_last_spark_commit(checkpoint) -> int:
    """The driver dies after the sink committed its last micro-batch, before Spark recorded it."""
    commits = os.path.join(checkpoint, "commits")
    last = max(int(n) for n in os.listdir(commits) if n.isdigit())
    for name in (str(last), f".{last}.crc"):
        if os.path.exists(os.path.join(commits, name)):
            os.remove(os.path.join(commits, name))
    return last


def test_stream_commits_each_micro_batch_exactly_once_across_restarts(api, tmp_path):
    spark, source, checkpoint = api.spark, str(tmp_path / "in"), str(tmp_path / "cp")
    location = str(tmp_path / "events")
    _add_file(source, "1.json", ['{"id": 1, "v": "a"}', '{"id": 2, "v": "b"}'])
    _add_file(source, "2.json", ['{"id": 3, "v": "c"}'])
    _run_stream(spark, source, checkpoint, location)
    table = table_at(location)
    assert _read(spark, location) == [(1, "a"), (2, "b"), (3, "c")] and _snapshots(table) == 2
    snapshot = table.snapshot_manager.latest()
    assert snapshot.commit_identifier == 1 and snapshot.commit_user.startswith("spark-query-")

    assert _lose_last_spark_commit(checkpoint) == 1
    _run_stream(spark, source, checkpoint, location)  # replays batch 1: already in the table
    assert _read(spark, location) == [(1, "a"), (2, "b"), (3, "c")] and _snapshots(table) == 2
    assert os.path.exists(os.path.join(checkpoint, "commits", "1"))

    _add_file(source, "3.json", ['{"id": 4, "v": "d"}'])
    _run_stream(spark, source, checkpoint, location)
    assert _read(spark, location) == [(1, "a"), (2, "b"), (3, "c"), (4, "d")]
    assert table.snapshot_manager.latest().commit_identifier == 2

    shutil.rmtree(checkpoint)  # a new query at the same location: its batches start at 0 again, under a new user
    _run_stream(spark, source, checkpoint, location)
    assert len(_read(spark, location)) == 8 and table.snapshot_manager.latest().commit_user != snapshot.commit_user


def test_stream_into_a_primary_key_table_of_the_warehouse(api, tmp_path):
    spark, source, checkpoint = api.spark, str(tmp_path / "in"), str(tmp_path / "cp")
    api.sql("CREATE TABLE kv (v STRING, id BIGINT) TBLPROPERTIES ('primary-key' = 'id', 'bucket' = '2')")
    _add_file(source, "1.json", ['{"id": 1, "v": "a"}', '{"id": 2, "v": "b"}'])
    _add_file(source, "2.json", ['{"id": 1, "v": "A"}'])
    _run_stream(spark, source, checkpoint, "kv")
    assert _lose_last_spark_commit(checkpoint) == 1
    _run_stream(spark, source, checkpoint, "kv")
    table = api.catalog.get_table("default.kv")
    assert _rows(api.sql("SELECT id, v FROM kv")) == [(1, "A"), (2, "b")]
    assert [s.commit_identifier for s in table.snapshot_manager.snapshots() if s.commit_kind == "APPEND"] == [0, 1]
    stream = spark.readStream.schema("id BIGINT, v STRING").json(source)
    counts = stream.groupBy("v").count()  # complete mode: each micro-batch replaces the table
    query = counts.writeStream.format("paimon").outputMode("complete").option("checkpointLocation", checkpoint + "c") \
        .trigger(availableNow=True).start(str(tmp_path / "counts"))
    query.awaitTermination(120)
    assert _read(spark, str(tmp_path / "counts")) == [("A", 1), ("a", 1), ("b", 1)]
    assert {s.commit_kind for s in table_at(str(tmp_path / "counts")).snapshot_manager.snapshots()} == {"OVERWRITE"}
    with pytest.raises(PaimonError, match="not update"):
        stream.writeStream.format("paimon").outputMode("update").option("checkpointLocation", checkpoint + "2") \
            .toTable("kv")
