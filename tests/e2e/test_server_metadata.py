"""Metadata through real clients against a paimon-sql-server: the Hive JDBC driver's DatabaseMetaData
(getTables, getColumns, getPrimaryKeys, ... from a small Java program run with pip pyspark's jars), and
a SQLAlchemy ``hive://`` engine doing what Superset does on connect. The process's server (conftest.py)."""

import contextlib
import hashlib
import os
import subprocess
from pathlib import Path

import pyspark
import pytest

from e2e.test_cli import QUICK_OPTS

JARS = Path(pyspark.__file__).parent / "jars"
CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "paimon-sql"

# Each argument after the URL names one DatabaseMetaData call and its arguments (``~`` is null); the
# program prints ``#<argument>``, the result set's column names, then its rows, tab-separated.
PROBE = r"""
import java.sql.*;

public class MetaProbe {
  static String arg(String[] p, int i) { return p[i].equals("~") ? null : p[i]; }

  public static void main(String[] args) throws Exception {
    try (Connection c = DriverManager.getConnection(args[0])) {
      DatabaseMetaData md = c.getMetaData();
      StringBuilder out = new StringBuilder();
      for (int i = 1; i < args.length; i++) {
        String[] p = args[i].split(":", -1);
        ResultSet rs;
        switch (p[0]) {
          case "tables": rs = md.getTables(null, arg(p, 1), arg(p, 2), p[3].equals("~") ? null : p[3].split(","));
            break;
          case "columns": rs = md.getColumns(null, arg(p, 1), arg(p, 2), arg(p, 3)); break;
          case "keys": rs = md.getPrimaryKeys(null, arg(p, 1), arg(p, 2)); break;
          case "schemas": rs = md.getSchemas(); break;
          case "catalogs": rs = md.getCatalogs(); break;
          case "tabletypes": rs = md.getTableTypes(); break;
          case "typeinfo": rs = md.getTypeInfo(); break;
          case "functions": rs = md.getFunctions(null, arg(p, 1), arg(p, 2)); break;
          case "xref": rs = md.getCrossReference(null, arg(p, 1), arg(p, 2), null, arg(p, 3), arg(p, 4)); break;
          default: throw new IllegalArgumentException(p[0]);
        }
        ResultSetMetaData m = rs.getMetaData();
        out.append('#').append(args[i]).append('\n');
        for (int k = 1; k <= m.getColumnCount(); k++) out.append(k > 1 ? "\t" : "").append(m.getColumnName(k));
        out.append('\n');
        while (rs.next()) {
          for (int k = 1; k <= m.getColumnCount(); k++) out.append(k > 1 ? "\t" : "").append(rs.getString(k));
          out.append('\n');
        }
        rs.close();
      }
      System.out.print(out);
    }
  }
}
"""


def _probe_classes() -> Path:
    """MetaProbe compiled once (JDK 17 javac) into the user's cache, keyed by its source."""
    target = CACHE / ("metaprobe-" + hashlib.sha1(PROBE.encode()).hexdigest()[:12])
    if not (target / "MetaProbe.class").exists():
        target.mkdir(parents=True, exist_ok=True)
        (target / "MetaProbe.java").write_text(PROBE)
        subprocess.run(["javac", "-d", str(target), str(target / "MetaProbe.java")], check=True)
    return target


def jdbc_metadata(port: int, *calls: str) -> dict:
    """{call: (column names, rows)} from the Hive JDBC driver's DatabaseMetaData."""
    url = f"jdbc:hive2://127.0.0.1:{port}/default;auth=noSasl"
    done = subprocess.run(["java", *QUICK_OPTS.split(), "-cp", f"{_probe_classes()}:{JARS}/*", "MetaProbe", url,
                           *calls], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    results = {}
    for block in done.stdout.split("#")[1:]:
        call, header, *lines = block.rstrip("\n").split("\n")
        results[call] = (header.split("\t"), [tuple(line.split("\t")) for line in lines])
    return results


@pytest.fixture(scope="module")
def server(server_port):
    """The process's server (conftest.py), with database ``db``."""
    from pyhive import hive
    with contextlib.closing(hive.connect("127.0.0.1", server_port, auth="NOSASL")) as conn:
        cursor = conn.cursor()
        for statement in [
                "CREATE DATABASE db",
                "CREATE TABLE db.orders (id INT NOT NULL COMMENT 'order id', amount DECIMAL(10,2), code CHAR(3), "
                "tags ARRAY<STRING>, dt STRING) PARTITIONED BY (dt) COMMENT 'all orders' "
                "TBLPROPERTIES ('primary-key' = 'id,dt')",
                "CREATE TABLE db.events (k BIGINT, v STRING)",
                "INSERT INTO db.orders VALUES (1, 10.50, 'abc', array('x'), '2024-01-01'), "
                "(2, 20.00, 'def', array(), '2024-01-02'), (3, NULL, NULL, NULL, '2024-01-02')",
                "USE db",  # Spark's catalog gets the database too, and a view of Spark's own in it
                "CREATE VIEW db.answers COMMENT 'one row' AS SELECT 42 AS answer"]:
            cursor.execute(statement)
    return server_port


def test_jdbc_database_metadata(server):
    got = jdbc_metadata(server, "tables:db:%:~", "tables:db:%:VIEW", "tables:db:orders$snap%:SYSTEM TABLE",
                        "columns:db:orders:%", "keys:db:orders", "keys:db:events", "schemas", "tabletypes",
                        "catalogs", "typeinfo", "functions:db:date\\_add", "xref:db:orders:db:events")
    header, rows = got["tables:db:%:~"]
    assert header[:5] == ["TABLE_CAT", "TABLE_SCHEM", "TABLE_NAME", "TABLE_TYPE", "REMARKS"] and len(header) == 10
    assert [r[1:5] for r in rows] == [("db", "events", "TABLE", ""), ("db", "orders", "TABLE", "all orders"),
                                      ("db", "answers", "VIEW", "one row")]
    assert [r[2] for r in got["tables:db:%:VIEW"][1]] == ["answers"]
    assert [r[2:4] for r in got["tables:db:orders$snap%:SYSTEM TABLE"][1]] == [("orders$snapshots", "SYSTEM TABLE")]

    header, rows = got["columns:db:orders:%"]
    assert len(header) == 23 and header[3:7] == ["COLUMN_NAME", "DATA_TYPE", "TYPE_NAME", "COLUMN_SIZE"]
    pick = [header.index(n) for n in ("COLUMN_NAME", "DATA_TYPE", "TYPE_NAME", "COLUMN_SIZE", "DECIMAL_DIGITS",
                                      "NULLABLE", "REMARKS", "ORDINAL_POSITION", "IS_NULLABLE")]
    assert [tuple(r[i] for i in pick) for r in rows] == [
        ("id", "4", "INT", "4", "0", "0", "order id", "1", "NO"),
        ("amount", "3", "DECIMAL(10,2)", "10", "2", "1", "", "2", "YES"),
        ("code", "1", "CHAR(3)", "3", "null", "1", "", "3", "YES"),
        ("tags", "2003", "ARRAY<STRING>", "null", "null", "1", "", "4", "YES"),
        ("dt", "12", "STRING", "null", "null", "0", "", "5", "NO")]

    header, rows = got["keys:db:orders"]
    assert header == ["TABLE_CAT", "TABLE_SCHEM", "TABLE_NAME", "COLUMN_NAME", "KEY_SEQ", "PK_NAME"]
    assert [r[1:5] for r in rows] == [("db", "orders", "id", "1"), ("db", "orders", "dt", "2")]
    assert got["keys:db:events"][1] == []
    assert [r[0] for r in got["schemas"][1]] == ["db", "default", "global_temp"]
    assert [r[0] for r in got["tabletypes"][1]] == ["TABLE", "VIEW", "SYSTEM TABLE"]
    assert got["catalogs"] == (["TABLE_CAT"], [])
    assert {r[0]: r[1] for r in got["typeinfo"][1]}["DECIMAL"] == "3"
    assert [r[1:3] for r in got["functions:db:date\\_add"][1]] == [("db", "date_add")]
    assert got["xref:db:orders:db:events"][1] == [] and len(got["xref:db:orders:db:events"][0]) == 14


def test_impyla_metadata_calls(server):
    """impyla's cursor calls GetSchemas, GetTables and GetColumns with regular expressions (``.*``)."""
    from impala.dbapi import connect
    conn = connect("127.0.0.1", server, auth_mechanism="NOSASL")
    try:
        cursor = conn.cursor()
        cursor.get_databases()
        assert [r[0] for r in cursor.fetchall()] == ["db", "default", "global_temp"]
        cursor.get_tables("db")
        assert [(r[2], r[3]) for r in cursor.fetchall()] == [("events", "TABLE"), ("orders", "TABLE"),
                                                             ("answers", "VIEW")]
        assert cursor.get_table_schema("orders", "db") == [("id", "INT"), ("amount", "DECIMAL(10,2)"),
                                                           ("code", "CHAR(3)"), ("tags", "ARRAY<STRING>"),
                                                           ("dt", "STRING")]
        assert cursor.table_exists("orders", "db") and not cursor.table_exists("nothing", "db")
    finally:
        conn.close()


def _inspector(port: int):
    import sqlalchemy
    engine = sqlalchemy.create_engine(f"hive://127.0.0.1:{port}/default", connect_args={"auth": "NOSASL"})
    return engine, sqlalchemy.inspect(engine)


def test_sqlalchemy_inspection_as_superset_connects(server):
    """Superset on connect: schemas, then each table's columns and primary key, then a SELECT ... LIMIT."""
    import sqlalchemy
    engine, inspector = _inspector(server)
    try:
        assert inspector.get_schema_names() == ["db", "default"]
        columns = inspector.get_columns("orders", "db")
        assert [(c["name"], str(c["type"])) for c in columns] == [
            ("id", "INTEGER"), ("amount", "DECIMAL"), ("code", "VARCHAR"), ("tags", "VARCHAR"), ("dt", "VARCHAR")]
        assert not inspector.get_pk_constraint("orders", "db")  # pyhive's dialect never asks (JDBC's does)
        with engine.connect() as conn:
            got = conn.execute(sqlalchemy.text("SELECT id, amount, dt FROM db.orders ORDER BY id LIMIT 2")).fetchall()
        assert [tuple(r) for r in got] == [(1, 10.5, "2024-01-01"), (2, 20, "2024-01-02")]
    finally:
        engine.dispose()


def test_sqlalchemy_hive_names_with_hive_listings(server):
    """pyhive's ``hive://`` dialect reads SHOW TABLES' first column as the name: with the session
    setting ``paimon.server.hiveListings`` (Superset: Engine Parameters, ``connect_args``) the server
    answers as HiveServer2 (``tab_name``), so it gets the names. Views are among them, as pyhive's
    dialect lists them with the tables (its own documented limit)."""
    import sqlalchemy
    engine = sqlalchemy.create_engine(f"hive://127.0.0.1:{server}/default", connect_args={
        "auth": "NOSASL", "configuration": {"paimon.server.hiveListings": "true"}})
    try:
        inspector = sqlalchemy.inspect(engine)
        assert sorted(inspector.get_table_names("db")) == ["answers", "events", "orders"]
        assert sorted(inspector.get_view_names("db")) == ["answers", "events", "orders"]
        assert [c["name"] for c in inspector.get_columns("events", "db")] == ["k", "v"]
    finally:
        engine.dispose()


def test_show_tables_keeps_sparks_columns_without_hive_listings(server):
    """By default SHOW TABLES answers as the shell and Spark's Thrift Server do (so pyhive's
    ``hive://`` names would be the namespace, PyHive#150; the ``paimon://`` dialect reads by name)."""
    from pyhive import hive
    with contextlib.closing(hive.connect("127.0.0.1", server, auth="NOSASL")) as conn:
        cursor = conn.cursor()
        cursor.execute("SHOW TABLES IN db")
        assert [d[0] for d in cursor.description] == ["namespace", "tableName", "isTemporary"]
        assert sorted(r[1] for r in cursor.fetchall()) == ["answers", "events", "orders"]
        cursor.execute("SET paimon.server.hiveListings=true")
        cursor.execute("SHOW VIEWS IN db")
        assert ([d[0] for d in cursor.description], cursor.fetchall()) == (["tab_name"], [("answers",)])
