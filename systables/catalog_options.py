"""``sys.catalog_options``: the catalog's own options (the warehouse and the storage settings;
secret values masked). Served only where the catalog option ``catalog-options-table.enabled`` is
true, as Paimon's catalogs serve it (its values name the catalog's storage)."""

from paimon_sql.options.core_options import redact
from paimon_sql.systables.base import GlobalSystemTable, columns, register


@register
class CatalogOptionsTable(GlobalSystemTable):
    name = "catalog_options"
    FIELDS = columns("key STRING NOT NULL", "value STRING NOT NULL")
    ENABLED = "catalog-options-table.enabled"

    @classmethod
    def supports(cls, catalog) -> bool:
        return str(catalog.options.get(cls.ENABLED, "false")).strip().lower() == "true"

    def rows(self, predicate=None):
        catalog = self.table
        shown = sorted((k, str(v)) for k, v in redact({"warehouse": catalog.warehouse, **catalog.options}).items())
        return self.table_of({"key": [k for k, _ in shown], "value": [v for _, v in shown]})
