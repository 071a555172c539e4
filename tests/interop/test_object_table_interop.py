"""Object tables against real Java Apache Paimon (1.0 and 2.0, each case against each). Paimon 2.0 defines
them, and wins: an object table is a read-only listing, made at each read, of the files under its location
(the table's directory in a filesystem catalog), with 2.0's columns (path relative to the location, name,
length, mtime and atime as epoch millis, owner); no refresh, no snapshots.

- Java 2.0 reads the object table we created and lists the same rows, and the table's own schema file beside
  them, which our listing leaves out (only the user's objects); its filesystem catalog creates none.
- Java 1.0 (the 1.0-SNAPSHOT jar tests/oracles fetches, which predates 1.0.0's ObjectTable class) sees ours as
  a data table of 2.0's columns without snapshots: no rows, where 1.0 needed a refresh that 2.0 dropped. An
  object table Java 1.0 created and refreshed (1.0's 13 columns, rows from its ``object-location``) reads
  here as Java 2.0 reads it: the listing of its directory, its stored rows and ``object-location`` unused.

Java runs tests/interop/java/ObjectTableDriver.java.
"""

from pathlib import Path

import pytest
from java_paimon import Driver, driver_command, paimon_version  # noqa: F401  (fixture: each case on 1.0 and 2.0)
from spark.conftest import rows, session, spark  # noqa: F401  (fixtures: one SparkSession per run)

from paimon_sql.exceptions import PaimonError

pytestmark = pytest.mark.interop

SOURCE = Path(__file__).resolve().parent / "java" / "ObjectTableDriver.java"
OUR_ROWS = "SELECT path, name, length, mtime, atime, owner FROM {} ORDER BY path"
# ObjectTable.SCHEMA of Paimon 2.0, as Java's types print
JAVA_SCHEMA = [["path", "STRING NOT NULL"], ["name", "STRING NOT NULL"], ["length", "BIGINT NOT NULL"],
               ["mtime", "BIGINT NOT NULL"], ["atime", "BIGINT NOT NULL"], ["owner", "STRING"]]


@pytest.fixture(scope="module")
def java(paimon_version):
    """``java(warehouse, commands)``: the results of driver ``commands`` run as one batch on the
    filesystem catalog of ``warehouse``; one JVM per Java Paimon version serves the module's batches."""
    with Driver(driver_command(SOURCE, version=paimon_version)) as driver:
        yield driver.on


def ours(session, table: str) -> list:
    return [list(r) for r in rows(session, OUR_ROWS.format(table))]


def fill(location: Path, names) -> None:
    for i, name in enumerate(names):
        (location / name).parent.mkdir(parents=True, exist_ok=True)
        (location / name).write_bytes(b"x" * (i * 7 + 1))


def test_java_reads_our_object_table(java, session, paimon_version):
    session.sql("CREATE DATABASE db")
    session.sql("CREATE TABLE db.obj TBLPROPERTIES ('type' = 'object-table')")
    location = Path(session.warehouse.removeprefix("file:")) / "db.db" / "obj"
    fill(location, ["a.txt", "b/c.bin", "b/d/e.json", "f g.txt"])
    mine = ours(session, "db.obj")
    assert [r[0] for r in mine] == ["a.txt", "b/c.bin", "b/d/e.json", "f g.txt"]
    assert mine[1][1:] == ["c.bin", 8, (location / "b" / "c.bin").stat().st_mtime_ns // 1_000_000, 0, None]

    schema, read = java(session.warehouse, [{"op": "schema", "table": "db.obj"}, {"op": "read", "table": "db.obj"}])
    assert schema["fields"] == JAVA_SCHEMA  # what we stored, as Java 2.0's AbstractCatalog stores it
    assert schema["options"]["type"] == "object-table"
    if paimon_version == "1.0":  # a data table without snapshots to the 1.0-SNAPSHOT jar: no refresh ever wrote rows
        assert read == []
        return
    assert schema["class"] == "ObjectTableImpl"
    assert [r for r in read if r[0] != "schema/schema-0"] == mine  # Java 2.0's listing, less the schema file
    assert [r[:3] for r in read if r[0] == "schema/schema-0"] == [["schema/schema-0", "schema-0",
                                                                  (location / "schema" / "schema-0").stat().st_size]]


def test_we_read_an_object_table_java_created(java, session, tmp_path, paimon_version):
    location = tmp_path / "files"
    fill(location, [f"p{i % 3}/obj-{i}.dat" for i in range(6)])
    if paimon_version != "1.0":  # 2.0 wins: its filesystem catalog makes no object tables (its REST catalog does)
        with pytest.raises(AssertionError, match="FileSystemCatalog currently does not support object table"):
            java(session.warehouse, [{"op": "create", "table": "db.jobj", "location": str(location)}])
        return
    created, count, stored = java(session.warehouse, [
        {"op": "create", "table": "db.jobj", "location": str(location)}, {"op": "refresh", "table": "db.jobj"},
        {"op": "read", "table": "db.jobj"}])
    assert created == "ok" and count == 6 and len(stored) == 6  # 1.0's rows, listed from its object-location
    mine = ours(session, "db.jobj")
    root = Path(session.warehouse.removeprefix("file:")) / "db.db" / "jobj"
    table_files = sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())
    assert "schema/schema-0" in table_files and [r[0] for r in mine] == [f for f in table_files
                                                                         if not f.startswith("schema/schema-")]
    with Driver(driver_command(SOURCE, version="2.0")) as java2:  # as Java 2.0 reads it, less its schema files
        read, = java2.on(session.warehouse, [{"op": "read", "table": "db.jobj"}])
        assert [r for r in read if not r[0].startswith("schema/schema-")] == mine
    with pytest.raises(PaimonError, match="^object table db.jobj does not support write"):
        session.sql("INSERT INTO db.jobj VALUES ('x', 'x', 1, 1, 1, NULL)")
    with pytest.raises(PaimonError, match="^CALL sys.refresh_object_table: not supported by paimon-sql"):
        session.sql("CALL sys.refresh_object_table('db.jobj')")
