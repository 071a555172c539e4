"""One local Spark session for the whole test run; a fresh warehouse (and paimon Session) per test."""

import os
import sys

import pytest


@pytest.fixture(scope="session")
def spark():
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession
    spark = (SparkSession.builder.master("local[2]").appName("paimon-sql-tests")
             .config("spark.sql.shuffle.partitions", "2").config("spark.ui.enabled", "false")
             .config("spark.ui.showConsoleProgress", "false").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    yield spark
    spark.stop()


@pytest.fixture
def session(spark, warehouse):
    import paimon_sql
    s = paimon_sql.connect(warehouse, spark=spark)
    yield s
    paimon_sql.session.route(spark, None)  # spark.sql is Spark's again for tests without a session
    paimon_sql.session.hooks.uninstall(spark)
    for view in s.temp_views():
        spark.catalog.dropTempView(view)
    spark.catalog.setCurrentDatabase("default")
    spark.conf.unset("spark.sql.sources.partitionOverwriteMode")


def rows(session, text):
    return [tuple(r) for r in session.sql(text).collect()]
