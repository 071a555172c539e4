"""``sys.catalog_options``: the catalog's own options (the warehouse and the storage settings;
secret values masked)."""

import re

from paimon_sql.format.options import MASK, redact
from paimon_sql.systables.base import GlobalSystemTable, columns, register

URI_PASSWORD = re.compile(r"(?i)(password=)[^&;]*")  # a JDBC uri may carry the password as a parameter


@register
class CatalogOptionsTable(GlobalSystemTable):
    name = "catalog_options"
    FIELDS = columns("key STRING NOT NULL", "value STRING NOT NULL")

    def rows(self, predicate=None):
        catalog = self.table
        shown = sorted((k, URI_PASSWORD.sub(r"\g<1>" + MASK, str(v)))
                       for k, v in redact({"warehouse": catalog.warehouse, **catalog.options}).items())
        return self.table_of({"key": [k for k, _ in shown], "value": [v for _, v in shown]})
