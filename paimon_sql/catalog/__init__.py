"""Catalogs: databases and tables by name. The filesystem catalog is the default."""

from paimon_sql.catalog.base import Catalog, Identifier
from paimon_sql.catalog.filesystem import FileSystemCatalog
from paimon_sql.exceptions import InvalidOptionError


def load_catalog(warehouse: str, options: dict = None) -> Catalog:
    """The catalog of a warehouse directory (local path or s3:// URI); ``options`` as Paimon names
    them. A ``metastore`` we cannot serve is refused, never silently replaced by the filesystem."""
    metastore = (options or {}).get("metastore", "filesystem")
    if metastore != "filesystem":
        raise InvalidOptionError(f"catalog option 'metastore' = '{metastore}' is not supported "
                                 "(only 'filesystem' is)")
    return FileSystemCatalog(warehouse, options)


__all__ = ["Catalog", "FileSystemCatalog", "Identifier", "load_catalog"]
