"""Paimon's table types, the option ``type``: which class serves a table of each type.

A catalog reads a table's schema and hands it to :func:`table_of`, so every catalog serves every
type the same way (as Paimon's ``CatalogUtils.loadTable`` does). A materialized table is a data
table whose options also hold its definition; object and format tables have classes of their own.
"""

from __future__ import annotations

from paimon_sql.io import FileIO
from paimon_sql.options import core_options as opts
from paimon_sql.schema.table_schema import TableSchema
from paimon_sql.store.catalog_environment import NO_CATALOG, CatalogEnvironment
from paimon_sql.table import materialized_table
from paimon_sql.table.format_table import FormatTable
from paimon_sql.table.object_table import ObjectTable, check_schema
from paimon_sql.table.table import FileStoreTable

TABLE_TYPES = {
    "table": FileStoreTable,
    "materialized-table": FileStoreTable,
    "format-table": FormatTable,
    "object-table": ObjectTable,
}


# what a table of each type must be at CREATE, beyond a data table's checks (Paimon's AbstractCatalog.createTable)
CREATE_CHECKS = {"object-table": check_schema, "materialized-table": materialized_table.check_schema}


def table_type(schema: TableSchema) -> str:
    return opts.table_type(schema.options)


def table_of(io: FileIO, path: str, schema: TableSchema, name: str, env: CatalogEnvironment = NO_CATALOG):
    """The table ``schema`` describes, by its type."""
    return TABLE_TYPES[table_type(schema)](io, path, schema, name, env=env)


def check_create(schema: TableSchema, name: str) -> None:
    """Refuse a schema a table of its type cannot be created with (every catalog calls this)."""
    check = CREATE_CHECKS.get(table_type(schema))
    if check is not None:
        check(schema, name)
