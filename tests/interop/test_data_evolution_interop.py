"""Data evolution (``data-evolution.enabled``) against pypaimon 2.1 and Java Apache Paimon 2.0, both
ways: a column update one side writes (a file of that column beside the rows, same row ids) is what
the other reads, through deletion vectors and our compaction.

Not in Java Paimon 1.0 (no row tracking there): the Java cases run against 2.0 only, through
tests/interop/java/RowTrackingDriver.java (its ``update`` op writes a column as paimon-spark 2.0 does);
and against paimon-spark itself (relay.py): its UPDATE, MERGE INTO and compaction of a data-evolution
table and ours in turn, each reading the other's column files (paimon-spark 2.0 cannot UPDATE a column
added after a file was written, docs/compatibility.md#data-evolution-update-added-column: that case is
tests/differential/test_written_by_both.py's).
"""

from pathlib import Path

import pytest
from java_paimon import Driver, driver_command
from relay import ENGINES, Relay, relays  # noqa: F401  (fixture)
from spark.conftest import rows, session, spark  # noqa: F401  (fixtures: one SparkSession per run)

pytestmark = pytest.mark.interop

SOURCE = Path(__file__).resolve().parent / "java" / "RowTrackingDriver.java"
TRACKED = ["id", "name", "value", "dt", "_ROW_ID", "_SEQUENCE_NUMBER"]
DE = "'row-tracking.enabled' = 'true', 'data-evolution.enabled' = 'true'"


def ours(session, table: str, columns=TRACKED, snapshot=None) -> list:
    travel = f" VERSION AS OF {snapshot}" if snapshot else ""
    return [list(r) for r in rows(session, f"SELECT {', '.join(columns)} FROM {table}{travel} ORDER BY _ROW_ID")]


def theirs(pypaimon, warehouse: str, table: str, columns=TRACKED, snapshot=None) -> list:
    out = pypaimon(op="read", warehouse=warehouse, table=table, snapshot=snapshot, columns=columns)
    return sorted(([r[c] for c in columns] for r in out), key=lambda r: r[columns.index("_ROW_ID")])


def test_we_read_pypaimon_column_update(pypaimon, session):
    pypaimon(op="scenario", warehouse=session.warehouse, name="data_evolution")
    for snapshot in (2, 3, 4):
        assert ours(session, "db.data_evolution", snapshot=snapshot) == \
            theirs(pypaimon, session.warehouse, "db.data_evolution", snapshot=snapshot)
    now = ours(session, "db.data_evolution")
    assert [(r[0], r[1]) for r in now if r[4] in (0, 4)] == [(1, "A"), (6, "F")]  # pypaimon's update
    assert 1 not in [r[4] for r in now] and len(now) == 5  # and its delete


def test_pypaimon_reads_our_column_update(pypaimon, session):
    t = "db.ode"
    session.sql("CREATE DATABASE IF NOT EXISTS db")
    session.sql(f"CREATE TABLE {t} (id BIGINT NOT NULL, name STRING, value DOUBLE, dt STRING NOT NULL) "
                f"PARTITIONED BY (dt) TBLPROPERTIES ({DE}, 'deletion-vectors.enabled' = 'true')")
    session.sql(f"INSERT INTO {t} VALUES (1, 'a', 1.0, 'x'), (2, 'b', 2.0, 'x'), (3, 'c', 3.0, 'y')")
    session.sql(f"UPDATE {t} SET name = concat(name, '!') WHERE id >= 2")
    session.sql(f"DELETE FROM {t} WHERE id = 1")
    assert theirs(pypaimon, session.warehouse, t) == ours(session, t)
    assert sorted((r[0], r[1]) for r in ours(session, t)) == [(2, "b!"), (3, "c!")]
    session.sql(f"CALL sys.compact(table => '{t}')")
    assert theirs(pypaimon, session.warehouse, t) == ours(session, t)


@pytest.fixture(scope="module")
def java():
    """``java(warehouse, commands)``: RowTrackingDriver's results on Java Paimon 2.0, one JVM per module."""
    with Driver(driver_command(SOURCE, version="2.0")) as driver:
        yield driver.on


JAVA_TRACKED = ["id", "name", "dt", "_ROW_ID", "_SEQUENCE_NUMBER"]


def test_we_read_java_column_update(java, session):
    t = "db.jde"
    results = java(session.warehouse, [
        {"op": "create", "table": t, "options": {"data-evolution.enabled": "true"}},
        {"op": "write", "table": t, "rows": [[1, "a", "x"], [2, "b", "x"], [3, "c", "y"]]},
        {"op": "update", "table": t, "column": "name", "rows": [[1, "B"], [2, "C"]]},
        {"op": "read", "table": t}, {"op": "files", "table": t}])
    written, latest, files = results[2], results[3], results[4]
    assert written >= 1 and [r[1] for r in latest] == ["a", "B", "C"]
    assert any(f[5] == ["name"] for f in files)  # Java's partial file: the column alone
    assert ours(session, t, JAVA_TRACKED) == latest


def test_java_reads_our_column_update(java, session):
    t = "db.ode2"
    session.sql("CREATE DATABASE IF NOT EXISTS db")
    session.sql(f"CREATE TABLE {t} (id BIGINT, name STRING, dt STRING) PARTITIONED BY (dt) TBLPROPERTIES ({DE})")
    session.sql(f"INSERT INTO {t} VALUES (1, 'a', 'x'), (2, 'b', 'x'), (3, 'c', 'y')")
    session.sql(f"UPDATE {t} SET name = upper(name) WHERE id <> 2")
    expected = ours(session, t, JAVA_TRACKED)
    assert sorted((r[0], r[1]) for r in expected) == [(1, "A"), (2, "b"), (3, "C")]
    assert java(session.warehouse, [{"op": "read", "table": t}])[0] == expected
    session.sql(f"CALL sys.compact(table => '{t}')")
    assert java(session.warehouse, [{"op": "read", "table": t}])[0] == ours(session, t, JAVA_TRACKED) == expected


EVOLVED = "SELECT id, name, value, dt, _ROW_ID, _SEQUENCE_NUMBER FROM de;\n"
RELAYS = {"data_evolution": Relay(steps=[
    f"""CREATE TABLE de (id BIGINT, name STRING, value DOUBLE, dt STRING) PARTITIONED BY (dt) TBLPROPERTIES ({DE});
        INSERT INTO de VALUES (1, 'a', 1.0, 'x'), (2, 'b', 2.0, 'x'), (3, 'c', 3.0, 'y');
        UPDATE de SET name = concat(name, '!') WHERE id >= 2;""",
    """UPDATE de SET value = value * 10 WHERE dt = 'x';
       MERGE INTO de USING (SELECT 3 AS id, 'C' AS name) s ON de.id = s.id WHEN MATCHED THEN UPDATE SET de.name = s.name;
       ALTER TABLE de ADD COLUMNS (note STRING);
       INSERT INTO de VALUES (4, 'd', 4.0, 'y', 'n4'), (5, 'e', 5.0, 'x', NULL);
       UPDATE de SET note = 'four' WHERE id = 4;""",
    """CALL sys.compact(table => 'de');
       UPDATE de SET name = upper(name), value = -value WHERE id IN (1, 4);"""],
    reads=[EVOLVED, EVOLVED + "SELECT id, note, _ROW_ID FROM de;"])}


@pytest.mark.parametrize("first", ENGINES)
def test_column_updates_between_paimon_spark_and_us(relays, first):
    relays.check("data_evolution", first)
