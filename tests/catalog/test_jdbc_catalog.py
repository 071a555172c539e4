"""The JDBC catalog on SQLite, a real PostgreSQL and a real MariaDB (MySQL's protocol): the rows
it keeps are Java Paimon's (paimon_tables, paimon_database_properties, paimon_distributed_locks),
names and files stay consistent through create/rename/drop, concurrent creators of one table
agree on one winner, and the commit lock excludes a second holder until released or expired."""

import multiprocessing
import os
import queue
import re
import sqlite3
import time
import uuid

import pyarrow as pa
import pytest

from catalog.mysql_server import start_mysql
from paimon_sql.catalog import load_catalog
from paimon_sql.exceptions import (CorruptMetadataError, DatabaseAlreadyExistsError, DatabaseNotEmptyError,
                                   DatabaseNotFoundError, InvalidIdentifierError, InvalidOptionError, PaimonError,
                                   TableAlreadyExistsError, TableNotFoundError)

SCHEMA = pa.schema([("id", pa.int64()), ("v", pa.string())])


@pytest.fixture
def postgres(postgres_server):
    return postgres_server  # the run's one (conftest.py)


@pytest.fixture(scope="module")
def mysql():
    server = start_mysql()
    yield server
    server.stop()


@pytest.fixture(params=["sqlite", "postgres", "mysql"])
def options(request, tmp_path):
    """Catalog options of a fresh catalog: an SQLite file, or a new catalog-key in the module's
    PostgreSQL or MariaDB (MySQL's protocol)."""
    if request.param == "sqlite":
        return {"metastore": "jdbc", "uri": f"jdbc:sqlite:{tmp_path}/catalog.sqlite"}
    return {**request.getfixturevalue(request.param).options, "catalog-key": f"k{uuid.uuid4().hex[:8]}"}


def registry_rows(options, sql, *args):
    """Rows of the catalog's database read beside the catalog (as Java would see them)."""
    uri = options["uri"]
    if uri.startswith("jdbc:sqlite:"):
        with sqlite3.connect(uri[len("jdbc:sqlite:"):]) as conn:
            return sorted(conn.execute(sql, args).fetchall())
    protocol, host_port, db = re.fullmatch(r"jdbc:(\w+)://([^/]+)/(\w+)", uri).groups()
    host, port = host_port.split(":")
    if protocol == "mysql":
        import pymysql
        with pymysql.connect(host=host, port=int(port), database=db, user=options["jdbc.user"],
                             password=options["jdbc.password"]) as conn, conn.cursor() as cur:
            cur.execute(sql.replace("?", "%s"), args)
            return sorted(cur.fetchall())
    import psycopg
    with psycopg.connect(host=host, port=port, dbname=db, user=options["jdbc.user"],
                         password=options["jdbc.password"]) as conn:
        return sorted(conn.execute(sql.replace("?", "%s"), args).fetchall())


def test_databases_and_their_properties_are_java_rows(options, warehouse):
    catalog = load_catalog(warehouse, options)
    key = options.get("catalog-key", "jdbc")
    catalog.create_database("db", properties={"comment": "sales"})
    assert catalog.list_databases() == ["db"] and catalog.database_exists("db")
    assert catalog.database_properties("db") == {"comment": "sales"}
    assert registry_rows(options, "SELECT catalog_key, database_name, property_key, property_value FROM "
                                  "paimon_database_properties WHERE catalog_key = ?", key) == [
        (key, "db", "comment", "sales"), (key, "db", "exists", "true"),
        (key, "db", "location", f"{warehouse}/db.db")]
    with pytest.raises(DatabaseAlreadyExistsError):
        catalog.create_database("db")
    catalog.create_database("db", ignore_if_exists=True)

    catalog.alter_database("db", {"comment": "all sales", "owner.team": "bi"})
    assert load_catalog(warehouse, options).database_properties("db") == {"comment": "all sales", "owner.team": "bi"}
    with pytest.raises(InvalidOptionError, match="longer than 1000"):
        catalog.alter_database("db", {"note": "x" * 1001})
    with pytest.raises(DatabaseNotFoundError):
        catalog.alter_database("nope", {"a": "b"})

    catalog.create_table_from_arrow("db.t", SCHEMA)
    with pytest.raises(DatabaseNotEmptyError):
        catalog.drop_database("db")
    catalog.drop_database("db", cascade=True)
    assert catalog.list_databases() == [] and not os.path.exists(f"{warehouse}/db.db")
    assert registry_rows(options, "SELECT * FROM paimon_database_properties WHERE catalog_key = ?", key) == []
    assert registry_rows(options, "SELECT * FROM paimon_tables WHERE catalog_key = ?", key) == []
    with pytest.raises(DatabaseNotFoundError):
        catalog.drop_database("db")


def test_catalog_keys_share_one_database_apart(options, tmp_path):
    """Two catalog-keys in one database: each sees only its own databases and tables."""
    first = load_catalog(str(tmp_path / "w1"), options)
    second = load_catalog(str(tmp_path / "w2"), {**options, "catalog-key": options.get("catalog-key", "jdbc") + "2"})
    first.create_database("db")
    second.create_database("db")
    first.create_table_from_arrow("db.only_first", SCHEMA)
    assert first.list_tables("db") == ["only_first"] and second.list_tables("db") == []
    second.drop_database("db", cascade=True)
    assert first.list_tables("db") == ["only_first"]


def test_tables_rows_and_files_stay_together(options, warehouse):
    catalog = load_catalog(warehouse, options)
    key = options.get("catalog-key", "jdbc")
    catalog.create_database("db")
    catalog.create_database("other")
    table = catalog.create_table_from_arrow("db.t", SCHEMA, primary_keys=["id"], options={"bucket": "1"})
    table.write_arrow(pa.table({"id": [1, 2], "v": ["a", "b"]}, schema=SCHEMA))
    assert registry_rows(options, "SELECT * FROM paimon_tables WHERE catalog_key = ?", key) == [(key, "db", "t")]
    assert catalog.list_tables("db") == ["t"] and catalog.table_exists("db.t")
    with pytest.raises(TableAlreadyExistsError):
        catalog.create_table_from_arrow("db.t", SCHEMA)
    assert catalog.create_table_from_arrow("db.t", SCHEMA, ignore_if_exists=True).schema.primary_keys == ["id"]

    catalog.rename_table("db.t", "other.u")
    assert catalog.list_tables("db") == [] and catalog.list_tables("other") == ["u"]
    assert not os.path.exists(f"{warehouse}/db.db/t")
    assert load_catalog(warehouse, options).get_table("other.u").to_arrow().sort_by("id")["v"].to_pylist() == ["a", "b"]
    catalog.create_table_from_arrow("db.t", SCHEMA)
    with pytest.raises(TableAlreadyExistsError):
        catalog.rename_table("db.t", "other.u")
    assert catalog.list_tables("db") == ["t"] and os.path.exists(f"{warehouse}/db.db/t/schema/schema-0")
    with pytest.raises(TableNotFoundError):
        catalog.rename_table("db.nope", "db.x")

    catalog.drop_table("other.u")
    assert catalog.list_tables("other") == [] and not os.path.exists(f"{warehouse}/other.db/u")
    with pytest.raises(TableNotFoundError):
        catalog.get_table("other.u")
    with pytest.raises(TableNotFoundError):
        catalog.drop_table("other.u")
    catalog.drop_table("other.u", ignore_if_not_exists=True)


def test_a_table_outside_the_registry_is_not_one(options, warehouse):
    """Files of a table the filesystem catalog made are not a table of the JDBC catalog, and a
    create over them is refused rather than mixed with them."""
    load_catalog(warehouse).create_database("db")
    load_catalog(warehouse).create_table_from_arrow("db.stray", SCHEMA)
    catalog = load_catalog(warehouse, options)
    catalog.create_database("db", ignore_if_exists=True)
    assert catalog.list_tables("db") == []
    with pytest.raises(TableAlreadyExistsError, match="not in the catalog"):
        catalog.create_table_from_arrow("db.stray", SCHEMA)
    assert catalog.list_tables("db") == []


def _create_race(warehouse, options, proc, names, barrier, results):
    catalog = load_catalog(warehouse, options)
    barrier.wait(60)
    for name in names:
        try:
            catalog.create_table_from_arrow(f"db.{name}", pa.schema([(f"c{proc}", pa.int64())]))
            results.put((name, proc, "won"))
        except TableAlreadyExistsError:
            results.put((name, proc, "lost"))
        except PaimonError as e:
            results.put((name, proc, repr(e)))


@pytest.mark.parametrize("lock", ["false", "true"])
def test_concurrent_creates_of_one_name_have_one_winner(options, warehouse, lock):
    """Two processes create the same tables at the same moment: each table has exactly one
    creator, whose schema it has; the other got TableAlreadyExistsError and left nothing."""
    options = {**options, "lock.enabled": lock}
    load_catalog(warehouse, options).create_database("db")
    names = [f"t{i}" for i in range(6)]
    ctx = multiprocessing.get_context("spawn")
    barrier, results = ctx.Barrier(2), ctx.Queue()
    procs = [ctx.Process(target=_create_race, args=(warehouse, options, p, names, barrier, results)) for p in (0, 1)]
    for p in procs:
        p.start()
    outcomes, deadline = [], time.monotonic() + 120
    while len(outcomes) < 2 * len(names):
        assert not any(p.exitcode for p in procs) and time.monotonic() < deadline, "a creating process failed"
        try:
            outcomes.append(results.get(timeout=1))
        except queue.Empty:
            continue
    for p in procs:
        p.join(60)
    catalog = load_catalog(warehouse, options)
    assert catalog.list_tables("db") == names
    for name in names:
        mine = sorted((proc, outcome) for n, proc, outcome in outcomes if n == name)
        assert sorted(o for _, o in mine) == ["lost", "won"], mine
        winner = next(proc for proc, o in mine if o == "won")
        assert [f.name for f in catalog.get_table(f"db.{name}").schema.fields] == [f"c{winner}"]
        assert os.listdir(f"{warehouse}/db.db/{name}/schema") == ["schema-0"]


def test_the_commit_lock_excludes_a_second_holder_until_released_or_expired(options, warehouse):
    holder = load_catalog(warehouse, {**options, "lock.enabled": "true", "lock-acquire-timeout": "2 s"})
    waiter = load_catalog(warehouse, {**options, "lock.enabled": "true", "lock-acquire-timeout": "1 s",
                                      "lock-check-max-sleep": "200 ms"})
    key = options.get("catalog-key", "jdbc")
    holder.create_database("db")
    table = holder.create_table_from_arrow("db.t", SCHEMA)
    lock_id = f"{key}.db.t"  # Java's JdbcCatalogLock id: <catalog-key>.<database>.<table>

    holder._lock.acquire(lock_id)
    assert registry_rows(options, "SELECT lock_id, expire_time_seconds FROM paimon_distributed_locks "
                                  "WHERE lock_id = ?", lock_id) == [(lock_id, 2)]
    start = time.monotonic()
    with pytest.raises(PaimonError, match=f"could not acquire the catalog lock '{lock_id}'"):
        waiter.get_table("db.t").write_arrow(pa.table({"id": [1], "v": ["x"]}, schema=SCHEMA))
    assert 1 <= time.monotonic() - start < 10
    assert table.snapshot_manager.latest() is None  # the write did not commit without the lock
    holder._lock.release(lock_id)
    waiter.get_table("db.t").write_arrow(pa.table({"id": [1], "v": ["x"]}, schema=SCHEMA))
    assert registry_rows(options, "SELECT lock_id FROM paimon_distributed_locks WHERE lock_id = ?", lock_id) == []

    holder._lock.acquire(lock_id)  # and never released: a holder that died; its row expires after 2 s
    patient = load_catalog(warehouse, {**options, "lock.enabled": "true", "lock-acquire-timeout": "20 s",
                                       "lock-check-max-sleep": "200 ms"})
    start = time.monotonic()
    patient.get_table("db.t").write_arrow(pa.table({"id": [2], "v": ["y"]}, schema=SCHEMA))
    assert 2 <= time.monotonic() - start < 15
    assert patient.get_table("db.t").snapshot_manager.latest().id == 2


def test_without_lock_enabled_there_is_no_lock_table_use(options, warehouse):
    catalog = load_catalog(warehouse, options)
    catalog.create_database("db")
    catalog.create_table_from_arrow("db.t", SCHEMA).write_arrow(pa.table({"id": [1], "v": ["x"]}, schema=SCHEMA))
    assert catalog._lock is None


def test_bad_options_are_refused_and_the_password_never_shown(postgres, warehouse, tmp_path):
    with pytest.raises(InvalidOptionError, match="not a JDBC URL"):
        load_catalog(warehouse, {"metastore": "jdbc", "uri": "postgresql://h/db"})
    with pytest.raises(InvalidOptionError, match="protocol 'oracle'"):
        load_catalog(warehouse, {"metastore": "jdbc", "uri": "jdbc:oracle:thin:@h:1521:x"})
    with pytest.raises(InvalidOptionError, match="jdbc.journal"):
        load_catalog(warehouse, {"metastore": "jdbc", "uri": f"jdbc:sqlite:{tmp_path}/c.db", "jdbc.journal": "x"})
    with pytest.raises(InvalidOptionError, match="lock.enabled"):
        load_catalog(warehouse, {"metastore": "jdbc", "uri": f"jdbc:sqlite:{tmp_path}/c.db", "lock.enabled": "yes"})
    with pytest.raises(InvalidOptionError, match="bogus"):
        load_catalog(warehouse, {**postgres.options, "jdbc.bogus": "1"})
    secret = "not-the-password-" + uuid.uuid4().hex
    with pytest.raises(PaimonError) as failed:
        load_catalog(warehouse, {**postgres.options, "jdbc.password": secret})
    assert "password authentication failed" in str(failed.value) and secret not in str(failed.value)
    without = {k: v for k, v in postgres.options.items() if k != "jdbc.password"}
    with pytest.raises(PaimonError) as failed:
        load_catalog(warehouse, {**without, "uri": postgres.uri + f"?password={secret}"})
    assert "password authentication failed" in str(failed.value) and secret not in str(failed.value)


def test_without_uri_the_catalog_is_an_sqlite_file_in_the_warehouse(warehouse):
    catalog = load_catalog(warehouse, {"metastore": "jdbc"})
    catalog.create_database("db")
    catalog.create_table_from_arrow("db.t", SCHEMA)
    path = f"{warehouse}/paimon-catalog.sqlite"
    assert registry_rows({"uri": f"jdbc:sqlite:{path}"}, "SELECT * FROM paimon_tables") == [("jdbc", "db", "t")]
    assert load_catalog(warehouse, {"metastore": "jdbc"}).list_tables("db") == ["t"]
    with pytest.raises(InvalidOptionError, match="'uri' is required"):
        load_catalog("s3://bucket/w", {"metastore": "jdbc", "s3.endpoint": "http://127.0.0.1:1"})


@pytest.fixture
def jdbc_session(spark, options, warehouse):
    """A paimon Session on the JDBC catalog (torn down as tests/spark's session)."""
    import paimon_sql
    s = paimon_sql.connect(warehouse, spark=spark, catalog_options={**options, "catalog-options-table.enabled": "true"})
    spark_databases = {d.name for d in spark.catalog.listDatabases()}
    yield s
    paimon_sql.session.route(spark, None)
    paimon_sql.session.hooks.uninstall(spark)
    spark.catalog.setCurrentDatabase("default")
    for db in {d.name for d in spark.catalog.listDatabases()} - spark_databases:
        s.spark_sql(f"DROP DATABASE `{db}` CASCADE")


def test_sql_on_the_jdbc_catalog(jdbc_session, options, warehouse):
    def rows(text):
        return [tuple(r) for r in jdbc_session.sql(text).collect()]

    key = options.get("catalog-key", "jdbc")
    jdbc_session.sql("CREATE DATABASE shop COMMENT 'the shop'")
    jdbc_session.sql("CREATE TABLE shop.orders (id BIGINT, item STRING) TBLPROPERTIES ('primary-key' = 'id', "
                     "'bucket' = '1')")
    jdbc_session.sql("INSERT INTO shop.orders VALUES (1, 'tea'), (2, 'cake')")
    jdbc_session.sql("INSERT INTO shop.orders VALUES (2, 'pie')")
    assert rows("SELECT id, item FROM shop.orders ORDER BY id") == [(1, "tea"), (2, "pie")]
    assert rows("SHOW TABLES IN shop") == [("shop", "orders", False)]
    assert registry_rows(options, "SELECT database_name, table_name FROM paimon_tables WHERE catalog_key = ?",
                         key) == [("shop", "orders")]
    assert ("Comment", "the shop") in rows("DESCRIBE DATABASE shop")

    jdbc_session.sql("ALTER TABLE shop.orders RENAME TO shop.sales")
    assert rows("SELECT count(*) FROM shop.sales") == [(2,)]
    assert registry_rows(options, "SELECT table_name FROM paimon_tables WHERE catalog_key = ?", key) == [("sales",)]
    shown = dict(rows("SELECT key, value FROM sys.catalog_options"))
    assert shown["metastore"] == "jdbc" and shown.get("jdbc.password", "******") == "******"
    assert options.get("jdbc.password", "none") not in str(shown)

    jdbc_session.sql("DROP TABLE shop.sales")
    assert rows("SHOW TABLES IN shop") == [] and not os.path.exists(f"{warehouse}/shop.db/sales")
    jdbc_session.sql("DROP DATABASE shop")
    assert "shop" not in load_catalog(warehouse, options).list_databases()


def test_a_password_in_the_uri_is_masked_in_catalog_options(postgres, warehouse):
    from paimon_sql.systables.catalog_options import CatalogOptionsTable
    options = {k: v for k, v in postgres.options.items() if k != "jdbc.password"}
    catalog = load_catalog(warehouse, {**options, "uri": f"{postgres.uri}?password={postgres.password}"})
    shown = dict(zip(*CatalogOptionsTable(catalog).rows().to_pydict().values()))
    assert shown["uri"] == f"{postgres.uri}?password=******" and postgres.password not in str(shown)
    assert catalog.list_databases() == []  # the uri's password logged in


def test_a_connection_the_server_dropped_is_opened_again(postgres, warehouse):
    """A PostgreSQL restart or idle timeout ends the catalog's connection: its next read reconnects."""
    catalog = load_catalog(warehouse, postgres.options | {"catalog-key": f"k{uuid.uuid4().hex[:8]}"})
    catalog.create_database("db")
    pid = catalog.client.query("SELECT pg_backend_pid()")[0][0]
    assert registry_rows(postgres.options, "SELECT pg_terminate_backend(?)", pid) == [(True,)]
    assert catalog.list_databases() == ["db"]
    catalog.create_table_from_arrow("db.t", SCHEMA)
    assert catalog.client.query("SELECT pg_backend_pid()")[0][0] != pid


def test_upper_case_names_are_refused_as_java_refuses_them(options, warehouse):
    catalog = load_catalog(warehouse, options)
    catalog.create_database("db")
    with pytest.raises(InvalidIdentifierError, match="table name 'Orders' has upper case"):
        catalog.create_table_from_arrow("db.Orders", SCHEMA)
    with pytest.raises(InvalidIdentifierError, match="column name 'userId' has upper case"):
        catalog.create_table_from_arrow("db.orders", pa.schema([("userId", pa.int64())]))
    catalog.create_table_from_arrow("db.orders", SCHEMA)
    with pytest.raises(InvalidIdentifierError, match="'Sales'"):
        catalog.rename_table("db.orders", "db.Sales")
    assert catalog.list_tables("db") == ["orders"] and not os.path.exists(f"{warehouse}/db.db/Orders")
    relaxed = load_catalog(warehouse, {**options, "allow-upper-case": "true"})
    relaxed.create_table_from_arrow("db.Mixed", pa.schema([("userId", pa.int64())]))
    assert relaxed.list_tables("db") == ["Mixed", "orders"]


def test_a_registered_table_whose_files_are_gone_says_so_and_can_be_dropped(options, warehouse):
    import shutil
    catalog = load_catalog(warehouse, options)
    catalog.create_database("db")
    catalog.create_table_from_arrow("db.t", SCHEMA)
    shutil.rmtree(f"{warehouse}/db.db/t")
    with pytest.raises(CorruptMetadataError, match="is in the catalog, but .* holds no schema"):
        catalog.get_table("db.t")
    catalog.drop_table("db.t")
    assert catalog.list_tables("db") == []


def test_a_schema_change_adding_an_upper_case_column_is_refused(options, warehouse):
    from paimon_sql.data.types import parse_type
    from paimon_sql.schema.schema_change import AddColumn, RenameColumn
    catalog = load_catalog(warehouse, options)
    catalog.create_database("db")
    table = catalog.create_table_from_arrow("db.t", SCHEMA)
    with pytest.raises(InvalidIdentifierError, match="column name 'newCol'"):
        table.schema_manager.commit_changes([AddColumn("newCol", parse_type("INT"))])
    with pytest.raises(InvalidIdentifierError, match="column name 'V'"):
        catalog.get_table("db.t").schema_manager.commit_changes([RenameColumn("v", "V")])
    table = catalog.get_table("db.t")
    assert table.schema.id == 0 and [f.name for f in table.schema.fields] == ["id", "v"]
    table.schema_manager.commit_changes([AddColumn("new_col", parse_type("INT"))])
    assert [f.name for f in catalog.get_table("db.t").schema.fields] == ["id", "v", "new_col"]
