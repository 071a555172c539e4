"""What both paths of the Iceberg publisher share (:mod:`paimon_sql.iceberg.publisher` decides which
snapshots get metadata; :mod:`~paimon_sql.iceberg.incremental` and :mod:`~paimon_sql.iceberg.afresh`
write it): the table's Iceberg schemas, Paimon's rule of which data files Iceberg sees, a Paimon
data file as an Iceberg one, manifests written (rolled at ``manifest.target-file-size``), snapshot
summaries, and the metadata file written last. A value of its own, so those modules and the
publisher that calls them do not import each other.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Dict, List, Optional, Tuple

from paimon_sql.iceberg import lineage, name_mapping
from paimon_sql.iceberg import manifest as im
from paimon_sql.iceberg.conversions import has_bounds, to_bytes
from paimon_sql.iceberg.metadata import highest_field_id, iceberg_schema, to_json
from paimon_sql.iceberg.paths import IcebergPaths, metadata_dir
from paimon_sql.manifest.manifest_file import DataFileMeta
from paimon_sql.mergetree.levels import num_levels
from paimon_sql.options.iceberg_options import IcebergOptions
from paimon_sql.read.scan import ScanStore

if TYPE_CHECKING:
    from paimon_sql.snapshot.snapshot import Snapshot

COMMIT_IDENTITY = "paimon-commit-identity"  # snapshot summary key: the Paimon commit the metadata was built from
# files changed by a snapshot, by data file path: (partition values, the file)
Changes = Dict[str, Tuple[tuple, DataFileMeta]]


class Publication:
    """Iceberg metadata of one table's snapshots, written into its metadata directory; ``dv``:
    whether its deletion vectors are published (:func:`paimon_sql.iceberg.deletion_vectors.published`)."""

    def __init__(self, table: ScanStore, options: IcebergOptions, dv: bool):
        self.table = table
        self.io = table.io
        self.options = options
        self.paths = IcebergPaths(metadata_dir(table, options))
        self.part_fields = table.schema.fields_of(table.schema.partition_keys)
        self.part_types = [f.type for f in self.part_fields]
        self._schemas: Dict[int, dict] = {}
        self.dv = dv
        self.lineage = options.format_version >= lineage.FORMAT_VERSION
        self.retired_floor = 0  # row ids handed out by metadata the publisher deleted (rolled back)
        self.retired_uuid: Optional[str] = None  # the table uuid of the newest metadata deleted
        self.retired_columns = 0  # the last-column-id of the metadata deleted

    def last_column_id(self, schemas: List[dict], base: Optional[dict] = None) -> int:
        """Iceberg's last-column-id: the highest column id of ``schemas``, never below ``base``'s
        nor the metadata retired (a dropped column's id is not handed out again)."""
        return max([highest_field_id(s) for s in schemas] + [self.retired_columns]
                   + ([base.get("last-column-id", 0)] if base is not None else []))

    def schema(self, schema_id: int) -> dict:
        if schema_id not in self._schemas:
            self._schemas[schema_id] = iceberg_schema(self.table.schema_at(schema_id))
        return self._schemas[schema_id]

    def exposed(self, f: DataFileMeta) -> bool:
        """Paimon's shouldAddFileToIceberg: an append table's every file, a primary-key table's top
        level (every level above 0 when its deletion vectors are published)."""
        if not self.table.schema.is_primary_key_table:
            return True
        return f.level > 0 if self.dv else f.level == num_levels(self.table.options) - 1

    def path(self, values: tuple, bucket: int, f: DataFileMeta) -> str:
        return self.table.paths.data_file_path(list(values), bucket, f.file_name, f.external_path)

    def data_file(self, path: str, values: tuple, f: DataFileMeta) -> im.IcebergDataFile:
        """Paimon's IcebergDataFileMeta.create: counts and per-column null counts and bounds from
        the file's value stats, keyed by the column ids of the file's schema."""
        file_schema = self.table.schema_at(f.schema_id)
        cols = list(f.value_stats_cols) if f.value_stats_cols is not None else file_schema.field_names
        stat_fields = [file_schema.field(c) for c in cols if c in file_schema.field_names]
        decoded = f.value_stats.decode([x.type for x in stat_fields]) if len(stat_fields) == len(cols) else None
        nulls, lower, upper = {}, {}, {}
        for i, sf in enumerate(stat_fields if decoded else []):
            if decoded.null_counts[i] is not None:
                nulls[sf.id] = decoded.null_counts[i]
            if has_bounds(sf.type) and decoded.mins[i] is not None and decoded.maxs[i] is not None:
                lower[sf.id], upper[sf.id] = to_bytes(sf.type, decoded.mins[i]), to_bytes(sf.type, decoded.maxs[i])
        return im.IcebergDataFile(path, f.file_name.rsplit(".", 1)[-1], values, f.row_count, f.file_size,
                                  nulls, lower, upper)

    def added(self, changes: Changes, sid: int) -> List[im.IcebergManifestEntry]:
        return [im.IcebergManifestEntry(im.ADDED, sid, sid, sid, self.data_file(p, v, f))
                for p, (v, f) in changes.items()]

    def write(self, entries: List[im.IcebergManifestEntry], sid: int,
              content: int = im.DATA) -> List[im.IcebergManifestFile]:
        return im.rolling_write(self.io, self.paths.new_manifest, entries, self.part_fields, sid,
                                self.options.codec, self.table.options.get("manifest.target-file-size"), content,
                                self.lineage)

    def write_list(self, manifests: List[im.IcebergManifestFile],
                   row_floor: int) -> Tuple[str, Optional[int], Optional[int]]:
        """A new manifest list of ``manifests``; returns its path and, in format version 3, the
        snapshot's ``first-row-id`` (``row_floor``) and ``added-rows`` (:func:`lineage.assign`)."""
        first, added = None, None
        if self.lineage:
            first = row_floor
            manifests, added = lineage.assign(manifests, first)
        list_path = self.paths.new_manifest_list()
        im.write_manifest_list(self.io, list_path, manifests, self.options.codec, self.options.legacy_manifest,
                               self.lineage)
        return list_path, first, added

    def summary(self, operation: str, snap: Snapshot, m: Dict[str, int]) -> Dict[str, str]:
        keys = ("added-data-files", "added-records", "added-files-size", "deleted-data-files", "deleted-records",
                "removed-files-size", "changed-partition-count", "total-records", "total-data-files",
                "total-files-size", "total-delete-files", "total-position-deletes", "total-equality-deletes")
        summary = {"operation": operation, **{k: str(max(0, m.get(k, 0))) for k in keys}}
        summary.update({k: str(v) for k, v in (snap.properties or {}).items() if v is not None})
        summary[COMMIT_IDENTITY] = commit_identity(snap)  # after the properties: none overrides it
        return summary

    def finish(self, metadata: dict, sid: int) -> None:
        if self.table.options.file_format != "parquet":  # files without Iceberg's field ids: found by name
            metadata["properties"][name_mapping.KEY] = name_mapping.name_mapping(metadata["schemas"])
        self.io.try_create(self.paths.metadata(sid), to_json(metadata))
        self.io.write_bytes(self.paths.version_hint(), str(sid).encode())


def commit_identity(snap: Snapshot) -> str:
    """The Paimon commit a snapshot is: its uuid; for a snapshot without one (older writers), its
    commit user, identifier and time."""
    return snap.uuid or f"{snap.commit_user}:{snap.commit_identifier}:{snap.time_millis}"
