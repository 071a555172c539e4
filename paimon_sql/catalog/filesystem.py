"""FileSystemCatalog: the warehouse directory is the catalog (Paimon's default metastore).

``<warehouse>/<db>.db/`` is a database, ``<warehouse>/<db>.db/<table>/`` a table; a directory
is a table when it has ``schema/`` files (a format table: ``_schema/`` files, see
:mod:`paimon_sql.table.format_table`). Nothing else keeps state, so any process (a Spark
executor, pypaimon, Java Paimon) pointed at the same warehouse sees the same catalog.

Java's filesystem catalog stores no database properties; ours keeps those ALTER DATABASE sets in
``<db>.db/.properties.json``, a file no table name can clash with (names never start with '.')
and which other readers, listing only directories, pass over.

Java's filesystem catalog keeps no views either (nor functions: ours keeps each function's Paimon
JSON in ``<db>.db/$functions/<name>.json``, as its views); ours keeps each view's Paimon ViewSchema JSON in
``<db>.db/$views/<view>.json``: ``$`` is never part of a table name, so that directory can never be
a table (nor is it one to Java, having no ``schema/``). A view file is created atomically (a
create-if-absent, as snapshot files are), replaced whole, and goes with its database.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import replace
from typing import List, Optional

from paimon_sql.catalog.base import Catalog, Identifier
from paimon_sql.exceptions import (DatabaseAlreadyExistsError, DatabaseNotEmptyError, DatabaseNotFoundError,
                                   FunctionAlreadyExistsError, FunctionNotFoundError, SchemaError, TableAlreadyExistsError, TableNotFoundError, ViewAlreadyExistsError,
                                   ViewNotFoundError)
from paimon_sql.function.function import Function, apply_changes, check_name
from paimon_sql.io import FileIO
from paimon_sql.io.path_guard import check_segment
from paimon_sql.io.paths import PathFactory
from paimon_sql.schema.schema_manager import SchemaManager
from paimon_sql.schema.table_schema import TableSchema
from paimon_sql.schema.view_schema import ViewSchema
from paimon_sql.table import format_table
from paimon_sql.table.format_table import FormatTable
from paimon_sql.table.table import FileStoreTable
from paimon_sql.table.table_type import check_create, table_of

DB_SUFFIX = ".db"
PROPERTIES_FILE = ".properties.json"
VIEWS_DIR, VIEW_SUFFIX = "$views", ".json"
FUNCTIONS_DIR = "$functions"


class FileSystemCatalog(Catalog):
    def __init__(self, warehouse: str, options: Optional[dict] = None):
        self.warehouse = warehouse.rstrip("/")
        self.options = dict(options or {})
        self.io = FileIO.for_path(self.warehouse, self.options)
        self.io.mkdirs(self.warehouse)

    def database_path(self, name: str) -> str:
        """Every path of the catalog is built here or in :meth:`table_path` (from an
        :class:`Identifier`, whose names are checked when it is built)."""
        return f"{self.warehouse}/{check_segment('database', name)}{DB_SUFFIX}"

    def table_path(self, identifier) -> str:
        ident = self._ident(identifier)
        return f"{self.database_path(ident.database)}/{ident.table}"

    # -- databases --------------------------------------------------------------------------

    def list_databases(self) -> List[str]:
        return sorted(d[:-len(DB_SUFFIX)] for d in self.io.list_dirs(self.warehouse) if d.endswith(DB_SUFFIX))

    def database_exists(self, name: str) -> bool:
        return self.io.is_dir(self.database_path(name))

    def create_database(self, name: str, ignore_if_exists: bool = False, properties: Optional[dict] = None):
        path = self.database_path(name)
        if self.io.exists(path):
            if ignore_if_exists:
                return
            raise DatabaseAlreadyExistsError(f"database {name} already exists")
        self.io.mkdirs(path)

    def drop_database(self, name: str, ignore_if_not_exists: bool = False, cascade: bool = False):
        if not self.database_exists(name):
            if ignore_if_not_exists:
                return
            raise DatabaseNotFoundError(f"database {name} does not exist")
        tables, views = self.list_tables(name), self.list_views(name)
        if (tables or views) and not cascade:
            held = f"{len(tables)} table(s)" + (f", {len(views)} view(s)" if views else "")
            raise DatabaseNotEmptyError(f"database {name} is not empty ({held}); use CASCADE")
        self._drop_database(name, tables)

    def _drop_database(self, name: str, tables: List[str]) -> None:
        """Remove a database that exists, with its ``tables`` (checked: empty, or CASCADE)."""
        self.io.delete(self.database_path(name))

    def database_properties(self, name: str) -> dict:
        self._require_database(name)
        path = f"{self.database_path(name)}/{PROPERTIES_FILE}"
        return json.loads(self.io.read_text(path)) if self.io.exists(path) else {}

    def alter_database(self, name: str, properties: dict) -> None:
        """Set (add or overwrite) properties of a database."""
        merged = {**self.database_properties(name), **properties}
        self.io.write_bytes(f"{self.database_path(name)}/{PROPERTIES_FILE}",
                            json.dumps(merged, indent=2, sort_keys=True).encode("utf-8"))

    def _require_database(self, name: str) -> None:
        if not self.database_exists(name):
            raise DatabaseNotFoundError(f"database {name} does not exist")

    # -- tables -----------------------------------------------------------------------------

    def list_tables(self, database: str) -> List[str]:
        self._require_database(database)
        db = self.database_path(database)
        return sorted(t for t in self.io.list_dirs(db) if self._is_table(f"{db}/{t}"))

    def _is_table(self, path: str) -> bool:
        return any(n.startswith("schema-") for n in self.io.list_names(f"{path}/schema")) or \
            (format_table.enabled(self.options) and format_table.schema_manager(self.io, path).list_ids() != [])

    def table_exists(self, identifier) -> bool:
        ident = self._ident(identifier)
        return self.database_exists(ident.database) and self._is_table(self.table_path(ident))

    def create_table(self, identifier, schema: TableSchema, ignore_if_exists: bool = False) -> FileStoreTable:
        ident = self._ident(identifier)
        self._require_database(ident.database)
        path = self.table_path(ident)
        if self._is_table(path):
            if ignore_if_exists:
                return self.get_table(ident)
            raise TableAlreadyExistsError(f"table {ident} already exists")
        self._name_free(ident, for_view=False)
        table = self._checked(path, schema, ident)
        try:
            table.schema_manager.commit(schema)
        except SchemaError:  # schema-0 was created meanwhile: a concurrent create of the name won
            if ignore_if_exists:
                return self.get_table(ident)
            raise TableAlreadyExistsError(f"table {ident} already exists") from None
        return table

    def _schema_files(self, path: str, schema: TableSchema) -> SchemaManager:
        """Where a new table's first schema goes, no lock held (a format table's: ``_schema/``)."""
        if format_table.is_format_table(schema):
            return format_table.schema_manager(self.io, path)
        return SchemaManager(self.io, PathFactory(path, [], "parquet"))

    def _checked(self, path: str, schema: TableSchema, ident: Identifier) -> FileStoreTable:
        """The table ``schema`` makes, or the error of an option it cannot have, before any file is written."""
        if format_table.is_format_table(schema):
            format_table.require_enabled(self.options, str(ident))
            return FormatTable(self.io, path, schema, str(ident), env=self.environment(ident))
        check_create(schema, str(ident))
        table = table_of(self.io, path, schema, str(ident), self.environment(ident))
        if schema.is_primary_key_table:
            table.merge_function  # noqa: B018 - options a merge engine cannot honour fail here, not later
        return table

    def get_table(self, identifier) -> FileStoreTable:
        ident = self._ident(identifier)
        path = self.table_path(ident)
        if not self.database_exists(ident.database):
            raise DatabaseNotFoundError(f"database {ident.database} does not exist")
        schema = SchemaManager(self.io, PathFactory(path, [], "parquet")).latest()
        if schema is None and format_table.enabled(self.options):
            schema = format_table.latest_schema(self.io, path)
        if schema is None:
            raise TableNotFoundError(f"table {ident} does not exist")
        return table_of(self.io, path, schema, str(ident), self.environment(ident))

    def drop_table(self, identifier, ignore_if_not_exists: bool = False):
        ident = self._ident(identifier)
        if not self.table_exists(ident):
            if ignore_if_not_exists:
                return
            raise TableNotFoundError(f"table {ident} does not exist")
        self.io.delete(self.table_path(ident))

    def replace_table(self, identifier, schema: TableSchema) -> FileStoreTable:
        """CREATE OR REPLACE of an existing table, as Paimon's ``replaceTable``: its files are
        truncated (one OVERWRITE snapshot) and ``schema`` committed as its next schema, at the same
        location, so older snapshots, tags and branches stay readable by time travel. A change of
        partition keys cannot be done in place: the table is dropped and created anew."""
        table = self.get_table(identifier)
        self._checked(table.path, schema, self._ident(identifier))
        if schema.partition_keys != table.schema.partition_keys or isinstance(table, FormatTable) \
                or format_table.is_format_table(schema):  # files without snapshots: nothing to travel back to
            self.drop_table(identifier)
            return self.create_table(identifier, schema)
        if table.snapshot_manager.latest() is not None:
            table.new_commit().overwrite([])
        table.schema_manager.commit(replace(schema, id=table.schema_manager.latest().id + 1))
        return self.get_table(identifier)

    def rename_table(self, source, target):
        src, dst = self._ident(source), self._ident(target)
        if not self.table_exists(src):
            raise TableNotFoundError(f"table {src} does not exist")
        self._require_database(dst.database)
        if self.io.exists(self.table_path(dst)):
            raise TableAlreadyExistsError(f"table {dst} already exists")
        self._name_free(dst, for_view=False)
        self.io.rename(self.table_path(src), self.table_path(dst))

    # -- views ------------------------------------------------------------------------------

    def _view_path(self, ident: Identifier) -> str:
        return f"{self.database_path(ident.database)}/{VIEWS_DIR}/{ident.table}{VIEW_SUFFIX}"

    def list_views(self, database: str) -> List[str]:
        self._require_database(database)
        names = self.io.list_names(f"{self.database_path(database)}/{VIEWS_DIR}")
        return sorted(n[:-len(VIEW_SUFFIX)] for n in names if n.endswith(VIEW_SUFFIX))

    def get_view(self, identifier) -> ViewSchema:
        ident = self._ident(identifier)
        self._require_database(ident.database)
        path = self._view_path(ident)
        if not self.io.exists(path):
            raise ViewNotFoundError(f"view {ident} does not exist")
        return ViewSchema.from_json(self.io.read_text(path), path)

    def create_view(self, identifier, view: ViewSchema, ignore_if_exists: bool = False) -> None:
        ident = self._ident(identifier)
        self._require_database(ident.database)
        self._name_free(ident, for_view=True)
        if not self.io.try_create(self._view_path(ident), view.to_json().encode("utf-8")) and not ignore_if_exists:
            raise ViewAlreadyExistsError(f"view {ident} already exists")

    def alter_view(self, identifier, view: ViewSchema) -> None:
        """The view file replaced whole: a local file by a rename over it, an object by one PUT."""
        ident = self._ident(identifier)
        self.get_view(ident)
        self._replace(self._view_path(ident), view.to_json())

    def _replace(self, path: str, text: str) -> None:
        """A catalog file replaced whole: a local file by a rename over it, an object by one PUT."""
        data = text.encode("utf-8")
        if self.io.scheme:
            self.io.write_bytes(path, data)
            return
        staged = f"{path}.{uuid.uuid4().hex}.tmp"
        self.io.write_bytes(staged, data)
        self.io.rename(staged, path)

    def drop_view(self, identifier, ignore_if_not_exists: bool = False) -> None:
        ident = self._ident(identifier)
        if not self.view_exists(ident):
            if ignore_if_not_exists:
                return
            raise ViewNotFoundError(f"view {ident} does not exist")
        self.io.delete(self._view_path(ident))

    def rename_view(self, source, target) -> None:
        """The target file is created (if absent) before the source goes: never no view at all."""
        src, dst = self._ident(source), self._ident(target)
        view = self.get_view(src)
        self._require_database(dst.database)
        self._name_free(dst, for_view=True)
        if not self.io.try_create(self._view_path(dst), view.to_json().encode("utf-8")):
            raise ViewAlreadyExistsError(f"view {dst} already exists")
        self.io.delete(self._view_path(src))

    # -- functions --------------------------------------------------------------------------

    def _function_path(self, database: str, name: str) -> str:
        return f"{self.database_path(database)}/{FUNCTIONS_DIR}/{check_name(name)}{VIEW_SUFFIX}"

    def list_functions(self, database: str) -> List[str]:
        self._require_database(database)
        names = self.io.list_names(f"{self.database_path(database)}/{FUNCTIONS_DIR}")
        return sorted(n[:-len(VIEW_SUFFIX)] for n in names if n.endswith(VIEW_SUFFIX))

    def get_function(self, database: str, name: str) -> Function:
        self._require_database(database)
        path = self._function_path(database, name)
        if not self.io.exists(path):
            raise FunctionNotFoundError(f"function {database}.{name} does not exist")
        return Function.from_json(self.io.read_text(path), path)

    def create_function(self, database: str, function: Function, ignore_if_exists: bool = False) -> None:
        self._require_database(database)
        path = self._function_path(database, function.name)
        if not self.io.try_create(path, function.to_json().encode("utf-8")) and not ignore_if_exists:
            raise FunctionAlreadyExistsError(f"function {database}.{function.name} already exists")

    def alter_function(self, database: str, name: str, changes, ignore_if_not_exists: bool = False) -> None:
        """The function file replaced whole, as a view's (:meth:`alter_view`)."""
        try:
            function = self.get_function(database, name)
        except FunctionNotFoundError:
            if ignore_if_not_exists:
                return
            raise
        self._replace(self._function_path(database, name), apply_changes(function, changes).to_json())

    def drop_function(self, database: str, name: str, ignore_if_not_exists: bool = False) -> None:
        try:
            self.get_function(database, name)
        except FunctionNotFoundError:
            if ignore_if_not_exists:
                return
            raise
        self.io.delete(self._function_path(database, name))


__all__ = ["FileSystemCatalog", "Identifier"]
