"""The Hive catalog against a real Hive metastore (tests/catalog/hive_metastore.py, the run's one:
conftest.py's ``hive_catalog``). What the metastore holds is read with the Thrift client library
directly, never through our catalog."""

import os
import threading
import time
import uuid
from urllib.parse import urlparse

import pyarrow as pa
import pytest
from catalog.hive_metastore import metastore_client
from pymetastore.hive_metastore import ttypes

import paimon_sql
from paimon_sql.catalog import FileSystemCatalog, Identifier, load_catalog
from paimon_sql.data.types import DataField, parse_type
from paimon_sql.exceptions import (DatabaseAlreadyExistsError, DatabaseNotEmptyError, InvalidIdentifierError,
                                   InvalidOptionError, PaimonError, TableNotFoundError)
from paimon_sql.schema.schema_change import AddColumn, SetOption
from paimon_sql.schema.table_schema import TableSchema

PARTITIONED = {"metastore.partitioned-table": "true"}
HMS_STATS = ("transient_lastDdlTime", "numFiles", "totalSize")  # parameters the metastore adds itself


@pytest.fixture(scope="module")
def hms(hive_catalog):
    """A Thrift client of the metastore, from the client library (not our catalog)."""
    with metastore_client(hive_catalog["uri"]) as client:
        yield client


@pytest.fixture
def db():
    return f"db_{uuid.uuid4().hex[:8]}"  # the metastore is shared by the whole run


@pytest.fixture
def catalog(tmp_path, hive_catalog, db):
    cat = load_catalog(str(tmp_path / "warehouse"), dict(hive_catalog))
    yield cat
    cat.drop_database(db, ignore_if_not_exists=True, cascade=True)


def _schema(columns, partition_keys=(), primary_keys=(), options=None, comment=None):
    fields = [DataField(i, name, parse_type(t), desc) for i, (name, t, desc) in enumerate(columns)]
    return TableSchema.create(fields, list(partition_keys), list(primary_keys), options, comment)


ROWS = pa.table({"id": pa.array([1, 2, 3], pa.int32()), "v": ["a", "b", "c"], "dt": ["d1", "d2", "d1"]})
BASIC = [("id", "INT", None), ("v", "STRING", None), ("dt", "STRING", None)]


def test_databases_are_metastore_databases(catalog, hms, db, tmp_path):
    catalog.create_database(db, properties={"comment": "sales", "owner": "ann", "team": "bi"})
    got = hms.get_database(db)
    assert (got.description, got.ownerName, got.parameters) == ("sales", "ann", {"team": "bi"})
    assert urlparse(got.locationUri).path == str(tmp_path / "warehouse" / f"{db}.db")
    assert db in hms.get_all_databases() and db in catalog.list_databases()
    assert catalog.database_exists(db) and not catalog.database_exists(db + "x")

    catalog.alter_database(db, {"team": "ops"})
    assert hms.get_database(db).parameters == {"team": "ops"}
    assert catalog.database_properties(db) == {"comment": "sales", "owner": "ann", "team": "ops"}
    with pytest.raises(PaimonError, match="keeps the comment"):  # Hive 2.3 never alters a description
        catalog.alter_database(db, {"comment": "all sales"})

    # a comment given after creation (SQL's CREATE DATABASE ... COMMENT) is kept where Paimon reads it
    catalog.create_database(db + "_c")
    try:
        catalog.alter_database(db + "_c", {"comment": "later"})
        got = hms.get_database(db + "_c")
        assert (got.description, got.parameters) == (None, {"comment": "later"})
        assert catalog.database_properties(db + "_c") == {"comment": "later"}
    finally:
        catalog.drop_database(db + "_c")

    with pytest.raises(DatabaseAlreadyExistsError):
        catalog.create_database(db)
    catalog.create_database(db, ignore_if_exists=True)

    catalog.create_table(Identifier(db, "t"), _schema(BASIC))
    with pytest.raises(DatabaseNotEmptyError):
        catalog.drop_database(db)
    catalog.drop_database(db, cascade=True)
    with pytest.raises(ttypes.NoSuchObjectException):
        hms.get_database(db)
    assert not os.path.exists(tmp_path / "warehouse" / f"{db}.db")


def test_a_table_is_registered_as_paimon_registers_it(catalog, hms, db, tmp_path, hive_catalog):
    catalog.create_database(db)
    columns = [("id", "INT NOT NULL", "the key"), ("name", "VARCHAR(10)", None), ("s", "STRING", None),
               ("c", "CHAR(300)", None), ("amount", "DECIMAL(10, 2)", None), ("b", "BYTES", None),
               ("ts", "TIMESTAMP(3)", None), ("ltz", "TIMESTAMP_LTZ(6)", None), ("t", "TIME", None),
               ("d", "DATE", None), ("tags", "ARRAY<STRING>", None), ("m", "MAP<STRING, BIGINT>", None),
               ("r", "ROW<x INT, y DOUBLE>", None), ("dt", "STRING", None)]
    catalog.create_table(Identifier(db, "t"), _schema(columns, ["dt"], ["id", "dt"],
                                                     {"bucket": "2", "hive.owner-team": "bi"}, "orders"))
    t = hms.get_table(db, "t")
    assert t.sd.inputFormat == "org.apache.paimon.hive.mapred.PaimonInputFormat"
    assert t.sd.outputFormat == "org.apache.paimon.hive.mapred.PaimonOutputFormat"
    assert t.sd.serdeInfo.serializationLib == "org.apache.paimon.hive.PaimonSerDe"
    assert urlparse(t.sd.location).path == str(tmp_path / "warehouse" / f"{db}.db" / "t")
    assert t.tableType == "MANAGED_TABLE"
    # every option, with the keys (sync-all-properties, true by default as in Paimon 2.0)
    assert {k: v for k, v in t.parameters.items() if k not in HMS_STATS} == {
        "table_type": "PAIMON", "storage_handler": "org.apache.paimon.hive.PaimonStorageHandler",
        "comment": "orders", "bucket": "2", "hive.owner-team": "bi", "primary-key": "id,dt", "partition": "dt",
        "bucket-key": "id"}
    assert [(c.name, c.type, c.comment) for c in t.sd.cols] == [
        ("id", "int", "the key"), ("name", "varchar(10)", None), ("s", "string", None), ("c", "string", None),
        ("amount", "decimal(10,2)", None), ("b", "binary", None), ("ts", "timestamp", None),
        ("ltz", "timestamp", None), ("t", "string", None), ("d", "date", None), ("tags", "array<string>", None),
        ("m", "map<string,bigint>", None), ("r", "struct<x:int,y:double>", None), ("dt", "string", None)]
    assert t.partitionKeys == []  # only with metastore.partitioned-table

    # a plain Hive text table in the same database is a format table, as Java 1.0 serves it; with
    # 'format-table.enabled' = 'false' only Paimon tables are listed
    hive_sd = ttypes.StorageDescriptor(cols=[ttypes.FieldSchema("x", "int")], location=str(tmp_path / "plain"),
                                       inputFormat="org.apache.hadoop.mapred.TextInputFormat",
                                       outputFormat="org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat",
                                       serdeInfo=ttypes.SerDeInfo(serializationLib="org.apache.hadoop.hive.serde2."
                                                                  "lazy.LazySimpleSerDe", parameters={}))
    hms.create_table(ttypes.Table(tableName="plain", dbName=db, sd=hive_sd, partitionKeys=[], parameters={},
                                  tableType="MANAGED_TABLE"))
    assert catalog.list_tables(db) == ["plain", "t"]
    assert catalog.get_table(Identifier(db, "plain")).format == "csv"
    off = load_catalog(str(tmp_path / "warehouse"), {**hive_catalog, "format-table.enabled": "false"})
    assert off.list_tables(db) == ["t"]
    assert not off.table_exists(Identifier(db, "plain"))
    with pytest.raises(TableNotFoundError):
        off.get_table(Identifier(db, "plain"))


def test_rename_and_drop_move_the_registration_and_the_files(catalog, hms, db, tmp_path):
    catalog.create_database(db)
    catalog.create_table(Identifier(db, "t"), _schema(BASIC)).write_arrow(ROWS)
    catalog.rename_table(Identifier(db, "t"), Identifier(db, "u"))
    with pytest.raises(ttypes.NoSuchObjectException):
        hms.get_table(db, "t")
    new_path = tmp_path / "warehouse" / f"{db}.db" / "u"
    assert urlparse(hms.get_table(db, "u").sd.location).path == str(new_path)
    assert not (tmp_path / "warehouse" / f"{db}.db" / "t").exists()
    assert sorted(catalog.get_table(Identifier(db, "u")).to_arrow().column("id").to_pylist()) == [1, 2, 3]

    catalog.drop_table(Identifier(db, "u"))
    with pytest.raises(ttypes.NoSuchObjectException):
        hms.get_table(db, "u")
    assert not new_path.exists()
    assert catalog.list_tables(db) == []


def test_schema_changes_reach_the_metastore(catalog, hms, db):
    catalog.create_database(db)
    table = catalog.create_table(Identifier(db, "t"), _schema(BASIC, ["dt"], options=PARTITIONED))
    table.schema_manager.commit_changes([AddColumn("extra", parse_type("BIGINT"), "new one"),
                                         SetOption("hive.note", "x")])
    t = hms.get_table(db, "t")
    assert [(c.name, c.type, c.comment) for c in t.sd.cols] == [
        ("id", "int", None), ("v", "string", None), ("extra", "bigint", "new one")]
    assert [c.name for c in t.partitionKeys] == ["dt"]
    assert t.parameters["hive.note"] == "x"

    # the metastore cannot unpartition a table: the change is refused and its schema file undone
    before = table.schema_manager.list_ids()
    with pytest.raises(PaimonError, match="Hive metastore"):
        catalog.get_table(Identifier(db, "t")).schema_manager.commit_changes(
            [SetOption("metastore.partitioned-table", "false")])
    assert catalog.get_table(Identifier(db, "t")).schema_manager.list_ids() == before
    assert [c.name for c in hms.get_table(db, "t").partitionKeys] == ["dt"]


def test_partitions_follow_the_commits(catalog, hms, db, tmp_path):
    catalog.create_database(db)
    table = catalog.create_table(Identifier(db, "t"), _schema(BASIC, ["dt"], options=PARTITIONED))
    assert [(c.name, c.type) for c in hms.get_table(db, "t").partitionKeys] == [("dt", "string")]
    assert [c.name for c in hms.get_table(db, "t").sd.cols] == ["id", "v"]
    table.write_arrow(ROWS)
    assert sorted(hms.get_partition_names(db, "t", -1)) == ["dt=d1", "dt=d2"]
    part = hms.get_partition(db, "t", ["d2"])
    assert urlparse(part.sd.location).path == str(tmp_path / "warehouse" / f"{db}.db" / "t" / "dt=d2")

    table = catalog.get_table(Identifier(db, "t"))
    table.write_arrow(pa.table({"id": pa.array([4], pa.int32()), "v": ["x"], "dt": ["d3"]}))
    assert sorted(hms.get_partition_names(db, "t", -1)) == ["dt=d1", "dt=d2", "dt=d3"]

    table.new_commit().drop_partitions([{"dt": "d1"}])
    assert sorted(hms.get_partition_names(db, "t", -1)) == ["dt=d2", "dt=d3"]

    # an overwrite leaving a partition without files drops it; the one it writes is added
    table.write_arrow(pa.table({"id": pa.array([5], pa.int32()), "v": ["y"], "dt": ["d4"]}), overwrite=True)
    assert hms.get_partition_names(db, "t", -1) == ["dt=d4"]

    # repair adds back what the metastore lost
    hms.drop_partition(db, "t", ["d4"], False)
    assert hms.get_partition_names(db, "t", -1) == []
    catalog.repair_table(Identifier(db, "t"))
    assert hms.get_partition_names(db, "t", -1) == ["dt=d4"]


def test_repair_registers_what_the_warehouse_holds(catalog, hms, db, tmp_path):
    catalog.create_database(db)
    FileSystemCatalog(str(tmp_path / "warehouse")).create_table(Identifier(db, "orphan"), _schema(BASIC))
    assert catalog.list_tables(db) == []
    catalog.repair_database(db)
    assert catalog.list_tables(db) == ["orphan"]
    assert hms.get_table(db, "orphan").parameters["table_type"] == "PAIMON"


def test_other_catalogs_do_not_write_a_table_partitioned_in_the_metastore(tmp_path):
    cat = FileSystemCatalog(str(tmp_path / "fs"))
    cat.create_database("d")
    table = cat.create_table(Identifier("d", "t"), _schema(BASIC, ["dt"], options=PARTITIONED))
    with pytest.raises(InvalidOptionError, match="metastore.partitioned-table"):
        table.write_arrow(ROWS)
    assert table.snapshot_manager.latest() is None


def test_the_metastore_lock_excludes_a_second_holder(tmp_path, hive_catalog, db):
    options = {**hive_catalog, "lock.enabled": "true", "lock-acquire-timeout": "1 s",
               "lock-check-max-sleep": "100 ms"}
    catalog = load_catalog(str(tmp_path / "warehouse"), options)
    other = load_catalog(str(tmp_path / "warehouse"), options)  # another process's catalog, in effect
    catalog.create_database(db)
    try:
        ident = Identifier(db, "t")
        catalog.create_table(ident, _schema(BASIC)).write_arrow(ROWS)  # commits take the lock
        holding, release = threading.Event(), threading.Event()

        def hold():
            catalog.environment(ident).lock(lambda: (holding.set(), release.wait(30)))

        holder = threading.Thread(target=hold)
        holder.start()
        assert holding.wait(30)
        start = time.monotonic()
        with pytest.raises(PaimonError, match="lock"):
            other.environment(ident).lock(lambda: None)
        assert time.monotonic() - start >= 1
        release.set()
        holder.join(30)
        assert other.environment(ident).lock(lambda: "mine") == "mine"
        assert other.get_table(ident).to_arrow().num_rows == 3
    finally:
        catalog.drop_database(db, cascade=True)


def test_the_address_from_hive_site_and_a_shared_pool(tmp_path, hive_catalog):
    (tmp_path / "conf").mkdir()
    (tmp_path / "conf" / "hive-site.xml").write_text(
        "<configuration><property><name>hive.metastore.uris</name>"
        f"<value>{hive_catalog['uri']}</value></property></configuration>")
    catalog = load_catalog(str(tmp_path / "wh"), {"metastore": "hive", "hive-conf-dir": str(tmp_path / "conf"),
                                                  "client-pool-size": "2"})
    results = []
    threads = [threading.Thread(target=lambda: results.append("default" in catalog.list_databases()))
               for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert results == [True] * 8
    (tmp_path / "hive-site.xml").write_text("<configuration></configuration>")
    with pytest.raises(InvalidOptionError, match="hive.metastore.uris"):
        load_catalog(str(tmp_path / "wh"), {"metastore": "hive", "hive-conf-dir": str(tmp_path)})
    with pytest.raises(InvalidOptionError, match="thrift://"):
        load_catalog(str(tmp_path / "wh"), {"metastore": "hive", "uri": "http://x:1"})
    with pytest.raises(InvalidOptionError, match="location-in-properties"):
        load_catalog(str(tmp_path / "wh"), {**hive_catalog, "location-in-properties": "true"})


def test_upper_case_names_are_refused(catalog, db):
    with pytest.raises(InvalidIdentifierError, match="upper case"):
        catalog.create_database("Sales")
    catalog.create_database(db)
    with pytest.raises(InvalidIdentifierError, match="upper case"):
        catalog.create_table(Identifier(db, "Orders"), _schema(BASIC))


@pytest.mark.parametrize("catalog_options", ["hive"], indirect=True)
def test_spark_sql_on_the_hive_catalog(catalog_session, hms, db):
    s = catalog_session
    s.sql(f"CREATE DATABASE {db} COMMENT 'sales data'")
    assert hms.get_database(db).parameters == {"comment": "sales data"}
    s.sql(f"CREATE TABLE {db}.orders (id INT, amount DOUBLE, dt STRING) PARTITIONED BY (dt) "
          "TBLPROPERTIES ('metastore.partitioned-table' = 'true', 'primary-key' = 'id,dt', 'bucket' = '1')")
    s.sql(f"INSERT INTO {db}.orders VALUES (1, 1.5, 'd1'), (2, 2.5, 'd2'), (3, 3.5, 'd2')")
    assert sorted(hms.get_partition_names(db, "orders", -1)) == ["dt=d1", "dt=d2"]

    s.sql(f"ALTER TABLE {db}.orders ADD COLUMNS (note STRING COMMENT 'why')")
    assert [(c.name, c.type, c.comment) for c in hms.get_table(db, "orders").sd.cols] == [
        ("id", "int", None), ("amount", "double", None), ("note", "string", "why")]
    s.sql(f"ALTER TABLE {db}.orders DROP PARTITION (dt = 'd1')")
    assert hms.get_partition_names(db, "orders", -1) == ["dt=d2"]
    assert [tuple(r) for r in s.sql(f"SELECT id, note FROM {db}.orders ORDER BY id").collect()] == [(2, None), (3, None)]

    s.sql(f"ALTER TABLE {db}.orders RENAME TO {db}.sold")
    assert [tuple(r) for r in s.sql(f"SHOW TABLES IN {db}").collect()] == [(db, "sold", False)]
    hms.drop_partition(db, "sold", ["d2"], False)
    assert [tuple(r) for r in s.sql(f"CALL sys.repair('{db}.sold')").collect()] == [(True,)]
    assert hms.get_partition_names(db, "sold", -1) == ["dt=d2"]
    # a database's Hive-format tables (format tables) are synced and passed by, not refused
    s.sql(f"CREATE TABLE {db}.plain (a INT) TBLPROPERTIES ('type' = 'format-table', 'file.format' = 'csv')")
    s.sql(f"INSERT INTO {db}.plain VALUES (7)")
    hms.drop_partition(db, "sold", ["d2"], False)
    assert [tuple(r) for r in s.sql(f"CALL sys.repair('{db}')").collect()] == [(True,)]
    assert hms.get_partition_names(db, "sold", -1) == ["dt=d2"]
    assert [tuple(r) for r in s.sql(f"SELECT * FROM {db}.plain").collect()] == [(7,)]

    s.sql(f"DROP TABLE {db}.plain")
    s.sql(f"DROP TABLE {db}.sold")
    assert hms.get_all_tables(db) == []


@pytest.mark.parametrize("catalog_options", ["hive"], indirect=True)
def test_a_stream_into_a_hive_table_adds_its_partitions(catalog_session, catalog_options, hms, db, tmp_path):
    catalog = catalog_session.catalog
    catalog.create_database(db)
    catalog.create_table(Identifier(db, "t"), _schema(BASIC, ["dt"], options=PARTITIONED))
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "1.json").write_text('{"id": 1, "v": "a", "dt": "d1"}\n{"id": 2, "v": "b", "dt": "d2"}\n')
    stream = catalog_session.spark.readStream.schema("id INT, v STRING, dt STRING").json(str(tmp_path / "in"))
    query = (stream.writeStream.format("paimon").option("checkpointLocation", str(tmp_path / "cp"))
             .options(**catalog_options).trigger(availableNow=True).start(f"{db}.t"))
    query.awaitTermination(120)
    assert query.exception() is None
    assert sorted(hms.get_partition_names(db, "t", -1)) == ["dt=d1", "dt=d2"]


def test_column_comments_are_made_fit_for_the_metastore(catalog, hms, db):
    """As Paimon's master after 2.0 (#9073): a column's comment goes to the metastore on one line
    and at most 255 characters (its COLUMNS_V2.COMMENT is VARCHAR(256), AWS Glue's limit 255); a
    partition key's (PARTITION_KEYS, a longer column) and the Paimon schema's are kept whole."""
    catalog.create_database(db)
    long, lines = "x" * 300, "first line\nsecond\r\nthird"
    columns = [("id", "INT", long), ("v", "STRING", lines), ("dt", "STRING", long)]
    catalog.create_table(Identifier(db, "t"), _schema(columns, ["dt"], options=PARTITIONED))
    t = hms.get_table(db, "t")
    assert [(c.name, c.comment) for c in t.sd.cols] == [("id", "x" * 252 + "..."),
                                                         ("v", "first line second  third")]
    assert [(c.name, c.comment) for c in t.partitionKeys] == [("dt", long)]
    assert [f.description for f in catalog.get_table(Identifier(db, "t")).schema.fields] == [long, lines, long]
    catalog.get_table(Identifier(db, "t")).schema_manager.commit_changes([AddColumn("w", parse_type("INT"), "y" * 256)])
    assert hms.get_table(db, "t").sd.cols[-1].comment == "y" * 252 + "..."


def test_rest_commits_reach_the_metastore_of_the_servers_catalog(spark, hive_catalog, hms, db, tmp_path):
    """paimon-sql-server's REST catalog over a Hive catalog: a commit its REST client makes adds the
    table's partitions to the metastore, as a commit through SQL does."""
    from e2e.server_support import start_rest_server
    (tmp_path / "tokens").write_text("tok admin\n")
    flags = [arg for k, v in hive_catalog.items() for arg in ("--catalog", f"{k}={v}")]
    warehouse = str(tmp_path / "warehouse")
    with start_rest_server(warehouse, str(tmp_path / "tokens"), *flags) as (_, uri):
        client = paimon_sql.connect(warehouse, spark=spark, catalog_options={
            "metastore": "rest", "uri": uri, "token.provider": "bear", "token": "tok"})
        client.sql(f"CREATE DATABASE {db}")
        client.sql(f"CREATE TABLE {db}.orders (id INT, dt STRING) PARTITIONED BY (dt) "
                   "TBLPROPERTIES ('metastore.partitioned-table' = 'true')")
        client.sql(f"INSERT INTO {db}.orders VALUES (1, 'd1'), (2, 'd2')")
        assert sorted(hms.get_partition_names(db, "orders", -1)) == ["dt=d1", "dt=d2"]
        client.sql(f"DROP DATABASE {db} CASCADE")
