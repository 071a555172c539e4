"""``sys.catalog_options``: the catalog's own options (the warehouse and the storage settings;
secret values masked)."""

from paimon_sql.options.core_options import redact
from paimon_sql.systables.base import GlobalSystemTable, columns, register


@register
class CatalogOptionsTable(GlobalSystemTable):
    name = "catalog_options"
    FIELDS = columns("key STRING NOT NULL", "value STRING NOT NULL")

    def rows(self, predicate=None):
        catalog = self.table
        shown = sorted((k, str(v)) for k, v in redact({"warehouse": catalog.warehouse, **catalog.options}).items())
        return self.table_of({"key": [k for k, _ in shown], "value": [v for _, v in shown]})
