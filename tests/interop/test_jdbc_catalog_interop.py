"""Java Paimon's JdbcCatalog (1.0 and 2.0, each case against each) and ours on one catalog database
(SQLite file, real PostgreSQL): each lists, describes and reads what the other registered, and on SQLite each waits for the
other's commit lock (Paimon 1.0 has no PostgreSQL lock dialect).

Java 1.0's JdbcCatalog opened on an SQLite file whose tables exist leaves a result set open, so
its connection keeps a read lock while the catalog lives: another connection's write (ours, or
Java's own lock, which opens its own connections) waits until that catalog closes. So Java's
commits under lock.enabled fail on such a file, and the lock is exercised here through Java's
JdbcCatalogLock on the catalog's own connection, one process at a time writing.

Java runs tests/interop/java/JdbcCatalogDriver.java (compiled against the Paimon 1.0 or 2.0 bundle
that tests/oracles fetches; one JVM per version) with Debian's JDBC drivers
(libxerial-sqlite-jdbc-java, libpostgresql-jdbc-java): missing ones fail the test, naming the package.
"""

import os
import time
import uuid
from pathlib import Path

import pyarrow as pa
import pytest
from catalog.postgres_server import start_postgres
from java_paimon import Driver, JavaUnavailable, driver_command, paimon_version  # noqa: F401  (fixture: each case on 1.0 and 2.0)

from paimon_sql.catalog import load_catalog
from paimon_sql.exceptions import PaimonError

pytestmark = pytest.mark.interop

SOURCE = Path(__file__).resolve().parent / "java" / "JdbcCatalogDriver.java"
DRIVERS = {"sqlite": ("/usr/share/java/sqlite-jdbc.jar", "libxerial-sqlite-jdbc-java"),
           "postgres": ("/usr/share/java/postgresql.jar", "libpostgresql-jdbc-java")}
SCHEMA = pa.schema([("id", pa.int64()), ("v", pa.string())])


class JavaJdbcCatalog:
    """Runs JdbcCatalogDriver commands on one Java JdbcCatalog: each call a batch (a catalog of its
    own) in the module's one JVM, which has the JDBC drivers of both backends."""

    def __init__(self, driver: Driver, backend: str):
        jar, package = DRIVERS[backend]
        if not os.path.exists(jar):
            raise JavaUnavailable(f"{jar} is missing: apt-get install {package}")
        self.driver = driver

    def start(self, catalog: dict, commands: list) -> None:
        """Starts a batch; its answers come from ``self.driver.answer()`` and ``rest()``."""
        self.driver.send({"catalog": catalog, "commands": commands})

    def run(self, catalog: dict, commands: list) -> list:
        return self.driver.batch({"catalog": catalog, "commands": commands})


@pytest.fixture(scope="module")
def driver(paimon_version):
    jars = [jar for jar, _ in DRIVERS.values() if os.path.exists(jar)]  # a missing one fails its backend's tests
    with Driver(driver_command(SOURCE, after=jars, version=paimon_version)) as driver:
        yield driver


@pytest.fixture(scope="module")
def postgres():
    server = start_postgres()
    yield server
    server.stop()


@pytest.fixture(params=["sqlite", "postgres"])
def backend(request, driver, tmp_path):
    """(our catalog options, Java's catalog options, Java runner) of one fresh catalog."""
    warehouse = str(tmp_path / "warehouse")
    if request.param == "sqlite":
        ours = {"metastore": "jdbc", "uri": f"jdbc:sqlite:{tmp_path}/catalog.sqlite"}
    else:
        ours = {**request.getfixturevalue("postgres").options, "catalog-key": f"k{uuid.uuid4().hex[:8]}"}
    return warehouse, ours, {"warehouse": warehouse, **ours}, JavaJdbcCatalog(driver, request.param)


def test_java_lists_and_reads_what_we_registered(backend):
    warehouse, ours, theirs, java = backend
    catalog = load_catalog(warehouse, ours)
    catalog.create_database("sales", properties={"comment": "all sales"})
    table = catalog.create_table_from_arrow("sales.orders", SCHEMA, primary_keys=["id"], options={"bucket": "1"})
    table.write_arrow(pa.table({"id": [1, 2, 3], "v": ["a", "b", "c"]}, schema=SCHEMA))
    catalog.create_table_from_arrow("sales.gone", SCHEMA)
    catalog.create_table_from_arrow("sales.before", SCHEMA)
    catalog.drop_table("sales.gone")
    catalog.rename_table("sales.before", "sales.after")

    databases, tables, props, rows = java.run(theirs, [
        {"op": "databases"}, {"op": "tables", "database": "sales"}, {"op": "properties", "database": "sales"},
        {"op": "read", "table": "sales.orders"}])
    assert set(databases) == {"default", "sales"} if "default" in databases else set(databases) == {"sales"}
    assert sorted(tables) == ["after", "orders"]
    assert props == {"comment": "all sales", "location": f"{warehouse}/sales.db"}
    assert sorted(rows) == [[1, "a"], [2, "b"], [3, "c"]]

    # Java writes into our table; we read its rows
    assert java.run(theirs, [{"op": "write", "table": "sales.orders", "rows": [[2, "B"], [4, "d"]]}]) == ["ok"]
    got = load_catalog(warehouse, ours).get_table("sales.orders").to_arrow().sort_by("id")
    assert got["v"].to_pylist() == ["a", "B", "c", "d"]


def test_we_list_and_read_what_java_registered(backend):
    warehouse, ours, theirs, java = backend
    results = java.run(theirs, [
        {"op": "create_database", "database": "crm", "properties": {"comment": "customers", "team": "bi"}},
        {"op": "create_table", "table": "crm.people", "fields": [["id", "BIGINT"], ["v", "STRING"]],
         "primary_keys": ["id"]},
        {"op": "write", "table": "crm.people", "rows": [[1, "ann"], [2, "bob"]]},
        {"op": "create_table", "table": "crm.old", "fields": [["id", "BIGINT"], ["v", "STRING"]]},
        {"op": "rename", "table": "crm.old", "to": "crm.new"},
        {"op": "create_table", "table": "crm.tmp", "fields": [["id", "BIGINT"], ["v", "STRING"]]},
        {"op": "drop", "table": "crm.tmp"}])
    assert results == ["ok"] * 7
    catalog = load_catalog(warehouse, ours)
    assert catalog.list_databases() == ["crm"]
    assert catalog.database_properties("crm") == {"comment": "customers", "team": "bi"}
    assert catalog.list_tables("crm") == ["new", "people"]
    people = catalog.get_table("crm.people")
    assert people.schema.primary_keys == ["id"]
    assert people.to_arrow().sort_by("id")["v"].to_pylist() == ["ann", "bob"]
    assert not os.path.exists(f"{warehouse}/crm.db/tmp") and os.path.exists(f"{warehouse}/crm.db/new/schema")

    # we change what Java made; Java sees it
    catalog.alter_database("crm", {"team": "sales"})
    people.write_arrow(pa.table({"id": [3], "v": ["cy"]}, schema=SCHEMA))
    catalog.drop_table("crm.new")
    props, tables, rows = java.run(theirs, [{"op": "properties", "database": "crm"},
                                            {"op": "tables", "database": "crm"},
                                            {"op": "read", "table": "crm.people"}])
    assert props["team"] == "sales" and tables == ["people"]
    assert sorted(rows) == [[1, "ann"], [2, "bob"], [3, "cy"]]


def test_java_and_we_wait_for_each_others_commit_lock_on_sqlite(driver, tmp_path):
    warehouse = str(tmp_path / "warehouse")
    ours = {"metastore": "jdbc", "uri": f"jdbc:sqlite:{tmp_path}/catalog.sqlite", "lock.enabled": "true"}
    java = JavaJdbcCatalog(driver, "sqlite")
    catalog = load_catalog(warehouse, {**ours, "lock-acquire-timeout": "1 s", "lock-check-max-sleep": "200 ms"})
    catalog.create_database("db")
    catalog.create_table_from_arrow("db.t", SCHEMA)

    java.start({"warehouse": warehouse, **ours}, [{"op": "hold_lock", "table": "db.t", "until_released": True}])
    try:
        assert java.driver.answer() == {"held": True}
        with pytest.raises(PaimonError, match="could not acquire the catalog lock 'jdbc.db.t'"):
            catalog.get_table("db.t").write_arrow(pa.table({"id": [1], "v": ["x"]}, schema=SCHEMA))
        assert catalog.get_table("db.t").snapshot_manager.latest() is None
    finally:
        java.driver.write("release")
    assert java.driver.rest() == ["ok"]  # Java released it (its catalog closed with the batch)
    waiting = load_catalog(warehouse, {**ours, "lock-acquire-timeout": "60 s", "lock-check-max-sleep": "200 ms"})
    waiting.get_table("db.t").write_arrow(pa.table({"id": [1], "v": ["x"]}, schema=SCHEMA))

    # we hold it: Java's JdbcCatalogLock waits for its timeout and gives up
    lock_id = "jdbc.db.t"
    waiting._lock.acquire(lock_id)
    try:
        start = time.monotonic()
        result, = java.run({"warehouse": warehouse, **ours},
                           [{"op": "hold_lock", "table": "db.t", "seconds": 0, "timeout_ms": 1000}])
        assert "Acquire lock failed" in result["error"] and time.monotonic() - start > 1
    finally:
        waiting._lock.release(lock_id)
    assert java.run({"warehouse": warehouse, **ours},
                    [{"op": "hold_lock", "table": "db.t", "seconds": 0, "timeout_ms": 1000}]) == [{"held": True}, "ok"]
