"""The catalogs the suite runs on, one param each: ``filesystem``, ``sqlite`` (JDBC on an SQLite file),
``postgres`` (JDBC on a real PostgreSQL), ``hive`` (a real Hive metastore) and ``s3`` (the filesystem
catalog on an S3 warehouse served by moto_server). The servers live for the whole run; each test
gets a fresh warehouse, and what it registered in a shared server is dropped after it."""

import uuid

import pytest

CATALOGS = ["filesystem", "sqlite", "postgres", "hive", "s3"]


@pytest.fixture(scope="session")
def s3_bucket(s3_server):
    """Bucket ``bucket`` on the run's moto_server; each test's warehouse is a fresh prefix in it."""
    import pyarrow.fs as pafs
    pafs.S3FileSystem(access_key=s3_server["s3.access-key"], secret_key=s3_server["s3.secret-key"],
                      endpoint_override=s3_server["s3.endpoint"].split("//")[1], scheme="http",
                      allow_bucket_creation=True).create_dir("bucket")
    return s3_server


@pytest.fixture(scope="session")
def postgres_server():
    """The run's PostgreSQL (tests/catalog/postgres_server.py); tests keep apart by catalog-key."""
    from catalog.postgres_server import start_postgres
    server = start_postgres()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def postgres_catalog(postgres_server):
    """Catalog options of a JDBC catalog on the run's PostgreSQL."""
    return postgres_server.options


@pytest.fixture(scope="session")
def hive_catalog():
    """Catalog options of a Hive catalog on the run's metastore (tests/catalog/hive_metastore.py)."""
    from catalog.hive_metastore import shared_metastore
    return shared_metastore().options


@pytest.fixture(params=CATALOGS)
def catalog_options(request, tmp_path):
    """Paimon's catalog options of the param's catalog, ``warehouse`` included."""
    name = request.param
    warehouse = str(tmp_path / "warehouse")
    if name == "filesystem":
        options = {}
    elif name == "sqlite":
        options = {"metastore": "jdbc", "uri": f"jdbc:sqlite:{tmp_path}/catalog.db"}
    elif name == "postgres":
        # one catalog per test in the run's one database
        options = {**request.getfixturevalue("postgres_catalog"), "catalog-key": f"suite-{uuid.uuid4().hex[:8]}"}
    elif name == "hive":
        options = dict(request.getfixturevalue("hive_catalog"))
    else:
        options = dict(request.getfixturevalue("s3_bucket"))
        warehouse = f"s3://bucket/{uuid.uuid4().hex}/wh"
    options = {"warehouse": warehouse, **options}
    if name != "hive":
        yield options
        return
    before = _registered(open_catalog(options))
    yield options
    catalog = open_catalog(options)  # the metastore outlives the test: what the test registered goes
    for db, table in sorted(_registered(catalog) - before, key=lambda entry: entry[1] is None):
        if table is not None:
            catalog.drop_table(f"{db}.{table}")
        elif db != "default":
            catalog.drop_database(db, cascade=True)


def open_catalog(options: dict):
    """The core catalog of ``catalog_options`` (a new instance: what it shows is what the metastore keeps)."""
    from paimon_sql.catalog import load_catalog
    rest = dict(options)
    return load_catalog(rest.pop("warehouse"), rest)


def _registered(catalog) -> set:
    """``(database, None)`` for each database and ``(database, table)`` for each table of the catalog."""
    return {(db, None) for db in catalog.list_databases()} | {
        (db, t) for db in catalog.list_databases() for t in catalog.list_tables(db)}


@pytest.fixture
def catalog_session(spark, catalog_options):
    """A paimon Session on the param's catalog over the run's Spark session (released as tests/spark's)."""
    import paimon_sql
    from spark.conftest import release
    rest = dict(catalog_options)
    s = paimon_sql.connect(rest.pop("warehouse"), spark=spark, catalog_options=rest)
    yield s
    release(s)
