"""Postpone bucket tables (``bucket = -2``) between Java Paimon 2.0 and paimon-sql, both ways
(java/PostponeDriver.java). Java Paimon 2.0 only: postpone bucket mode is not in Java Paimon 1.0
(no ``bucket-postpone``, no PostponeUtils; 1.0 refuses ``bucket = -2``: "The number of buckets
needs to be greater than 0"), so there is nothing to compare with 1.0.

Java's core batch write on a postpone table writes the postpone bucket (Flink's postpone writer,
what a Java or pypaimon writer may leave for us); the driver's ``compact`` is paimon-spark 2.0's
SparkPostponeCompactProcedure run with Paimon's own classes. Each side reads what the other wrote
and compacted: the same rows, postpone rows invisible until a compaction assigns them buckets.

And the real thing (relay.py): paimon-spark writes postpone rows and fixed buckets and runs its
``CALL sys.compact``, paimon-sql reads, writes and compacts, paimon-spark reads again, and the other
way round: the same rows and the same buckets per partition."""

from pathlib import Path

import pyarrow as pa
import pytest
from java_paimon import Driver, ok
from oracles import OracleUnavailable
from oracles.paimon_java import driver_command
from relay import ENGINES, Relay, relays  # noqa: F401  (fixture)

from paimon_sql.catalog import load_catalog

pytestmark = pytest.mark.interop

DRIVER = Path(__file__).resolve().parent / "java" / "PostponeDriver.java"
SCHEMA = pa.schema([pa.field("k", pa.int32(), nullable=False), ("v", pa.string()),
                    pa.field("pt", pa.int32(), nullable=False)])


@pytest.fixture(scope="module")
def command():
    """The module's one JVM of the driver (each command on a catalog of its own)."""
    try:
        driver = Driver(driver_command(DRIVER, version="2.0"))
    except OracleUnavailable as e:
        pytest.fail(f"Java Paimon 2.0 is needed for this test: {e}", pytrace=False)
    with driver:
        yield driver


def java(command: Driver, warehouse: str, op: str, arg: str = ""):
    """One driver command's result; AssertionError with Java's exception when it failed."""
    return ok(command.batch({"warehouse": warehouse, "commands": [{"op": op, "arg": arg}]})[0])


def ours(warehouse: str) -> list:
    table = load_catalog(warehouse).get_table("db.t")
    return sorted([[r["k"], r["v"], r["pt"]] for r in table.to_arrow().to_pylist()], key=lambda r: (r[2], r[0]))


def buckets(warehouse: str) -> set:
    return {(e.bucket, e.total_buckets) for e in load_catalog(warehouse).get_table("db.t").new_scan().plan_entries()}


def test_java_postpone_writes_read_and_compacted_both_ways(command, warehouse):
    java(command, warehouse, "create", "")
    java(command, warehouse, "write", "1:a:0:+I;2:b:0:+I;1:a2:0:+U;3:c:1:+I")
    java(command, warehouse, "write", "2:b:0:-D;4:d:1:+I")
    assert ours(warehouse) == java(command, warehouse, "read") == []  # postpone rows: invisible
    assert buckets(warehouse) == {(-2, -2)}
    # Java's postpone files as ours: the same directory, names, Avro, sequence -1
    files = java(command, warehouse, "files")
    assert all(f[1] == -2 and f[4] == f[5] == -1 and f[7].endswith(".avro") and "-u-" in f[7] for f in files)
    java(command, warehouse, "compact", "2")
    assert ours(warehouse) == java(command, warehouse, "read") == [[1, "a2", 0], [3, "c", 1], [4, "d", 1]]
    assert buckets(warehouse) == {(0, 2), (1, 2)}
    # Java writes more postpone rows; our compaction assigns them into the partitions' 2 buckets
    java(command, warehouse, "write", "5:e:0:+I;3:c2:1:+U;1:x:0:-D;6:f:2:+I")
    assert ours(warehouse) == java(command, warehouse, "read")
    table = load_catalog(warehouse).get_table("db.t").copy({"postpone.default-bucket-num": "3"})
    assert table.compact() is not None
    expected = [[5, "e", 0], [3, "c2", 1], [4, "d", 1], [6, "f", 2]]
    assert ours(warehouse) == java(command, warehouse, "read") == expected
    totals = {(f[0], f[2]) for f in java(command, warehouse, "files")}
    assert totals == {(0, 2), (1, 2), (2, 3)}  # known partitions keep 2, the new one gets the default 3


def test_our_postpone_table_read_and_compacted_by_java(command, warehouse):
    java(command, warehouse, "create", "postpone.target-row-num-per-bucket=3")
    table = load_catalog(warehouse).get_table("db.t")
    table.write_arrow(pa.table({"k": list(range(7)), "v": [f"v{i}" for i in range(7)], "pt": [0] * 7},
                               schema=SCHEMA))  # fixed-bucket: 7 rows / 3 per bucket → 3 buckets, visible
    postponed = table.copy({"postpone.batch-write-fixed-bucket": "false"})
    postponed.write_arrow(pa.table({"k": [1, 8, 9], "v": ["late", "v8", "v9"], "pt": [0, 1, 1]}, schema=SCHEMA),
                          row_kinds=pa.array([2, 0, 0], pa.int8()))
    postponed.write_arrow(pa.table({"k": [2], "v": ["v2"], "pt": [0]}, schema=SCHEMA),
                          row_kinds=pa.array([3], pa.int8()))
    rows = [[k, f"v{k}", 0] for k in range(7)]
    assert java(command, warehouse, "read") == ours(warehouse) == rows
    assert {(f[1], f[2]) for f in java(command, warehouse, "files")} == {(0, 3), (1, 3), (2, 3), (-2, -2)}
    assert table.compact() is not None
    rows = [[0, "v0", 0], [1, "late", 0], [3, "v3", 0], [4, "v4", 0], [5, "v5", 0], [6, "v6", 0],
            [8, "v8", 1], [9, "v9", 1]]
    assert java(command, warehouse, "read") == ours(warehouse) == rows
    # partition 1 had no real buckets: its 2 postpone rows / 3 per bucket → 1 bucket, as Java computes
    assert {(f[0], f[2]) for f in java(command, warehouse, "files")} == {(0, 3), (1, 1)}
    # we write postpone rows again and Java compacts them with ours
    postponed.write_arrow(pa.table({"k": [0, 10], "v": ["new0", "v10"], "pt": [0, 2]}, schema=SCHEMA))
    java(command, warehouse, "compact", "2")
    rows = [[0, "new0", 0]] + rows[1:] + [[10, "v10", 2]]
    assert java(command, warehouse, "read") == ours(warehouse) == rows


RELAYS = {"postpone": Relay(steps=[
    """CREATE TABLE pp (k INT, v STRING, pt INT) PARTITIONED BY (pt) TBLPROPERTIES ('primary-key' = 'pt,k',
         'bucket' = '-2', 'postpone.batch-write-fixed-bucket' = 'false');
       INSERT INTO pp VALUES (1, 'a', 0), (2, 'b', 0), (3, 'c', 1);
       INSERT INTO pp VALUES (1, 'a2', 0), (4, 'd', 1);
       CREATE TABLE pf (k INT, v STRING) TBLPROPERTIES ('primary-key' = 'k', 'bucket' = '-2',
         'postpone.default-bucket-num' = '2');
       INSERT INTO pf VALUES (1, 'a'), (2, 'b'), (3, 'c');""",
    """CALL sys.compact(table => 'pp');
       INSERT INTO pp VALUES (5, 'e', 0), (3, 'c2', 1), (6, 'f', 2);
       INSERT INTO pf VALUES (2, 'B'), (4, 'd');""",
    """ALTER TABLE pp SET TBLPROPERTIES ('postpone.default-bucket-num' = '3');
       CALL sys.compact(table => 'pp');
       CALL sys.compact(table => 'pf');"""],
    reads="""SELECT * FROM pp;
             SELECT * FROM pf;
             SELECT partition, bucket, count(*) AS files, sum(record_count) AS records FROM `pp$files`
               GROUP BY partition, bucket;
             SELECT bucket, sum(record_count) AS records FROM `pf$files` GROUP BY bucket;
             SELECT partition, record_count, file_count FROM `pp$partitions`;
             SHOW PARTITIONS pp;""")}


@pytest.mark.parametrize("first", ENGINES)
def test_postpone_tables_between_paimon_spark_and_us(relays, first):
    relays.check("postpone", first)
