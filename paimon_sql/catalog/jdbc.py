"""JdbcCatalog: databases and tables registered in a relational database (Paimon's ``metastore=jdbc``).

The registry is kept in the tables Java Paimon's JdbcCatalog uses, with its columns and meaning,
so Java and we share one catalog: ``paimon_tables`` (a row per table), ``paimon_database_properties``
(a row per database property; a database exists while it has a table row or a property row, and
Java marks each one it creates with ``exists=true`` and its ``location``), and, when the lock is
enabled, ``paimon_distributed_locks`` (jdbc_lock.py); views are rows of ``paimon_views`` holding
their Paimon ViewSchema JSON (Java's JdbcCatalog at HEAD; Java 1.0 has no JDBC views). Every row
carries the ``catalog-key``, so several catalogs can share one database. Table files live at ``<warehouse>/<db>.db/<table>`` as
in every Paimon catalog; the schema files are written and read as the filesystem catalog does.

Without ``uri`` the registry is an SQLite file inside a local warehouse, ``paimon-catalog.sqlite``.
"""

from __future__ import annotations

import os
from functools import partial
from typing import List, Optional
from urllib.parse import urlparse

from paimon_sql.catalog.base import Identifier, lock_settings
from paimon_sql.catalog.filesystem import FileSystemCatalog
from paimon_sql.catalog.iceberg_hive import IcebergHiveCommitter
from paimon_sql.catalog.jdbc_client import JdbcClient
from paimon_sql.catalog.jdbc_lock import JdbcCatalogLock
from paimon_sql.exceptions import (CorruptMetadataError, DatabaseAlreadyExistsError, InvalidIdentifierError,
                                   InvalidOptionError, JdbcKeyConflict, TableAlreadyExistsError, TableNotFoundError,
                                   ViewAlreadyExistsError, ViewNotFoundError)
from paimon_sql.io.catalog_lock import unlocked
from paimon_sql.io.object_stores import flag
from paimon_sql.io.paths import PathFactory
from paimon_sql.schema.schema_manager import SchemaManager
from paimon_sql.schema.table_schema import TableSchema
from paimon_sql.schema.view_schema import ViewSchema
from paimon_sql.store.catalog_environment import CatalogEnvironment
from paimon_sql.table import format_table

DEFAULT_SQLITE_FILE = "paimon-catalog.sqlite"
TABLES = "paimon_tables"
PROPERTIES = "paimon_database_properties"
CREATE_TABLES = (f"CREATE TABLE {TABLES}(catalog_key VARCHAR(255) NOT NULL,database_name VARCHAR(255) NOT NULL,"
                 "table_name VARCHAR(255) NOT NULL, PRIMARY KEY (catalog_key, database_name, table_name))")
CREATE_PROPERTIES = (f"CREATE TABLE {PROPERTIES}(catalog_key VARCHAR(255) NOT NULL,"
                     "database_name VARCHAR(255) NOT NULL,property_key VARCHAR(255),property_value VARCHAR(1000),"
                     "PRIMARY KEY (catalog_key, database_name, property_key))")
VIEWS = "paimon_views"
CREATE_VIEWS = (f"CREATE TABLE {VIEWS}(catalog_key VARCHAR(255) NOT NULL,database_name VARCHAR(255) NOT NULL,"
                "view_name VARCHAR(255) NOT NULL,view_schema TEXT NOT NULL, "
                "PRIMARY KEY (catalog_key, database_name, view_name))")
EXISTS_PROPERTY, LOCATION_PROPERTY = "exists", "location"  # Java's marker rows, not user properties
MAX_PROPERTY_VALUE = 1000  # the column's width

# Paimon's defaults (CatalogOptions, JdbcCatalogOptions)
DEFAULT_CATALOG_KEY = "jdbc"


class JdbcCatalog(FileSystemCatalog):
    def __init__(self, warehouse: str, options: Optional[dict] = None):
        uri = (options or {}).get("uri") or _default_uri(warehouse.rstrip("/"))
        super().__init__(warehouse, options)
        self.catalog_key = self.options.get("catalog-key", DEFAULT_CATALOG_KEY)
        self.client = JdbcClient(uri, self.options)
        self.client.create_table_if_absent(CREATE_TABLES)
        self.client.create_table_if_absent(CREATE_PROPERTIES)
        self.client.create_table_if_absent(CREATE_VIEWS)
        self._lock = self._commit_lock()
        self.allow_upper_case = flag(self.options, "allow-upper-case", False)

    def _commit_lock(self) -> Optional[JdbcCatalogLock]:
        """The lock when ``lock.enabled`` (:func:`lock_settings`)."""
        settings = lock_settings(self.options, self.io.scheme != "")
        if settings is None:
            return None
        try:
            key_length = int(self.options.get("lock-key-max-length", 255))
        except ValueError as e:
            raise InvalidOptionError(f"metastore=jdbc lock option: {e}") from None
        return JdbcCatalogLock(self.client, self.catalog_key, settings.check_max_sleep_ms,
                               settings.acquire_timeout_ms, key_length)

    def _check_case(self, table: Optional[str], columns=()) -> None:
        """Paimon's JdbcCatalog is case-insensitive: a table or column name with upper case is
        refused, as Java refuses it, unless ``allow-upper-case``."""
        if self.allow_upper_case:
            return
        for kind, name in ([("table", table)] if table else []) + [("column", c) for c in columns]:
            if name != name.lower():
                raise InvalidIdentifierError(f"{kind} name {name!r} has upper case, which the JDBC catalog does "
                                             "not allow (as Paimon's); catalog option 'allow-upper-case' = 'true' "
                                             "allows it")

    def environment(self, identifier) -> CatalogEnvironment:
        """The commit lock (when enabled), and the case rule for columns a schema change adds or
        renames (as Java checks ALTER TABLE's changes; the refused schema-N is removed again)."""
        ident = self._ident(identifier)
        lock = partial(self._lock.run_with_lock, ident.database, ident.table) if self._lock else unlocked
        checks = () if self.allow_upper_case else (partial(self._check_new_columns, ident),)
        return CatalogEnvironment(lock=lock, schema_callbacks=checks,
                                  iceberg_hive=IcebergHiveCommitter(ident.database, ident.table))

    def _check_new_columns(self, ident, branch: str, schema: TableSchema) -> None:
        schemas = SchemaManager(self.io, PathFactory(self.table_path(ident), [], "parquet", branch=branch))
        earlier = [i for i in schemas.list_ids() if i < schema.id]
        old = {f.name for f in schemas.schema(earlier[-1]).fields} if earlier else set()
        self._check_case(None, [f.name for f in schema.fields if f.name not in old])

    def close(self) -> None:
        self.client.close()

    # -- databases --------------------------------------------------------------------------

    def list_databases(self) -> List[str]:
        rows = self.client.query(f"SELECT DISTINCT database_name FROM {TABLES} WHERE catalog_key = ? UNION "
                                 f"SELECT DISTINCT database_name FROM {PROPERTIES} WHERE catalog_key = ? UNION "
                                 f"SELECT DISTINCT database_name FROM {VIEWS} WHERE catalog_key = ?",
                                 self.catalog_key, self.catalog_key, self.catalog_key)
        return sorted(r[0] for r in rows)

    def database_exists(self, name: str) -> bool:
        return bool(self.client.query(f"SELECT 1 FROM {TABLES} WHERE catalog_key = ? AND database_name = ? UNION ALL "
                                      f"SELECT 1 FROM {PROPERTIES} WHERE catalog_key = ? AND database_name = ? "
                                      f"UNION ALL SELECT 1 FROM {VIEWS} WHERE catalog_key = ? AND database_name = ?",
                                      self.catalog_key, name, self.catalog_key, name, self.catalog_key, name))

    def create_database(self, name: str, ignore_if_exists: bool = False, properties: Optional[dict] = None):
        """The database's rows, as Java writes them: ``exists=true``, its ``location`` and the
        given properties, in one transaction (a concurrent creator of the same name loses on the
        primary key). The directory is made by its first table."""
        path = self.database_path(name)
        properties = dict(properties or {})
        if properties.get(LOCATION_PROPERTY, path) != path:
            raise InvalidOptionError(f"database {name}: a location other than {path} is not supported "
                                     "(tables of a JDBC catalog live under the warehouse)")
        if self.database_exists(name):
            if ignore_if_exists:
                return
            raise DatabaseAlreadyExistsError(f"database {name} already exists")
        try:
            self._write_properties(name, {**properties, EXISTS_PROPERTY: "true", LOCATION_PROPERTY: path})
        except JdbcKeyConflict:
            if not ignore_if_exists:
                raise DatabaseAlreadyExistsError(f"database {name} already exists") from None

    def _write_properties(self, name: str, properties: dict, replace: bool = False) -> None:
        """Insert the rows of ``properties`` in one transaction; ``replace``: rows of the same keys
        go first (ALTER), else a key already there is a :class:`JdbcKeyConflict` (CREATE)."""
        too_long = [k for k, v in properties.items() if len(str(v)) > MAX_PROPERTY_VALUE]
        if too_long:
            raise InvalidOptionError(f"database {name}: property {too_long[0]!r} is longer than "
                                     f"{MAX_PROPERTY_VALUE} characters (the catalog's column width)")
        with self.client.transaction() as tx:
            if replace:
                tx.execute(f"DELETE FROM {PROPERTIES} WHERE catalog_key = ? AND database_name = ? AND property_key IN "
                           f"({', '.join('?' * len(properties))})", self.catalog_key, name, *properties)
            for key, value in properties.items():
                tx.execute(f"INSERT INTO {PROPERTIES} (catalog_key, database_name, property_key, property_value) "
                           "VALUES (?, ?, ?, ?)", self.catalog_key, name, key, str(value))

    def _drop_database(self, name: str, tables: List[str]) -> None:
        """The database's rows go in one transaction; then the files of its tables, and its
        directory once empty (files of another catalog-key's tables in it stay)."""
        with self.client.transaction() as tx:
            tx.execute(f"DELETE FROM {TABLES} WHERE catalog_key = ? AND database_name = ?", self.catalog_key, name)
            tx.execute(f"DELETE FROM {PROPERTIES} WHERE catalog_key = ? AND database_name = ?", self.catalog_key, name)
            tx.execute(f"DELETE FROM {VIEWS} WHERE catalog_key = ? AND database_name = ?", self.catalog_key, name)
        for table in tables:
            self.io.delete(f"{self.database_path(name)}/{table}")
        if not self.io.list_names(self.database_path(name)):
            self.io.delete(self.database_path(name))

    def database_properties(self, name: str) -> dict:
        self._require_database(name)
        rows = self.client.query(f"SELECT property_key, property_value FROM {PROPERTIES} "
                                 "WHERE catalog_key = ? AND database_name = ?", self.catalog_key, name)
        return {k: v for k, v in rows if k not in (EXISTS_PROPERTY, LOCATION_PROPERTY)}

    def alter_database(self, name: str, properties: dict) -> None:
        """Set (add or overwrite) properties of a database."""
        self._require_database(name)
        if properties:
            self._write_properties(name, properties, replace=True)

    # -- tables -----------------------------------------------------------------------------

    def list_tables(self, database: str) -> List[str]:
        self._require_database(database)
        rows = self.client.query(f"SELECT table_name FROM {TABLES} WHERE catalog_key = ? AND database_name = ?",
                                 self.catalog_key, database)
        names = sorted(r[0] for r in rows)
        if format_table.enabled(self.options):
            return names
        return [n for n in names  # 'format-table.enabled' = false: format tables are not this catalog's
                if format_table.schema_manager(self.io, self.table_path(Identifier(database, n))).list_ids() == []]

    def table_exists(self, identifier) -> bool:
        ident = self._ident(identifier)
        return bool(self.client.query(f"SELECT 1 FROM {TABLES} WHERE catalog_key = ? AND database_name = ? "
                                      "AND table_name = ?", self.catalog_key, ident.database, ident.table))

    def create_table(self, identifier, schema: TableSchema, ignore_if_exists: bool = False):
        """The row and the first schema file land together: the row is inserted in a transaction
        (a concurrent creator of the same name waits on it, then loses on the primary key, having
        written nothing), ``schema-0`` is written, and the transaction commits; if that commit
        fails, the files just written are deleted. Under the commit lock when it is enabled."""
        ident = self._ident(identifier)
        self._require_database(ident.database)
        if self.table_exists(ident):
            if ignore_if_exists:
                return self.get_table(ident)
            raise TableAlreadyExistsError(f"table {ident} already exists")
        self._name_free(ident, for_view=False)
        self._check_case(ident.table, [f.name for f in schema.fields])
        path = self.table_path(ident)
        table = self._checked(path, schema, ident)

        def register():
            written = False
            try:
                with self.client.transaction() as tx:
                    tx.execute(f"INSERT INTO {TABLES} (catalog_key, database_name, table_name) VALUES (?, ?, ?)",
                               self.catalog_key, ident.database, ident.table)
                    if self._is_table(path):
                        raise TableAlreadyExistsError(f"table {ident}: {path} already holds a table that is not in "
                                                      "the catalog (drop its files, or register it)")
                    self._schema_files(path, schema).commit(schema)
                    written = True
            except BaseException:
                if written:
                    self.io.delete(path)
                raise

        try:
            self.environment(ident).lock(register)
        except JdbcKeyConflict:
            if ignore_if_exists:
                return self.get_table(ident)
            raise TableAlreadyExistsError(f"table {ident} already exists") from None
        return table

    def get_table(self, identifier):
        ident = self._ident(identifier)
        self._require_database(ident.database)
        if not self.table_exists(ident):
            raise TableNotFoundError(f"table {ident} does not exist")
        try:
            return super().get_table(ident)
        except TableNotFoundError:
            if format_table.schema_manager(self.io, self.table_path(ident)).list_ids():
                raise  # a format table, and format tables are not enabled
            raise CorruptMetadataError(f"table {ident} is in the catalog, but {self.table_path(ident)} holds no "
                                       "schema") from None

    def drop_table(self, identifier, ignore_if_not_exists: bool = False):
        """The row goes first (the table is gone for every reader at once), then its files."""
        ident = self._ident(identifier)
        deleted = self.client.execute(f"DELETE FROM {TABLES} WHERE catalog_key = ? AND database_name = ? "
                                      "AND table_name = ?", self.catalog_key, ident.database, ident.table)
        if not deleted:
            if ignore_if_not_exists:
                return
            raise TableNotFoundError(f"table {ident} does not exist")
        self.io.delete(self.table_path(ident))

    def rename_table(self, source, target):
        """The row is renamed and the directory moved in one transaction: a failed move leaves
        the row as it was."""
        src, dst = self._ident(source), self._ident(target)
        if not self.table_exists(src):
            raise TableNotFoundError(f"table {src} does not exist")
        self._require_database(dst.database)
        self._check_case(dst.table)
        self._name_free(dst, for_view=False)
        src_path, dst_path = self.table_path(src), self.table_path(dst)
        try:
            with self.client.transaction() as tx:
                renamed = tx.execute(f"UPDATE {TABLES} SET database_name = ?, table_name = ? WHERE catalog_key = ? "
                                     "AND database_name = ? AND table_name = ?",
                                     dst.database, dst.table, self.catalog_key, src.database, src.table)
                if not renamed:
                    raise TableNotFoundError(f"table {src} does not exist")
                if self.io.exists(dst_path):
                    raise TableAlreadyExistsError(f"table {dst}: {dst_path} already exists")
                self.io.mkdirs(self.database_path(dst.database))  # made by its first table, maybe not yet
                self.io.rename(src_path, dst_path)
        except JdbcKeyConflict:
            raise TableAlreadyExistsError(f"table {dst} already exists") from None
        except BaseException:
            if self.io.exists(dst_path) and not self.io.exists(src_path):
                self.io.rename(dst_path, src_path)
            raise

    # -- views ------------------------------------------------------------------------------

    def list_views(self, database: str) -> List[str]:
        self._require_database(database)
        rows = self.client.query(f"SELECT view_name FROM {VIEWS} WHERE catalog_key = ? AND database_name = ?",
                                 self.catalog_key, database)
        return sorted(r[0] for r in rows)

    def get_view(self, identifier) -> ViewSchema:
        ident = self._ident(identifier)
        rows = self.client.query(f"SELECT view_schema FROM {VIEWS} WHERE catalog_key = ? AND database_name = ? "
                                 "AND view_name = ?", self.catalog_key, ident.database, ident.table)
        if not rows:
            self._require_database(ident.database)
            raise ViewNotFoundError(f"view {ident} does not exist")
        return ViewSchema.from_json(rows[0][0], f"{ident} ({VIEWS})")

    def create_view(self, identifier, view: ViewSchema, ignore_if_exists: bool = False) -> None:
        """One row; a concurrent creator of the same name loses on the primary key. No case rule
        (Java's createView checks none)."""
        ident = self._ident(identifier)
        self._require_database(ident.database)
        self._name_free(ident, for_view=True)
        try:
            self.client.execute(f"INSERT INTO {VIEWS} (catalog_key, database_name, view_name, view_schema) "
                                "VALUES (?, ?, ?, ?)", self.catalog_key, ident.database, ident.table, view.to_json())
        except JdbcKeyConflict:
            if not ignore_if_exists:
                raise ViewAlreadyExistsError(f"view {ident} already exists") from None

    def alter_view(self, identifier, view: ViewSchema) -> None:
        ident = self._ident(identifier)
        if not self.client.execute(f"UPDATE {VIEWS} SET view_schema = ? WHERE catalog_key = ? AND database_name = ? "
                                   "AND view_name = ?", view.to_json(), self.catalog_key, ident.database, ident.table):
            raise ViewNotFoundError(f"view {ident} does not exist")

    def drop_view(self, identifier, ignore_if_not_exists: bool = False) -> None:
        ident = self._ident(identifier)
        if not self.client.execute(f"DELETE FROM {VIEWS} WHERE catalog_key = ? AND database_name = ? AND view_name = ?",
                                   self.catalog_key, ident.database, ident.table) and not ignore_if_not_exists:
            raise ViewNotFoundError(f"view {ident} does not exist")

    def rename_view(self, source, target) -> None:
        src, dst = self._ident(source), self._ident(target)
        self._require_database(dst.database)
        self._name_free(dst, for_view=True)
        try:
            renamed = self.client.execute(f"UPDATE {VIEWS} SET database_name = ?, view_name = ? WHERE catalog_key = ? "
                                          "AND database_name = ? AND view_name = ?",
                                          dst.database, dst.table, self.catalog_key, src.database, src.table)
        except JdbcKeyConflict:
            raise ViewAlreadyExistsError(f"view {dst} already exists") from None
        if not renamed:
            raise ViewNotFoundError(f"view {src} does not exist")


def _default_uri(warehouse: str) -> str:
    """Without ``uri``: the SQLite file ``paimon-catalog.sqlite`` in a local warehouse."""
    parsed = urlparse(warehouse)
    if parsed.scheme not in ("", "file"):
        raise InvalidOptionError("metastore=jdbc: catalog option 'uri' is required for a warehouse on "
                                 f"{parsed.scheme}:// (the default SQLite file needs a local warehouse)")
    directory = parsed.path if parsed.scheme else warehouse
    os.makedirs(directory, exist_ok=True)
    return f"jdbc:sqlite:{directory}/{DEFAULT_SQLITE_FILE}"
