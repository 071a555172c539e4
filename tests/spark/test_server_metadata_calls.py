"""The server's metadata calls (paimon_sql/server/metadata.py) called directly on a session: the
result-set columns HiveServer2 defines, and what they list for Paimon tables, Spark's own tables
and views, temporary views and system tables."""

import pyarrow as pa
import pytest
from TCLIService import ttypes

from paimon_sql.server import metadata as M
from paimon_sql.systables import SYSTEM_TABLES

TABLES = ["TABLE_CAT", "TABLE_SCHEM", "TABLE_NAME", "TABLE_TYPE", "REMARKS", "TYPE_CAT", "TYPE_SCHEM", "TYPE_NAME",
          "SELF_REFERENCING_COL_NAME", "REF_GENERATION"]
COLUMNS = ["TABLE_CAT", "TABLE_SCHEM", "TABLE_NAME", "COLUMN_NAME", "DATA_TYPE", "TYPE_NAME", "COLUMN_SIZE",
           "BUFFER_LENGTH", "DECIMAL_DIGITS", "NUM_PREC_RADIX", "NULLABLE", "REMARKS", "COLUMN_DEF", "SQL_DATA_TYPE",
           "SQL_DATETIME_SUB", "CHAR_OCTET_LENGTH", "ORDINAL_POSITION", "IS_NULLABLE", "SCOPE_CATALOG",
           "SCOPE_SCHEMA", "SCOPE_TABLE", "SOURCE_DATA_TYPE", "IS_AUTO_INCREMENT"]


@pytest.fixture
def shop(session, tmp_path):
    """db.orders (primary key (id, dt), partitioned by dt, with comments), db.plain, and in Spark's
    catalog: an external parquet table, a view, a temporary and a global temporary view."""
    session.sql("CREATE DATABASE db")
    session.sql("USE db")  # Spark's catalog gets the database as well: Spark's own tables can live there
    session.sql("CREATE TABLE db.orders (id INT NOT NULL COMMENT 'order id', amount DECIMAL(10,2), code CHAR(3), "
                "note VARCHAR(20), ts TIMESTAMP, tags ARRAY<STRING>, attrs MAP<STRING, INT>, "
                "pos STRUCT<x: DOUBLE, y: DOUBLE>, dt STRING) PARTITIONED BY (dt) COMMENT 'all orders' "
                "TBLPROPERTIES ('primary-key' = 'id,dt')")
    session.sql("CREATE TABLE db.plain (a BIGINT, b BOOLEAN)")
    session.sql("CREATE TABLE db.o_x (a INT)")
    session.sql(f"CREATE TABLE db.sp (x INT COMMENT 'spark col', y STRING) USING parquet COMMENT 'spark table' "
                f"LOCATION '{tmp_path / 'sp'}'")
    session.sql("CREATE VIEW db.sv AS SELECT 1 AS one")
    session.sql("CREATE TEMPORARY VIEW tv AS SELECT id, amount FROM db.orders")
    session.sql("CREATE GLOBAL TEMPORARY VIEW gv AS SELECT 2 AS two")
    yield session
    session.spark.catalog.dropGlobalTempView("gv")
    session.spark_sql("DROP VIEW IF EXISTS db.sv")
    session.spark_sql("DROP TABLE IF EXISTS db.sp")


def _rows(table: pa.Table, *names):
    return [tuple(r[n] for n in names) for r in table.to_pylist()]


def test_tables_lists_paimon_tables_spark_tables_and_views(shop):
    got = M.get_tables(shop, ttypes.TGetTablesReq(schemaName="db", tableName="%"))
    assert got.schema.names == TABLES and all(t == pa.string() for t in got.schema.types)
    assert _rows(got, "TABLE_CAT", "TABLE_SCHEM", "TABLE_NAME", "TABLE_TYPE", "REMARKS") == [
        ("", "db", "o_x", "TABLE", ""), ("", "db", "orders", "TABLE", "all orders"), ("", "db", "plain", "TABLE", ""),
        ("", "db", "sp", "TABLE", "spark table"), ("", "db", "sv", "VIEW", ""),
        ("", None, "tv", "VIEW", "")]  # a local temporary view has no schema, as in Spark's Thrift Server


def test_tables_patterns_and_types(shop):
    def names(schema, table, types=None):
        req = ttypes.TGetTablesReq(schemaName=schema, tableName=table, tableTypes=types)
        return [(r["TABLE_SCHEM"], r["TABLE_NAME"]) for r in M.get_tables(shop, req).to_pylist()]
    assert names("db", "ORD%") == [("db", "orders")]  # names match ignoring case
    assert names("d_", "o_x") == [("db", "o_x")] and names("db", "_rder_") == [("db", "orders")]  # '_': one
    assert names("db", "o\\_x") == [("db", "o_x")]  # an escaped '_' is itself
    assert ("db", "orders") in names(".*", ".*")  # impyla's patterns: regular expressions,
    assert names(".*", ".*") == names(None, None)
    assert names("db", "orders|o\\_x") == [("db", "o_x"), ("db", "orders")]  # as Spark's Thrift Server reads them
    assert names("db", "pl*") == [("db", "plain")] and names("db", "(") == []  # an invalid one matches nothing
    assert names("db", "o%", ["VIEW"]) == []
    assert names("db", "%", ["VIEW"]) == [("db", "sv"), (None, "tv")]
    assert names("%", "g%") == [("global_temp", "gv")]
    assert names("", "g%") == [("global_temp", "gv")]  # an empty schema pattern is every schema
    assert names("db", "orders$s%", ["SYSTEM TABLE"]) == [("db", "orders$schemas"), ("db", "orders$snapshots"),
                                                          ("db", "orders$statistics")]
    assert ("sys", "all_table_options") in names(None, "all%", ["SYSTEM TABLE"])
    assert not [n for n in names(None, None) if "$" in n[1]]  # system tables only when asked for


def test_columns_of_a_paimon_table(shop):
    got = M.get_columns(shop, ttypes.TGetColumnsReq(schemaName="db", tableName="orders"))
    assert got.schema.names == COLUMNS
    assert got.schema.field("DATA_TYPE").type == pa.int32() and got.schema.field("BUFFER_LENGTH").type == pa.int8()
    assert got.schema.field("SOURCE_DATA_TYPE").type == pa.int16()
    assert _rows(got, "COLUMN_NAME", "DATA_TYPE", "TYPE_NAME", "COLUMN_SIZE", "DECIMAL_DIGITS", "NUM_PREC_RADIX",
                 "NULLABLE", "IS_NULLABLE", "ORDINAL_POSITION", "REMARKS") == [
        ("id", 4, "INT", 4, 0, 10, 0, "NO", 1, "order id"),
        ("amount", 3, "DECIMAL(10,2)", 10, 2, 10, 1, "YES", 2, ""),
        ("code", 1, "CHAR(3)", 3, None, None, 1, "YES", 3, ""),
        ("note", 12, "VARCHAR(20)", 20, None, None, 1, "YES", 4, ""),
        ("ts", 93, "TIMESTAMP", 8, 6, None, 1, "YES", 5, ""),
        ("tags", 2003, "ARRAY<STRING>", None, None, None, 1, "YES", 6, ""),
        ("attrs", 2000, "MAP<STRING, INT>", None, None, None, 1, "YES", 7, ""),
        ("pos", 2002, "STRUCT<x: DOUBLE, y: DOUBLE>", 16, None, None, 1, "YES", 8, ""),
        ("dt", 12, "STRING", None, None, None, 0, "NO", 9, "")]  # the partition column, a key column: NOT NULL
    assert {r["TABLE_SCHEM"] for r in got.to_pylist()} == {"db"}
    assert {r["IS_AUTO_INCREMENT"] for r in got.to_pylist()} == {"NO"}


def test_columns_patterns_spark_tables_views_and_system_tables(shop):
    def columns(schema, table, column=None):
        req = ttypes.TGetColumnsReq(schemaName=schema, tableName=table, columnName=column)
        return _rows(M.get_columns(shop, req), "TABLE_SCHEM", "TABLE_NAME", "COLUMN_NAME", "TYPE_NAME", "REMARKS")
    assert columns("db", "orders", "a%") == [("db", "orders", "amount", "DECIMAL(10,2)", ""),
                                             ("db", "orders", "attrs", "MAP<STRING, INT>", "")]
    assert columns("db", "sp") == [("db", "sp", "x", "INT", "spark col"), ("db", "sp", "y", "STRING", "")]
    assert columns("db", "sv") == [("db", "sv", "one", "INT", "")]
    assert columns(None, "tv") == [(None, "tv", "id", "INT", ""), (None, "tv", "amount", "DECIMAL(10,2)", "")]
    assert columns("global_temp", "gv") == [("global_temp", "gv", "two", "INT", "")]
    assert columns("db", "orders$snapshots", "snapshot_id") == [("db", "orders$snapshots", "snapshot_id", "BIGINT", "")]
    assert columns("db", "nothing%") == []
    every = {(r[1], r[2]) for r in columns("db", "orders$%")}  # each system table's columns, none failing
    # every system table but $row_tracking, which a table without row tracking has not
    assert {t for t, _ in every} == {f"orders${n}" for n in SYSTEM_TABLES if n != "row_tracking"}
    assert ("orders$audit_log", "rowkind") in every and ("orders$ro", "amount") in every
    assert ("sys", "all_table_options", "key", "STRING", "") in columns("sys", "all_table_options")


def test_a_table_dropped_while_listed_is_left_out(shop):
    """Another client may drop a table between its listing and its loading: the listing goes on."""
    listing = M.relations(shop, "db", "%", [M.TABLE])
    first = next(listing)  # the database's tables are listed, the first one loaded
    shop.sql("DROP TABLE db.plain")
    assert [first.name] + [r.name for r in listing] == ["o_x", "orders", "sp"]


def test_primary_keys(shop):
    def keys(schema, table):
        req = ttypes.TGetPrimaryKeysReq(schemaName=schema, tableName=table)
        got = M.get_primary_keys(shop, req)
        assert got.schema.names == ["TABLE_CAT", "TABLE_SCHEM", "TABLE_NAME", "COLUMN_NAME", "KEY_SEQ", "PK_NAME"]
        return _rows(got, "TABLE_SCHEM", "TABLE_NAME", "COLUMN_NAME", "KEY_SEQ")
    assert keys("db", "orders") == [("db", "orders", "id", 1), ("db", "orders", "dt", 2)]
    assert keys(None, "ORDERS") == [("db", "orders", "id", 1), ("db", "orders", "dt", 2)]
    assert keys("db", "plain") == [] and keys("db", "sp") == [] and keys("default", "orders") == []


def test_schemas_catalogs_and_table_types(shop):
    def schemas(pattern):
        got = M.get_schemas(shop, ttypes.TGetSchemasReq(schemaName=pattern))
        assert got.schema.names == ["TABLE_SCHEM", "TABLE_CATALOG"]
        return [r["TABLE_SCHEM"] for r in got.to_pylist()]
    assert schemas(None) == ["db", "default", "global_temp"]
    assert schemas("d%") == ["db", "default"] and schemas("DB") == ["db"]
    catalogs = M.get_catalogs(shop, ttypes.TGetCatalogsReq())
    assert catalogs.schema.names == ["TABLE_CAT"] and catalogs.num_rows == 0
    assert M.get_table_types(shop, ttypes.TGetTableTypesReq()).column("TABLE_TYPE").to_pylist() == [
        "TABLE", "VIEW", "SYSTEM TABLE"]


def test_functions_type_info_and_cross_reference(shop):
    got = M.get_functions(shop, ttypes.TGetFunctionsReq(schemaName="db", functionName="date\\_a%"))
    assert got.schema.names == ["FUNCTION_CAT", "FUNCTION_SCHEM", "FUNCTION_NAME", "REMARKS", "FUNCTION_TYPE",
                                "SPECIFIC_NAME"]
    assert _rows(got, "FUNCTION_SCHEM", "FUNCTION_NAME", "SPECIFIC_NAME") == [
        ("db", "date_add", "org.apache.spark.sql.catalyst.expressions.DateAdd")]
    assert "num_days" in got.column("REMARKS")[0].as_py()
    assert M.get_functions(shop, ttypes.TGetFunctionsReq(schemaName="db", functionName="date_a")).num_rows == 0
    plus = M.get_functions(shop, ttypes.TGetFunctionsReq(functionName="\\+|-"))
    assert _rows(plus, "FUNCTION_SCHEM", "FUNCTION_NAME") == [("db", "+"), ("db", "-"), ("default", "+"),
                                                            ("default", "-")]  # once per database
    info = M.get_type_info(shop, ttypes.TGetTypeInfoReq())
    assert info.schema.names[:3] == ["TYPE_NAME", "DATA_TYPE", "PRECISION"] and len(info.schema) == 18
    by_name = {r["TYPE_NAME"]: r for r in info.to_pylist()}
    assert (by_name["DECIMAL"]["DATA_TYPE"], by_name["DECIMAL"]["PRECISION"], by_name["INT"]["DATA_TYPE"]) == (3, 38, 4)
    assert by_name["ARRAY"]["SEARCHABLE"] == 0 and by_name["STRING"]["CASE_SENSITIVE"] is True
    cross = M.get_cross_reference(shop, ttypes.TGetCrossReferenceReq(parentTableName="orders"))
    assert cross.num_rows == 0 and len(cross.schema) == 14 and "KEQ_SEQ" in cross.schema.names
