"""Persistent views on every catalog (filesystem, SQLite, PostgreSQL, Hive, S3): the catalog calls as
Paimon names them, and the SQL statements over a real Spark session."""

import json
import uuid

import pytest

from catalog.conftest import open_catalog
from paimon_sql.data.types import DataField, parse_type
from paimon_sql.exceptions import (DatabaseNotEmptyError, PaimonError, TableAlreadyExistsError, ViewAlreadyExistsError,
                                   ViewNotFoundError)
from paimon_sql.schema.view_schema import ViewSchema

VIEW = ViewSchema.of_spark([DataField(0, "id", parse_type("INT"), "the id"), DataField(1, "c", parse_type("STRING"))],
                           "SELECT id, c FROM t WHERE id > 1", "a view", {"k": "v"})


def _same(catalog, got: ViewSchema, want: ViewSchema) -> None:
    """Hive keeps a view as Java's HiveCatalog does: no dialects, and the metastore's own parameters
    (transient_lastDdlTime) among the options."""
    assert got.fields == want.fields and got.query == want.query and got.comment == want.comment
    if type(catalog).__name__ == "HiveCatalog":
        assert got.dialects == {} and {k: v for k, v in got.options.items() if k != "transient_lastDdlTime"} == \
            want.options
    else:
        assert got == want


def test_view_calls(catalog_options):
    catalog = open_catalog(catalog_options)
    catalog.create_database("vdb")
    catalog.create_table_from_arrow("vdb.t", __import__("pyarrow").schema([("id", "int32")]))
    catalog.create_view("vdb.v", VIEW)
    again = open_catalog(catalog_options)  # what the store keeps, read by a new instance
    assert again.list_views("vdb") == ["v"] and again.list_tables("vdb") == ["t"]
    _same(again, again.get_view("vdb.v"), VIEW)
    with pytest.raises(ViewAlreadyExistsError):
        again.create_view("vdb.v", VIEW)
    again.create_view("vdb.v", VIEW, ignore_if_exists=True)
    with pytest.raises(ViewAlreadyExistsError):
        again.create_view("vdb.t", VIEW)  # a table's name
    with pytest.raises(TableAlreadyExistsError):
        again.create_table_from_arrow("vdb.v", __import__("pyarrow").schema([("id", "int32")]))

    changed = ViewSchema.of_spark(VIEW.fields[:1], "SELECT id FROM t", None, {})
    again.alter_view("vdb.v", changed)
    _same(again, open_catalog(catalog_options).get_view("vdb.v"), changed)

    again.rename_view("vdb.v", "vdb.w")
    assert again.list_views("vdb") == ["w"]
    with pytest.raises(ViewNotFoundError):
        again.get_view("vdb.v")
    with pytest.raises(DatabaseNotEmptyError):
        again.drop_database("vdb")
    again.drop_view("vdb.w")
    again.drop_view("vdb.w", ignore_if_not_exists=True)
    with pytest.raises(ViewNotFoundError):
        again.drop_view("vdb.w")
    again.create_view("vdb.x", VIEW)
    again.drop_database("vdb", cascade=True)
    assert "vdb" not in again.list_databases()
    again.create_database("vdb")
    assert again.list_views("vdb") == []  # the views went with their database


def test_view_sql(catalog_session, catalog_options):
    s = catalog_session
    db = f"views_{uuid.uuid4().hex[:8]}"  # the Hive metastore outlives the test: its own database
    s.sql(f"CREATE DATABASE {db}")
    s.sql(f"USE {db}")
    s.sql("CREATE TABLE t (id INT, c STRING)")
    s.sql("INSERT INTO t VALUES (1, 'a'), (2, 'b')")
    s.sql("CREATE VIEW v COMMENT 'two' AS SELECT id, c FROM t WHERE id > 1")
    assert [tuple(r) for r in s.sql("SELECT * FROM v").collect()] == [(2, "b")]
    s.sql("INSERT INTO t VALUES (3, 'c')")
    assert [tuple(r) for r in s.sql("SELECT id FROM v ORDER BY id").collect()] == [(2,), (3,)]
    assert [tuple(r) for r in s.sql("SHOW VIEWS").collect()] == [(db, "v", False)]
    assert [tuple(r)[:2] for r in s.sql("DESCRIBE v").collect()] == [("id", "int"), ("c", "string")]
    s.sql("ALTER VIEW v AS SELECT c FROM t WHERE id = 1")
    s.sql("ALTER VIEW v RENAME TO w")
    assert [tuple(r) for r in s.sql("SELECT * FROM w").collect()] == [("a",)]
    stored = open_catalog(catalog_options).get_view(f"{db}.w")
    assert stored.query == "SELECT c FROM t WHERE id = 1" and stored.comment == "two"
    s.sql("DROP VIEW w")
    assert open_catalog(catalog_options).list_views(db) == []
    with pytest.raises(PaimonError):
        s.sql("SELECT * FROM w")
    s.sql("USE default")
    s.sql(f"DROP DATABASE {db} CASCADE")


@pytest.mark.parametrize("catalog_options", ["sqlite", "postgres"], indirect=True)
def test_jdbc_rows_are_javas(catalog_options):
    """The JDBC catalog's row is Java's: paimon_views (catalog_key, database_name, view_name, view_schema)."""
    catalog = open_catalog(catalog_options)
    catalog.create_database("default", ignore_if_exists=True)
    catalog.create_view("default.v", VIEW)
    rows = catalog.client.query("SELECT catalog_key, database_name, view_name, view_schema FROM paimon_views "
                                "WHERE catalog_key = ?", catalog.catalog_key)
    assert [r[:3] for r in rows] == [(catalog.catalog_key, "default", "v")]
    assert json.loads(rows[0][3]) == json.loads(VIEW.to_json())


HIVE_READER = """
import sys
from pyspark.sql import SparkSession
spark = (SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false")
         .config("spark.sql.catalogImplementation", "hive").config("hive.metastore.uris", sys.argv[1]).getOrCreate())
print([tuple(r) for r in spark.sql(f"SELECT * FROM {sys.argv[2]}").collect()])
print([tuple(r) for r in spark.sql(f"DESCRIBE {sys.argv[2]}").collect()])
"""


@pytest.mark.parametrize("catalog_options", ["hive"], indirect=True)
def test_hive_reads_our_view(catalog_options):
    """A view of the Hive catalog is a VIRTUAL_VIEW Hive's own clients read: Spark's Hive catalog
    (the Hive 2.3 client) lists its columns and runs its query."""
    import subprocess
    import sys
    catalog = open_catalog(catalog_options)
    db = f"hive_view_{uuid.uuid4().hex[:8]}"
    catalog.create_database(db)
    try:
        catalog.create_view(f"{db}.v", ViewSchema.of_spark([DataField(0, "one", parse_type("INT"), "c1")],
                                                           "SELECT 1 AS one", "a view"))
        done = subprocess.run([sys.executable, "-c", HIVE_READER, catalog_options["uri"], f"{db}.v"],
                              capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr[-3000:]
        assert done.stdout.strip().splitlines()[-2:] == ["[(1,)]", "[('one', 'int', 'c1')]"]
    finally:
        catalog.drop_database(db, cascade=True)
