"""One paimon-sql-server per pytest process for the server test modules that need no options of their own
(``server_port``): a server start (a JVM, a Spark, its Python data-source workers) and its cold first
statements cost more than most modules' tests. Each module gets the warehouse as it was before the first:
only database ``default``, empty (``reset``); so a module's listings (schemas, tables) are its own."""

import contextlib
from types import SimpleNamespace

import pytest

from e2e.server_support import start_server


@pytest.fixture(scope="session")
def shared_server(tmp_path_factory):
    """The process's server: binary transport, --auth none; Spark's own tables (``USING parquet``) in a
    directory of its own, not the working directory. ``port`` and ``warehouse``."""
    base = tmp_path_factory.mktemp("shared-server")
    warehouse = str(base / "warehouse")
    with start_server(warehouse, "--conf", f"spark.sql.warehouse.dir={base / 'spark-warehouse'}") as port:
        yield SimpleNamespace(port=port, warehouse=warehouse)


@pytest.fixture(scope="module")
def server_port(shared_server):
    """The shared server's port, for one module: the warehouse is emptied before and after it."""
    reset(shared_server.port)
    yield shared_server.port
    reset(shared_server.port)


def reset(port: int) -> None:
    """Drop, through the server (so Spark's own objects of the same names go too), every database but
    ``default`` and everything in ``default``; fails when something is left."""
    from pyhive import hive
    with contextlib.closing(hive.connect("127.0.0.1", port, auth="NOSASL")) as conn:
        cursor = conn.cursor()

        def listing():
            cursor.execute("SHOW DATABASES")
            databases = sorted(r[0] for r in cursor.fetchall())
            cursor.execute("SHOW TABLES IN default")
            return databases, sorted(r[1] for r in cursor.fetchall() if not r[2])

        databases, tables = listing()
        for db in databases:
            if db != "default":
                cursor.execute(f"DROP DATABASE `{db}` CASCADE")
        for name in tables:
            try:
                cursor.execute(f"DROP TABLE default.`{name}`")
            except hive.OperationalError:  # a view
                cursor.execute(f"DROP VIEW default.`{name}`")
        assert listing() == (["default"], []), "the shared server's warehouse could not be emptied"
