"""Smoke test of the Java oracles from tests/oracles: Java Paimon 2.0 (Maven Central) and 1.0 each
read a warehouse paimon-sql wrote through SQL — a partitioned primary-key table after an upsert,
a DELETE and a compaction, and an append table — and see the rows our SELECT sees.

The full both-ways interop suite runs against 1.0 (test_java_interop.py and its siblings)."""

import json
import subprocess
from pathlib import Path

import pytest
from oracles import OracleUnavailable
from oracles.paimon_java import driver_command
from spark.conftest import session, spark  # noqa: F401  (fixtures: one SparkSession per run)

DRIVER = Path(__file__).resolve().parent / "java" / "ReadDriver.java"
STATEMENTS = [
    "CREATE DATABASE db",
    "CREATE TABLE db.pk (id BIGINT, name STRING, amount DECIMAL(10, 2), at TIMESTAMP, dt STRING, "
    "PRIMARY KEY (id, dt) NOT ENFORCED) PARTITIONED BY (dt) WITH ('bucket' = '2')",
    "INSERT INTO db.pk VALUES (1, 'ann', 10.50, TIMESTAMP '2024-06-01 10:00:00', 'd1'), "
    "(2, 'bob', NULL, NULL, 'd1'), (3, NULL, 30.00, TIMESTAMP '2024-06-02 00:00:01', 'd2')",
    "INSERT INTO db.pk VALUES (2, 'bob', 25.25, TIMESTAMP '2024-06-01 12:30:00', 'd1'), (4, 'dan', 4.00, NULL, 'd2')",
    "DELETE FROM db.pk WHERE id = 3",
    "CALL sys.compact(table => 'db.pk')",
    "CREATE TABLE db.events (id INT, tags ARRAY<STRING>, ok BOOLEAN, score DOUBLE)",
    "INSERT INTO db.events VALUES (1, array('a', 'b'), true, 0.5), (2, NULL, NULL, NULL), (3, array(), false, -1.0)",
]
OURS = {  # each table's rows as our SELECT gives them, in the driver's JSON terms
    "db.pk": "SELECT id, name, CAST(amount AS STRING), date_format(at, 'yyyy-MM-dd''T''HH:mm'), dt FROM db.pk",
    "db.events": "SELECT id, CAST(tags AS STRING), ok, score FROM db.events",
}


def java_read(version: str, warehouse: str, tables: list) -> dict:
    """Each table's {"snapshot", "fields", "rows"} as Java Paimon ``version`` reads it."""
    try:
        command = driver_command(DRIVER, version=version)
    except OracleUnavailable as e:
        pytest.fail(f"Java Paimon {version} is needed for this test: {e}", pytrace=False)
    proc = subprocess.run(command + [warehouse, *tables], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    results = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    assert not [r for r in results if "error" in r], results
    return dict(zip(tables, results))


def comparable(table: str, rows: list) -> list:
    """Java's values in the terms of OURS: timestamps to the minute, arrays as Spark prints them."""
    def value(column, v):
        if v is None:
            return None
        if table == "db.pk" and column == 3:
            return v[:16]
        if table == "db.events" and column == 1:
            return "[" + ", ".join(v) + "]"
        return v
    return sorted(([value(i, v) for i, v in enumerate(r)] for r in rows), key=repr)


@pytest.mark.parametrize("version", ["2.0", "1.0"])
def test_java_paimon_reads_a_warehouse_paimon_sql_wrote(version, session, warehouse):
    for statement in STATEMENTS:
        session.sql(statement).collect()
    theirs = java_read(version, warehouse, list(OURS))
    for table, query in OURS.items():
        ours = sorted(([*r] for r in session.sql(query).collect()), key=repr)
        assert comparable(table, theirs[table]["rows"]) == ours, table
        assert theirs[table]["snapshot"] == session.catalog.get_table(table).snapshot_manager.latest_id()
    assert len(theirs["db.pk"]["rows"]) == 3
