"""System tables: ``t$<name>`` per table and ``sys.<name>`` for the whole catalog.

Every module here defines one system table and registers it once; :func:`load` finds it by name.
"""

from paimon_sql.exceptions import SystemTableNotFoundError
from paimon_sql.systables import (  # noqa: F401  (each import registers its table)
    aggregation_fields,
    all_partitions,
    all_table_options,
    audit_log,
    binlog,
    branches,
    buckets,
    catalog_options,
    consumers,
    file_indexes,
    file_key_ranges,
    files,
    manifests,
    options,
    partitions,
    ro,
    row_tracking,
    schemas,
    snapshots,
    statistics,
    table_indexes,
    tables,
    tags,
)
from paimon_sql.systables.base import GLOBAL_TABLES, SYSTEM_TABLES, SystemTable

__all__ = ["SystemTable", "SystemTableNotFoundError", "load", "load_global", "SYSTEM_TABLES", "GLOBAL_TABLES"]


def load(table, name: str) -> SystemTable:
    """``t$<name>`` of a FileStoreTable."""
    cls = SYSTEM_TABLES.get(name.lower())
    if cls is None:
        raise SystemTableNotFoundError(f"unknown system table '{table.name}${name}' "
                                       f"(known: {', '.join(sorted(SYSTEM_TABLES))})")
    return cls(table)


def load_global(catalog, name: str) -> SystemTable:
    """``sys.<name>``: a table over every table of the catalog."""
    cls = GLOBAL_TABLES.get(name.lower())
    if cls is None:
        raise SystemTableNotFoundError(f"unknown system table 'sys.{name}' (known: {', '.join(sorted(GLOBAL_TABLES))})")
    if not cls.supports(catalog):
        raise SystemTableNotFoundError(f"system table 'sys.{cls.name}' is not served by this catalog: it needs the "
                                       f"catalog option '{catalog_options.CatalogOptionsTable.ENABLED}' = 'true'")
    return cls(catalog)
