"""``t$table_indexes``: a snapshot's index files (dynamic-bucket HASH, DELETION_VECTORS)."""

from paimon_sql.systables.base import SnapshotMetadataTable, columns, partition_renderer, register


@register
class TableIndexesTable(SnapshotMetadataTable):
    name = "table_indexes"
    FIELDS = columns("partition STRING", "bucket INT NOT NULL", "index_type STRING NOT NULL",
                     "file_name STRING NOT NULL", "file_size BIGINT NOT NULL", "row_count BIGINT NOT NULL",
                     "dv_ranges ARRAY<ROW<f0 STRING NOT NULL, f1 INT NOT NULL, f2 INT NOT NULL, _CARDINALITY BIGINT>>",
                     "row_range_start BIGINT", "row_range_end BIGINT", "index_field_id INT", "index_field_name STRING")

    def rows(self, predicate=None):
        snap = self.snapshot()
        entries = [] if snap is None else self.table.index_manifest_entries(snap.index_manifest)
        render = partition_renderer(self.table)
        out = []
        for e in entries:
            ranges = None if e.dv_ranges is None else [
                {"f0": r.data_file, "f1": r.offset, "f2": r.length, "_CARDINALITY": r.cardinality}
                for r in e.dv_ranges]
            out.append({"partition": render(e.partition), "bucket": e.bucket, "index_type": e.index_type,
                        "file_name": e.file_name, "file_size": e.file_size,
                        "row_count": e.row_count, "dv_ranges": ranges, "row_range_start": None,
                        "row_range_end": None, "index_field_id": None,
                        "index_field_name": None})
        return self.from_rows(out)
