"""``sys.partitions``: every partition of every partitioned table at its latest snapshot, named as
its directory is (Paimon's catalog partition specs: ``partition.legacy-name`` spells a DATE as its
epoch day)."""

from collections import defaultdict

from paimon_sql.systables.base import GlobalSystemTable, columns, file_totals, partition_spec_renderer, register
from paimon_sql.table.format_table import FormatTable


@register
class AllPartitionsTable(GlobalSystemTable):
    name = "partitions"
    FIELDS = columns("database_name STRING NOT NULL", "table_name STRING NOT NULL", "partition_name STRING",
                     "record_count BIGINT", "file_size_in_bytes BIGINT", "file_count BIGINT",
                     "last_file_creation_time BIGINT", "done BOOLEAN")
    pushdown = frozenset({"database_name", "table_name"})

    def rows(self, predicate=None):
        out = []
        for db, name, t in self.tables(predicate):
            if not t.schema.partition_keys or isinstance(t, FormatTable):  # a format table's are directories
                continue
            spec = partition_spec_renderer(t, legacy=None)  # the catalog's specs: the directories' spelling
            groups = defaultdict(list)
            for e in t.new_scan().plan_entries():
                groups[spec(e.partition)].append(e)
            for part in sorted(groups):
                records, size, count, last = file_totals(groups[part])
                out.append({"database_name": db, "table_name": name, "partition_name": part, "record_count": records,
                            "file_size_in_bytes": size, "file_count": count,
                            "last_file_creation_time": last, "done": False})
        return self.from_rows(out)
