"""``sys.catalog_options``: the catalog's own options (the warehouse and the storage settings;
secret keys are not shown)."""

from paimon_sql.systables.base import GlobalSystemTable, columns, register

_SECRET = ("secret", "password", "token")


@register
class CatalogOptionsTable(GlobalSystemTable):
    name = "catalog_options"
    FIELDS = columns("key STRING NOT NULL", "value STRING NOT NULL")

    def rows(self, predicate=None):
        catalog = self.table
        items = {"warehouse": catalog.warehouse, **catalog.options}
        shown = sorted((k, str(v)) for k, v in items.items() if not any(s in k.lower() for s in _SECRET))
        return self.table_of({"key": [k for k, _ in shown], "value": [v for _, v in shown]})
