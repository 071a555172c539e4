"""``t$aggregation_fields``: each column's aggregate function (``fields.<c>.aggregate-function``)."""

from paimon_sql.systables.base import SystemTable, columns, register


@register
class AggregationFieldsTable(SystemTable):
    name = "aggregation_fields"
    FIELDS = columns("field_name STRING NOT NULL", "field_type STRING NOT NULL", "function STRING NOT NULL",
                     "function_options STRING NOT NULL", "comment STRING")

    def rows(self, predicate=None):
        schema = self.table.schema
        options = schema.options
        default = options.get("fields.default-aggregate-function")
        out = []
        for f in schema.fields:
            prefix = f"fields.{f.name}."
            function = options.get(prefix + "aggregate-function", default)
            own = sorted(k for k in options if k.startswith(prefix))
            out.append({"field_name": f.name, "field_type": str(f.type),
                        "function": f"[{function}]" if function else "[]",
                        "function_options": "[" + ", ".join(f"{k}={options[k]}" for k in own) + "]",
                        "comment": f.description})
        return self.from_rows(out)
