"""Rows already on the driver (INSERT ... VALUES) are written there, without a Spark write job
(spark/local_write.py), into the same files and snapshot a job writes."""

import pytest

from paimon_sql.spark import native_write
from paimon_sql.spark import write as spark_write
from spark.conftest import rows


class _NoJob(Exception):
    pass


@pytest.fixture
def no_write_job(monkeypatch):
    """A write through a Spark job fails: what still succeeds was written by the driver."""
    def refuse(*args, **kwargs):
        raise _NoJob("a Spark write job")
    monkeypatch.setattr(spark_write, "_save", refuse)
    monkeypatch.setattr(native_write, "write", refuse)


@pytest.mark.parametrize("layout", ["TBLPROPERTIES ('primary-key' = 'id', 'bucket' = '2')",
                                    "PARTITIONED BY (p)",
                                    "TBLPROPERTIES ('primary-key' = 'id', 'bucket' = '-1')"],
                         ids=["fixed-bucket", "append", "dynamic-bucket"])
def test_values_are_written_by_the_driver(session, no_write_job, layout):
    session.sql(f"CREATE TABLE t (id BIGINT, v DECIMAL(5, 2), p STRING) {layout}")
    session.sql("INSERT INTO t VALUES (1, 1.5, 'a'), (2, 2, 'b')")
    session.sql("INSERT INTO t VALUES (2, 3.25, 'b')")
    expected = [(1, "1.50", "a"), (2, "3.25", "b")] if "primary-key" in layout else \
        [(1, "1.50", "a"), (2, "2.00", "b"), (2, "3.25", "b")]
    got = [(r[0], str(r[1]), r[2]) for r in rows(session, "SELECT * FROM t ORDER BY id, v")]
    assert got == expected
    kinds = [r[0] for r in rows(session, "SELECT commit_kind FROM `t$snapshots` WHERE commit_kind = 'APPEND'")]
    assert len(kinds) == 2  # one snapshot per statement
    with pytest.raises(Exception, match="a Spark write job"):  # rows Spark computes: written by its job
        session.sql("INSERT INTO t SELECT id, 1, 'c' FROM range(3)")


def test_values_keep_spark_checks(session, no_write_job):
    """Spark evaluates the stored values' casts as the job would: an overflow fails, nothing is written."""
    session.sql("CREATE TABLE t (id BIGINT, v DECIMAL(3, 1)) TBLPROPERTIES ('primary-key' = 'id', 'bucket' = '1')")
    with pytest.raises(Exception, match="(?i)overflow|cannot be represented|NUMERIC_VALUE_OUT_OF_RANGE"):
        session.sql("INSERT INTO t VALUES (1, 12345.6)")
    assert rows(session, "SELECT count(*) FROM t") == [(0,)]


def test_insert_overwrite_values_replaces_partition(session, no_write_job):
    session.sql("CREATE TABLE t (id BIGINT, p STRING) PARTITIONED BY (p)")
    session.sql("INSERT INTO t VALUES (1, 'a'), (2, 'b')")
    session.sql("INSERT OVERWRITE t PARTITION (p = 'a') VALUES (3)")
    assert rows(session, "SELECT * FROM t ORDER BY id") == [(2, "b"), (3, "a")]
