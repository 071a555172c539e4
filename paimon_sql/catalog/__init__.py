"""Catalogs: databases and tables by name. The filesystem catalog is the default; the catalog
option ``metastore`` picks another, by the name Paimon gives it."""

from importlib import import_module

from paimon_sql.catalog.base import Catalog, Identifier
from paimon_sql.catalog.filesystem import FileSystemCatalog
from paimon_sql.exceptions import InvalidOptionError
from paimon_sql.options.core_options import validate_catalog

# metastore -> (module, class); modules load on first use, so a metastore's client library is
# only needed by those who choose it
METASTORES = {
    "filesystem": ("paimon_sql.catalog.filesystem", "FileSystemCatalog"),
    "jdbc": ("paimon_sql.catalog.jdbc", "JdbcCatalog"),
    "hive": ("paimon_sql.catalog.hive", "HiveCatalog"),
    "rest": ("paimon_sql.catalog.rest.rest_catalog", "RESTCatalog"),
}


def load_catalog(warehouse: str, options: dict = None) -> Catalog:
    """The catalog of a warehouse (local path or object-store URI); ``options`` as Paimon names
    them (``metastore``, ``uri``, ``jdbc.*``, ``s3.*``, ...). A ``metastore`` we cannot serve is
    refused, never silently replaced by the filesystem; so is any catalog option paimon-sql does
    not honour (option_support.tsv)."""
    validate_catalog(options or {})
    metastore = (options or {}).get("metastore", "filesystem")
    if metastore not in METASTORES:
        raise InvalidOptionError(f"catalog option 'metastore' = '{metastore}' is not supported "
                                 f"(one of: {', '.join(METASTORES)})")
    module, name = METASTORES[metastore]
    return getattr(import_module(module), name)(warehouse, options)


__all__ = ["Catalog", "FileSystemCatalog", "Identifier", "load_catalog"]
