"""TableCommit: turn commit messages into exactly one new snapshot, optimistically.

Each attempt, until one wins: read the latest snapshot; new files become ADD entries; for
OVERWRITE, the live files of the overwritten partitions become DELETE entries; every file we
delete must still be live (else another writer removed it: :class:`CommitConflictError`, nothing
is published); write a manifest, the base manifest list (latest base + delta, merged when it
grows long) and our delta list; create ``snapshot-(N+1)`` only if absent. Losing that race just
means rebasing on the newer snapshot. The manifests of a failed attempt are deleted; data files
are removed by :meth:`abort`. A crash leaves only orphan files, never a half-visible commit.
"""

from __future__ import annotations

import time
import uuid
from dataclasses import replace
from typing import Dict, List, Optional

from paimon_sql.exceptions import CommitConflictError, PaimonError
from paimon_sql.format import binary_row, manifest, stats
from paimon_sql.format.manifest import ADD, DELETE, IndexManifestEntry, ManifestEntry, ManifestFileMeta
from paimon_sql.format.predicate import and_, equal, is_null
from paimon_sql.format.snapshot import BATCH_COMMIT_IDENTIFIER, Snapshot
from paimon_sql.table.scan import in_partitions
from paimon_sql.table.write import CommitMessage, delete_files


def _entries(kind: int, messages, files_of) -> List[ManifestEntry]:
    return [ManifestEntry(kind, m.partition, m.bucket, m.total_buckets, f) for m in messages for f in files_of(m)]


def _only_compaction(m: CommitMessage) -> bool:
    return not (m.new_files or m.deleted_files or m.index_changes or m.changelog_files)


class TableCommit:
    def __init__(self, table, commit_user: Optional[str] = None):
        self.table = table
        self.commit_user = commit_user or str(uuid.uuid4())
        self.compression = table.options.manifest_compression
        self._part_fields = table.schema.fields_of(table.schema.partition_keys)

    # -- public ---------------------------------------------------------------------------

    def commit(self, messages: List[CommitMessage], commit_identifier: int = BATCH_COMMIT_IDENTIFIER) -> Optional[int]:
        """Append the messages' files; returns the new snapshot id (None when nothing to commit)."""
        messages = [m for m in messages if not m.is_empty()]
        if not messages:
            return None
        return self._commit_all(messages, "APPEND", commit_identifier, overwrite=None)

    def overwrite(self, messages: List[CommitMessage], partition: Optional[Dict[str, object]] = None,
                  dynamic: bool = False, commit_identifier: int = BATCH_COMMIT_IDENTIFIER) -> int:
        """Replace data: the whole table, a static partition spec (``{'dt': 'x'}``, a prefix of the
        partition keys), or — ``dynamic`` — only the partitions the new files land in."""
        if partition:
            unknown = [k for k in partition if k not in self.table.schema.partition_keys]
            if unknown:
                raise PaimonError(f"overwrite partition spec names non-partition column(s): {', '.join(unknown)}")
        messages = [m for m in messages if not m.is_empty()]
        return self._commit_all(messages, "OVERWRITE", commit_identifier, overwrite=(partition or {}, dynamic))

    def abort(self, messages: List[CommitMessage]) -> None:
        """Delete the data files of messages that will never be committed."""
        delete_files(self.table, messages)

    def commit_or_abort(self, messages: List[CommitMessage]) -> Optional[int]:
        """:meth:`commit`; when it fails, the messages' files are deleted (a failed write commits nothing)."""
        try:
            return self.commit(messages)
        except BaseException:
            self.abort(messages)
            raise

    # -- the protocol ---------------------------------------------------------------------

    def _commit_all(self, messages, kind: str, identifier: int, overwrite) -> Optional[int]:
        """The new files as one snapshot of ``kind``, then compaction results as a COMPACT snapshot
        (as Paimon commits: a write may make two). When only the compaction loses a conflict with a
        concurrent commit, the data stays committed and the compaction's files are dropped."""
        snapshot_id = None
        if overwrite is not None or any(not m.is_empty() and not _only_compaction(m) for m in messages):
            adds = _entries(ADD, messages, lambda m: m.new_files)
            deletes = _entries(DELETE, messages, lambda m: m.deleted_files)
            snapshot_id = self._commit(adds, deletes, [e for m in messages for e in m.index_changes],
                                       _entries(ADD, messages, lambda m: m.changelog_files), kind, identifier,
                                       overwrite, messages)
        compacted = [m for m in messages if m.has_compaction()]
        if not compacted:
            return snapshot_id
        try:
            return self._commit(_entries(ADD, compacted, lambda m: m.compact_after),
                                _entries(DELETE, compacted, lambda m: m.compact_before), [],
                                _entries(ADD, compacted, lambda m: m.compact_changelog), "COMPACT", identifier,
                                None, compacted)
        except CommitConflictError:
            if snapshot_id is None:
                raise
            delete_files(self.table, [replace(m, new_files=[], changelog_files=[]) for m in compacted])
            return snapshot_id

    def commit_statistics(self, file_name: str) -> int:
        """An ANALYZE snapshot: no file changes, the snapshot names ``statistics/<file_name>``
        (later snapshots keep naming it until the next ANALYZE, as Paimon's do)."""
        return self._commit([], [], [], [], "ANALYZE", BATCH_COMMIT_IDENTIFIER, None, [], statistics=file_name)

    def _commit(self, adds, deletes, index_changes, changelog, kind: str, identifier: int, overwrite,
                messages, statistics: Optional[str] = None) -> int:
        table = self.table
        retries = table.options.commit_max_retries
        for attempt in range(retries + 1):
            latest = table.snapshot_manager.latest()
            attempt_files: List[str] = []
            try:
                entries = list(deletes)
                if overwrite is not None or entries:
                    live = self._live_entries(latest)
                    if overwrite is not None:
                        entries += self._overwrite_deletes(live, overwrite, messages)
                    self._check_deletes(live, entries)
                snapshot = self._build_snapshot(latest, adds + entries, index_changes, changelog, kind, identifier,
                                                attempt_files, statistics)
                if table.snapshot_manager.try_commit(snapshot):
                    return snapshot.id
            except BaseException:
                self._delete(attempt_files)
                raise
            self._delete(attempt_files)  # lost the race for this id: rebase on the newer snapshot
            time.sleep(min(0.01 * (2 ** attempt), 1.0))
        raise CommitConflictError(f"table {table.name}: gave up committing after {retries} retries "
                                  "(other writers kept committing first)")

    def _delete(self, names: List[str]) -> None:
        for name in names:
            self.table.io.delete(self.table.paths.manifest_path(name))

    def _live_entries(self, latest: Optional[Snapshot]) -> List[ManifestEntry]:
        return [] if latest is None else self.table.new_scan().with_snapshot(latest.id).plan_entries()

    def _overwrite_deletes(self, live, overwrite, messages) -> List[ManifestEntry]:
        spec, dynamic = overwrite
        if dynamic:
            touched = {m.partition for m in messages}
            selected = [e for e in live if e.partition in touched]
        elif spec:
            pred = and_(*[is_null(k) if v is None else equal(k, v) for k, v in spec.items()])
            selected = in_partitions(live, pred, self.table.schema)
        else:
            selected = live
        return [ManifestEntry(DELETE, e.partition, e.bucket, e.total_buckets, e.file) for e in selected]

    def _check_deletes(self, live: List[ManifestEntry], entries: List[ManifestEntry]) -> None:
        alive = {e.identifier() for e in live}
        gone = [e.file.file_name for e in entries if e.kind == DELETE and e.identifier() not in alive]
        if gone:
            raise CommitConflictError(f"table {self.table.name}: file(s) to delete were already removed by a "
                                      f"concurrent commit: {', '.join(gone[:3])}")

    def _build_snapshot(self, latest, entries, index_changes, changelog, kind, identifier, written,
                        statistics: Optional[str] = None) -> Snapshot:
        table = self.table
        schema_id = table.schema.id
        base = [] if latest is None else (table.manifest_list(latest.base_manifest_list)
                                          + table.manifest_list(latest.delta_manifest_list))
        base = self._maybe_merge(base, written)
        delta = [self._write_manifest(entries, written)] if entries else []
        base_name, base_size = self._write_list(base, written)
        delta_name, delta_size = self._write_list(delta, written)
        changelog_name = changelog_size = None
        if changelog:
            changelog_name, changelog_size = self._write_list([self._write_manifest(changelog, written)], written)
        index_manifest = latest.index_manifest if latest else None
        if index_changes:
            index_manifest = self._write_index_manifest(index_manifest, index_changes, written)
        added = sum(e.file.row_count for e in entries if e.kind == ADD)
        removed = sum(e.file.row_count for e in entries if e.kind == DELETE)
        previous_total = (latest.total_record_count or 0) if latest else 0
        return Snapshot(
            id=(latest.id + 1) if latest else 1, schema_id=schema_id,
            base_manifest_list=base_name, delta_manifest_list=delta_name,
            commit_user=self.commit_user, commit_identifier=identifier, commit_kind=kind,
            time_millis=int(time.time() * 1000), total_record_count=previous_total + added - removed,
            delta_record_count=added - removed, changelog_record_count=sum(e.file.row_count for e in changelog),
            changelog_manifest_list=changelog_name, changelog_manifest_list_size=changelog_size,
            index_manifest=index_manifest,
            base_manifest_list_size=base_size, delta_manifest_list_size=delta_size,
            watermark=latest.watermark if latest else None,
            statistics=statistics or (latest.statistics if latest else None))

    def _write_manifest(self, entries: List[ManifestEntry], written: List[str]) -> ManifestFileMeta:
        table = self.table
        name = table.paths.new_manifest_name()
        data = manifest.write_records(entries, "ManifestEntry", self.compression)
        table.io.write_bytes(table.paths.manifest_path(name), data)
        written.append(name)
        types = [f.type for f in self._part_fields]
        partitions = {e.partition for e in entries}
        part_values = [binary_row.from_bytes(p, types) for p in partitions]
        buckets = [e.bucket for e in entries]
        levels = [e.file.level for e in entries]
        return ManifestFileMeta(
            name, len(data), sum(1 for e in entries if e.kind == ADD), sum(1 for e in entries if e.kind == DELETE),
            stats.merge_partition_stats(part_values, types), table.schema.id, min(buckets), max(buckets),
            min(levels), max(levels), None, None, entries[0].total_buckets)

    def _write_list(self, metas: List[ManifestFileMeta], written: List[str]):
        table = self.table
        name = table.paths.new_manifest_list_name()
        data = manifest.write_records(metas, "ManifestFileMeta", self.compression)
        table.io.write_bytes(table.paths.manifest_path(name), data)
        written.append(name)
        return name, len(data)

    def _maybe_merge(self, base: List[ManifestFileMeta], written: List[str]) -> List[ManifestFileMeta]:
        """Fold many small manifests into one (``manifest.merge-min-count``) so planning stays fast."""
        if len(base) < self.table.options.get("manifest.merge-min-count"):
            return base
        entries = manifest.merge_entries([e for m in base for e in self.table.manifest_entries(m.file_name)])
        return [self._write_manifest(entries, written)] if entries else []

    def _write_index_manifest(self, previous: Optional[str], changes: List[IndexManifestEntry],
                              written: List[str]) -> str:
        table = self.table
        current = {}
        if previous:
            for e in table.index_manifest_entries(previous):
                current[(e.partition, e.bucket, e.index_type, e.file_name)] = e
        for c in changes:
            key = (c.partition, c.bucket, c.index_type, c.file_name)
            if c.kind == ADD:
                current[key] = c
            else:
                current.pop(key, None)
        name = table.paths.new_index_manifest_name()
        table.io.write_bytes(table.paths.manifest_path(name),
                             manifest.write_records(list(current.values()), "IndexManifestEntry", self.compression))
        written.append(name)
        return name

