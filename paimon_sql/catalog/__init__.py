"""Catalogs: databases and tables by name. The filesystem catalog is the default."""

from paimon_sql.catalog.base import Catalog, Identifier
from paimon_sql.catalog.filesystem import FileSystemCatalog


def load_catalog(warehouse: str, options: dict = None) -> Catalog:
    """The catalog of a warehouse directory (local path or s3:// URI)."""
    return FileSystemCatalog(warehouse, options)


__all__ = ["Catalog", "FileSystemCatalog", "Identifier", "load_catalog"]
