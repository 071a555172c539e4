"""``sys.tables``: every table of the catalog, its kind and its size at the latest snapshot."""

from paimon_sql.systables.base import GlobalSystemTable, columns, file_totals, register
from paimon_sql.table.format_table import FormatTable


@register
class AllTablesTable(GlobalSystemTable):
    name = "tables"
    FIELDS = columns("database_name STRING NOT NULL", "table_name STRING NOT NULL", "table_type STRING",
                     "partitioned BOOLEAN", "primary_key BOOLEAN", "owner STRING", "created_at BIGINT",
                     "created_by STRING", "updated_at BIGINT", "updated_by STRING", "record_count BIGINT",
                     "file_size_in_bytes BIGINT", "file_count BIGINT", "last_file_creation_time BIGINT")
    pushdown = frozenset({"database_name", "table_name"})

    def rows(self, predicate=None):
        out = []
        for db, name, t in self.tables(predicate):
            plain = isinstance(t, FormatTable)  # plain files, no snapshots: sizes and times unknown
            records, size, count, last = (None,) * 4 if plain else file_totals(t.new_scan().plan_entries())
            created = None if plain else t.schema_manager.schema(t.schema_manager.list_ids()[0]).time_millis
            out.append({"database_name": db, "table_name": name, "table_type": "table",
                        "partitioned": bool(t.schema.partition_keys),
                        "primary_key": bool(t.schema.primary_keys), "owner": None,
                        "created_at": created, "created_by": None,
                        "updated_at": t.schema.time_millis, "updated_by": None,
                        "record_count": records, "file_size_in_bytes": size,
                        "file_count": count, "last_file_creation_time": last})
        return self.from_rows(out)
