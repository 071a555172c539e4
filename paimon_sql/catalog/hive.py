"""HiveCatalog: databases and tables registered in a Hive metastore (``metastore`` = ``hive``), as
Paimon's HiveCatalog registers them, so Hive, Spark and Trino see the same tables.

A database is a metastore database at ``<warehouse>/<db>.db`` (comment, owner and other properties
in its description, owner and parameters). A table is a metastore table at ``<warehouse>/<db>.db/<t>``
whose columns are the Paimon columns in Hive's types, with Paimon's storage handler, serde and
input/output formats and the parameters Paimon writes (``table_type`` = ``PAIMON``,
``storage_handler``, ``comment`` and every table option with ``primary-key``, ``partition`` and
``bucket-key``, as Paimon 2.0 does by default; with the catalog option ``sync-all-properties`` = false,
Paimon 1.0's default, only the options prefixed ``hive.``, without the prefix). The schema files stay in the table
directory as in every catalog; each schema change (ALTER TABLE) updates the metastore's columns
and parameters, and a change the metastore refuses is undone. Names are lower case, as the
metastore keeps them (Paimon refuses upper case in a case-insensitive catalog).

A format table (``'type' = 'format-table'``) is registered as Paimon's HiveCatalog registers one:
a plain Hive table of its file format's serde and input/output formats (``LazySimpleSerDe`` with
``field.delim`` for csv, ``JsonSerDe`` for json, Parquet's and ORC's), partitioned by its partition
keys, its options in the parameters; no schema file is written. Any Hive table of those serdes is
served as a format table, as Java serves it (:func:`_format_schema`), unless ``format-table.enabled``
is false.

``metastore.partitioned-table`` (a table option) makes the metastore table partitioned by the
partition keys and keeps its partitions (:mod:`hive_partitions`); a view is a VIRTUAL_VIEW of the
metastore as Paimon's HiveCatalog makes one (its columns, its query as original and expanded text,
its comment and options in the parameters), which Hive and Spark list with the tables;
``lock.enabled`` takes the commit lock from the metastore's lock API (default: on for object-store
warehouses, as Paimon).
"""

from __future__ import annotations

import getpass
import re
import time
from typing import Dict, List, Optional
from urllib.parse import urlparse

from paimon_sql.catalog.base import Identifier, lock_settings
from paimon_sql.catalog.filesystem import FileSystemCatalog
from paimon_sql.catalog.hive_client import ClientPool, HiveLock, metastore_uris, ttypes
from paimon_sql.catalog.hive_partitions import PartitionSync, syncs_partitions
from paimon_sql.catalog.iceberg_hive import IcebergHiveCommitter, column_comment
from paimon_sql.data.types import (ArrayType, AtomicType, DataField, MapType, MultisetType, RowType,
                                   paimon_type_from_sql, parse_type)
from paimon_sql.exceptions import (DatabaseAlreadyExistsError, DatabaseNotFoundError, InvalidIdentifierError,
                                   InvalidOptionError, MetastoreExists, MetastoreMissing, PaimonError, SchemaError,
                                   TableAlreadyExistsError, TableNotFoundError, ViewAlreadyExistsError,
                                   ViewNotFoundError)
from paimon_sql.format import format_table_options
from paimon_sql.io.catalog_lock import unlocked
from paimon_sql.io.object_stores import flag
from paimon_sql.io.paths import MAIN_BRANCH, PathFactory
from paimon_sql.schema.schema_manager import SchemaManager
from paimon_sql.schema.table_schema import TableSchema
from paimon_sql.schema.view_schema import ViewSchema
from paimon_sql.store.catalog_environment import CatalogEnvironment
from paimon_sql.table import format_table
from paimon_sql.table.format_table import FormatTable
from paimon_sql.table.table import FileStoreTable
from paimon_sql.table.table_type import table_of

INPUT_FORMAT = "org.apache.paimon.hive.mapred.PaimonInputFormat"
OUTPUT_FORMAT = "org.apache.paimon.hive.mapred.PaimonOutputFormat"
SERDE = "org.apache.paimon.hive.PaimonSerDe"
STORAGE_HANDLER = "org.apache.paimon.hive.PaimonStorageHandler"
TABLE_TYPE_PROP, PAIMON_TABLE_TYPE = "table_type", "PAIMON"
HIVE_PREFIX = "hive."
VIRTUAL_VIEW = "VIRTUAL_VIEW"
# the storage of an empty Hive table (Hive's Table.getEmptyTable), which a view keeps
VIEW_INPUT_FORMAT = "org.apache.hadoop.mapred.SequenceFileInputFormat"
VIEW_OUTPUT_FORMAT = "org.apache.hadoop.hive.ql.io.HiveSequenceFileOutputFormat"
VIEW_SERDE = "org.apache.hadoop.hive.serde2.MetadataTypedColumnsetSerDe"
COMMENT_PROP = "comment"
BATCH = 300  # tables fetched per call when listing (Hive's hive.metastore.batch.retrieve.max)

class HiveCatalog(FileSystemCatalog):
    def __init__(self, warehouse: str, options: Optional[dict] = None):
        super().__init__(warehouse, options)  # the catalog options it refuses: load_catalog's
        self.uris = metastore_uris(self.options)
        self.pool = ClientPool(self.uris, _int_option(self.options, "client-pool-size", 2))
        self.lock = lock_settings(self.options, self.io.scheme != "")
        self.sync_all_properties = flag(self.options, "sync-all-properties", True)

    @staticmethod
    def _lower(kind: str, name: str) -> str:
        if name != name.lower():
            raise InvalidIdentifierError(f"{kind} name {name!r} cannot contain upper case in the Hive catalog "
                                         "(the metastore keeps names in lower case)")
        return name

    # -- databases --------------------------------------------------------------------------

    def list_databases(self) -> List[str]:
        return sorted(self.pool.call(lambda c: c.get_all_databases(), "list databases"))

    def _database(self, name: str) -> "ttypes.Database":
        try:
            return self.pool.call(lambda c: c.get_database(name), f"get database {name}")
        except MetastoreMissing:
            raise DatabaseNotFoundError(f"database {name} does not exist") from None

    def database_exists(self, name: str) -> bool:
        try:
            self._database(name)
            return True
        except DatabaseNotFoundError:
            return False

    def create_database(self, name: str, ignore_if_exists: bool = False, properties: Optional[dict] = None):
        path = self.database_path(self._lower("database", name))
        db = _hive_database(name, path, dict(properties or {}))
        try:
            self.pool.call(lambda c: c.create_database(db), f"create database {name}")
        except MetastoreExists:
            if ignore_if_exists:
                return
            raise DatabaseAlreadyExistsError(f"database {name} already exists") from None
        self.io.mkdirs(path)

    def _drop_database(self, name: str, tables: List[str]) -> None:
        for table in tables:
            self.drop_table(Identifier(name, table), ignore_if_not_exists=True)
        try:
            self.pool.call(lambda c: c.drop_database(name, True, True), f"drop database {name}")
        except MetastoreMissing:
            pass  # dropped meanwhile
        self.io.delete(self.database_path(name))

    def database_properties(self, name: str) -> dict:
        db = self._database(name)
        props = dict(db.parameters or {})
        if db.description is not None:
            props["comment"] = db.description
        if db.ownerName is not None:
            props["owner"] = db.ownerName
        return props

    def alter_database(self, name: str, properties: dict) -> None:
        """Set (add or overwrite) properties of a database. A Hive 2.3 metastore never changes a
        database's description: a comment given after creation is then kept in the parameters, where
        Paimon reads it while the description is absent, and one that would replace a description
        is refused."""
        old = self._database(name)
        db = _hive_database(name, old.locationUri, {**self.database_properties(name), **properties})
        self.pool.call(lambda c: c.alter_database(name, db), f"alter database {name}")
        if db.description != self._database(name).description:
            if old.description is not None:
                raise PaimonError(f"database {name}: the Hive metastore keeps the comment it was created with")
            db.parameters["comment"] = db.description
            self.pool.call(lambda c: c.alter_database(name, db), f"alter database {name}")

    # -- tables -----------------------------------------------------------------------------

    def _hms_table(self, ident: Identifier) -> Optional["ttypes.Table"]:
        """The metastore's table of ``ident`` when it is a Paimon table; None when there is none."""
        try:
            table = self.pool.call(lambda c: c.get_table(ident.database, ident.table), f"get table {ident}")
        except MetastoreMissing:
            return None
        return table if _is_paimon(table) or self._format_of(table) else None

    def _format_of(self, table: "ttypes.Table") -> Optional[str]:
        """The file format of a Hive table Paimon serves as a format table (HiveTableUtils: by serde,
        then a text input format is csv or, with a JSON serde, json); None for other tables and
        when format tables are not enabled."""
        sd = table.sd
        if table.tableType == "VIRTUAL_VIEW" or sd is None or not format_table.enabled(self.options):
            return None
        serde = ((sd.serdeInfo.serializationLib if sd.serdeInfo else None) or "").lower()
        if "parquet" in serde or "orc" in serde:
            return "parquet" if "parquet" in serde else "orc"
        if "Text" in (sd.inputFormat or ""):
            return "json" if "json" in serde else "csv"
        return None

    def list_tables(self, database: str) -> List[str]:
        self._database(database)
        names = self.pool.call(lambda c: c.get_all_tables(database), f"list tables of {database}")
        out = []
        for start in range(0, len(names), BATCH):
            batch = names[start:start + BATCH]
            tables = self.pool.call(lambda c: c.get_table_objects_by_name(database, batch), f"list tables of {database}")
            out += [t.tableName for t in tables if _is_paimon(t) or self._format_of(t)]
        return sorted(out)

    def table_exists(self, identifier) -> bool:
        return self._hms_table(self._ident(identifier)) is not None

    def table_path(self, identifier) -> str:
        """The location the metastore registered (a table Java made elsewhere), else the warehouse's."""
        ident = self._ident(identifier)
        table = self._hms_table(ident)
        return _local(table.sd.location) if table is not None else super().table_path(ident)

    def get_table(self, identifier) -> FileStoreTable:
        ident = self._ident(identifier)
        hms = self._hms_table(ident)
        if hms is None:
            self._database(ident.database)
            raise TableNotFoundError(f"table {ident} does not exist")
        path = _local(hms.sd.location)
        if not _is_paimon(hms):
            return FormatTable(self.io, path, _format_schema(hms, self._format_of(hms)), str(ident),
                               self.environment(ident), keeps_schema=False)
        schema = SchemaManager(self.io, PathFactory(path, [], "parquet")).latest()
        if schema is None:
            raise TableNotFoundError(f"table {ident} is registered in the Hive metastore, but {path} holds no schema")
        return table_of(self.io, path, schema, str(ident), self.environment(ident))

    def create_table(self, identifier, schema: TableSchema, ignore_if_exists: bool = False) -> FileStoreTable:
        ident = self._ident(identifier)
        self._lower("table", ident.table)
        self._database(ident.database)
        if self.table_exists(ident):
            if ignore_if_exists:
                return self.get_table(ident)
            raise TableAlreadyExistsError(f"table {ident} already exists")
        self._name_free(ident, for_view=False)
        path = super().table_path(ident)
        table = self._checked(path, schema, ident)
        if isinstance(table, FormatTable):
            return self._create_format_table(ident, schema, path)
        hms = self._new_hms_table(ident, schema, path)  # a type Hive cannot name fails before any file
        manager = SchemaManager(self.io, PathFactory(path, [], "parquet"), self._lock(ident))
        try:
            manager.commit(schema)
        except SchemaError:
            raise TableAlreadyExistsError(f"table {ident} already exists (its directory {path} holds a schema)") \
                from None
        try:
            self.pool.call(lambda c: c.create_table(hms), f"create table {ident}")
        except BaseException as e:
            self.io.delete(path)
            if isinstance(e, MetastoreExists):
                raise TableAlreadyExistsError(f"table {ident} already exists") from None
            raise
        return table

    def drop_table(self, identifier, ignore_if_not_exists: bool = False):
        ident = self._ident(identifier)
        hms = self._hms_table(ident)
        if hms is None:
            if ignore_if_not_exists:
                return
            raise TableNotFoundError(f"table {ident} does not exist")
        external = hms.tableType == "EXTERNAL_TABLE"
        try:
            self.pool.call(lambda c: c.drop_table(ident.database, ident.table, not external), f"drop table {ident}")
        except MetastoreMissing:
            if not ignore_if_not_exists:
                raise TableNotFoundError(f"table {ident} does not exist") from None
            return
        if not external:  # as Paimon: no schema may outlive the registration
            self.io.delete(_local(hms.sd.location))

    def rename_table(self, source, target):
        src, dst = self._ident(source), self._ident(target)
        self._lower("table", dst.table)
        hms = self._hms_table(src)
        if hms is None:
            raise TableNotFoundError(f"table {src} does not exist")
        self._database(dst.database)
        if self.table_exists(dst):
            raise TableAlreadyExistsError(f"table {dst} already exists")
        self._name_free(dst, for_view=False)
        old, new = _local(hms.sd.location), super().table_path(dst)
        hms.dbName, hms.tableName = dst.database, dst.table
        self._alter(src, hms, f"rename table {src} to {dst}")
        moved = self._hms_table(dst)
        # a managed table at its database's default path is moved by the metastore itself (Hive 2.3)
        if hms.tableType != "EXTERNAL_TABLE" and _local(moved.sd.location) != new:
            self.io.rename(old, new)
            moved.sd.location = new
            self._alter(dst, moved, f"move table {dst}")

    def _alter(self, ident: Identifier, table: "ttypes.Table", what: str) -> None:
        """alter_table as Paimon's HiveAlterTableUtils: CASCADE, so partitions get the new columns."""
        context = ttypes.EnvironmentContext(properties={"CASCADE": "true", "DO_NOT_UPDATE_STATS": "false"})
        self.pool.call(lambda c: c.alter_table_with_environment_context(ident.database, ident.table, table, context), what)

    # -- views (Paimon's HiveCatalog createView, getView, dropView, listViews, renameView) ----------

    def _hms_view(self, ident: Identifier) -> Optional["ttypes.Table"]:
        try:
            table = self.pool.call(lambda c: c.get_table(ident.database, ident.table), f"get view {ident}")
        except MetastoreMissing:
            return None
        return table if table.tableType == VIRTUAL_VIEW else None

    def list_views(self, database: str) -> List[str]:
        self._database(database)
        return sorted(self.pool.call(lambda c: c.get_tables_by_type(database, "*", VIRTUAL_VIEW),
                                     f"list views of {database}"))

    def get_view(self, identifier) -> ViewSchema:
        """As Java reads one: the columns, the expanded text, no dialects, the comment and the
        other parameters as options."""
        ident = self._ident(identifier)
        hms = self._hms_view(ident)
        if hms is None:
            self._database(ident.database)
            raise ViewNotFoundError(f"view {ident} does not exist")
        options = dict(hms.parameters or {})
        comment = options.pop(COMMENT_PROP, None)
        fields = [DataField(i, c.name, paimon_type(c.type), c.comment) for i, c in enumerate(hms.sd.cols)]
        return ViewSchema(fields, hms.viewExpandedText, {}, comment, options)

    def create_view(self, identifier, view: ViewSchema, ignore_if_exists: bool = False) -> None:
        ident = self._ident(identifier)
        self._lower("view", ident.table)
        self._database(ident.database)
        self._name_free(ident, for_view=True)
        now = int(time.time())
        hms = ttypes.Table(tableName=ident.table, dbName=ident.database, owner=getpass.getuser(), createTime=now,
                           lastAccessTime=now, retention=0, partitionKeys=[], tableType=VIRTUAL_VIEW,
                           sd=ttypes.StorageDescriptor(
                               inputFormat=VIEW_INPUT_FORMAT, outputFormat=VIEW_OUTPUT_FORMAT, compressed=False,
                               numBuckets=-1, bucketCols=[], sortCols=[], parameters={}, storedAsSubDirectories=False,
                               serdeInfo=ttypes.SerDeInfo(serializationLib=VIEW_SERDE,
                                                          parameters={"serialization.format": "1"})))
        _set_view(hms, view)
        try:
            self.pool.call(lambda c: c.create_table(hms), f"create view {ident}")
        except MetastoreExists:
            if not ignore_if_exists:
                raise ViewAlreadyExistsError(f"view {ident} already exists") from None

    def alter_view(self, identifier, view: ViewSchema) -> None:
        ident = self._ident(identifier)
        hms = self._hms_view(ident)
        if hms is None:
            raise ViewNotFoundError(f"view {ident} does not exist")
        _set_view(hms, view)
        self.pool.call(lambda c: c.alter_table(ident.database, ident.table, hms), f"alter view {ident}")

    def drop_view(self, identifier, ignore_if_not_exists: bool = False) -> None:
        ident = self._ident(identifier)
        if self._hms_view(ident) is None:
            if ignore_if_not_exists:
                return
            raise ViewNotFoundError(f"view {ident} does not exist")
        self.pool.call(lambda c: c.drop_table(ident.database, ident.table, False), f"drop view {ident}")

    def rename_view(self, source, target) -> None:
        src, dst = self._ident(source), self._ident(target)
        self._lower("view", dst.table)
        hms = self._hms_view(src)
        if hms is None:
            raise ViewNotFoundError(f"view {src} does not exist")
        self._database(dst.database)
        self._name_free(dst, for_view=True)
        hms.dbName, hms.tableName = dst.database, dst.table
        try:
            self.pool.call(lambda c: c.alter_table(src.database, src.table, hms), f"rename view {src} to {dst}")
        except PaimonError as e:
            if self._hms_view(dst) is not None or "already exists" in str(e):
                raise ViewAlreadyExistsError(f"view {dst} already exists") from None
            raise

    # -- what tables get from this catalog ----------------------------------------------------

    def environment(self, identifier: Identifier) -> CatalogEnvironment:
        return CatalogEnvironment(
            lock=self._lock(identifier),
            commit_callbacks=(PartitionSync(self.pool, identifier.database, identifier.table,
                                            lambda: self._registered(identifier)),),
            schema_callbacks=(lambda branch, schema: self._schema_committed(identifier, branch, schema),),
            partitions_in_metastore=True,
            iceberg_hive=IcebergHiveCommitter(identifier.database, identifier.table))

    def _lock(self, ident: Identifier):
        if self.lock is None:
            return unlocked
        return HiveLock(self.pool, ident.database, ident.table, self.lock.check_max_sleep_ms,
                        self.lock.acquire_timeout_ms)

    def _registered(self, ident: Identifier) -> "ttypes.Table":
        table = self._hms_table(ident)
        if table is None:
            raise PaimonError(f"table {ident} is not registered in the Hive metastore")
        return table

    def _schema_committed(self, ident: Identifier, branch: str, schema: TableSchema) -> None:
        """A new schema of the main branch reaches the metastore (Paimon's alterTableToHms)."""
        if branch != MAIN_BRANCH:
            return
        table = self._registered(ident)
        self._update(table, schema, _local(table.sd.location))
        self._alter(ident, table, f"alter table {ident}")

    def _new_hms_table(self, ident: Identifier, schema: TableSchema, path: str) -> "ttypes.Table":
        now = int(time.time())
        table = ttypes.Table(tableName=ident.table, dbName=ident.database, owner=getpass.getuser(), createTime=now,
                             lastAccessTime=now, retention=2 ** 31 - 1, partitionKeys=[], tableType="MANAGED_TABLE",
                             parameters={TABLE_TYPE_PROP: PAIMON_TABLE_TYPE, "storage_handler": STORAGE_HANDLER})
        self._update(table, schema, path)
        return table

    def _create_format_table(self, ident: Identifier, schema: TableSchema, path: str) -> FormatTable:
        """Register a format table as Paimon's createFormatTable: a Hive table of the format's serde,
        its options in the parameters (Spark and Hive read the directory; Paimon rebuilds the table
        from the registration). The metastore keeps the schema: no file is written but the directory."""
        fmt = format_table_options.file_format(schema.options)
        now = int(time.time())
        keys = set(schema.partition_keys)
        serde_params = {"field.delim": format_table_options.spark_options(schema.options)["sep"]} \
            if fmt == "csv" else {}
        params = {**schema.options, TABLE_TYPE_PROP: fmt.upper(), "file.format": fmt, "type": format_table.FORMAT_TABLE}
        if schema.comment is not None:
            params["comment"] = schema.comment
        serde, input_format, output_format = FORMAT_CLASSES[fmt]
        hms = ttypes.Table(
            tableName=ident.table, dbName=ident.database, owner=getpass.getuser(), createTime=now, lastAccessTime=now,
            retention=2 ** 31 - 1, tableType="MANAGED_TABLE", parameters=params,
            partitionKeys=[_column(f, True) for f in schema.fields_of(schema.partition_keys)],
            sd=ttypes.StorageDescriptor(
                cols=[_column(f) for f in schema.fields if f.name not in keys], location=path,
                inputFormat=input_format, outputFormat=output_format, compressed=False, numBuckets=-1,
                serdeInfo=ttypes.SerDeInfo(serializationLib=serde, parameters=serde_params), bucketCols=[],
                sortCols=[], parameters={}, storedAsSubDirectories=False))
        try:
            self.pool.call(lambda c: c.create_table(hms), f"create table {ident}")
        except MetastoreExists:
            raise TableAlreadyExistsError(f"table {ident} already exists") from None
        self.io.mkdirs(path)
        return self.get_table(ident)

    def _update(self, table: "ttypes.Table", schema: TableSchema, path: str) -> None:
        """Columns, formats, location and parameters of ``schema`` on a metastore table (Paimon's
        updateHmsTable and updateHmsTablePars: parameters are added, never removed)."""
        table.parameters.update(self._parameters(schema))
        if schema.comment is not None:
            table.parameters["comment"] = schema.comment
        partitioned = syncs_partitions(schema)
        keys = set(schema.partition_keys) if partitioned else set()
        table.partitionKeys = [_column(f, True) for f in schema.fields_of(schema.partition_keys)] if partitioned else []
        table.sd = ttypes.StorageDescriptor(
            cols=[_column(f) for f in schema.fields if f.name not in keys], location=path,
            inputFormat=INPUT_FORMAT, outputFormat=OUTPUT_FORMAT, compressed=False, numBuckets=-1,
            serdeInfo=ttypes.SerDeInfo(serializationLib=SERDE, parameters={}), bucketCols=[], sortCols=[],
            parameters={}, storedAsSubDirectories=False)

    def _parameters(self, schema: TableSchema) -> Dict[str, str]:
        options = schema.options
        if self.sync_all_properties:
            # Java's TableSchema.bucketKeys(): the option, else the trimmed primary keys (an append
            # table's whole-row bucket key is not one)
            bucket_keys = schema.core_options().bucket_key or schema.trimmed_primary_keys
            keys = {"primary-key": schema.primary_keys, "partition": schema.partition_keys, "bucket-key": bucket_keys}
            return {**options, **{k: ",".join(v) for k, v in keys.items() if v}}
        out = {k[len(HIVE_PREFIX):]: v for k, v in options.items() if k.startswith(HIVE_PREFIX)}
        for key in ("partition.expiration-time", "data-file.path-directory"):  # read by other engines
            if key in options:
                out[key] = options[key]
        return out

    # -- CALL sys.repair -------------------------------------------------------------------

    def repair_catalog(self) -> None:
        """Register every database and table the warehouse holds (Paimon's repairCatalog)."""
        for db in super().list_databases():
            self.repair_database(db)

    def repair_database(self, name: str) -> None:
        if not self.database_exists(name):
            self.create_database(name, ignore_if_exists=True)
        db_path = self.database_path(name)
        for table in self.io.list_dirs(db_path):
            if self._is_table(f"{db_path}/{table}"):
                self.repair_table(Identifier(name, table))

    def repair_table(self, identifier) -> None:
        """Register the table (or bring the metastore's columns and parameters up to its schema) and
        add the partitions it holds (Paimon's repairTable)."""
        ident = self._ident(identifier)
        hms = self._hms_table(ident)
        path = _local(hms.sd.location) if hms is not None else super().table_path(ident)
        schema = SchemaManager(self.io, PathFactory(path, [], "parquet")).latest()
        if schema is None:
            raise TableNotFoundError(f"table {ident} does not exist ({path} holds no schema)")
        if hms is None:
            self._database(ident.database)
            new = self._new_hms_table(ident, schema, path)
            self.pool.call(lambda c: c.create_table(new), f"create table {ident}")
        else:
            self._schema_committed(ident, MAIN_BRANCH, schema)
        table = self.get_table(ident)
        if syncs_partitions(table.schema) and table.snapshot_manager.latest() is not None:
            sync = table.env.commit_callbacks[0]
            sync.add(table, sorted({e.partition for e in table.new_scan().plan_entries()}))


def _set_view(hms: "ttypes.Table", view: ViewSchema) -> None:
    """A view's columns, text and parameters on its metastore table (Paimon's createView)."""
    hms.sd.cols = [_column(f) for f in view.fields]
    hms.viewOriginalText = hms.viewExpandedText = view.query
    hms.parameters = {**view.options, **({COMMENT_PROP: view.comment} if view.comment is not None else {})}


_TEXT_IO = ("org.apache.hadoop.mapred.TextInputFormat", "org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat")
# file format -> (serde, input format, output format), as Paimon's HiveCatalog registers a format table
FORMAT_CLASSES = {
    "csv": ("org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe", *_TEXT_IO),
    "json": ("org.apache.hive.hcatalog.data.JsonSerDe", *_TEXT_IO),
    "parquet": ("org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe",
                "org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat",
                "org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat"),
    "orc": ("org.apache.hadoop.hive.ql.io.orc.OrcSerde", "org.apache.hadoop.hive.ql.io.orc.OrcInputFormat",
            "org.apache.hadoop.hive.ql.io.orc.OrcOutputFormat"),
}


def _format_schema(table: "ttypes.Table", fmt: str) -> TableSchema:
    """A Hive table's schema as Paimon's HiveTableUtils.convertToFormatTable reads it: the columns
    then the partition keys, the parameters as options (``comment`` the comment), a text table's
    ``field.delim`` (Hive's default \\u0001) as ``field-delimiter``. Not checked as a new table's
    options are: what a read cannot honour fails when it is read."""
    options = dict(table.parameters or {})
    comment = options.pop("comment", None)
    options.update({"type": format_table.FORMAT_TABLE, "file.format": fmt})
    if fmt == "csv":
        options["field-delimiter"] = (table.sd.serdeInfo.parameters or {}).get("field.delim", "\x01")
    columns = list(table.sd.cols or []) + list(table.partitionKeys or [])
    fields = [DataField(i, c.name, paimon_type_from_sql(_HIVE_TIMESTAMP.sub("timestamp_ntz", c.type)), c.comment)
              for i, c in enumerate(columns)]
    return TableSchema(0, fields, len(fields) - 1, [c.name for c in table.partitionKeys or []], [], options,
                       comment)


_HIVE_TIMESTAMP = re.compile(r"\btimestamp\b", re.I)  # Hive's timestamp has no time zone: Paimon's TIMESTAMP


def _is_paimon(table: "ttypes.Table") -> bool:
    sd = table.sd
    return sd is not None and sd.inputFormat == INPUT_FORMAT and sd.outputFormat == OUTPUT_FORMAT


def _local(location: str) -> str:
    """A metastore location as our FileIO names it: ``file:/x`` is the local path ``/x``."""
    parsed = urlparse(location)
    return parsed.path if parsed.scheme == "file" else location.rstrip("/")


def _hive_database(name: str, location: str, properties: dict) -> "ttypes.Database":
    """Paimon's convertToHiveDatabase: comment and owner are the database's own fields."""
    given = properties.pop("location", None)
    if given is not None and _local(given) != _local(location):
        raise InvalidOptionError(f"database {name}: location {given!r} is not supported (a database of this "
                                 f"catalog lives at {location})")
    comment, owner = properties.pop("comment", None), properties.pop("owner", None)
    return ttypes.Database(name=name, description=comment, locationUri=location, ownerName=owner,
                           parameters={k: str(v) for k, v in properties.items() if v is not None})


def _column(field: DataField, key: bool = False) -> "ttypes.FieldSchema":
    """A column of the metastore table; a partition ``key``'s comment is kept whole (PARTITION_KEYS
    holds longer ones), a column's made to fit COLUMNS_V2 (as Paimon's master after 2.0)."""
    comment = field.description if key else column_comment(field.description)
    return ttypes.FieldSchema(name=field.name, type=hive_type(field.type), comment=comment)


HIVE_MAX_CHAR, HIVE_MAX_VARCHAR = 255, 65535
_ATOMIC = {"BOOLEAN": "boolean", "TINYINT": "tinyint", "SMALLINT": "smallint", "INT": "int", "BIGINT": "bigint",
           "FLOAT": "float", "DOUBLE": "double", "BINARY": "binary", "VARBINARY": "binary", "DATE": "date",
           "TIME": "string", "TIMESTAMP": "timestamp", "TIMESTAMP_LTZ": "timestamp"}


def hive_type(t) -> str:
    """The Hive type Paimon's HiveTypeUtils.toTypeInfo gives (Hive 2.3: TIMESTAMP WITH LOCAL TIME ZONE
    is ``timestamp``; CHAR/VARCHAR longer than Hive allows are ``string``)."""
    if isinstance(t, AtomicType):
        if t.name == "DECIMAL":
            return f"decimal({t.precision},{t.scale})"
        if t.name == "CHAR":
            return f"char({t.precision})" if t.precision <= HIVE_MAX_CHAR else "string"
        if t.name == "VARCHAR":
            return f"varchar({t.precision})" if t.precision <= HIVE_MAX_VARCHAR else "string"
        if t.name in _ATOMIC:
            return _ATOMIC[t.name]
    elif isinstance(t, ArrayType):
        return f"array<{hive_type(t.element)}>"
    elif isinstance(t, MultisetType):
        return f"map<{hive_type(t.element)},int>"
    elif isinstance(t, MapType):
        return f"map<{hive_type(t.key)},{hive_type(t.value)}>"
    elif isinstance(t, RowType):
        return "struct<" + ",".join(f"{f.name}:{hive_type(f.type)}" for f in t.fields) + ">"
    raise SchemaError(f"type {t} has no Hive type: the Hive catalog cannot register the table")


def paimon_type(hive: str):
    """The Paimon type of a Hive column type (Paimon's HiveTypeUtils.toPaimonType: ``binary`` is BYTES)."""
    return parse_type(re.sub(r"\bbinary\b", "BYTES", hive, flags=re.I))


def _int_option(options: dict, key: str, default: int) -> int:
    try:
        return int(options.get(key, default))
    except ValueError:
        raise InvalidOptionError(f"catalog option '{key}' must be an integer, got {options[key]!r}") from None


__all__ = ["HiveCatalog", "hive_type"]
