"""After each commit, the Iceberg metadata of the new snapshots (Paimon's IcebergCommitCallback).

For snapshot N, when ``v<N-1>.metadata.json`` exists it is extended: the snapshot's delta (its
ADD / DELETE manifest entries) becomes a new manifest of added files, and base manifests that
hold a file the snapshot deleted are rewritten with that file DELETED and the rest EXISTING;
small manifests are merged once ``metadata.iceberg.compaction.*`` says so. Otherwise (the first
snapshot, or a base that is missing or of another format version) the metadata is written afresh
from the snapshot's live files. An append table exposes every data file; a primary-key table only
the files of its top level (fully compacted: one row per key, no merge needed). Iceberg snapshots
expire in step with Paimon's ``snapshot.num-retained.*`` / ``snapshot.time-retained``, their
manifests deleted with them, and older metadata files are deleted after each commit
(``metadata.iceberg.delete-after-commit.enabled``, ``previous-versions-max``). Format version 3
carries the table's 64-bit deletion vectors (:mod:`paimon_sql.iceberg.deletion_vectors`), and a
primary-key table with them exposes every file above level 0. With ``hive-catalog`` storage each
metadata file is then registered in a Hive metastore by the table's catalog environment
(catalog/iceberg_hive.py), which the catalog layer above provides.

What cannot be published correctly is refused before anything is written (:func:`check_publishable`).
"""

from __future__ import annotations

import logging
import time
import uuid
from typing import TYPE_CHECKING, Dict, List, Tuple

from paimon_sql.data import binary_row
from paimon_sql.exceptions import PaimonError, UnservedFeatureError
from paimon_sql.iceberg import deletion_vectors as dvs
from paimon_sql.iceberg import manifest as im
from paimon_sql.iceberg import rest
from paimon_sql.iceberg.conversions import has_bounds, iceberg_field, to_bytes
from paimon_sql.iceberg.metadata import (current_snapshot, highest_field_id, iceberg_schema, new_metadata,
                                         partition_spec_fields, read_metadata, snapshot, tag_ref, to_json)
from paimon_sql.iceberg.paths import IcebergPaths, metadata_dir
from paimon_sql.manifest.manifest_file import ADD, DELETE, DataFileMeta, ManifestEntry
from paimon_sql.mergetree.interval_partition import sections
from paimon_sql.mergetree.levels import num_levels
from paimon_sql.options.iceberg_options import HIVE_CATALOG, REST_CATALOG, IcebergOptions, iceberg_options
from paimon_sql.read.scan import manifest_entries, manifest_list

if TYPE_CHECKING:
    from paimon_sql.snapshot.snapshot import Snapshot
    from paimon_sql.table.table import FileStoreTable

_LOG = logging.getLogger(__name__)
_CATCH_UP = 100  # snapshots published one by one after the last published; beyond, the latest alone
# files changed by a snapshot, by data file path: (partition values, the file)
Changes = Dict[str, Tuple[tuple, DataFileMeta]]


def check_publishable(table: FileStoreTable) -> None:
    """Refuse, before a write, a table whose Iceberg metadata paimon-sql would write wrong."""
    options = iceberg_options(table.schema.options)
    if options is None:
        return
    why = None
    if table.branch != "main":
        why = "is written for the main branch only"
    elif table.options.get("deletion-vectors.enabled") and not dvs.published(table, options):
        why = ("carries deletion vectors only with 'metadata.iceberg.format-version' = '3' and "
               "'deletion-vectors.bitmap64' = 'true' ('deletion-vectors.enabled')")
    elif table.options.file_format != "parquet":
        why = f"is published for Parquet data files only, not '{table.options.file_format}' ('file.format')"
    elif table.options.get("data-evolution.enabled"):
        why = "cannot describe partial-column files ('data-evolution.enabled')"
    if why:
        raise UnservedFeatureError(f"table {table.name}: Iceberg metadata ('metadata.iceberg.storage' = "
                                   f"'{options.storage}') {why}: writes to the table are refused")
    for f in table.schema.fields:
        iceberg_field(f)  # a column Iceberg cannot describe fails naming it
    metadata_dir(table, options)
    if options.storage == HIVE_CATALOG:
        if table.env.iceberg_hive is None:
            raise UnservedFeatureError(f"table {table.name}: 'metadata.iceberg.storage' = 'hive-catalog' registers "
                                       "the table in a metastore under its catalog name: load the table from a "
                                       "catalog, not by its path")
        table.env.iceberg_hive.check(table)
    if options.storage == REST_CATALOG and table.env.iceberg_hive is None:  # the catalog's name of the table
        raise UnservedFeatureError(f"table {table.name}: 'metadata.iceberg.storage' = 'rest-catalog' commits the "
                                   "table to a REST catalog under its catalog name: load the table from a "
                                   "catalog, not by its path")


def iceberg_after_commit(table: FileStoreTable) -> None:
    """The post-commit job: Iceberg metadata for every snapshot committed since the last one
    published. The commit has happened: a failure is logged, and the next commit writes the
    metadata afresh (its base is missing), as Paimon's callback recovers."""
    options = iceberg_options(table.schema.options)
    latest = table.snapshot_manager.latest_id()
    if options is None or latest is None:
        return
    try:
        _Publisher(table, options).publish_up_to(latest)
    except (PaimonError, OSError) as e:
        _LOG.warning("table %s: writing the Iceberg metadata of snapshot %s failed, the next commit writes it "
                     "afresh: %s", table.name, latest, e)


def publish_now(table: FileStoreTable) -> None:
    """The Iceberg metadata of the table's latest snapshot, written now (options just turned on);
    unlike the post-commit job, a failure reaches the caller."""
    options = iceberg_options(table.schema.options)
    latest = table.snapshot_manager.latest_id()
    if options is not None and latest is not None:
        _Publisher(table, options).publish_up_to(latest)


class _Publisher:
    def __init__(self, table: FileStoreTable, options: IcebergOptions):
        self.table = table
        self.io = table.io
        self.options = options
        self.paths = IcebergPaths(metadata_dir(table, options))
        self.part_fields = table.schema.fields_of(table.schema.partition_keys)
        self.part_types = [f.type for f in self.part_fields]
        self._schemas: Dict[int, dict] = {}
        self.dv = dvs.published(table, options)

    # -- which snapshots -------------------------------------------------------------------

    def publish_up_to(self, latest: int) -> None:
        published = self.paths.metadata_ids(self.io)
        for stale in (v for v in published if v > latest):  # metadata of snapshots rolled back
            self.io.delete(self.paths.metadata(stale))
        first = published[-1] + 1 if published and published[-1] < latest else latest
        if not published:  # every snapshot of this commit (data, then compaction), as Java's callback sees each
            first = self._first_of_commit(latest)
        if latest - first > _CATCH_UP:  # a long gap: the latest snapshot alone, written afresh
            first = latest
        for sid in range(first, latest + 1):
            if self.io.exists(self.table.paths.snapshot_path(sid)):
                self.publish(self.table.snapshot_manager.snapshot(sid))

    def _first_of_commit(self, latest: int) -> int:
        """The first snapshot of the commit that made ``latest`` (same user and identifier): a write
        may commit its data, then its compaction."""
        last = self.table.snapshot_manager.snapshot(latest)
        first = latest
        while first - 1 >= max(1, latest - _CATCH_UP) and self.io.exists(self.table.paths.snapshot_path(first - 1)):
            prev = self.table.snapshot_manager.snapshot(first - 1)
            if (prev.commit_user, prev.commit_identifier) != (last.commit_user, last.commit_identifier):
                break
            first -= 1
        return first

    def publish(self, snap: Snapshot) -> None:
        path = self.paths.metadata(snap.id)
        if self.io.exists(path):
            if current_snapshot(read_metadata(self.io, path))["timestamp-ms"] >= snap.time_millis:
                return  # published already
            self.io.delete(path)  # written for an earlier snapshot of this id (rolled back, or the table made again)
        if snap.id == 1:  # a table made again: the metadata of its earlier life (catalog-location) goes
            self.io.delete(self.paths.dir)
        base_path = self.paths.metadata(snap.id - 1)
        base = read_metadata(self.io, base_path) if self.io.exists(base_path) else None
        if base is not None and base.get("format-version", 0) > self.options.format_version:
            raise PaimonError(f"table {self.table.name}: its Iceberg metadata has format version "
                              f"{base['format-version']}, above 'metadata.iceberg.format-version' = "
                              f"{self.options.format_version}: a version is never lowered")
        if base is not None and base.get("format-version") == self.options.format_version:
            self._with_base(snap, base)
        else:
            self._afresh(snap)
            base_path = None
        if self.options.storage == HIVE_CATALOG and self.table.env.iceberg_hive is not None:
            self.table.env.iceberg_hive.commit(self.table, path, base_path)  # Java's metadataCommitter
        if self.options.storage == REST_CATALOG:
            rest.commit(self.table, path)  # iceberg/rest.py

    # -- helpers ---------------------------------------------------------------------------

    def _schema(self, schema_id: int) -> dict:
        if schema_id not in self._schemas:
            self._schemas[schema_id] = iceberg_schema(self.table.schema_at(schema_id))
        return self._schemas[schema_id]

    def _exposed(self, f: DataFileMeta) -> bool:
        """Paimon's shouldAddFileToIceberg: an append table's every file, a primary-key table's top
        level (every level above 0 when its deletion vectors are published)."""
        if not self.table.schema.is_primary_key_table:
            return True
        return f.level > 0 if self.dv else f.level == num_levels(self.table.options) - 1

    def _raw_convertible(self, entries: List[ManifestEntry]) -> List[ManifestEntry]:
        """The files a fresh metadata exposes: Paimon reads a snapshot's rawConvertible splits
        (MergeTreeSplitGenerator.splitForBatch): an append table's every file; in a primary-key
        bucket, every file when all sit above level 0 without deleted rows and in one level (any
        levels with deletion vectors), else each file that is alone in its split (one key section,
        packed by ``source.split.*`` as Paimon packs)."""
        if not self.table.schema.is_primary_key_table:
            return entries
        buckets: Dict[Tuple[bytes, int], List[ManifestEntry]] = {}
        for e in entries:
            buckets.setdefault((e.partition, e.bucket), []).append(e)
        target = self.table.options.get("source.split.target-size")
        open_cost = self.table.options.get("source.split.open-file-cost")
        out = []
        for group in buckets.values():
            by_name = {e.file.file_name: e for e in group}
            files = [e.file for e in group]
            raw = all(f.level != 0 and not f.delete_row_count for f in files)
            if raw and (self.table.options.get("deletion-vectors.enabled") or len({f.level for f in files}) == 1):
                out += group
                continue
            splits, current, weight = [], [], 0
            for section in sections(files, self.table.key_range):
                flat = list(section)
                w = max(sum(f.file_size for f in flat), open_cost)
                if current and weight + w > target:
                    splits.append(current)
                    current, weight = [], 0
                current += flat
                weight += w
            splits.append(current)
            out += [by_name[s[0].file_name] for s in splits if len(s) == 1 and not s[0].delete_row_count]
        return out

    def _path(self, values: tuple, bucket: int, f: DataFileMeta) -> str:
        return self.table.paths.data_file_path(list(values), bucket, f.file_name, f.external_path)

    def _data_file(self, path: str, values: tuple, f: DataFileMeta) -> im.IcebergDataFile:
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

    def _added(self, changes: Changes, sid: int) -> List[im.IcebergManifestEntry]:
        return [im.IcebergManifestEntry(im.ADDED, sid, sid, sid, self._data_file(p, v, f))
                for p, (v, f) in changes.items()]

    def _write(self, entries: List[im.IcebergManifestEntry], sid: int,
               content: int = im.DATA) -> List[im.IcebergManifestFile]:
        if not entries:
            return []
        return [im.write_manifest(self.io, self.paths.new_manifest(), entries, self.part_fields, sid,
                                  self.options.codec, content)]

    def _summary(self, operation: str, snap: Snapshot, m: Dict[str, int]) -> Dict[str, str]:
        keys = ("added-data-files", "added-records", "added-files-size", "deleted-data-files", "deleted-records",
                "removed-files-size", "changed-partition-count", "total-records", "total-data-files",
                "total-files-size", "total-delete-files", "total-position-deletes", "total-equality-deletes")
        summary = {"operation": operation, **{k: str(max(0, m.get(k, 0))) for k in keys}}
        summary.update({k: str(v) for k, v in (snap.properties or {}).items() if v is not None})
        return summary

    def _finish(self, metadata: dict, sid: int) -> None:
        self.io.try_create(self.paths.metadata(sid), to_json(metadata))
        self.io.write_bytes(self.paths.version_hint(), str(sid).encode())

    def _delete_old_metadata(self, sid: int) -> None:
        if not self.options.delete_after_commit:
            return
        earliest = sid - self.options.previous_versions_max
        for old in self.paths.metadata_ids(self.io):
            if old < earliest:
                self.io.delete(self.paths.metadata(old))

    # -- afresh ----------------------------------------------------------------------------

    def _afresh(self, snap: Snapshot) -> None:
        sid = snap.id
        changes: Changes = {}
        found = dvs.vectors(self.table, snap) if self.dv else {}
        deletes = []
        for e in self._raw_convertible(self.table.new_scan().with_snapshot(sid).plan_entries()):
            values = tuple(binary_row.from_bytes(e.partition, self.part_types))
            path = self._path(values, e.bucket, e.file)
            changes[path] = (values, e.file)
            if (e.partition, e.bucket, e.file.file_name) in found:
                index, dv = found[(e.partition, e.bucket, e.file.file_name)]
                deletes.append(dvs.entry(self.table, sid, values, index, dv, path, dvs.UNKNOWN_SIZE))
        delete_manifests = self._write(deletes, sid, im.DELETES)
        manifests = self._write(self._added(changes, sid), sid) + delete_manifests
        list_path = self.paths.new_manifest_list()
        im.write_manifest_list(self.io, list_path, manifests, self.options.codec, self.options.legacy_manifest)
        files = [f for _, f in changes.values()]
        metrics = {"added-data-files": len(files), "added-records": sum(f.row_count for f in files),
                   "added-files-size": sum(f.file_size for f in files),
                   "changed-partition-count": len({v for v, _ in changes.values()})}
        metrics.update({"total-data-files": metrics["added-data-files"], "total-records": metrics["added-records"],
                        "total-files-size": metrics["added-files-size"], **dvs.live_counts(delete_manifests)})
        schema_id = self.table.schema_manager.latest().id
        current = self._schema(schema_id)
        spec = partition_spec_fields(self.table.schema.partition_keys, current)
        snapshots = [snapshot(sid, None if sid == 1 else sid - 1, self._summary("append", snap, metrics), list_path,
                              schema_id)]
        metadata = new_metadata(self.options.format_version, str(uuid.uuid4()), self.table.path, sid, highest_field_id(current),
                                [self._schema(i) for i in range(schema_id + 1)], schema_id,
                                [{"spec-id": 0, "fields": spec}],
                                max((f["field-id"] for f in spec), default=im.FIRST_PARTITION_FIELD_ID - 1),
                                snapshots, sid, {})
        self._finish(metadata, sid)
        self._expire_all_before(sid)

    def _expire_all_before(self, sid: int) -> None:
        """Every manifest, manifest list and metadata file of older metadata files (Paimon's expireAllBefore)."""
        seen = set()
        for old in self.paths.metadata_ids(self.io):
            if old >= sid:
                continue
            for s in read_metadata(self.io, self.paths.metadata(old)).get("snapshots", []):
                list_path = self.paths.file(s["manifest-list"])
                if list_path in seen:
                    continue
                seen.add(list_path)
                if self.io.exists(list_path):
                    for m in im.read_manifest_list(self.io, list_path):
                        self.io.delete(self.paths.file(m.path))
                self.io.delete(list_path)
        self._delete_old_metadata(sid)

    # -- extending a base ------------------------------------------------------------------

    def _changes(self, snap: Snapshot) -> Tuple[Changes, Changes, bool]:
        """(removed, added, add-only) of the snapshot's delta, by path. DELETE entries are taken
        before ADD entries: a file in both moved between levels and stays (Paimon's writers list a
        compaction's deletions first; ours may not)."""
        removed: Changes = {}
        added: Changes = {}
        add_only = True
        delta = manifest_entries(self.table, manifest_list(self.table, snap.delta_manifest_list,
                                                           snap.delta_manifest_list_size))
        for e in sorted(delta, key=lambda x: x.kind != DELETE):
            values = tuple(binary_row.from_bytes(e.partition, self.part_types))
            path = self._path(values, e.bucket, e.file)
            if e.kind == ADD:
                if self._exposed(e.file):
                    removed.pop(path, None)
                    added[path] = (values, e.file)
            else:
                add_only = False
                added.pop(path, None)
                removed[path] = (values, e.file)
        return removed, added, add_only

    def _with_base(self, snap: Snapshot, base: dict) -> None:
        sid = snap.id
        base_snapshot = current_snapshot(base)
        base_list = im.read_manifest_list(self.io, self.paths.file(base_snapshot["manifest-list"]))
        base_manifests = [m for m in base_list if m.content == im.DATA]
        delete_manifests = []  # Java's: all vectors anew when the commit changed the index, else the base's
        if self.dv and dvs.index_changed(self.table, snap):
            delete_manifests = self._write(dvs.all_entries(self.table, snap, self.part_types), sid, im.DELETES)
        elif self.dv:
            delete_manifests = [m for m in base_list if m.content == im.DELETES]
        removed, added, add_only = self._changes(snap)
        changed_partitions = len({v for v, _ in removed.values()} | {v for v, _ in added.values()})
        operation = "append"
        manifests: List[im.IcebergManifestFile] = []
        if add_only:
            manifests = list(base_manifests)
        else:
            for m in base_manifests:
                entries = im.read_manifest(self.io, self.paths.file(m.path), self.part_fields)
                live = [e for e in entries if e.is_live()]
                for e in live:
                    added.pop(e.file.file_path, None)  # already published (a file moved between levels)
                if not any(e.file.file_path in removed for e in live):
                    manifests.append(m)
                    continue
                operation = "replace" if snap.commit_kind == "COMPACT" else "overwrite"
                rewritten = [im.IcebergManifestEntry(im.DELETED, sid, e.sequence_number, e.file_sequence_number, e.file)
                             if e.file.file_path in removed else
                             im.IcebergManifestEntry(im.EXISTING, e.snapshot_id, e.sequence_number,
                                                     e.file_sequence_number, e.file) for e in live]
                manifests += self._write(rewritten, sid)
        manifests = self._compact(manifests + self._write(self._added(added, sid), sid), sid) + delete_manifests
        list_path = self.paths.new_manifest_list()
        im.write_manifest_list(self.io, list_path, manifests, self.options.codec, self.options.legacy_manifest)

        before = base_snapshot.get("summary", {})

        def total(key: str, fallback) -> int:
            try:
                return int(before[key])
            except (KeyError, ValueError):
                return fallback()

        metrics = {"added-data-files": len(added), "added-records": sum(f.row_count for _, f in added.values()),
                   "added-files-size": sum(f.file_size for _, f in added.values()),
                   "deleted-data-files": len(removed), "deleted-records": sum(f.row_count for _, f in removed.values()),
                   "removed-files-size": sum(f.file_size for _, f in removed.values()),
                   "changed-partition-count": changed_partitions, **dvs.live_counts(delete_manifests)}
        metrics["total-records"] = (total("total-records", lambda: sum(m.live_rows() for m in base_manifests))
                                    + metrics["added-records"] - metrics["deleted-records"])
        metrics["total-data-files"] = (total("total-data-files", lambda: sum(m.live_files() for m in base_manifests))
                                       + metrics["added-data-files"] - metrics["deleted-data-files"])
        metrics["total-files-size"] = (total("total-files-size", lambda: self._live_size(base_manifests))
                                       + metrics["added-files-size"] - metrics["removed-files-size"])

        schema_id = self.table.schema_manager.latest().id
        schemas = list(base["schemas"])
        if schema_id != base["current-schema-id"]:
            if schema_id < base["current-schema-id"]:
                raise PaimonError(f"table {self.table.name}: its schema {schema_id} is older than the Iceberg "
                                  f"metadata's {base['current-schema-id']}")
            schemas += [self._schema(i) for i in range(base["current-schema-id"] + 1, schema_id + 1)]
        snapshots = list(base["snapshots"]) + [snapshot(sid, sid - 1, self._summary(operation, snap, metrics),
                                                        list_path, schema_id)]
        kept = self._retained(snapshots, sid)
        expired = snapshots[:len(snapshots) - len(kept)]
        kept_ids = {s["snapshot-id"] for s in kept}
        refs = {}
        for tag in self.table.tag_manager.tags():  # one ref per snapshot: its first tag, as Paimon
            if tag.snapshot.id in kept_ids and tag.snapshot.id not in {r["snapshot-id"] for r in refs.values()}:
                refs[tag.name] = tag_ref(tag.snapshot.id)
        metadata = new_metadata(base["format-version"], base["table-uuid"], base["location"], sid,
                                highest_field_id(self._schema(schema_id)), schemas, schema_id,
                                base["partition-specs"], base["last-partition-id"], kept, sid, refs)
        self._finish(metadata, sid)
        self._delete_old_metadata(sid)
        chain = expired + kept[:1]
        for old, nxt in zip(chain, chain[1:]):
            self._expire_list(old["manifest-list"], nxt["manifest-list"])

    def _live_size(self, manifests: List[im.IcebergManifestFile]) -> int:
        return sum(e.file.file_size for m in manifests
                   for e in im.read_manifest(self.io, self.paths.file(m.path), self.part_fields) if e.is_live())

    def _retained(self, snapshots: List[dict], sid: int) -> List[dict]:
        """The snapshots from the first one Paimon's retention keeps (the newest always)."""
        opts = self.table.options
        retain_min, retain_max = opts.get("snapshot.num-retained.min"), opts.get("snapshot.num-retained.max")
        oldest_kept_ms = int(time.time() * 1000) - opts.get("snapshot.time-retained")

        def expires(s: dict) -> bool:
            if s["snapshot-id"] > sid - retain_min:
                return False
            return s["snapshot-id"] <= sid - retain_max or s["timestamp-ms"] < oldest_kept_ms

        for i, s in enumerate(snapshots[:-1]):
            if not expires(s):
                return snapshots[i:]
        return snapshots[-1:]

    def _expire_list(self, old: str, nxt: str) -> None:
        """Delete an expired snapshot's manifest list and its manifests the next snapshot does not use."""
        in_use = {self.paths.file(m.path) for m in im.read_manifest_list(self.io, self.paths.file(nxt))}
        old_path = self.paths.file(old)
        if self.io.exists(old_path):
            for m in im.read_manifest_list(self.io, old_path):
                if self.paths.file(m.path) not in in_use:
                    self.io.delete(self.paths.file(m.path))
        self.io.delete(old_path)

    def _compact(self, manifests: List[im.IcebergManifestFile], sid: int) -> List[im.IcebergManifestFile]:
        """Merge small manifests (Paimon's compactMetadataIfNeeded): those under 2/3 of
        ``manifest.target-file-size``, once there are ``compaction.min.file-num`` of them and their
        size reaches the target, or ``compaction.max.file-num`` of them. Entries of older snapshots
        become EXISTING, older DELETED entries are dropped."""
        target = self.table.options.get("manifest.target-file-size")
        small = [m for m in manifests if m.length < target * 2 / 3]
        if len(small) < self.options.compaction_min_files:
            return manifests
        if len(small) < self.options.compaction_max_files and sum(m.length for m in small) < target:
            return manifests
        entries = []
        for m in small:
            path = self.paths.file(m.path)
            for e in im.read_manifest(self.io, path, self.part_fields):
                if e.file_sequence_number == sid or e.snapshot_id == sid or e.status == im.EXISTING:
                    entries.append(e)
                elif e.status == im.ADDED:
                    entries.append(im.IcebergManifestEntry(im.EXISTING, e.snapshot_id, e.sequence_number,
                                                           e.file_sequence_number, e.file))
            if m.sequence_number == sid:
                self.io.delete(path)
        return [m for m in manifests if m not in small] + self._write(entries, sid)

