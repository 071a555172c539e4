"""Decimals written through Spark as Java Paimon stores them (issue 13): Spark's own Parquet writer
(append tables without buckets) and our writer tasks (bucketed and primary-key tables, nested types).

Spark writes decimals of precision <= 18 as FIXED_LEN_BYTE_ARRAY when the session sets
``spark.sql.parquet.writeLegacyFormat=true``; our writes must not follow it.
"""

import glob
import os
from decimal import Decimal

import pyarrow.parquet as pq
import pytest
from support import assert_java_decimal
from support import parquet_leaves as columns

DECIMALS = "a DECIMAL(5,2), b DECIMAL(18,3), c DECIMAL(30,4)"
ROW = (Decimal("-1.25"), Decimal("123456789012345.678"), Decimal("-12345678901234567890123456.7890"))


@pytest.fixture
def legacy(spark):
    """The session asks Spark for legacy Parquet (FIXED_LEN_BYTE_ARRAY decimals)."""
    spark.conf.set("spark.sql.parquet.writeLegacyFormat", "true")
    yield
    spark.conf.unset("spark.sql.parquet.writeLegacyFormat")


def data_files(table):
    return sorted(glob.glob(os.path.join(table.path, "**", "data-*.parquet"), recursive=True))


def test_spark_native_write_stores_decimals_as_java(session, legacy):
    session.sql("CREATE DATABASE db")
    session.sql(f"CREATE TABLE db.t (id INT, {DECIMALS}, dt STRING) PARTITIONED BY (dt)")
    # rows Spark computes, in a job of its own
    session.sql("INSERT INTO db.t SELECT /*+ REPARTITION(2) */ * FROM VALUES "
                "(1, -1.25, 123456789012345.678, -12345678901234567890123456.7890, 'x'), "
                "(2, NULL, NULL, NULL, 'y') AS v(id, a, b, c, dt)")
    table = session.catalog.get_table("db.t")
    paths = data_files(table)
    assert len(paths) == 2
    for path in paths:
        assert b"org.apache.spark.version" in pq.read_metadata(path).metadata  # Spark's writer wrote it
        cols = columns(path)
        assert_java_decimal(cols["a"], 5, 2)
        assert_java_decimal(cols["b"], 18, 3)
        assert_java_decimal(cols["c"], 30, 4)
    rows = [tuple(r) for r in session.sql("SELECT id, a, b, c FROM db.t ORDER BY id").collect()]
    assert rows == [(1, *ROW), (2, None, None, None)]
    assert [tuple(r) for r in session.sql("SELECT id FROM db.t WHERE a < 0").collect()] == [(1,)]


def test_spark_writer_tasks_store_keys_and_nested_decimals_as_java(session, legacy):
    session.sql("CREATE DATABASE db")
    session.sql(f"CREATE TABLE db.p (k DECIMAL(9,1) NOT NULL, {DECIMALS}, "
                "l ARRAY<DECIMAL(12,2)>, m MAP<STRING, DECIMAL(20,0)>, r STRUCT<x: DECIMAL(3,0)>) "
                "TBLPROPERTIES ('primary-key'='k', 'bucket'='2')")
    session.sql("INSERT INTO db.p VALUES (-0.5, -1.25, 123456789012345.678, -12345678901234567890123456.7890, "
                "array(1.5, NULL), map('q', 10), named_struct('x', 7))")
    [path] = data_files(session.catalog.get_table("db.p"))
    cols = columns(path)
    assert_java_decimal(cols["_KEY_k"], 9, 1)
    assert_java_decimal(cols["a"], 5, 2)
    assert_java_decimal(cols["b"], 18, 3)
    assert_java_decimal(cols["c"], 30, 4)
    assert_java_decimal(cols["l.list.element"], 12, 2)
    assert_java_decimal(cols["m.key_value.value"], 20, 0)
    assert_java_decimal(cols["r.x"], 3, 0)
    [row] = session.sql("SELECT k, a, b, c, l, m, r.x FROM db.p").collect()
    assert tuple(row) == (Decimal("-0.5"), *ROW, [Decimal("1.50"), None], {"q": Decimal(10)}, Decimal(7))
