"""``t$files``: the live data files of a snapshot with their stats.

Pushed down: ``partition``, ``bucket`` and ``level`` conjuncts drop manifest entries before any
stats are decoded. Stats are shown per current column (matched by field id, as Paimon's stats
evolution does): ``{a=1, b=x}`` in column-name order, ``null`` where a file has none.
"""

from paimon_sql.systables.base import SnapshotMetadataTable, columns, register, value_text


@register
class FilesTable(SnapshotMetadataTable):
    name = "files"
    FIELDS = columns("partition STRING", "bucket INT NOT NULL", "file_path STRING NOT NULL",
                     "file_format STRING NOT NULL", "schema_id BIGINT NOT NULL", "level INT NOT NULL",
                     "record_count BIGINT NOT NULL", "file_size_in_bytes BIGINT NOT NULL", "min_key STRING",
                     "max_key STRING", "null_value_counts STRING NOT NULL", "min_value_stats STRING NOT NULL",
                     "max_value_stats STRING NOT NULL", "min_sequence_number BIGINT",
                     "max_sequence_number BIGINT", "creation_time TIMESTAMP(3)", "deleteRowCount BIGINT",
                     "file_source STRING", "first_row_id BIGINT", "write_cols ARRAY<STRING>")
    pushdown = frozenset({"partition", "bucket", "level"})

    def rows(self, predicate=None):
        return self.file_rows(predicate, self._extra)

    def _extra(self, f) -> dict:
        nulls, mins, maxs = self._stats(f)
        return {"null_value_counts": nulls, "min_value_stats": mins, "max_value_stats": maxs,
                "min_sequence_number": f.min_sequence_number, "max_sequence_number": f.max_sequence_number,
                "creation_time": f.creation_time, "deleteRowCount": f.delete_row_count,
                "file_source": None if f.file_source is None else ("APPEND", "COMPACT")[f.file_source],
                "write_cols": None if f.write_cols is None else list(f.write_cols)}

    def _stats(self, f):
        """(null counts, mins, maxs) texts over the current columns, as Java's stats evolution: a
        column the file does not hold (added later, or not among a partial file's ``write_cols``)
        counts every row as null; one it holds without stats is ``null`` throughout."""
        file_schema = self.table.schema_at(f.schema_id)
        held = {x.id for x in file_schema.fields if f.write_cols is None or x.name in f.write_cols}
        stat_fields = (file_schema.fields if f.value_stats_cols is None
                       else [file_schema.field(c) for c in f.value_stats_cols])
        decoded = f.value_stats.decode([x.type for x in stat_fields])
        by_id = {x.id: i for i, x in enumerate(stat_fields)}
        nulls, mins, maxs = [], [], []
        for cur in sorted(self.table.schema.fields, key=lambda x: x.name):
            i = by_id.get(cur.id)
            known = i is not None and decoded.mins is not None
            count = f.row_count if cur.id not in held else (decoded.null_counts[i] if known else None)
            nulls.append(f"{cur.name}={value_text(count)}")
            mins.append(f"{cur.name}={value_text(decoded.mins[i]) if known else 'null'}")
            maxs.append(f"{cur.name}={value_text(decoded.maxs[i]) if known else 'null'}")
        return "{" + ", ".join(nulls) + "}", "{" + ", ".join(mins) + "}", "{" + ", ".join(maxs) + "}"
