"""``sys.tables``: every table of the catalog, its kind and its size at the latest snapshot.

``table_type`` is the table's option ``type`` (Paimon's AllTablesTable); the catalog's views are
listed too, as ``view``, without sizes (Java's lists tables only: a view has no files)."""

from paimon_sql.systables.base import GlobalSystemTable, columns, file_totals, pushed_value_test, register
from paimon_sql.table.format_table import FormatTable
from paimon_sql.table.table_type import table_type

VIEW_TYPE = "view"


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
            out.append({"database_name": db, "table_name": name, "table_type": table_type(t.schema),
                        "partitioned": bool(t.schema.partition_keys),
                        "primary_key": bool(t.schema.primary_keys), "owner": None,
                        "created_at": created, "created_by": None,
                        "updated_at": t.schema.time_millis, "updated_by": None,
                        "record_count": records, "file_size_in_bytes": size,
                        "file_count": count, "last_file_creation_time": last})
        wanted = pushed_value_test(predicate, ["database_name", "table_name"])
        out += [{**dict.fromkeys(self.field_names), "database_name": db, "table_name": name, "table_type": VIEW_TYPE,
                 "partitioned": False, "primary_key": False}
                for db in self.table.list_databases() for name in self.table.list_views(db)
                if wanted({"database_name": db, "table_name": name})]
        return self.from_rows(sorted(out, key=lambda r: (r["database_name"], r["table_name"])))
