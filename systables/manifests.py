"""``t$manifests``: the manifest files a snapshot is made of (base, delta and changelog lists, as
Java's ``readAllManifests``); partition stats as ``{v1, v2}`` (``{}`` unpartitioned)."""

from paimon_sql.data.partition_names import cast_text
from paimon_sql.systables.base import SnapshotMetadataTable, columns, register


@register
class ManifestsTable(SnapshotMetadataTable):
    name = "manifests"
    FIELDS = columns("file_name STRING NOT NULL", "file_size BIGINT NOT NULL", "num_added_files BIGINT NOT NULL",
                     "num_deleted_files BIGINT NOT NULL", "schema_id BIGINT NOT NULL",
                     "min_partition_stats STRING", "max_partition_stats STRING", "min_row_id BIGINT",
                     "max_row_id BIGINT")

    def rows(self, predicate=None):
        snap, table = self.snapshot(), self.table
        lists = [] if snap is None else [snap.base_manifest_list, snap.delta_manifest_list,
                                         snap.changelog_manifest_list]
        metas = [m for name in lists if name for m in table.manifest_list(name)]
        types = [f.type for f in table.schema.fields_of(table.schema.partition_keys)]
        out = []
        for m in metas:
            stats = m.partition_stats.decode(types)
            out.append({"file_name": m.file_name, "file_size": m.file_size, "num_added_files": m.num_added_files,
                        "num_deleted_files": m.num_deleted_files, "schema_id": m.schema_id,
                        "min_partition_stats": _row_text(stats.mins, types),
                        "max_partition_stats": _row_text(stats.maxs, types),
                        "min_row_id": m.min_row_id, "max_row_id": m.max_row_id})
        return self.from_rows(out)


def _row_text(values, types) -> str:
    return "{" + ", ".join(cast_text(v, t) for v, t in zip(values, types)) + "}"
