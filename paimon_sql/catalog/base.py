"""Catalog: databases and tables by name, independent of where their metadata is kept."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import List, Optional, Sequence

import pyarrow as pa

from paimon_sql.catalog.iceberg_hive import IcebergHiveCommitter
from paimon_sql.data.types import DataField, fields_from_arrow
from paimon_sql.exceptions import (FunctionNotFoundError, InvalidIdentifierError, InvalidOptionError, TableAlreadyExistsError,
                                   ViewAlreadyExistsError, ViewNotFoundError)
from paimon_sql.function.function import Function
from paimon_sql.io.object_stores import flag
from paimon_sql.io.path_guard import check_segment
from paimon_sql.options.core_options import parse_duration_ms
from paimon_sql.schema.table_schema import TableSchema
from paimon_sql.schema.view_schema import ViewSchema
from paimon_sql.store.catalog_environment import CatalogEnvironment

DEFAULT_DATABASE = "default"
SYSTEM_TABLE_SPLITTER = "$"  # t$files, t$branch_b: never part of a table's own name (as in Paimon)


@dataclass(frozen=True)
class Identifier:
    """A database and a table name, each checked when the identifier is built (however it is
    built: parsed, from SQL, or ``Identifier(...)`` in Python), so no catalog operation ever
    sees a name that would leave the warehouse."""

    database: str
    table: str

    def __post_init__(self):
        check_segment("database", self.database)
        check_segment("table", self.table)
        if SYSTEM_TABLE_SPLITTER in self.table:
            raise InvalidIdentifierError(f"invalid table name {self.table!r}: '$' separates a table from its "
                                         "system table or branch (t$files, t$branch_b)")

    @staticmethod
    def parse(text: str, default_database: str = DEFAULT_DATABASE) -> "Identifier":
        """``db.t`` or ``t`` (backquotes allowed around each part)."""
        parts = split_name(text)
        if len(parts) == 1:
            return Identifier(default_database, parts[0])
        if len(parts) == 2:
            return Identifier(parts[0], parts[1])
        raise InvalidIdentifierError(f"invalid table identifier {text!r}: expected 'db.table' or 'table'")

    def __str__(self) -> str:
        return f"{self.database}.{self.table}"


def split_name(text: str) -> List[str]:
    """The dot-separated parts of a name, each trimmed of spaces and backquotes (a backquoted part
    may hold dots)."""
    return [p.strip().strip("`") for p in _split_dots(text)]


def _split_dots(text: str) -> List[str]:
    parts, buf, quoted = [], "", False
    for ch in text:
        if ch == "`":
            quoted = not quoted
        if ch == "." and not quoted:
            parts.append(buf)
            buf = ""
        else:
            buf += ch
    parts.append(buf)
    return parts


@dataclass(frozen=True)
class LockSettings:
    """A metastore catalog's commit lock, as Paimon's CatalogOptions configure it."""

    check_max_sleep_ms: int  # lock-check-max-sleep: the longest wait between two tries
    acquire_timeout_ms: int  # lock-acquire-timeout: when a waiter gives up (and a holder's hold expires)


def lock_settings(options: dict, object_store: bool) -> Optional[LockSettings]:
    """The lock of catalog ``options``; None when ``lock.enabled`` is false. Its default is true on an
    object store only, as Paimon's ``lockEnabled()``: a local disk creates snapshot files atomically."""
    if not flag(options, "lock.enabled", object_store):
        return None
    try:
        return LockSettings(parse_duration_ms(options.get("lock-check-max-sleep", "8 s")),
                            parse_duration_ms(options.get("lock-acquire-timeout", "8 min")))
    except ValueError as e:
        raise InvalidOptionError(f"catalog lock option: {e}") from None


class Catalog(ABC):
    @abstractmethod
    def list_databases(self) -> List[str]: ...

    @abstractmethod
    def create_database(self, name: str, ignore_if_exists: bool = False, properties: Optional[dict] = None): ...

    @abstractmethod
    def drop_database(self, name: str, ignore_if_not_exists: bool = False, cascade: bool = False): ...

    @abstractmethod
    def list_tables(self, database: str) -> List[str]: ...

    @abstractmethod
    def create_table(self, identifier, schema: TableSchema, ignore_if_exists: bool = False): ...

    @abstractmethod
    def get_table(self, identifier): ...

    @abstractmethod
    def drop_table(self, identifier, ignore_if_not_exists: bool = False): ...

    @abstractmethod
    def rename_table(self, source, target): ...

    @abstractmethod
    def replace_table(self, identifier, schema: TableSchema): ...

    def environment(self, identifier: Identifier) -> CatalogEnvironment:
        """What this catalog adds to the commits of a table (its lock, metastore callbacks)."""
        return CatalogEnvironment(iceberg_hive=IcebergHiveCommitter(identifier.database, identifier.table))

    def database_properties(self, name: str) -> dict:
        """A database's properties (``comment``, ``owner`` and any others ALTER DATABASE set)."""
        return {}

    def alter_database(self, name: str, properties: dict) -> None:
        raise NotImplementedError(f"{type(self).__name__} cannot store database properties")

    def database_exists(self, name: str) -> bool:
        return name in self.list_databases()

    def table_exists(self, identifier) -> bool:
        ident = self._ident(identifier)
        return self.database_exists(ident.database) and ident.table in self.list_tables(ident.database)

    # -- views (Paimon's Catalog: createView, getView, dropView, listViews, renameView) ----------
    # A catalog that keeps views overrides all of these; a view and a table never share a name.

    def list_views(self, database: str) -> List[str]:
        return []

    def get_view(self, identifier) -> ViewSchema:
        raise ViewNotFoundError(f"view {self._ident(identifier)} does not exist")

    def create_view(self, identifier, view: ViewSchema, ignore_if_exists: bool = False) -> None:
        raise NotImplementedError(f"{type(self).__name__} cannot store views")

    def alter_view(self, identifier, view: ViewSchema) -> None:
        """Replace an existing view's schema (ALTER VIEW ... AS, CREATE OR REPLACE VIEW)."""
        raise NotImplementedError(f"{type(self).__name__} cannot store views")

    def drop_view(self, identifier, ignore_if_not_exists: bool = False) -> None:
        raise NotImplementedError(f"{type(self).__name__} cannot store views")

    def rename_view(self, source, target) -> None:
        raise NotImplementedError(f"{type(self).__name__} cannot store views")

    def view_exists(self, identifier) -> bool:
        try:
            self.get_view(identifier)
            return True
        except LookupError:
            return False

    # -- functions (Paimon's Catalog: listFunctions, getFunction, createFunction, alterFunction,
    # dropFunction); a function is named by its database and its name (Paimon's function names may
    # hold '.' and '-') ---------------------------------------------------------------------------

    def list_functions(self, database: str) -> List[str]:
        return []

    def get_function(self, database: str, name: str) -> Function:
        raise FunctionNotFoundError(f"function {database}.{name} does not exist")

    def create_function(self, database: str, function: Function, ignore_if_exists: bool = False) -> None:
        raise NotImplementedError(f"{type(self).__name__} cannot store functions")

    def alter_function(self, database: str, name: str, changes: Sequence[dict],
                       ignore_if_not_exists: bool = False) -> None:
        """``changes``: Paimon's FunctionChange JSON objects (:func:`paimon_sql.function.function.apply_changes`)."""
        raise NotImplementedError(f"{type(self).__name__} cannot store functions")

    def drop_function(self, database: str, name: str, ignore_if_not_exists: bool = False) -> None:
        raise NotImplementedError(f"{type(self).__name__} cannot store functions")

    def _name_free(self, ident: "Identifier", for_view: bool) -> None:
        """Refuse a new table or view named as an existing view or table of the database."""
        if for_view and self.table_exists(ident):
            raise ViewAlreadyExistsError(f"cannot create view {ident}: a table of that name exists")
        if not for_view and self.view_exists(ident):
            raise TableAlreadyExistsError(f"cannot create table {ident}: a view of that name exists")

    @staticmethod
    def _ident(identifier) -> Identifier:
        return identifier if isinstance(identifier, Identifier) else Identifier.parse(identifier)

    def create_table_from_arrow(self, identifier, schema: pa.Schema, partition_keys=(), primary_keys=(),
                                options=None, comment=None, ignore_if_exists: bool = False):
        """Convenience: a table whose columns are those of an Arrow schema."""
        fields: List[DataField] = fields_from_arrow(schema)
        return self.create_table(identifier, TableSchema.create(fields, partition_keys, primary_keys, options, comment),
                                 ignore_if_exists)
