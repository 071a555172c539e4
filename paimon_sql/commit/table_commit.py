"""TableCommit: turn commit messages into new snapshots, optimistically.

Each attempt, until one wins: read the latest snapshot; rebase the messages onto it; new files
become ADD entries; for OVERWRITE, the live files of the overwritten partitions become DELETE
entries; every file we delete must still be live (else another writer removed it:
:class:`CommitConflictError`, nothing is published); write a manifest, the base manifest list
(latest base + delta, merged when it grows long) and our delta list; create ``snapshot-(N+1)``
only if absent. Losing that race just means rebasing on the newer snapshot. The manifests of a
failed attempt are deleted; data files are removed by :meth:`abort`. A crash leaves only orphan
files, never a half-visible commit.

Rebasing is where concurrent writers meet: each message names the snapshot it was built on, and
each attempt brings the messages up to the latest snapshot, or refuses them, by the rules of
:mod:`paimon_sql.commit.rebase` (sequence numbers moved above a concurrent writer's, deletion
vectors joined, stale index and merge-on-write compactions refused or redone).
"""

from __future__ import annotations

import json
import random
import time
import uuid
from typing import Callable, Dict, List, Optional, Protocol, Sequence

from paimon_sql.commit import row_tracking
from paimon_sql.commit.partition_statistics import partition_statistics
from paimon_sql.commit.rebase import CommitRebase, index_key, index_stale
from paimon_sql.compact.merge_tree_compact import compact_messages
from paimon_sql.data import binary_row, stats
from paimon_sql.data.partition_names import specs_predicate
from paimon_sql.exceptions import CommitConflictError, InvalidOptionError, PaimonError, SnapshotNotFoundError
from paimon_sql.index import deletion_vector as dv
from paimon_sql.manifest import manifest_file
from paimon_sql.manifest.manifest_file import ADD, DELETE, IndexManifestEntry, ManifestEntry, ManifestFileMeta
from paimon_sql.manifest.manifest_merge import merge_manifests
from paimon_sql.options.core_options import PARTITIONED_IN_METASTORE
from paimon_sql.read.scan import ScanStore, in_partitions
from paimon_sql.snapshot.snapshot import BATCH_COMMIT_IDENTIFIER, Snapshot
from paimon_sql.write.commit_message import CommitMessage, delete_files
from paimon_sql.write.restore import live_entries

_ROLL_CHECK = 1000  # Paimon's rolling writers check a file's size every this many records
LAST_SAFE_SNAPSHOT = "commit.strict-mode.last-safe-snapshot"
# a write's own (dynamic) option, never stored: a JSON object the snapshot keeps as its ``properties``
# (Paimon's ManifestCommittable properties), e.g. what a materialized table's refresh read
SNAPSHOT_PROPERTIES = "paimon-sql.snapshot-properties"
# a write's own option: the snapshot id (0: none) the write was planned on. Its commit fails, never
# retried, once another commit came after it (an incremental refresh appends what it read since then)
BASE_SNAPSHOT = "paimon-sql.commit.base-snapshot"
# paimon-spark's write option (PaimonWriteOptions.OPERATION_OPTION): the statement a snapshot records
# as its ``operation`` (Snapshot.Operation: WRITE, OVERWRITE, DELETE, UPDATE, MERGE, TRUNCATE, ...)
OPERATION = "__paimon.operation"


def _entries(kind: int, messages, files_of) -> List[ManifestEntry]:
    return [ManifestEntry(kind, m.partition, m.bucket, m.total_buckets, f) for m in messages for f in files_of(m)]


class TableCommit:
    def __init__(self, table: CommitStore, commit_user: Optional[str] = None,
                 post_commit: Sequence[Callable[[CommitStore], None]] = ()):
        """``post_commit``: the jobs the table runs after each commit, in order (automatic tags,
        partition expiry, snapshot expiry: :data:`paimon_sql.table.table.POST_COMMIT_JOBS`); the
        commit itself knows nothing of them."""
        self.table = table
        self.post_commit = tuple(post_commit)
        self.commit_user = commit_user or str(uuid.uuid4())
        self.rebase = CommitRebase(table, self.commit_user)
        self.compression = table.options.manifest_compression
        self.attempts = 0  # snapshot publish attempts of this committer so far (Paimon's lastCommitAttempts metric)
        self._part_fields = table.schema.fields_of(table.schema.partition_keys)
        self.operation: Optional[str] = table.dynamic_options.get(OPERATION)

    # -- public ---------------------------------------------------------------------------

    def with_operation(self, operation: str) -> "TableCommit":
        """Name the statement this commit's snapshots record (Paimon's ``withOperation``), unless
        the table's write option ``__paimon.operation`` named it already (paimon-spark's precedence).
        Commits nobody names (compaction, ANALYZE) record none, as Paimon's."""
        self.operation = self.operation or operation
        return self

    def commit(self, messages: List[CommitMessage], commit_identifier: int = BATCH_COMMIT_IDENTIFIER) -> Optional[int]:
        """Add the messages' files; returns the new snapshot id (None when nothing to commit). A
        commit that also removes files or changes deletion vectors (a DELETE rewriting files) is an
        OVERWRITE snapshot, as Paimon's ``shouldBeOverwriteCommit`` makes it."""
        messages = [m for m in messages if not m.is_empty()]
        if not messages:
            return None
        removes = any(m.deleted_files or any(e.index_type == dv.INDEX_TYPE for e in m.index_changes)
                      for m in messages)
        return self._commit_all(messages, "OVERWRITE" if removes else "APPEND", commit_identifier, overwrite=None)

    def overwrite(self, messages: List[CommitMessage], partition: Optional[Dict[str, object]] = None,
                  dynamic: bool = False, commit_identifier: int = BATCH_COMMIT_IDENTIFIER) -> int:
        """Replace data: the whole table, a static partition spec (``{'dt': 'x'}``, a prefix of the
        partition keys), or — ``dynamic`` — only the partitions the new files land in."""
        if partition:
            unknown = [k for k in partition if k not in self.table.schema.partition_keys]
            if unknown:
                raise PaimonError(f"overwrite partition spec names non-partition column(s): {', '.join(unknown)}")
        messages = [m for m in messages if not m.is_empty()]
        if dynamic and not messages:  # Paimon: a dynamic overwrite writing nothing deletes nothing
            return None
        if not messages:  # nothing written: a truncation (Paimon's truncateTable/Partitions)
            self.with_operation("TRUNCATE")
        return self._commit_all(messages, "OVERWRITE", commit_identifier, overwrite=(partition or {}, dynamic))

    def drop_partitions(self, specs: List[Dict[str, object]], commit_identifier: int = BATCH_COMMIT_IDENTIFIER) -> int:
        """Paimon's dropPartitions: one OVERWRITE snapshot deleting every file of the partitions
        ``specs`` name (each a prefix of the partition keys), a TRUNCATE as Paimon's
        ``truncatePartitions`` records it."""
        self.with_operation("TRUNCATE")
        return self._commit_all([], "OVERWRITE", commit_identifier, overwrite=(list(specs), False))

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
        concurrent commit, the data stays committed and the compaction's files are dropped; a
        merge-on-write bucket is then compacted again, so the write becomes visible."""
        self._check_catalog()
        snapshot_id = None
        redo: set = set()  # (partition, bucket)s of merge-on-write whose compaction must be redone
        if overwrite is not None or any(m.has_data() for m in messages):
            snapshot_id = self._commit(kind, identifier,
                                       lambda latest: self._data_changes(messages, latest, overwrite, redo), messages)
        compacted = [m for m in messages if m.has_compaction()]
        if compacted:
            try:
                snapshot_id = self._commit("COMPACT", identifier,
                                           lambda latest: self._compaction_changes(compacted, latest), compacted)
            except CommitConflictError:
                if snapshot_id is None:
                    raise
                for m in compacted:
                    self.rebase.drop_compaction(m, redo)
        if redo:
            snapshot_id = self._redo_compaction(sorted(redo), identifier) or snapshot_id
        for job in self.post_commit:
            job(self.table)
        return snapshot_id

    def commit_statistics(self, file_name: str) -> int:
        """An ANALYZE snapshot: no file changes, the snapshot names ``statistics/<file_name>``
        (later snapshots keep naming it until the next ANALYZE, as Paimon's do)."""
        return self._commit("ANALYZE", BATCH_COMMIT_IDENTIFIER, lambda latest: ([], [], [], [], None), [],
                            statistics=file_name)

    def compact_manifest(self) -> Optional[int]:
        """Paimon's full manifest compaction: a COMPACT snapshot whose base list is every manifest
        merged (DELETE entries cancelled against their ADDs), data files untouched. None (nothing
        committed) when merging changes no manifest, as Paimon."""
        return self._commit("COMPACT", BATCH_COMMIT_IDENTIFIER, lambda latest: ([], [], [], [], None), [],
                            merge_all=True)

    def _commit(self, kind: str, identifier: int, changes, messages, statistics: Optional[str] = None,
                merge_all: bool = False) -> Optional[int]:
        """``changes(latest)`` rebases onto the latest snapshot and returns (adds, deletes, index
        changes, changelog, overwrite); it runs again each time another commit wins the race."""
        table = self.table
        retries, started = table.options.commit_max_retries, time.monotonic()
        for attempt in range(retries + 1):
            self.attempts += 1
            latest = table.snapshot_manager.latest()
            self._check_base(latest)
            attempt_files: List[str] = []
            try:
                try:
                    snapshot, entries = self._prepare(latest, kind, identifier, changes, messages, attempt_files,
                                                      statistics, merge_all)
                except (SnapshotNotFoundError, FileNotFoundError):
                    if self._still_latest(latest):
                        raise
                    # ``latest`` was expired while this attempt read it: newer snapshots won the race
                else:
                    if snapshot is None:
                        return None
                    # a catalog publishing snapshots is told what the commit changes per partition
                    stats = partition_statistics(table, entries) if table.env.snapshot_commit else ()
                    if self._still_latest(latest) and table.snapshot_manager.try_commit(snapshot, latest, stats):
                        self._tell_catalog(snapshot, entries)
                        return snapshot.id
            except BaseException:
                self._delete(attempt_files)
                raise
            self._delete(attempt_files)  # lost the race for this id: rebase on the newer snapshot
            if attempt < retries:
                self._back_off(attempt, started)
        raise CommitConflictError(f"table {table.name}: gave up committing after {retries} retries ({retries + 1} "
                                  f"attempts, 'commit.max-retries' = {retries}): other writers kept committing "
                                  "first; nothing was committed")

    def _still_latest(self, latest: Optional[Snapshot]) -> bool:
        """Whether no snapshot came after ``latest`` yet. Publishing checks only that its id is free,
        which it is again once expiry deleted it: a snapshot committed after ``latest`` and expired
        meanwhile (a slow attempt beside ``expire_snapshots``) would else be replaced by ours, out of
        order. Paimon has that window open for the whole attempt; this narrows it to the publish."""
        return self.table.snapshot_manager.latest_id() == (latest.id if latest else None)

    def _prepare(self, latest: Optional[Snapshot], kind: str, identifier: int, changes, messages, written: List[str],
                 statistics: Optional[str], merge_all: bool):
        """One attempt's snapshot on ``latest`` (None: nothing to commit) and its file entries; the
        manifests it writes are listed in ``written``."""
        adds, deletes, index_changes, changelog, overwrite = changes(latest)
        if kind == "APPEND" and (deletes or any(e.index_type == dv.INDEX_TYPE for e in index_changes)):
            kind = "OVERWRITE"  # Paimon's rule: an append that removes files or changes deletion vectors
        self._check_append_only(kind, deletes)
        entries = list(deletes)
        if overwrite is not None:
            entries += self._overwrite_deletes(latest, overwrite, messages)
            self._check_last_safe_snapshot(entries, latest)
        self._check_deletes(latest, deletes)  # an overwrite's own deletes are live: it just read them
        entries = adds + entries
        return self._build_snapshot(latest, entries, index_changes, changelog, kind, identifier, written,
                                    statistics, merge_all), entries

    def _back_off(self, retry: int, started: float) -> None:
        """Wait before retry number ``retry + 1``, as Paimon's RetryWaiter: ``commit.min-retry-wait``
        doubled per retry up to ``commit.max-retry-wait``, plus up to 20% random jitter, so writers
        that lost together do not collide again in lockstep. Once ``commit.timeout`` has passed since
        the first attempt, the commit gives up instead (as Paimon, checked after each lost attempt)."""
        options = self.table.options
        timeout, elapsed = options.get("commit.timeout"), int((time.monotonic() - started) * 1000)
        if timeout is not None and elapsed > timeout:
            raise CommitConflictError(f"table {self.table.name}: gave up committing after {retry + 1} attempts "
                                      f"in {elapsed} ms ('commit.timeout' = {timeout} ms): other writers kept "
                                      "committing first; nothing was committed")
        wait = min(options.get("commit.min-retry-wait") * 2 ** retry, options.get("commit.max-retry-wait"))
        time.sleep((wait + random.randrange(max(1, wait // 5))) / 1000)

    def _check_base(self, latest: Optional[Snapshot]) -> None:
        base = self.table.dynamic_options.get(BASE_SNAPSHOT)
        if base is not None and (latest.id if latest else 0) != int(base):
            raise CommitConflictError(f"table {self.table.name}: snapshot {latest.id if latest else 0} was committed "
                                      f"after snapshot {base}, which this write was planned on; nothing was committed")

    def _check_catalog(self) -> None:
        """A table whose partitions a metastore keeps is committed only through a catalog keeping them."""
        table = self.table
        if table.options.get(PARTITIONED_IN_METASTORE) and not table.env.partitions_in_metastore:
            raise InvalidOptionError(f"table {table.name} has '{PARTITIONED_IN_METASTORE}', but its catalog keeps no "
                                     "metastore partitions (a Hive catalog does): the table cannot be written here")

    def _tell_catalog(self, snapshot: Snapshot, entries: List[ManifestEntry]) -> None:
        """The catalog environment's callbacks (a metastore's partitions), after the commit."""
        for callback in self.table.env.commit_callbacks:
            try:
                callback(self.table, snapshot, entries)
            except PaimonError as e:
                raise PaimonError(f"table {self.table.name}: snapshot {snapshot.id} is committed, but the "
                                  f"catalog could not follow it ({e}); CALL sys.repair syncs it again") from None

    def _check_append_only(self, kind: str, deletes: List[ManifestEntry]) -> None:
        """``branch-merge.enabled``: sys.merge_branch merges branches file by file, which is only
        right while no commit ever removes a file, so none that would is made."""
        if self.table.options.get("branch-merge.enabled") and (kind in ("OVERWRITE", "COMPACT") or deletes):
            raise PaimonError(f"table {self.table.name} has 'branch-merge.enabled': its history stays append-only, "
                              "so a commit removing files (INSERT OVERWRITE, DELETE, UPDATE, MERGE INTO, "
                              "compaction) is refused")

    # -- rebasing onto the latest snapshot (commit/rebase.py) ----------------------------------

    def _data_changes(self, messages, latest: Optional[Snapshot], overwrite, redo):
        self.rebase.rebase_data(messages, latest, overwrite is not None, redo)
        return (_entries(ADD, messages, lambda m: m.new_files), _entries(DELETE, messages, lambda m: m.deleted_files),
                [e for m in messages for e in m.index_changes], _entries(ADD, messages, lambda m: m.changelog_files),
                overwrite)

    def _compaction_changes(self, messages, latest: Optional[Snapshot]):
        self.rebase.check_compaction(messages, latest)
        return (_entries(ADD, messages, lambda m: m.compact_after), _entries(DELETE, messages, lambda m: m.compact_before),
                [e for m in messages for e in m.compact_index_changes],
                _entries(ADD, messages, lambda m: m.compact_changelog), None)

    def _redo_compaction(self, buckets: List[tuple], identifier: int) -> Optional[int]:
        """Merge-on-write: compact the buckets again on the latest snapshot until it commits."""
        for _ in range(self.table.options.commit_max_retries + 1):
            messages = compact_messages(self.table, buckets=buckets)
            try:
                return self._commit_all(messages, "COMPACT", identifier, None) if messages else None
            except CommitConflictError:
                delete_files(self.table, messages)
        raise CommitConflictError(f"table {self.table.name}: the write is committed, but its compaction kept "
                                  "losing to concurrent commits; it becomes visible at the next compaction")

    def _delete(self, names: List[str]) -> None:
        for name in names:
            self.table.io.delete(self.table.paths.manifest_path(name))

    def _live_entries(self, latest: Optional[Snapshot], partitions=None, buckets=None) -> List[ManifestEntry]:
        """The live files of ``latest``; given ``partitions`` (and ``buckets``), of those only, read
        from the manifests that may hold them (as Paimon's commit reads only the changed partitions)."""
        if partitions is not None:
            return live_entries(self.table, latest, partitions, buckets)
        return [] if latest is None else self.table.new_scan().with_snapshot(latest.id).plan_entries()

    def _overwrite_deletes(self, latest: Optional[Snapshot], overwrite, messages) -> List[ManifestEntry]:
        spec, dynamic = overwrite
        if dynamic:
            selected = self._live_entries(latest, {m.partition for m in messages})
        elif spec:  # one spec, or several (dropped partitions)
            pred = specs_predicate(self.table.schema, spec if isinstance(spec, list) else [spec])
            selected = in_partitions(self._live_entries(latest), pred, self.table.schema)
        else:
            selected = self._live_entries(latest)
        return [ManifestEntry(DELETE, e.partition, e.bucket, e.total_buckets, e.file) for e in selected]

    def _check_last_safe_snapshot(self, entries: List[ManifestEntry], latest: Optional[Snapshot]) -> None:
        """An overwrite that rewrites what it read in snapshot S (rescale, sort compaction: option
        ``commit.strict-mode.last-safe-snapshot`` = S, Paimon's name) must not delete a file another
        writer committed after S: those rows were never read, and would be lost."""
        safe = self.table.options.raw.get(LAST_SAFE_SNAPSHOT)
        if safe is None or latest is None or latest.id <= int(safe):
            return
        doomed = {e.file.file_name for e in entries if e.kind == DELETE}
        for sid in range(int(safe) + 1, latest.id + 1):
            try:
                snap = self.table.snapshot_manager.snapshot(sid)
                if snap.commit_user == self.commit_user:
                    continue
                added = {e.file.file_name for m in self.table.manifest_list(snap.delta_manifest_list)
                         for e in self.table.manifest_entries(m.file_name) if e.kind == ADD}
            except (SnapshotNotFoundError, FileNotFoundError):
                raise CommitConflictError(f"table {self.table.name}: snapshot {sid}, committed after snapshot {safe} "
                                          "which this overwrite read, expired meanwhile: what it added cannot be "
                                          "checked; nothing was committed") from None
            if added & doomed:
                raise CommitConflictError(
                    f"table {self.table.name}: snapshot {sid} ({snap.commit_kind}) of another writer changed the "
                    f"partitions this overwrite replaces after snapshot {safe}, which it read; nothing was committed")

    def _check_deletes(self, latest: Optional[Snapshot], deletes: List[ManifestEntry]) -> None:
        """Every file ``deletes`` removes is still live in ``latest`` (its partitions are read, no others)."""
        if not deletes:
            return
        alive = {e.identifier() for e in self._live_entries(latest, {e.partition for e in deletes},
                                                             {e.bucket for e in deletes})}
        gone = [e.file.file_name for e in deletes if e.kind == DELETE and e.identifier() not in alive]
        if gone:
            raise CommitConflictError(f"table {self.table.name}: file(s) to delete were already removed by a "
                                      f"concurrent commit: {', '.join(gone[:3])}")

    def _build_snapshot(self, latest, entries, index_changes, changelog, kind, identifier, written,
                        statistics: Optional[str] = None, merge_all: bool = False) -> Optional[Snapshot]:
        table = self.table
        schema_id = table.schema.id
        base = [] if latest is None else (table.manifest_list(latest.base_manifest_list)
                                          + table.manifest_list(latest.delta_manifest_list))
        merged = self._maybe_merge(base, written, merge_all)
        if merge_all and [m.file_name for m in merged] == [m.file_name for m in base]:
            return None  # compact_manifest with nothing to merge: no snapshot
        base = merged
        snapshot_id = (latest.id + 1) if latest else 1
        next_row_id = (latest.next_row_id if latest else None) or 0  # Paimon 2.0 records it on every snapshot
        if table.options.get("row-tracking.enabled"):
            entries, next_row_id = row_tracking.assign(entries, snapshot_id, next_row_id,
                                                       table.options.get("row-tracking.partition-group-on-commit"))
        delta = self._write_manifests(entries, written)
        base_name, base_size = self._write_list(base, written)
        delta_name, delta_size = self._write_list(delta, written)
        changelog_name = changelog_size = None
        if changelog:
            changelog_name, changelog_size = self._write_list(self._write_manifests(changelog, written), written)
        index_manifest = latest.index_manifest if latest else None
        if index_changes:
            index_manifest = self._write_index_manifest(index_manifest, index_changes, written)
        added = sum(e.file.row_count for e in entries if e.kind == ADD)
        removed = sum(e.file.row_count for e in entries if e.kind == DELETE)
        previous_total = (latest.total_record_count or 0) if latest else 0
        return Snapshot(
            id=snapshot_id, schema_id=schema_id, next_row_id=next_row_id, uuid=str(uuid.uuid4()),
            base_manifest_list=base_name, delta_manifest_list=delta_name,
            commit_user=self.commit_user, commit_identifier=identifier, commit_kind=kind,
            time_millis=int(time.time() * 1000), total_record_count=previous_total + added - removed,
            delta_record_count=added - removed,
            changelog_record_count=sum(e.file.row_count for e in changelog) if changelog else None,
            changelog_manifest_list=changelog_name, changelog_manifest_list_size=changelog_size,
            index_manifest=index_manifest, operation=self.operation,
            base_manifest_list_size=base_size, delta_manifest_list_size=delta_size,
            watermark=latest.watermark if latest else None,
            statistics=statistics or (latest.statistics if latest else None),
            properties=json.loads(table.dynamic_options[SNAPSHOT_PROPERTIES]) if kind != "COMPACT"
            and SNAPSHOT_PROPERTIES in table.dynamic_options else None)

    def _write_manifests(self, entries: List[ManifestEntry], written: List[str]) -> List[ManifestFileMeta]:
        """``entries`` as manifests rolled as Paimon's rolling writer rolls them: a manifest ends at
        the first multiple of 1,000 entries where it reached ``manifest.target-file-size``; none for
        no entries."""
        if not entries:
            return []
        data = manifest_file.write_records(entries, "ManifestEntry", self.compression)
        target = self.table.options.get("manifest.target-file-size")
        if len(data) <= target or len(entries) <= _ROLL_CHECK:
            return [self._write_manifest(entries, data, written)]
        per_file = -(-len(entries) * target // len(data) // _ROLL_CHECK) * _ROLL_CHECK
        return [self._write_manifest(chunk, manifest_file.write_records(chunk, "ManifestEntry", self.compression), written)
                for chunk in (entries[i:i + per_file] for i in range(0, len(entries), per_file))]

    def _write_manifest(self, entries: List[ManifestEntry], data: bytes, written: List[str]) -> ManifestFileMeta:
        table = self.table
        name = table.paths.new_manifest_name()
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
            min(levels), max(levels), *row_tracking.row_id_range(entries), entries[0].total_buckets)

    def _write_list(self, metas: List[ManifestFileMeta], written: List[str]):
        table = self.table
        name = table.paths.new_manifest_list_name()
        data = manifest_file.write_records(metas, "ManifestFileMeta", self.compression)
        table.io.write_bytes(table.paths.manifest_path(name), data)
        written.append(name)
        return name, len(data)

    def _maybe_merge(self, base: List[ManifestFileMeta], written: List[str],
                     merge_all: bool = False) -> List[ManifestFileMeta]:
        """The previous snapshot's manifests merged as Paimon's commit merges them
        (:mod:`paimon_sql.manifest.manifest_merge`); ``merge_all`` is compact_manifest's full merge."""
        options = self.table.options
        return merge_manifests(
            base, lambda m: self.table.manifest_entries(m.file_name), lambda e: self._write_manifests(e, written),
            options.get("manifest.target-file-size"), 1 if merge_all else options.get("manifest.merge-min-count"),
            1 if merge_all else options.get("manifest.full-compaction-threshold-size"),
            [f.type for f in self._part_fields])

    def _write_index_manifest(self, previous: Optional[str], changes: List[IndexManifestEntry],
                              written: List[str]) -> str:
        table = self.table
        entries = table.index_manifest_entries(previous)
        if index_stale(changes, entries):
            c = next(c for c in changes if c.kind == ADD) if any(c.kind == ADD for c in changes) else changes[0]
            raise CommitConflictError(f"table {table.name}: the {c.index_type} index of bucket {c.bucket} was "
                                      "changed by a concurrent commit")
        current = {index_key(e): e for e in entries}
        for c in changes:
            key = index_key(c)
            if c.kind == ADD:
                current[key] = c
            else:
                current.pop(key, None)
        name = table.paths.new_index_manifest_name()
        table.io.write_bytes(table.paths.manifest_path(name),
                             manifest_file.write_records(list(current.values()), "IndexManifestEntry", self.compression))
        written.append(name)
        return name


class CommitStore(ScanStore, Protocol):
    """A store that commits to itself: what maintenance (expiry, rollback, migration, index
    rewrites) and post-commit jobs work on (Paimon's ``FileStore.newCommit()``)."""

    def new_commit(self, commit_user: Optional[str] = None) -> TableCommit: ...
