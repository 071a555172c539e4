"""``t$manifests``: the manifest files a snapshot is made of (base and delta lists)."""

from paimon_sql.systables.base import SnapshotMetadataTable, columns, register, value_text


@register
class ManifestsTable(SnapshotMetadataTable):
    name = "manifests"
    FIELDS = columns("file_name STRING NOT NULL", "file_size BIGINT NOT NULL", "num_added_files BIGINT NOT NULL",
                     "num_deleted_files BIGINT NOT NULL", "schema_id BIGINT NOT NULL",
                     "min_partition_stats STRING", "max_partition_stats STRING", "min_row_id BIGINT",
                     "max_row_id BIGINT")

    def rows(self, predicate=None):
        snap, table = self.snapshot(), self.table
        metas = [] if snap is None else \
            table.manifest_list(snap.base_manifest_list) + table.manifest_list(snap.delta_manifest_list)
        types = [f.type for f in table.schema.fields_of(table.schema.partition_keys)]
        out = []
        for m in metas:
            stats = m.partition_stats.decode(types) if types else None
            out.append({"file_name": m.file_name, "file_size": m.file_size, "num_added_files": m.num_added_files,
                        "num_deleted_files": m.num_deleted_files, "schema_id": m.schema_id,
                        "min_partition_stats": _row_text(stats.mins) if stats else None,
                        "max_partition_stats": _row_text(stats.maxs) if stats else None,
                        "min_row_id": m.min_row_id, "max_row_id": m.max_row_id})
        return self.from_rows(out)


def _row_text(values) -> str:
    return "{" + ", ".join(value_text(v) for v in values) + "}"
