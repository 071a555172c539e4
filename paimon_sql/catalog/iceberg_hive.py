"""``metadata.iceberg.storage`` = ``hive-catalog``: the Iceberg table registered in a Hive metastore
(Paimon's IcebergHiveMetadataCommitter), so an Iceberg catalog of type ``hive`` (Spark, Trino,
pyiceberg) finds a Paimon table by name.

The metadata itself is written as for ``hadoop-catalog`` (``<warehouse>/iceberg/<db>/<t>/metadata``).
After each metadata file, every database of ``metadata.iceberg.database`` (the Paimon table's own by
default; created at the Iceberg database directory when missing) gets an EXTERNAL_TABLE named
``metadata.iceberg.table`` (the Paimon table's name by default) with the table's columns in Hive's
types, and the parameters Iceberg's Hive catalog reads: ``table_type`` = ``ICEBERG``,
``metadata_location`` and ``previous_metadata_location``. An existing entry is altered in place,
also one a Paimon Hive catalog registered (Java stamps ``table_type`` on it the same way).

The metastore is the one of ``metadata.iceberg.uri``, else of ``hive.metastore.uris`` in
``<metadata.iceberg.hive-conf-dir or HIVE_CONF_DIR>/hive-site.xml``, whatever catalog holds the
Paimon table. The Thrift client is loaded on first use (the ``hive`` extra), as catalog/__init__.py
loads a metastore's module, so tables without this storage never need it.
"""

from __future__ import annotations

import getpass
import os
import posixpath
import time
from importlib import import_module
from types import ModuleType
from typing import TYPE_CHECKING, List, Optional

from paimon_sql.exceptions import InvalidOptionError, MetastoreMissing
from paimon_sql.options.iceberg_options import HIVE_CONF_DIR, URI, IcebergHiveOptions, hive_options

if TYPE_CHECKING:
    from paimon_sql.catalog.hive_client import ClientPool
    from paimon_sql.store.catalog_environment import RegisteredTable

EXTERNAL_TABLE = "EXTERNAL_TABLE"
# the storage of Java's registration (the metadata says where the data is; Hive never reads it)
INPUT_FORMAT = "org.apache.hadoop.mapred.FileInputFormat"
OUTPUT_FORMAT = "org.apache.hadoop.mapred.FileOutputFormat"
SERDE = "org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe"
COMMENT_MAX, TRUNCATED = 255, "..."  # Hive's column comment limit, Java's marker


class IcebergHiveCommitter:
    """The registration of one table of a catalog: ``database`` and ``table`` are its Paimon names."""

    def __init__(self, database: str, table: str):
        self.database, self.table = database, table

    def check(self, table: RegisteredTable) -> None:
        """Refuse before a write what cannot be registered: no metastore address, no client library."""
        opts = hive_options(table.schema.options)
        if opts.uri is None and not (opts.hive_conf_dir or os.environ.get("HIVE_CONF_DIR")):
            raise InvalidOptionError(f"table {table.name}: 'metadata.iceberg.storage' = 'hive-catalog' needs the "
                                     f"metastore's address: '{URI}' (thrift://host:port) or '{HIVE_CONF_DIR}' "
                                     "(a directory with hive-site.xml)")
        _client()

    def commit(self, table: RegisteredTable, metadata_path: str, base_path: Optional[str]) -> None:
        """Register ``metadata_path`` (written after ``base_path``, None when written afresh) in each database."""
        opts = hive_options(table.schema.options)
        client = _client()
        address = {"uri": opts.uri} if opts.uri else {"hive-conf-dir": opts.hive_conf_dir}
        pool = client.ClientPool(client.metastore_uris(address), 1)
        try:
            for database in opts.databases or (self.database,):
                _Registration(client, pool, table, opts, database, opts.table or self.table).commit(
                    metadata_path, base_path)
        finally:
            pool.close()


def _client() -> ModuleType:
    """catalog/hive_client.py: its import refuses in one line when the Thrift client is not installed."""
    return import_module("paimon_sql.catalog.hive_client")


class _Registration:
    def __init__(self, client: ModuleType, pool: ClientPool, table: RegisteredTable, opts: IcebergHiveOptions,
                 database: str, name: str):
        self.ttypes, self.pool, self.table, self.opts = client.ttypes, pool, table, opts
        self.database, self.name = database, name

    def commit(self, metadata_path: str, base_path: Optional[str]) -> None:
        t = self.ttypes
        where = f"{self.database}.{self.name}"
        try:
            self.pool.call(lambda c: c.get_database(self.database), f"get database {self.database}")
        except MetastoreMissing:
            location = posixpath.dirname(posixpath.dirname(posixpath.dirname(metadata_path)))
            self.pool.call(lambda c: c.create_database(t.Database(name=self.database, locationUri=location,
                                                                   parameters={})),
                           f"create database {self.database}")
        try:
            hms = self.pool.call(lambda c: c.get_table(self.database, self.name), f"get table {where}")
        except MetastoreMissing:
            hms = self._create(metadata_path)
        hms.parameters = dict(hms.parameters or {})
        hms.parameters.update({"table_type": "ICEBERG", "metadata_location": metadata_path})
        if base_path is not None:
            hms.parameters["previous_metadata_location"] = base_path
        hms.sd.cols = self._columns()
        context = t.EnvironmentContext(properties={
            "CASCADE": "true", "skipAWSGlueArchive": str(self.opts.glue_skip_archive).lower(),
            "DO_NOT_UPDATE_STATS": str(self.opts.skip_update_stats).lower()})
        self.pool.call(lambda c: c.alter_table_with_environment_context(self.database, self.name, hms, context),
                       f"register the Iceberg table {where}")

    def _create(self, metadata_path: str):
        """A new EXTERNAL_TABLE at the Iceberg table directory, as Java's createTable makes it (the Thrift Table)."""
        t = self.ttypes
        now = int(time.time())
        hms = t.Table(tableName=self.name, dbName=self.database, owner=getpass.getuser(), createTime=now,
                      lastAccessTime=now, retention=2 ** 31 - 1, partitionKeys=[], tableType=EXTERNAL_TABLE,
                      parameters={"DO_NOT_UPDATE_STATS": str(self.opts.skip_update_stats).lower(),
                                  "EXTERNAL": "TRUE", "table_type": "ICEBERG"},
                      sd=t.StorageDescriptor(
                          cols=self._columns(), location=posixpath.dirname(posixpath.dirname(metadata_path)),
                          inputFormat=INPUT_FORMAT, outputFormat=OUTPUT_FORMAT, compressed=False, numBuckets=-1,
                          serdeInfo=t.SerDeInfo(serializationLib=SERDE, parameters={}), bucketCols=[],
                          sortCols=[], parameters={}, storedAsSubDirectories=False))
        self.pool.call(lambda c: c.create_table(hms), f"create the Iceberg table {self.database}.{self.name}")
        return hms

    def _columns(self) -> List:
        """The latest schema's columns in Hive's types (Java: copyWithLatestSchema)."""
        hive = import_module("paimon_sql.catalog.hive")
        return [self.ttypes.FieldSchema(name=f.name, type=hive.hive_type(f.type), comment=column_comment(f.description))
                for f in self.table.schema_manager.latest().fields]


def column_comment(text: Optional[str]) -> Optional[str]:
    """A column's comment as the metastore can hold it (Java's normalizeColumnComment): one line, at
    most 255 characters (COLUMNS_V2.COMMENT is VARCHAR(256); AWS Glue allows 255). Paimon's Hive
    catalog writes its columns so too since Paimon's master after 2.0 (#9073)."""
    if text is None:
        return None
    text = text.replace("\n", " ").replace("\r", " ")
    return text if len(text) <= COMMENT_MAX else text[:COMMENT_MAX - len(TRUNCATED)] + TRUNCATED
