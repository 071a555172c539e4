"""Format tables between Java Paimon's HiveCatalog (1.0 and 2.0, each case against each) and ours on one Hive
metastore: a format table we register is a FormatTable to Java (format, location, columns, partition keys,
delimiter, comment), and one Hive registered (which Java serves as a format table) is one to us too, with
the same columns, partition keys and delimiter, written and read with Spark's own file sources.

Java runs tests/interop/java/FormatTableDriver.java (class path as test_hive_catalog_interop.py's driver).
"""

import uuid

import pytest
from catalog.hive_metastore import shared_metastore
from java_paimon import Driver, driver_command, hive_client_jars, paimon_version  # noqa: F401  (fixture: each case on 1.0 and 2.0)
from pathlib import Path

from paimon_sql.table.format_table import FormatTable

pytestmark = pytest.mark.interop

SOURCE = Path(__file__).resolve().parent / "java" / "FormatTableDriver.java"


@pytest.fixture(scope="module")
def driver(paimon_version):
    """One FormatTableDriver JVM per Java Paimon version for the module's batches (each on a HiveCatalog of its own)."""
    with Driver(driver_command(SOURCE, before=[hive_client_jars()], version=paimon_version)) as driver:
        yield driver


def _java(driver: Driver, uri: str, warehouse: str):
    """Runs one FormatTableDriver op (a batch of its own) and returns its JSON answer."""
    def run(op: str, name: str):
        key = "table" if op == "describe" else "database"
        answer, = driver.batch({"uri": uri, "warehouse": warehouse, "commands": [{"op": op, key: name}]})
        if isinstance(answer, dict) and "error" in answer:
            raise AssertionError(f"Java Paimon failed: {answer['error']}")
        return answer
    return run


@pytest.fixture
def setup(spark, driver, tmp_path):
    import paimon_sql
    from spark.conftest import release
    server = shared_metastore()
    warehouse = str(tmp_path / "warehouse")
    session = paimon_sql.connect(warehouse, spark=spark, catalog_options=dict(server.options))
    db = f"fmt_interop_{uuid.uuid4().hex[:8]}"
    session.catalog.create_database(db)
    yield session, _java(driver, server.uri, warehouse), db
    session.catalog.drop_database(db, ignore_if_not_exists=True, cascade=True)
    release(session)


@pytest.mark.parametrize("fmt", ["csv", "parquet", "orc"])
def test_java_sees_our_format_table(setup, fmt):
    session, java, db = setup
    delimiter = ", 'field-delimiter' = '|'" if fmt == "csv" else ""
    session.sql(f"CREATE TABLE {db}.ours (id INT, name STRING, dt STRING) PARTITIONED BY (dt) COMMENT 'events' "
                f"TBLPROPERTIES ('type' = 'format-table', 'file.format' = '{fmt}'{delimiter})")
    session.sql(f"INSERT INTO {db}.ours VALUES (1, 'a', 'd1')")
    described = java("describe", f"{db}.ours")
    assert described == {
        "class": "FormatTable", "format": fmt, "location": described["location"], "partitionKeys": ["dt"],
        "fields": [["id", "INT"], ["name", "STRING"], ["dt", "STRING"]],
        "fieldDelimiter": "|" if fmt == "csv" else None, "comment": "events"}
    assert described["location"].rstrip("/").endswith(f"/{db}.db/ours")
    assert "ours" in java("list", db)


def _hive_table(session, db: str, fmt: str) -> None:
    """Register ``db.theirs`` (id INT, name STRING) PARTITIONED BY (dt STRING) as Hive's own CREATE TABLE ...
    STORED AS TEXTFILE (fields terminated by ',') / PARQUET would: a plain Hive table, no Paimon parameter."""
    from paimon_sql.catalog.hive import FORMAT_CLASSES
    from paimon_sql.catalog.hive_client import ttypes
    catalog = session.catalog
    serde, input_format, output_format = FORMAT_CLASSES[fmt]
    params = {"field.delim": ",", "serialization.format": ","} if fmt == "csv" else {"serialization.format": "1"}
    table = ttypes.Table(
        tableName="theirs", dbName=db, owner="hive", tableType="MANAGED_TABLE", parameters={"comment": "events"},
        partitionKeys=[ttypes.FieldSchema(name="dt", type="string")],
        sd=ttypes.StorageDescriptor(
            cols=[ttypes.FieldSchema(name="id", type="int"), ttypes.FieldSchema(name="name", type="string")],
            location=f"{catalog.database_path(db)}/theirs", inputFormat=input_format, outputFormat=output_format,
            serdeInfo=ttypes.SerDeInfo(serializationLib=serde, parameters=params), compressed=False,
            numBuckets=-1, bucketCols=[], sortCols=[], parameters={}, storedAsSubDirectories=False))
    catalog.pool.call(lambda c: c.create_table(table), "create table")


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_java_and_we_serve_a_hive_table_as_format_table(setup, spark, fmt):
    session, java, db = setup
    _hive_table(session, db, fmt)
    described = java("describe", f"{db}.theirs")
    assert described["class"] == "FormatTable" and described["format"] == fmt
    table = session.catalog.get_table(f"{db}.theirs")
    assert isinstance(table, FormatTable) and table.format == fmt
    assert [[f.name, str(f.type)] for f in table.schema.fields] == described["fields"] == [
        ["id", "INT"], ["name", "STRING"], ["dt", "STRING"]]
    assert table.schema.partition_keys == described["partitionKeys"] == ["dt"]
    assert table.schema.comment == described["comment"] == "events"
    if fmt == "csv":
        assert table.spark_options()["sep"] == described["fieldDelimiter"] == ","
    assert "theirs" in session.catalog.list_tables(db) and "theirs" in java("list", db)
    session.sql(f"INSERT INTO {db}.theirs VALUES (1, 'a', 'd1'), (2, 'b', 'd2')")
    assert sorted(tuple(r) for r in session.sql(f"SELECT * FROM {db}.theirs").collect()) == [
        (1, "a", "d1"), (2, "b", "d2")]
    plain = spark.read.format(fmt).schema("id INT, name STRING, dt STRING").load(table.path)
    assert sorted(tuple(r) for r in plain.collect()) == [(1, "a", "d1"), (2, "b", "d2")]
