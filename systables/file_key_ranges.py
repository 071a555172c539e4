"""``t$file_key_ranges``: each live data file's key range and level (how the LSM tree is laid out)."""

from paimon_sql.systables.base import SnapshotMetadataTable, columns, register


@register
class FileKeyRangesTable(SnapshotMetadataTable):
    name = "file_key_ranges"
    FIELDS = columns("partition STRING", "bucket INT NOT NULL", "file_path STRING NOT NULL",
                     "file_format STRING NOT NULL", "schema_id BIGINT NOT NULL", "level INT NOT NULL",
                     "record_count BIGINT NOT NULL", "file_size_in_bytes BIGINT NOT NULL", "min_key STRING",
                     "max_key STRING", "first_row_id BIGINT")
    pushdown = frozenset({"partition", "bucket", "level"})

    def rows(self, predicate=None):
        return self.file_rows(predicate)
