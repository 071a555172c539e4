"""``t$schemas``: every ``schema-N`` of the table (fields, keys and options as JSON text; secret
option values masked)."""

import json

from paimon_sql.options.core_options import redact
from paimon_sql.systables.base import SystemTable, columns, local_time, pushed_value_test, register


@register
class SchemasTable(SystemTable):
    name = "schemas"
    FIELDS = columns("schema_id BIGINT NOT NULL", "fields STRING NOT NULL", "partition_keys STRING NOT NULL",
                     "primary_keys STRING NOT NULL", "options STRING NOT NULL", "comment STRING",
                     "update_time TIMESTAMP(3) NOT NULL")
    pushdown = frozenset({"schema_id"})

    def rows(self, predicate=None):
        sm = self.table.schema_manager
        wanted = pushed_value_test(predicate, ["schema_id"])
        schemas = [sm.schema(i) for i in sm.list_ids() if wanted({"schema_id": i})]
        compact = dict(separators=(",", ":"))
        return self.table_of({
            "schema_id": [s.id for s in schemas],
            "fields": [json.dumps([f.to_json() for f in s.fields], **compact) for s in schemas],
            "partition_keys": [json.dumps(s.partition_keys, **compact) for s in schemas],
            "primary_keys": [json.dumps(s.primary_keys, **compact) for s in schemas],
            "options": [json.dumps(redact(s.options), **compact) for s in schemas],
            "comment": [s.comment for s in schemas],
            "update_time": [local_time(s.time_millis) for s in schemas],
        })
