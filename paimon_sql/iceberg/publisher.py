"""The per-snapshot publisher (the core of Paimon's IcebergCommitCallback): which snapshots get
Iceberg metadata, and for each whether its metadata extends the previous snapshot's
(:mod:`paimon_sql.iceberg.incremental`) or is written afresh (:mod:`paimon_sql.iceberg.afresh`).

It also holds what both paths share: the table's Iceberg schemas, Paimon's rule of which data
files Iceberg sees, a Paimon data file as an Iceberg one, manifests written (rolled at
``manifest.target-file-size``), snapshot summaries, and the metadata file written last.

After a rollback (as Paimon's master after 2.0, #9036): each snapshot's summary names the Paimon
commit it was built from (``paimon-commit-identity``: the snapshot's uuid), so metadata a rollback
abandoned is told from the live one by its commit, not by clocks; an abandoned base is not
extended (the metadata is written afresh); metadata written in place of abandoned metadata keeps
its table uuid, and ``last-column-id`` never goes below an id once handed out.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Dict, List, Optional, Tuple

from paimon_sql.exceptions import PaimonError
from paimon_sql.iceberg import afresh, incremental, name_mapping, rest
from paimon_sql.iceberg import deletion_vectors as dvs
from paimon_sql.iceberg import manifest as im
from paimon_sql.iceberg import lineage
from paimon_sql.iceberg.conversions import has_bounds, to_bytes
from paimon_sql.iceberg.metadata import current_snapshot, highest_field_id, iceberg_schema, read_metadata, to_json
from paimon_sql.iceberg.paths import IcebergPaths, metadata_dir
from paimon_sql.manifest.manifest_file import DataFileMeta
from paimon_sql.mergetree.levels import num_levels
from paimon_sql.options.iceberg_options import HIVE_CATALOG, REST_CATALOG, IcebergOptions

if TYPE_CHECKING:
    from paimon_sql.snapshot.snapshot import Snapshot
    from paimon_sql.table.table import FileStoreTable

CATCH_UP = 100  # snapshots published one by one after the last published; beyond, the latest alone
COMMIT_IDENTITY = "paimon-commit-identity"  # snapshot summary key: the Paimon commit the metadata was built from
# files changed by a snapshot, by data file path: (partition values, the file)
Changes = Dict[str, Tuple[tuple, DataFileMeta]]


def commit_to_catalog(table: FileStoreTable, options: IcebergOptions, path: str, base_path: Optional[str]) -> None:
    """Java's metadataCommitter: metadata ``path`` (extending ``base_path``, if any) registered in
    the Hive metastore (``hive-catalog``) or committed to the REST catalog (``rest-catalog``);
    nothing for the storages without a catalog."""
    if options.storage == HIVE_CATALOG and table.env.iceberg_hive is not None:
        table.env.iceberg_hive.commit(table, path, base_path)
    elif options.storage == REST_CATALOG:
        rest.commit(table, path)


class Publisher:
    """Iceberg metadata of one table's snapshots, written into its metadata directory."""

    def __init__(self, table: FileStoreTable, options: IcebergOptions):
        self.table = table
        self.io = table.io
        self.options = options
        self.paths = IcebergPaths(metadata_dir(table, options))
        self.part_fields = table.schema.fields_of(table.schema.partition_keys)
        self.part_types = [f.type for f in self.part_fields]
        self._schemas: Dict[int, dict] = {}
        self.dv = dvs.published(table, options)
        self.lineage = options.format_version >= lineage.FORMAT_VERSION
        self.retired_floor = 0  # row ids handed out by metadata this publisher deleted (rolled back)
        self.retired_uuid: Optional[str] = None  # the table uuid of the newest metadata deleted
        self.retired_columns = 0  # the last-column-id of the metadata deleted

    # -- which snapshots -------------------------------------------------------------------

    def publish_up_to(self, latest: int) -> None:
        published = self.paths.metadata_ids(self.io)
        for stale in (v for v in published if v > latest):  # metadata of snapshots rolled back
            self.retire(stale)
        first = published[-1] + 1 if published and published[-1] < latest else latest
        if not published:  # every snapshot of this commit (data, then compaction), as Java's callback sees each
            first = self._first_of_commit(latest)
        if latest - first > CATCH_UP:  # a long gap: the latest snapshot alone, written afresh
            first = latest
        for sid in range(first, latest + 1):
            if self.io.exists(self.table.paths.snapshot_path(sid)):
                self.publish(self.table.snapshot_manager.snapshot(sid))

    def _first_of_commit(self, latest: int) -> int:
        """The first snapshot of the commit that made ``latest`` (same user and identifier): a write
        may commit its data, then its compaction."""
        last = self.table.snapshot_manager.snapshot(latest)
        first = latest
        while first - 1 >= max(1, latest - CATCH_UP) and self.io.exists(self.table.paths.snapshot_path(first - 1)):
            prev = self.table.snapshot_manager.snapshot(first - 1)
            if (prev.commit_user, prev.commit_identifier) != (last.commit_user, last.commit_identifier):
                break
            first -= 1
        return first

    def publish(self, snap: Snapshot, afresh_only: bool = False) -> None:
        """The metadata of ``snap``: extending the previous snapshot's when it exists (unless
        ``afresh_only``) and is of the same format version, else written afresh."""
        path = self.paths.metadata(snap.id)
        if self.io.exists(path):
            if built_from(read_metadata(self.io, path), snap):
                return  # published already
            self.retire(snap.id)  # written for an earlier snapshot of this id (rolled back, or the table made again)
        if snap.id == 1:  # a table made again: the metadata of its earlier life (catalog-location) goes
            self.io.delete(self.paths.dir)
            self.retired_uuid, self.retired_columns = None, 0  # and its identity: a new table
        base_path = self.paths.metadata(snap.id - 1)
        base = read_metadata(self.io, base_path) if not afresh_only and self.io.exists(base_path) else None
        if base is not None and self._abandoned(base, snap.id - 1):  # a rollback left it: not extended
            self._remember(base)
            base = None
        if base is not None and base.get("format-version", 0) > self.options.format_version:
            raise PaimonError(f"table {self.table.name}: its Iceberg metadata has format version "
                              f"{base['format-version']}, above 'metadata.iceberg.format-version' = "
                              f"{self.options.format_version}: a version is never lowered")
        row_floor = self._row_floor(snap.id) if self.lineage else 0
        unlined = self.lineage and base is not None and lineage.NEXT_ROW_ID not in base  # Java Paimon 2.0's
        if base is not None and base.get("format-version") == self.options.format_version and not unlined:
            incremental.write_with_base(self, snap, base, row_floor)
        else:  # v3 metadata without row lineage is written again, under its table uuid, as Paimon's master
            afresh.write_afresh(self, snap, row_floor, base["table-uuid"] if unlined else self.retired_uuid)
            base_path = None
        commit_to_catalog(self.table, self.options, path, base_path)

    def _row_floor(self, sid: int) -> int:
        """The first row id snapshot ``sid`` may hand out: past the newest metadata before it (the
        base, or what a long gap, a lost file or a fast-forward left) and the metadata retired."""
        older = [v for v in self.paths.metadata_ids(self.io) if v < sid]
        return max(lineage.floor_at(self.io, self.paths.metadata(older[-1])) if older else 0, self.retired_floor)

    def retire(self, version: int) -> None:
        """Delete metadata ``version`` of a snapshot rolled back, keeping its row ids and column ids
        from reuse and its table uuid for the metadata written in its place."""
        path = self.paths.metadata(version)
        if self.lineage:
            self.retired_floor = max(self.retired_floor, lineage.floor_at(self.io, path))
        try:
            self._remember(read_metadata(self.io, path))
        except (PaimonError, OSError):  # damaged or gone: nothing of it to keep
            pass
        self.io.delete(path)

    def _remember(self, abandoned: dict) -> None:
        """Keep the identity of metadata a rollback abandoned: its uuid (the newest's, as versions
        are retired oldest first) and the column ids it handed out."""
        self.retired_uuid = abandoned.get("table-uuid") or self.retired_uuid
        self.retired_columns = max(self.retired_columns, abandoned.get("last-column-id", 0))

    def _abandoned(self, base: dict, sid: int) -> bool:
        """Whether ``base``, metadata of snapshot ``sid``, was built from another snapshot of that id
        (one a rollback removed); unknown when snapshot ``sid`` has expired."""
        if not self.io.exists(self.table.paths.snapshot_path(sid)):
            return False
        try:
            return not built_from(base, self.table.snapshot_manager.snapshot(sid))
        except PaimonError:  # base names a current snapshot it does not hold: not ours to extend
            return True

    def last_column_id(self, schemas: List[dict], base: Optional[dict] = None) -> int:
        """Iceberg's last-column-id: the highest column id of ``schemas``, never below ``base``'s
        nor the metadata retired (a dropped column's id is not handed out again)."""
        return max([highest_field_id(s) for s in schemas] + [self.retired_columns]
                   + ([base.get("last-column-id", 0)] if base is not None else []))

    # -- shared by both paths --------------------------------------------------------------

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


def built_from(metadata: dict, snap: Snapshot) -> bool:
    """Whether ``metadata``'s current snapshot was built from ``snap``: by the commit identity it
    names; metadata without one (Java Paimon 2.0's, paimon-sql's before) by its time, written after
    ``snap`` was committed."""
    current = current_snapshot(metadata)
    identity = current.get("summary", {}).get(COMMIT_IDENTITY)
    if identity is not None:
        return identity == commit_identity(snap)
    return current["timestamp-ms"] >= snap.time_millis
