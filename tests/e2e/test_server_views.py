"""Catalog views through paimon-sql-server: a view one client creates is the catalog's, so another
client's session reads it (at the table's latest snapshot), and GetTables lists it as a VIEW with its
columns and comment (impyla's metadata calls, as BI tools make them). The process's server (conftest.py)."""

import contextlib

import pytest


@pytest.fixture(scope="module")
def server(server_port):
    return server_port


def _run(port, *statements):
    from pyhive import hive
    with contextlib.closing(hive.connect("127.0.0.1", port, auth="NOSASL")) as conn:
        cursor = conn.cursor()
        out = None
        for statement in statements:
            cursor.execute(statement)
            out = cursor.fetchall() if cursor.description else None
        return out


def test_views_are_shared_and_listed_as_views(server):
    _run(server, "CREATE DATABASE vdb", "CREATE TABLE vdb.orders (id INT, amount DOUBLE)",
         "INSERT INTO vdb.orders VALUES (1, 10.0), (2, 20.0)",
         "CREATE VIEW vdb.big (order_id COMMENT 'the order', amount) COMMENT 'large orders' "
         "AS SELECT id, amount FROM orders WHERE amount > 15")
    assert _run(server, "INSERT INTO vdb.orders VALUES (3, 30.0)", "SELECT * FROM vdb.big ORDER BY order_id") == \
        [(2, 20.0), (3, 30.0)]  # another session: the catalog's view, the table's latest rows

    from impala.dbapi import connect
    conn = connect("127.0.0.1", server, auth_mechanism="NOSASL")
    try:
        cursor = conn.cursor()
        cursor.get_tables("vdb")
        assert [(r[2], r[3], r[4]) for r in cursor.fetchall()] == [("orders", "TABLE", ""),
                                                                   ("big", "VIEW", "large orders")]
        assert cursor.get_table_schema("big", "vdb") == [("order_id", "INT"), ("amount", "DOUBLE")]
    finally:
        conn.close()
