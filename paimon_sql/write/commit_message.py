"""CommitMessage: what one writer produced for one (partition, bucket) — new files, files a
compaction replaced, changelog and index changes — as Paimon's ``CommitMessageImpl``.

A value of its own: writers and compactions (:mod:`paimon_sql.write.table_write`,
:mod:`paimon_sql.compact`) make messages, Spark tasks return them pickled to the driver, and the
driver's :class:`~paimon_sql.commit.table_commit.TableCommit` publishes them as one snapshot or
deletes their files (:func:`delete_files`) when they will never be committed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import List, Optional

from paimon_sql.data import binary_row
from paimon_sql.manifest.manifest_file import ADD, DataFileMeta, IndexManifestEntry
from paimon_sql.store.file_store import FileStore
from paimon_sql.write.file_writer import delete_data_files


@dataclass
class CommitMessage:
    """What one writer produced for one (partition, bucket)."""

    partition: bytes
    bucket: int
    total_buckets: int
    new_files: List[DataFileMeta] = field(default_factory=list)
    deleted_files: List[DataFileMeta] = field(default_factory=list)
    index_changes: List[IndexManifestEntry] = field(default_factory=list)
    changelog_files: List[DataFileMeta] = field(default_factory=list)  # changelog of the new files (input)
    compact_before: List[DataFileMeta] = field(default_factory=list)   # files a compaction replaced ...
    compact_after: List[DataFileMeta] = field(default_factory=list)    # ... by these (COMPACT snapshot)
    compact_changelog: List[DataFileMeta] = field(default_factory=list)  # changelog of that compaction
    # merge-on-write: the deletion vectors that hide the rows the compaction replaced; they become
    # visible with the compaction's files, in the COMPACT snapshot (as Paimon commits them)
    compact_index_changes: List[IndexManifestEntry] = field(default_factory=list)
    base_snapshot: Optional[int] = None  # the snapshot the writer read (0: none); the commit checks what changed since

    def is_empty(self) -> bool:
        return not (self.has_data() or self.has_compaction())

    def has_data(self) -> bool:
        return bool(self.new_files or self.deleted_files or self.index_changes or self.changelog_files)

    def has_compaction(self) -> bool:
        return bool(self.compact_before or self.compact_after or self.compact_changelog or self.compact_index_changes)

    def written_files(self) -> List[DataFileMeta]:
        """Files this message brings into the bucket (what an abort deletes)."""
        return self.new_files + self.changelog_files + self.compact_after + self.compact_changelog


def delete_files(table: FileStore, messages: List[CommitMessage]) -> None:
    """Remove the new data and index files of messages that will never be committed."""
    part_types = [f.type for f in table.schema.fields_of(table.schema.partition_keys)]
    for m in messages:
        pvals = binary_row.from_bytes(m.partition, part_types)
        upgraded = {f.file_name for f in m.compact_before}  # an upgrade keeps the file: never delete it
        for f in m.written_files():
            if f not in m.compact_after or f.file_name not in upgraded:
                delete_data_files(table, pvals, m.bucket, [f])
        delete_index_files(table, m.index_changes + m.compact_index_changes)


def delete_index_files(table: FileStore, changes: List[IndexManifestEntry]) -> None:
    """Remove the index files that ``changes`` add (what an aborted commit leaves)."""
    for c in changes:
        if c.kind == ADD:
            table.io.delete(table.paths.index_path(c.file_name))
