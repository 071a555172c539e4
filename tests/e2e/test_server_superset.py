"""What Superset does through a SQLAlchemy ``paimon://`` engine (paimon_sql.server.dialect) against a
real paimon-sql-server: the inspector on connect and on adding a dataset (schemas, tables, views,
columns, primary keys, indexes, comments), a sample ``SELECT ... LIMIT``, and a chart's GROUP BY;
the same URL over http with a password. The process's server (conftest.py)."""

import threading

import pytest
import sqlalchemy
from e2e.server_support import Relay
from TCLIService import TCLIService

from paimon_sql.server import transport
from paimon_sql.server.auth import Authenticator, add_user


@pytest.fixture(scope="module")
def engine(server_port):
    from pyhive import hive
    port = server_port
    conn = hive.connect("127.0.0.1", port, auth="NOSASL")
    cursor = conn.cursor()
    for statement in [
            "CREATE DATABASE db",
            "CREATE TABLE db.orders (id INT NOT NULL COMMENT 'order id', amount DECIMAL(10,2), "
            "tags ARRAY<STRING> NOT NULL, dt STRING) PARTITIONED BY (dt) COMMENT 'all orders' "
            "TBLPROPERTIES ('primary-key' = 'id,dt')",
            "INSERT INTO db.orders VALUES (1, 10.50, array('x'), '2024-01-01'), (2, 20.00, array(), '2024-01-02'), "
            "(3, 5.25, array('y'), '2024-01-02'), (4, NULL, array(), '2024-01-03')",
            "USE db",  # Spark's catalog gets the database too, for its own table and view
            "CREATE TABLE db.sparky (a INT, b STRING) USING parquet COMMENT 'a Spark table'",
            "CREATE VIEW db.answers COMMENT 'one row' AS SELECT 42 AS answer",
            "CREATE TEMPORARY VIEW session_only AS SELECT 1 AS x"]:  # listed by Spark in every database
        cursor.execute(statement)
    engine = sqlalchemy.create_engine(f"paimon://superset@127.0.0.1:{port}/default?auth=NOSASL")
    yield engine
    engine.dispose()
    conn.close()


def test_inspector_as_superset_adds_a_dataset(engine):
    inspector = sqlalchemy.inspect(engine)
    assert engine.dialect.name == "paimon"
    assert inspector.get_schema_names() == ["db", "default"]
    assert inspector.get_table_names("db") == ["orders", "sparky"]
    assert inspector.get_view_names("db") == ["answers"]
    assert inspector.get_table_names() == [] and inspector.get_view_names() == []  # the engine's database: default

    columns = inspector.get_columns("orders", "db")
    assert [(c["name"], str(c["type"]), c["nullable"], c["comment"]) for c in columns] == [
        ("id", "INTEGER", False, "order id"), ("amount", "DECIMAL", True, None), ("tags", "VARCHAR", False, None),
        ("dt", "VARCHAR", False, None)]  # a primary key's columns are NOT NULL
    assert inspector.get_pk_constraint("orders", "db")["constrained_columns"] == ["id", "dt"]
    assert inspector.get_indexes("orders", "db") == [
        {"name": "partition", "column_names": ["dt"], "unique": False}]
    assert inspector.get_foreign_keys("orders", "db") == []
    assert inspector.get_table_comment("orders", "db") == {"text": "all orders"}

    assert [(c["name"], str(c["type"]), c["nullable"]) for c in inspector.get_columns("sparky", "db")] == [
        ("a", "INTEGER", True), ("b", "VARCHAR", True)]
    assert inspector.get_pk_constraint("sparky", "db")["constrained_columns"] == []
    assert inspector.get_table_comment("sparky", "db") == {"text": "a Spark table"}
    assert inspector.get_table_comment("answers", "db") == {"text": "one row"}
    assert [c["name"] for c in inspector.get_columns("answers", "db")] == ["answer"]

    assert inspector.has_table("orders", "db") and inspector.has_table("answers", "db")
    assert not inspector.has_table("nothing", "db") and not inspector.has_table("orders", "default")
    for call in inspector.get_columns, inspector.get_table_comment:
        with pytest.raises(sqlalchemy.exc.NoSuchTableError):
            call("nothing", "db")


def test_sample_and_chart_queries(engine):
    orders = sqlalchemy.table("orders", sqlalchemy.column("id"), sqlalchemy.column("amount"),
                              sqlalchemy.column("dt"), schema="db")
    with engine.connect() as conn:
        sample = conn.execute(sqlalchemy.text("SELECT id, amount, dt FROM db.orders ORDER BY id LIMIT 2")).fetchall()
        assert [tuple(r) for r in sample] == [(1, 10.5, "2024-01-01"), (2, 20, "2024-01-02")]
        # a bar chart: SUM(amount) by dt, largest first, Superset's row limit as a bound parameter
        total = sqlalchemy.func.sum(orders.c.amount).label("SUM(amount)")
        chart = (sqlalchemy.select(orders.c.dt, total).select_from(orders).group_by(orders.c.dt)
                 .order_by(sqlalchemy.desc(total)).limit(2))
        assert "GROUP BY" in str(chart.compile(engine)) and "LIMIT" in str(chart.compile(engine))
        got = conn.execute(chart).fetchall()
    assert [(r[0], float(r[1])) for r in got] == [("2024-01-02", 25.25), ("2024-01-01", 10.5)]


def test_http_transport_with_password(engine, tmp_path):
    """``?scheme=http`` (or ``https``) is pyhive's connect argument, passed on as hive:// does; the http
    listener here relays every call to the module's server."""
    users = str(tmp_path / "users")
    add_user(users, "alice", "s3cret-pw")
    listener = transport.listen(TCLIService.Processor(Relay(engine.url.port)), host="127.0.0.1", port=0,
                                transport="http", authenticator=Authenticator("plain", users))
    threading.Thread(target=listener.serve_forever, daemon=True).start()
    try:
        http = sqlalchemy.create_engine(f"paimon://alice:s3cret-pw@127.0.0.1:{listener.port}/db?scheme=http")
        assert sqlalchemy.inspect(http).get_table_names() == ["orders", "sparky"]  # the URL's database
        with http.connect() as conn:
            assert conn.execute(sqlalchemy.text("SELECT count(*) FROM orders")).scalar() == 4
        http.dispose()
    finally:
        listener.shutdown()
