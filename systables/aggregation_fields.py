"""``t$aggregation_fields``: per column, the values and the keys of its ``fields.<column>.*``
options, as Java's AggregationFieldsTable lists them (in the order the schema holds them)."""

from paimon_sql.systables.base import SystemTable, columns, register


@register
class AggregationFieldsTable(SystemTable):
    name = "aggregation_fields"
    FIELDS = columns("field_name STRING NOT NULL", "field_type STRING NOT NULL", "function STRING",
                     "function_options STRING", "comment STRING")

    def rows(self, predicate=None):
        schema = self.table.schema
        own = {}  # column -> its fields.<column>.<...> keys (Java: keys of more than two dot-separated parts)
        for key in schema.options:
            parts = key.split(".")
            if len(parts) > 2 and parts[0] == "fields":
                own.setdefault(parts[1], []).append(key)
        return self.from_rows([{"field_name": f.name, "field_type": str(f.type),
                                "function": "[" + ", ".join(schema.options[k] for k in own.get(f.name, [])) + "]",
                                "function_options": "[" + ", ".join(own.get(f.name, [])) + "]",
                                "comment": f.description} for f in schema.fields])
