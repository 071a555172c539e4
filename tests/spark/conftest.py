"""A fresh warehouse (and paimon Session) per test over the run's one Spark session (tests/conftest.py)."""

import pytest
from conftest import spark  # noqa: F401  (re-exported: modules import it from here)


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
