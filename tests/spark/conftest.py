"""A fresh warehouse (and paimon Session) per test over the run's one Spark session (tests/conftest.py)."""

import pytest
from conftest import spark  # noqa: F401  (re-exported: modules import it from here)


@pytest.fixture
def session(spark, warehouse):
    import paimon_sql
    s = paimon_sql.connect(warehouse, spark=spark)
    yield s
    release(s)


def release(s) -> None:
    """The run's Spark session as it was before paimon Session ``s`` (for the next test)."""
    import paimon_sql
    paimon_sql.session.route(s.spark, None)  # spark.sql is Spark's again for tests without a session
    paimon_sql.session.hooks.uninstall(s.spark)
    for view in s.temp_views():
        s.spark.catalog.dropTempView(view)
    s.spark.catalog.setCurrentDatabase("default")
    s.spark.conf.unset("spark.sql.sources.partitionOverwriteMode")
    s.spark.conf.unset("paimon.sql.driverReadBytes")


def rows(session, text):
    return [tuple(r) for r in session.sql(text).collect()]
