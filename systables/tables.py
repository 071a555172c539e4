"""``sys.tables``: every table of the catalog, as Paimon's AllTablesTable lists them.

``table_type`` is the table's option ``type``; ``owner``, ``created_at``, ``created_by``,
``updated_at`` and ``updated_by`` are its options of those names (``owner``, ``createdAt``, ...: a
REST catalog's audit fields), NULL where it has none. The sizes come from a catalog's snapshot
records (Paimon's ``loadSnapshot``), which the filesystem, JDBC and Hive catalogs do not keep: NULL,
as Java shows them there. The catalog's views are listed too, as ``view`` (Java's lists tables
only; its filesystem catalog keeps no views)."""

from paimon_sql.systables.base import GlobalSystemTable, columns, pushed_value_test, register
from paimon_sql.table.table_type import table_type

VIEW_TYPE = "view"
# AuditRESTResponse's field names, read from a table's options
AUDIT_OPTIONS = {"owner": "owner", "created_at": "createdAt", "created_by": "createdBy", "updated_at": "updatedAt",
                 "updated_by": "updatedBy"}


def _audit(options: dict) -> dict:
    out = {column: options.get(key) for column, key in AUDIT_OPTIONS.items()}
    for column in ("created_at", "updated_at"):  # epoch millis; text that is none reads as unknown
        out[column] = int(out[column]) if str(out[column]).lstrip("-").isdigit() else None
    return out


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
            out.append({**dict.fromkeys(self.field_names), **_audit(t.schema.options), "database_name": db,
                        "table_name": name, "table_type": table_type(t.schema),
                        "partitioned": bool(t.schema.partition_keys), "primary_key": bool(t.schema.primary_keys)})
        wanted = pushed_value_test(predicate, ["database_name", "table_name"])
        out += [{**dict.fromkeys(self.field_names), "database_name": db, "table_name": name, "table_type": VIEW_TYPE,
                 "partitioned": False, "primary_key": False}
                for db in self.table.list_databases() for name in self.table.list_views(db)
                if wanted({"database_name": db, "table_name": name})]
        return self.from_rows(sorted(out, key=lambda r: (r["database_name"], r["table_name"])))
