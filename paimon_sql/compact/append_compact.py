"""Compaction of append tables: small files of a bucket rewritten into fewer, in order.

Paimon's ``BucketedAppendCompactManager``: a bucket's files are taken in sequence order; a full
compaction skips the leading files that already have the target size (and no deletion vector)
and rewrites the rest when more than one is left or any has deleted rows; a minor one slides a
window over the small files and rewrites the first run that reaches the target size with at
least ``compaction.min.file-num`` files. Rows keep their order and their sequence numbers (the
new files count on from the first old file's), deleted rows are dropped, and the deletion
vectors of the replaced files leave the bucket's index.

Unaware-bucket tables (``bucket`` = -1) are compacted per partition as paimon-spark compacts them,
by Paimon's ``AppendCompactCoordinator`` whatever the strategy (:func:`pick_unaware`): the small
files (below ``compaction.small-file-ratio`` of the target size, or with too many deleted rows)
are packed smallest first into groups of at least twice the target size, and what is left is
compacted only when it counts ``compaction.min.file-num`` files; files with deletion vectors are
always compacted. Rows there have no order to keep.

A row-tracking table's compacted files hold each row's ``_ROW_ID`` and ``_SEQUENCE_NUMBER`` as
columns after the table's (``_WRITE_COLS`` lists them; no first row id), as Java's compaction
writes them (``SpecialFields.rowTypeWithRowTracking``): rows keep their ids whatever file they
move to.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Dict, List, Sequence, Tuple

import pyarrow as pa
from pyroaring import FrozenBitMap

from paimon_sql.data import binary_row
from paimon_sql.index import deletion_vector as dv
from paimon_sql.manifest.manifest_file import DELETE, FILE_SOURCE_COMPACT, DataFileMeta, IndexManifestEntry
from paimon_sql.read.metadata_columns import row_tracking
from paimon_sql.read.scan import ScanStore
from paimon_sql.read.split import Split
from paimon_sql.read.split_read import TRACKING, SplitReader
from paimon_sql.write.commit_message import CommitMessage, delete_files
from paimon_sql.write.file_writer import write_files


def pick(files: Sequence[DataFileMeta], vectors: Dict[str, object], target: int, min_files: int,
         full: bool) -> List[DataFileMeta]:
    """The files of one bucket (in sequence order) a compaction rewrites; empty when none."""
    if full:
        rest = list(files)
        while rest and rest[0].file_size >= target and rest[0].file_name not in vectors:
            rest.pop(0)
        return rest if len(rest) > 1 or any(f.file_name in vectors for f in rest) else []
    window, size = [], 0
    for f in (f for f in files if f.file_size < target):
        window.append(f)
        size += f.file_size
        if size >= target and len(window) >= min_files:
            return window
        if size >= target:
            size -= window.pop(0).file_size
    return []


def pick_unaware(files: Sequence[DataFileMeta], vectors: Dict[str, object], vector_files: Dict[str, str],
                 options) -> List[List[DataFileMeta]]:
    """The groups of an unaware-bucket partition's files one compaction rewrites, each into new
    files, as Paimon's ``AppendCompactCoordinator`` plans a batch compaction (``vector_files``: the
    index file holding each data file's deletion vector)."""
    target = options.target_file_size(False)
    small = int(target * options.get("compaction.small-file-ratio"))
    ratio = options.get("compaction.delete-ratio-threshold")
    candidates = [f for f in files if f.file_size < small
                  or (f.file_name in vectors and len(vectors[f.file_name]) > f.row_count * ratio)]
    packer = _Packer(target, options.get("source.split.open-file-cost"), options.get("compaction.min.file-num"))
    if not vector_files:
        return packer.pack(candidates)
    by_index: Dict[str, List[DataFileMeta]] = {}
    rest = []
    for f in candidates:
        if f.file_name in vector_files:
            by_index.setdefault(vector_files[f.file_name], []).append(f)
        else:
            rest.append(f)
    groups = packer.pack_vector_groups(sorted(by_index.values(), key=lambda g: sum(f.file_size for f in g)))
    return groups + (packer.pack(rest) if len(rest) > 1 else [])


class _Packer:
    """The coordinator's file bin: files (or groups sharing a deletion-vector index file) are added
    smallest first; a bin of more than one file reaching twice the target size (each file counted
    with ``source.split.open-file-cost``) is one compaction."""

    def __init__(self, target: int, open_cost: int, min_files: int):
        self.target, self.open_cost, self.min_files = target, open_cost, min_files

    def _bins(self, items: Sequence[Sequence[DataFileMeta]]):
        """(full bins, the last bin not yet full)."""
        out, bin_, size = [], [], 0
        for files in items:
            bin_ += files
            size += sum(f.file_size + self.open_cost for f in files)
            if len(bin_) > 1 and size >= self.target * 2:
                out.append(bin_)
                bin_, size = [], 0
        return out, bin_

    def pack(self, files: Sequence[DataFileMeta]) -> List[List[DataFileMeta]]:
        """Single files by size; a last bin of fewer than ``compaction.min.file-num`` files waits."""
        out, rest = self._bins([[f] for f in sorted(files, key=lambda f: f.file_size)])
        return out + ([rest] if len(rest) >= self.min_files else [])

    def pack_vector_groups(self, groups: Sequence[Sequence[DataFileMeta]]) -> List[List[DataFileMeta]]:
        """Files with deletion vectors must be compacted: the last bin goes too."""
        out, rest = self._bins(groups)
        return out + ([rest] if rest else [])


def compact_unit(table: ScanStore, unit, full: bool):
    """The commit message compacting one bucket (a :class:`~paimon_sql.compact.merge_tree_compact.BucketUnit`:
    its live files in the base snapshot), or None when it has nothing to rewrite. A failure
    deletes the files written."""
    dv_entries, vectors = bucket_vectors(table, unit)
    if table.options.bucket == -1:
        vector_files = {d.data_file: e.file_name for e in dv_entries for d in (e.dv_ranges or ())}
        groups = pick_unaware(unit.files, vectors, vector_files, table.options)
    else:
        ordered = sorted(unit.files, key=lambda f: f.min_sequence_number)
        groups = [pick(ordered, vectors, table.options.target_file_size(False),
                       table.options.get("compaction.min.file-num"), full)]
    groups = [sorted(g, key=lambda f: f.min_sequence_number) for g in groups if g]
    if not groups:
        return None
    before, after = [f for g in groups for f in g], []
    try:
        for group in groups:
            after += _rewrite(table, unit.partition, unit.bucket, group, vectors)
    except BaseException:
        delete_files(table, [CommitMessage(unit.partition, unit.bucket, unit.total_buckets, compact_after=after)])
        raise
    message = CommitMessage(unit.partition, unit.bucket, unit.total_buckets, compact_before=before,
                            compact_after=after, base_snapshot=unit.base_snapshot)
    gone = {f.file_name for f in before}
    kept = {name: v for name, v in vectors.items() if name not in gone}
    return with_vectors(table, unit, message, dv_entries, kept) if len(kept) != len(vectors) else message


def bucket_vectors(table: ScanStore, unit) -> Tuple[List[IndexManifestEntry], Dict[str, object]]:
    """The bucket's deletion-vector index entries in the unit's base snapshot, and its non-empty
    vectors by data file name."""
    snap = table.snapshot_manager.snapshot(unit.base_snapshot) if unit.base_snapshot else None
    index = table.index_manifest_entries(snap.index_manifest) if snap and snap.index_manifest else []
    dv_entries = [e for e in index if (e.partition, e.bucket, e.index_type) == (unit.partition, unit.bucket,
                                                                                dv.INDEX_TYPE)]
    vectors = {}
    for e in dv_entries:
        vectors.update(dv.read_index_file(table, e))
    return dv_entries, {name: v for name, v in vectors.items() if len(v)}


def with_vectors(table: ScanStore, unit, message: CommitMessage, dv_entries: List[IndexManifestEntry],
                 kept: Dict[str, object]) -> CommitMessage:
    """``message`` replacing the bucket's vector index files by one holding ``kept`` (on a table of
    fixed buckets an empty one when none is kept, as Java's bucketed maintainer writes it). A
    failure deletes what the message wrote."""
    message.compact_index_changes = [replace(e, kind=DELETE) for e in dv_entries]
    try:
        if kept or table.options.get("bucket") != -1:
            message.compact_index_changes.append(dv.write_index_file(table, unit.partition, unit.bucket, kept))
    except BaseException:
        delete_files(table, [message])
        raise
    return message


def _rewrite(table: ScanStore, partition: bytes, bucket: int, files: List[DataFileMeta],
             vectors) -> List[DataFileMeta]:
    """The rows of ``files`` (deleted ones dropped) written anew as level-0 COMPACT files."""
    dvs = tuple((f.file_name, FrozenBitMap(vectors[f.file_name])) for f in files if f.file_name in vectors)
    split = Split(partition, bucket, tuple(files), deletion_vectors=dvs)
    tracked = row_tracking(table.schema)
    reader = SplitReader(table)
    rows = reader.read_positions(split, tracked=True) if tracked else reader.read(split)
    part_types = [f.type for f in table.schema.fields_of(table.schema.partition_keys)]
    schema = table.schema.data_file_arrow_schema()
    if tracked:
        schema = pa.schema(list(schema) + [pa.field(c, pa.int64(), False) for c in TRACKING])
    out = write_files(table, rows.select(schema.names).cast(schema), binary_row.from_bytes(partition, part_types),
                      bucket, 0, FILE_SOURCE_COMPACT, first_sequence=files[0].min_sequence_number)
    if tracked:  # stats cover the table's columns, named so: the file holds two more
        out = [replace(f, write_cols=tuple(schema.names), value_stats_cols=tuple(table.schema.field_names))
               for f in out]
    return out
