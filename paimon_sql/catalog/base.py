"""Catalog: databases and tables by name, independent of where their metadata is kept."""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import List, Optional

import pyarrow as pa

from paimon_sql.exceptions import InvalidIdentifierError
from paimon_sql.format.schema import TableSchema
from paimon_sql.format.types import DataField, fields_from_arrow

DEFAULT_DATABASE = "default"
_BAD_CHARS = re.compile(r"[/\\\x00-\x1f\x7f]")


def check_name(kind: str, name: str) -> str:
    """A database or table name that is safe as one directory name of the warehouse."""
    if not isinstance(name, str) or not name or name in (".", "..") or _BAD_CHARS.search(name) \
            or name != name.strip() or name.startswith("."):
        raise InvalidIdentifierError(f"invalid {kind} name {name!r}: names must be non-empty, without '/', "
                                     "'\\', control characters, surrounding spaces or a leading '.'")
    return name


@dataclass(frozen=True)
class Identifier:
    database: str
    table: str

    @staticmethod
    def parse(text: str, default_database: str = DEFAULT_DATABASE) -> "Identifier":
        """``db.t`` or ``t`` (backquotes allowed around each part)."""
        parts = [p.strip().strip("`") for p in _split_dots(text)]
        if len(parts) == 1:
            ident = Identifier(default_database, parts[0])
        elif len(parts) == 2:
            ident = Identifier(parts[0], parts[1])
        else:
            raise InvalidIdentifierError(f"invalid table identifier {text!r}: expected 'db.table' or 'table'")
        check_name("database", ident.database)
        check_name("table", ident.table)
        return ident

    def __str__(self) -> str:
        return f"{self.database}.{self.table}"


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

    def database_exists(self, name: str) -> bool:
        return name in self.list_databases()

    def table_exists(self, identifier) -> bool:
        ident = self._ident(identifier)
        return self.database_exists(ident.database) and ident.table in self.list_tables(ident.database)

    @staticmethod
    def _ident(identifier) -> Identifier:
        return identifier if isinstance(identifier, Identifier) else Identifier.parse(identifier)

    def create_table_from_arrow(self, identifier, schema: pa.Schema, partition_keys=(), primary_keys=(),
                                options=None, comment=None, ignore_if_exists: bool = False):
        """Convenience: a table whose columns are those of an Arrow schema."""
        fields: List[DataField] = fields_from_arrow(schema)
        return self.create_table(identifier, TableSchema.create(fields, partition_keys, primary_keys, options, comment),
                                 ignore_if_exists)
