"""FormatTable: a directory of plain CSV, Parquet, ORC or JSON files (``'type' = 'format-table'``).

As Paimon's ``FormatTable``: a name, columns, partition keys, a location and a file format, and no
snapshots — the files in the directory are the table. Data files sit directly in the location, a
partitioned table's in Hive-style ``k=v/`` directories, so plain Spark, Hive and Trino readers
read the directory as it is. Spark's native readers and writers do the work
(:mod:`paimon_sql.spark.format_table`); this module holds what the table is and which options it
takes.

The filesystem and JDBC catalogs keep the schema in ``<location>/_schema/schema-N`` (Paimon's
TableSchema JSON, ``type`` = ``format-table``): file readers pass over names starting with ``_``,
so the directory stays a plain one to them. The Hive catalog keeps it in the metastore instead, as
Paimon's HiveCatalog does (:mod:`paimon_sql.catalog.hive`).

Options take Paimon's names (CoreOptions, FormatTableOptions, CsvOptions, JsonOptions); each maps to
the option of Spark's reader and writer that does the same. A Paimon option of data tables (buckets,
merge engines, snapshots...) has no meaning for a directory of files and is refused, as is a
primary key, so nothing a user sets is silently ignored.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Dict, Mapping, Optional

from paimon_sql.exceptions import FormatTableError, InvalidOptionError
from paimon_sql.format.format_table_options import check_options, file_format, spark_options
from paimon_sql.io import FileIO
from paimon_sql.io.object_stores import flag
from paimon_sql.options import core_options as opts
from paimon_sql.schema import schema_change as sc
from paimon_sql.schema.schema_manager import SchemaManager
from paimon_sql.schema.table_schema import TableSchema
from paimon_sql.store.catalog_environment import NO_CATALOG, CatalogEnvironment
from paimon_sql.store.time_travel import TRAVEL_KEYS

FORMAT_TABLE = "format-table"
SCHEMA_DIR = "_schema"  # <location>/_schema/schema-N: hidden from file readers by its '_'
ENABLED = "format-table.enabled"  # Paimon's CatalogOptions: default true

def is_format_table(schema: TableSchema) -> bool:
    return opts.table_type(schema.options) == FORMAT_TABLE


def enabled(catalog_options: Mapping[str, str]) -> bool:
    """Paimon's catalog option ``format-table.enabled`` (default true): when false the catalog
    neither creates, lists nor loads format tables."""
    return flag(dict(catalog_options), ENABLED, True)


def require_enabled(catalog_options: Mapping[str, str], name: str) -> None:
    if not enabled(catalog_options):
        raise InvalidOptionError(f"format table {name}: format tables are not enabled in this catalog "
                                 f"('{ENABLED}' = 'false')")


@dataclass(frozen=True)
class _SchemaPaths:
    """Where SchemaManager keeps a format table's schemas: ``<location>/_schema``."""

    root: str
    branch: str = "main"

    @property
    def schema_dir(self) -> str:
        return f"{self.root}/{SCHEMA_DIR}"

    def schema_path(self, schema_id: int) -> str:
        return f"{self.schema_dir}/schema-{schema_id}"


class FormatSchemaManager(SchemaManager):
    """The ``_schema/schema-N`` files of a format table (filesystem and JDBC catalogs). ALTER TABLE
    may set or remove options, change the comment and add columns at the end — files written before
    read the new column as NULL; renaming, dropping, retyping or moving a column would misread the
    files already there, and a new file format or type would make them unreadable."""

    def commit_changes(self, changes) -> TableSchema:
        latest = self.latest()
        for c in changes:
            fixed = isinstance(c, (sc.SetOption, sc.RemoveOption)) and c.key in ("type", "file.format") and \
                getattr(c, "value", None) != (latest.options.get(c.key) if latest else None)
            if fixed or not isinstance(c, (sc.SetOption, sc.RemoveOption, sc.UpdateComment, sc.AddColumn)) \
                    or isinstance(c, sc.AddColumn) and (c.position is not None or not isinstance(c.name, str)):
                raise FormatTableError(f"format table at {self.paths.root}: ALTER TABLE can set options, the "
                                       f"comment and add columns at the end, not {type(c).__name__} (its files stay "
                                       "as written)")
        return super().commit_changes(changes)


def schema_manager(io: FileIO, path: str, lock=None) -> FormatSchemaManager:
    """The SchemaManager of a format table kept in files (filesystem and JDBC catalogs)."""
    return FormatSchemaManager(io, _SchemaPaths(path.rstrip("/")), *([lock] if lock is not None else []))


def latest_schema(io: FileIO, path: str) -> Optional[TableSchema]:
    return schema_manager(io, path).latest()


class FormatTable:
    """A format table of a catalog: its schema (columns, partition keys, options, comment), its
    location and its file format. It has a ``schema_manager`` unless the metastore keeps the schema."""

    def __init__(self, io: FileIO, path: str, schema: TableSchema, name: str = "",
                 env: CatalogEnvironment = NO_CATALOG, keeps_schema: bool = True):
        self.io, self.env, self.schema = io, env, schema
        self.path = path.rstrip("/")
        self.name = name or self.path.rsplit("/", 1)[-1]
        self.format = file_format(schema.options)
        self.options = schema.core_options()  # .raw: what INSERT's option checks read
        if keeps_schema:  # else the metastore keeps it: __getattr__ refuses ALTER
            self.schema_manager = schema_manager(io, self.path, env.lock)
        self.dynamic_options: dict = {}

    @property
    def location(self) -> str:
        return self.path

    def spark_options(self) -> Dict[str, str]:
        return spark_options(self.schema.options)

    def copy(self, dynamic_options: Optional[dict]) -> "FormatTable":
        """This table with options given for one read or write (a hint, ``SET spark.paimon.*``)."""
        if not dynamic_options:
            return self
        travel = [k for k in dynamic_options if k in TRAVEL_KEYS or k in ("branch", "incremental-between",
                                                                              "incremental-between-timestamp")]
        if travel:
            raise FormatTableError(f"format table {self.name} has no snapshots: {travel[0]} (time travel, "
                                   "incremental reads, branches) is not supported")
        merged = {**self.schema.options, **dynamic_options}
        check_options(merged, self.name)
        table = FormatTable(self.io, self.path, replace(self.schema, options=merged), self.name, self.env,
                            "schema_manager" in vars(self))
        table.dynamic_options = {**self.dynamic_options, **dynamic_options}
        return table

    travel = copy  # time travel keys are refused by copy

    def switch_to_branch(self, branch: str):
        raise FormatTableError(f"format table {self.name} has no branches (t$branch_{branch})")

    def __getattr__(self, item: str):
        """Everything of a data table a format table lacks (snapshots, tags, scans, commits): one
        line naming the table."""
        if item.startswith("__"):
            raise AttributeError(item)
        if item == "schema_manager":
            raise FormatTableError(f"format table {self.name}: its schema is the metastore's, ALTER TABLE is not "
                                   "supported here")
        raise FormatTableError(f"format table {self.name}: the statement needs what a format table does not have "
                               f"(snapshots, tags, branches, Paimon data files: '{item}')")

    def __repr__(self) -> str:
        return f"FormatTable({self.name}, {self.format}, {self.path})"


def refuse(table, what: str) -> None:
    """Raise when ``table`` is a format table: ``what`` (UPDATE, a system table, ...) needs snapshots."""
    if isinstance(table, FormatTable):
        raise FormatTableError(f"format table {table.name}: {what} is not supported (a format table is plain "
                               "files, without snapshots)")
