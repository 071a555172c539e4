"""Small filtered reads done on the driver (spark/driver_read.py): the same rows as Spark's readers."""

import pytest

from paimon_sql.exceptions import PaimonError
from paimon_sql.read.split_read import SplitReader
from paimon_sql.data import predicate as P
from paimon_sql.spark import driver_read
from spark.conftest import rows

SPARK_ONLY = "SET paimon.sql.driverReadBytes = 0"


def splits_line(session, text: str) -> str:
    plan = [r[0] for r in session.sql(f"EXPLAIN {text}").collect()]
    return next(line.strip() for line in "\n".join(plan).splitlines() if line.strip().startswith("splits:"))


def both_ways(session, text: str) -> list:
    """``text``'s rows read on the driver, checked against Spark's readers'."""
    assert "read on the driver" in splits_line(session, text), text
    here = sorted(rows(session, text))
    session.sql(SPARK_ONLY)
    try:
        assert "read on the driver" not in splits_line(session, text), text
        assert sorted(rows(session, text)) == here, text
    finally:
        session.sql("RESET paimon.sql.driverReadBytes")
    return here


@pytest.mark.parametrize("props", [
    "'bucket' = '2'",
    "'bucket' = '2', 'deletion-vectors.enabled' = 'true'",
    "'bucket' = '2', 'merge-engine' = 'partial-update'",
    "'bucket' = '-1'",
])
def test_point_lookups_over_merged_files(session, props):
    session.sql(f"CREATE TABLE t (id BIGINT, v STRING, n INT, dt STRING) PARTITIONED BY (dt) "
                f"TBLPROPERTIES ('primary-key' = 'id,dt', {props})")
    session.sql("INSERT INTO t SELECT id, concat('v', id), CAST(id AS INT), IF(id % 2 = 0, 'x', 'y') FROM range(200)")
    session.sql("INSERT INTO t VALUES (3, 'new', NULL, 'y'), (8, NULL, 80, 'x')")  # merged on read (or by vectors)
    partial = "partial-update" in props
    assert both_ways(session, "SELECT id, v, n FROM t WHERE id = 3") == [(3, "new", 3 if partial else None)]
    assert both_ways(session, "SELECT * FROM t WHERE id = 8") == [(8, "v8" if partial else None, 80, "x")]
    assert both_ways(session, "SELECT id FROM t WHERE id IN (3, 4, 500) AND dt = 'y'") == [(3,)]
    assert both_ways(session, "SELECT count(*) FROM t WHERE id < 10 AND n > 2") == [(7 if partial else 6,)]
    assert both_ways(session, "SELECT v FROM t WHERE id = 1000") == []


def test_append_tables_and_a_join_of_two_driver_reads(session):
    session.sql("CREATE TABLE a (k INT, s STRING)")
    session.sql("CREATE TABLE b (k INT, w DOUBLE) TBLPROPERTIES ('primary-key' = 'k', 'bucket' = '1')")
    session.sql("INSERT INTO a VALUES (1, 'one'), (2, 'two'), (2, 'deux'), (3, NULL)")
    session.sql("INSERT INTO b VALUES (1, 0.5), (2, -0.0), (3, CAST('NaN' AS DOUBLE))")
    assert both_ways(session, "SELECT s FROM a WHERE k = 2") == [("deux",), ("two",)]
    assert both_ways(session, "SELECT a.s, b.w FROM a JOIN b ON a.k = b.k WHERE a.k = 1 AND b.k = 1") == [("one", 0.5)]
    assert both_ways(session, "SELECT k FROM b WHERE w = 0.0") == [(2,)]  # -0.0 = 0.0, as Spark compares
    assert both_ways(session, "SELECT k FROM b WHERE w > 1") == [(3,)]  # NaN above every number


def test_big_reads_and_many_rows_go_to_spark(session, monkeypatch):
    session.sql("CREATE TABLE t (id INT, v STRING) TBLPROPERTIES ('primary-key' = 'id', 'bucket' = '1')")
    session.sql("INSERT INTO t SELECT id, 'v' FROM range(50)")
    assert "read on the driver" in splits_line(session, "SELECT * FROM t WHERE id = 1")
    assert "read by Spark's Parquet reader" in splits_line(session, "SELECT * FROM t")  # no filter
    session.sql("SET paimon.sql.driverReadBytes = 10")
    try:
        assert "read by Spark's Parquet reader" in splits_line(session, "SELECT * FROM t WHERE id = 1")
    finally:
        session.sql("RESET paimon.sql.driverReadBytes")
    monkeypatch.setattr(driver_read, "DRIVER_READ_ROWS", 5)
    assert "read by Spark's Parquet reader" in splits_line(session, "SELECT * FROM t WHERE id > 10")
    assert rows(session, "SELECT count(*) FROM t WHERE id > 10") == [(39,)]
    assert rows(session, "SELECT id FROM t WHERE id > 46 ORDER BY id") == [(47,), (48,), (49,)]


def test_a_bad_setting_is_one_line_naming_it(session):
    session.sql("CREATE TABLE t (id INT)")
    session.sql("SET paimon.sql.driverReadBytes = lots")
    try:
        with pytest.raises(PaimonError) as e:
            session.sql("SELECT * FROM t WHERE id = 1").collect()
        assert "paimon.sql.driverReadBytes" in str(e.value) and "\n" not in str(e.value)
    finally:
        session.sql("RESET paimon.sql.driverReadBytes")


def test_key_conjuncts_filter_each_file_before_the_merge(session):
    session.sql("CREATE TABLE t (id INT, g STRING, v INT) TBLPROPERTIES ('primary-key' = 'id', 'bucket' = '1', "
                "'merge-engine' = 'aggregation', 'fields.v.aggregate-function' = 'sum')")
    for _ in range(3):
        session.sql("INSERT INTO t VALUES (1, 'a', 1), (2, 'b', 10), (3, 'c', 100)")
    table = session.catalog.get_table("default.t")
    (split,) = table.new_scan().plan().splits
    assert len(split.files) == 3  # three overlapping files: merged
    for predicate, want in [(P.equal("id", 2), [(2, 30)]), (P.and_(P.equal("id", 3), P.greater_than("v", 200)), [(3, 300)]),
                            (P.greater_than("v", 200), [(3, 300)]), (P.equal("id", 9), [])]:
        got = SplitReader(table, ["id", "v"], predicate).read(split)
        assert sorted(zip(*got.to_pydict().values())) == want, predicate


def test_every_kind_of_column_reads_as_spark_reads_it(session):
    session.sql("SET spark.sql.session.timeZone = America/Los_Angeles")
    try:
        session.sql("CREATE TABLE t (id INT, ts TIMESTAMP, ntz TIMESTAMP_NTZ, d DATE, dec DECIMAL(20, 4), b BINARY, "
                    "a ARRAY<STRING>, m MAP<STRING, INT>, r STRUCT<x: DOUBLE, y: ARRAY<INT>>, c CHAR(3), f FLOAT) "
                    "TBLPROPERTIES ('primary-key' = 'id', 'bucket' = '1')")
        session.sql("INSERT INTO t VALUES (1, TIMESTAMP'2024-03-10 02:30:00', TIMESTAMP_NTZ'2024-03-10 02:30:00', "
                    "DATE'1969-12-31', 12345678901234.5678, X'00FF', array('a', NULL), map('k', 1), "
                    "named_struct('x', -0.0, 'y', array(1)), 'ab', 1.5), "
                    "(2, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)")
        session.sql("INSERT INTO t (id, c) VALUES (3, 'z')")
        got = both_ways(session, "SELECT * FROM t WHERE id IN (1, 2, 3)")
        assert [r[0] for r in got] == [1, 2, 3] and got[0][9] == "ab " and got[2][9] == "z  "
        assert both_ways(session, "SELECT id FROM t WHERE id < 3 AND c = 'ab'") == [(1,)]  # CHAR padding
    finally:
        session.sql("RESET spark.sql.session.timeZone")


def test_a_served_lookup_is_planned_without_compiling_and_leaves_the_session_as_it_was(session):
    """The server's rows of a driver read (jvm_classes.local_table, LocalBatches) are planned with
    interpreted expressions in that thread only: the same rows, each key's filter right, and the
    session's codegen setting untouched."""
    from paimon_sql.spark import jvm_classes
    session.sql("CREATE TABLE t (id BIGINT, v STRING) TBLPROPERTIES ('primary-key' = 'id', 'bucket' = '2')")
    session.sql("INSERT INTO t SELECT id, concat('v', id) FROM range(50)")
    for k in (3, 17, 49, 50):
        text = f"SELECT v, id * 2 AS twice FROM t WHERE id = {k} AND v LIKE 'v%'"
        assert "read on the driver" in splits_line(session, text)
        got = jvm_classes.local_table(session.sql(text))
        assert got is not None and got.to_pylist() == ([{"v": f"v{k}", "twice": 2 * k}] if k < 50 else [])
    assert session.spark.conf.get("spark.sql.codegen.factoryMode") == "FALLBACK"  # Spark's default
