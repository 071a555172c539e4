"""Rebasing a commit's messages onto the latest snapshot: where concurrent writers meet.

Each message names the snapshot it was written on. When other commits came after it, each attempt
of the commit (:mod:`paimon_sql.commit.table_commit`) brings the messages up to the latest snapshot
by these rules, or refuses them (:class:`CommitConflictError`, nothing is published):

- primary-key files whose sequence numbers a concurrent commit to the bucket reached are
  rewritten above them (:mod:`~paimon_sql.commit.sequence_rebase`), so sequence numbers never tie
  and the last committer wins everywhere; the write's own compaction of that bucket, built on
  stale sequences, is dropped;
- an index file (deletion vectors, HASH index) replaces the bucket's index files of the latest
  snapshot, never silently a newer one: append-table deletion vectors are joined with the newer
  vectors (:mod:`~paimon_sql.commit.vector_rebase`; both deletes stay), any other index change
  conflicts (:func:`index_stale`);
- merge-on-write: the compaction that makes a write visible (its deletion vectors hide the old
  rows, in the same COMPACT snapshot as the new rows, as Paimon commits them) is valid only while
  no other commit changed the bucket's upper levels; when it loses, it is dropped and redone on the
  latest snapshot by the commit, so an acknowledged write is visible;
- data evolution: a partial-column file conflicts with any commit that touched its row ids
  (:mod:`~paimon_sql.commit.row_id_conflicts`).

Paimon keeps its conflict checks beside its commit in the same way (``ConflictDetection``,
``RowTrackingCommitUtils``); the rewrites here are paimon-sql's, so concurrent writers of one
bucket both succeed where Java's would retry or fail.

Example::

    rebase = CommitRebase(table, commit_user)
    rebase.rebase_data(messages, latest, overwrite=False, redo=redo)
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, List, Optional, Set, Tuple

from paimon_sql.commit.row_id_conflicts import check_conflicts
from paimon_sql.commit.sequence_rebase import shift_sequences
from paimon_sql.commit.vector_rebase import rebase_vectors
from paimon_sql.exceptions import CommitConflictError, SnapshotNotFoundError
from paimon_sql.index import deletion_vector as dv
from paimon_sql.manifest.manifest_file import ADD, DELETE, IndexManifestEntry, ManifestEntry
from paimon_sql.mergetree.levels import merge_on_write, needs_level0_empty
from paimon_sql.read import data_evolution
from paimon_sql.store.file_store import FileStore
from paimon_sql.write.commit_message import CommitMessage, delete_files
from paimon_sql.write.restore import live_entries

if TYPE_CHECKING:
    from paimon_sql.snapshot.snapshot import Snapshot

Buckets = Set[Tuple[bytes, int]]  # (partition, bucket)s of merge-on-write whose compaction is to be redone


class CommitRebase:
    """The rules above for the messages of one committer (``commit_user``: its own earlier
    commits are no news to it), asked again at each attempt with that attempt's latest snapshot."""

    def __init__(self, table: FileStore, commit_user: str):
        self.table = table
        self.commit_user = commit_user

    def rebase_data(self, messages: List[CommitMessage], latest: Optional[Snapshot], overwrite: bool,
                    redo: Buckets) -> None:
        """New files, deletion vectors and partial-column files of ``messages`` onto ``latest``."""
        table = self.table
        if table.schema.is_primary_key_table and not overwrite:
            for m in messages:
                self._rebase_sequences(m, latest, redo)
        self._rebase_deletion_vectors(messages, latest)
        if data_evolution.enabled(table):
            for m in messages:
                check_conflicts(table, m, self.changes_since(m.base_snapshot, latest, m.partition, m.bucket))

    def check_compaction(self, messages: List[CommitMessage], latest: Optional[Snapshot]) -> None:
        """Merge-on-write: a compaction looked up old rows in the bucket's upper levels and marked
        them deleted; another commit that changed those levels since makes it stale."""
        if not merge_on_write(self.table.schema):
            return
        for m in messages:
            changes = self.changes_since(m.base_snapshot, latest, m.partition, m.bucket)
            if changes is None:
                raise CommitConflictError(f"table {self.table.name}: snapshots after {m.base_snapshot}, which the "
                                          f"compaction of bucket {m.bucket} was planned on, expired meanwhile")
            changed = [e for e in changes if e.file.level > 0]
            if changed:
                raise CommitConflictError(f"table {self.table.name}: bucket {m.bucket} was compacted by a concurrent "
                                          f"commit ({changed[0].file.file_name})")

    def drop_compaction(self, m: CommitMessage, redo: Buckets) -> None:
        """Forget ``m``'s compaction (delete what it wrote); a merge-on-write bucket is compacted again."""
        if not m.has_compaction():
            return
        delete_files(self.table, [replace(m, new_files=[], changelog_files=[], index_changes=[])])
        m.compact_before, m.compact_after, m.compact_changelog, m.compact_index_changes = [], [], [], []
        if merge_on_write(self.table.schema) and needs_level0_empty(self.table.schema):
            redo.add((m.partition, m.bucket))

    def changes_since(self, base: Optional[int], latest: Optional[Snapshot], partition: bytes,
                      bucket: int) -> Optional[List[ManifestEntry]]:
        """The file changes other commits made to one bucket after snapshot ``base``. None when
        they can no longer be known: a snapshot of that range expired while the write ran (a long
        write beside ``expire_snapshots``); callers then assume the worst of every live file of the
        bucket."""
        if base is None or latest is None or latest.id <= base:
            return []
        table = self.table
        out = []
        try:
            for sid in range(base + 1, latest.id + 1):
                snap = latest if sid == latest.id else table.snapshot_manager.snapshot(sid)
                if snap.commit_user == self.commit_user:
                    continue
                for meta in table.manifest_list(snap.delta_manifest_list):
                    out += [e for e in table.manifest_entries(meta.file_name)
                            if e.bucket == bucket and e.partition == partition]
        except (SnapshotNotFoundError, FileNotFoundError):  # expiry deletes manifests first, then snapshots
            return None
        return out

    def _rebase_sequences(self, m: CommitMessage, latest: Optional[Snapshot], redo: Buckets) -> None:
        """Rewrite ``m``'s new files above the sequence numbers a concurrent commit gave the bucket."""
        ours = m.new_files + m.changelog_files
        if not ours or m.bucket < 0:  # the postpone bucket: no sequence (-1); compaction numbers its rows
            return
        changes = self.changes_since(m.base_snapshot, latest, m.partition, m.bucket)
        if changes is None:  # history expired: any live file of the bucket may be a concurrent commit's
            changes = live_entries(self.table, latest, {m.partition}, {m.bucket})
        theirs = [e.file.max_sequence_number for e in changes if e.kind == ADD]
        first = min(f.min_sequence_number for f in ours)
        if not theirs or max(theirs) < first:
            return
        shift = max(theirs) - first + 1
        self.drop_compaction(m, redo)
        m.new_files = shift_sequences(self.table, m.partition, m.bucket, m.new_files, shift)
        m.changelog_files = shift_sequences(self.table, m.partition, m.bucket, m.changelog_files, shift, "changelog-")

    def _rebase_deletion_vectors(self, messages: List[CommitMessage], latest: Optional[Snapshot]) -> None:
        """Append tables: deletion vectors written from an older snapshot absorb the bucket's newer
        ones, and must not point into files removed since (their rows moved or are gone)."""
        table = self.table
        if table.schema.is_primary_key_table or latest is None:
            return
        current = table.index_manifest_entries(latest.index_manifest)
        for m in messages:
            if not any(c.index_type == dv.INDEX_TYPE for c in m.index_changes):
                continue
            changes = self.changes_since(m.base_snapshot, latest, m.partition, m.bucket)
            removed = changes is None or any(e.kind == DELETE for e in changes)
            if removed or index_stale(m.index_changes, current):
                live = [e.file.file_name for e in live_entries(table, latest, {m.partition}, {m.bucket})]
                rebase_vectors(table, m, [e for e in current if (e.partition, e.bucket, e.index_type)
                                          == (m.partition, m.bucket, dv.INDEX_TYPE)], live)


def index_key(e: IndexManifestEntry) -> tuple:
    return (e.partition, e.bucket, e.index_type, e.file_name)


def index_stale(changes: List[IndexManifestEntry], current: List[IndexManifestEntry]) -> bool:
    """Whether ``changes`` were made against other index files than the latest snapshot's: each
    index type a change adds to a bucket must replace exactly the bucket's current files of it."""
    added = {(c.partition, c.bucket, c.index_type) for c in changes if c.kind == ADD}
    removed = {index_key(c) for c in changes if c.kind == DELETE}
    now = {index_key(e) for e in current if (e.partition, e.bucket, e.index_type) in added}
    return now != {k for k in removed if k[:3] in added} or not removed <= {index_key(e) for e in current}
