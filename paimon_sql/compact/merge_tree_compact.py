"""Compaction of primary-key tables: one bucket's LSM tree at a time, then one COMPACT snapshot.

:class:`BucketCompactor` holds a bucket's levels. Each :meth:`~BucketCompactor.compact` picks a
unit (universal compaction, a forced full compaction, or — for the lookup changelog producer and
first-row tables — every level-0 file) and carries it out like Paimon's MergeTreeCompactTask:
sections of overlapping files (and small files) are merged and rewritten into the output level;
a large file that overlaps nothing is only *upgraded* (same file, new level in the manifest),
unless it holds deletes and goes to the max level, or a changelog must be produced from it.
Deletes are dropped when nothing older can remain below the output level.

Merge-on-write (``deletion-vectors.enabled``): level-0 rows are always rewritten with a lookup
into the upper levels; a key found there is merged with its old value (the engine sees it as the
oldest row) and the old row's position is marked in its file's deletion vector, so every key has
one live row across levels > 0 and batch reads need no merge. The bucket's vectors are kept here
and written as one new index file per commit (:meth:`BucketCompactor.index_changes`).

Changelog producers write ``changelog-*`` files here: full-compaction compares the top level
before and after a full compaction; lookup compares each level-0 key with its value in the
upper levels.

A table compaction is planned and carried out apart: :func:`plan_units` (the driver) lists each
bucket's live files in one base snapshot as a :class:`BucketUnit`; :func:`compact_unit` compacts one
unit anywhere — in this process or in a Spark task (:mod:`paimon_sql.spark.compact`) — and returns
its commit message; the messages are committed as one COMPACT snapshot. :func:`compact_messages`
plans and compacts in this process, and the table's ``compact()`` commits what it returns. Append tables' units are compacted by
:mod:`paimon_sql.compact.append_compact`.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np
import pyarrow as pa
from pyroaring import BitMap, FrozenBitMap

from paimon_sql.compact import append_compact, data_evolution_compact
from paimon_sql.data import binary_row, row_kind
from paimon_sql.data.predicate import Predicate
from paimon_sql.format.file_format import read_file
from paimon_sql.index import deletion_vector as dv
from paimon_sql.manifest.manifest_file import DELETE, FILE_SOURCE_COMPACT, DataFileMeta, IndexManifestEntry
from paimon_sql.mergetree import changelog
from paimon_sql.mergetree.compact_result import CompactResult
from paimon_sql.mergetree.compact_strategy import CompactUnit, UniversalCompaction, full_compaction
from paimon_sql.mergetree.interval_partition import merge_order, sections
from paimon_sql.mergetree.levels import Levels, merge_on_write, needs_level0_empty, num_levels
from paimon_sql.read import data_evolution
from paimon_sql.read.scan import ScanStore
from paimon_sql.read.split import Split
from paimon_sql.read.split_read import FILE_COLUMN, POSITION_COLUMN, SplitReader
from paimon_sql.schema.table_schema import VALUE_KIND
from paimon_sql.write.commit_message import CommitMessage, delete_files
from paimon_sql.write.file_writer import key_columns, write_files


LEVEL = "__paimon_level"
_LOOKUP = -1  # level tag of rows read only to look up old values (not rewritten)


class BucketCompactor:
    def __init__(self, table: ScanStore, partition: bytes, bucket: int, files: Sequence[DataFileMeta],
                 snapshot_id: int):
        """``files``: the bucket's live files in snapshot ``snapshot_id`` (0: an empty table), whose
        deletion vectors merge-on-write starts from."""
        self.table, self.partition, self.bucket = table, partition, bucket
        part_types = [f.type for f in table.schema.fields_of(table.schema.partition_keys)]
        self.partition_values = binary_row.from_bytes(partition, part_types)
        options = table.options
        self.levels = Levels(files, num_levels(options), lambda f: table.key_range(f)[0])
        self.strategy = UniversalCompaction.from_options(options)
        self.min_file_size = options.target_file_size(True) // 10 * 7
        self.producer = options.get("changelog-producer")
        self.row_deduplicate = bool(options.get("changelog-producer.row-deduplicate"))
        self.first_row = options.merge_engine == "first-row"
        self.reader = SplitReader(table)
        self.mow = merge_on_write(table.schema)
        self.vectors: Dict[str, BitMap] = {}  # merge-on-write: the bucket's deletion vectors
        self.dv_entries: List[IndexManifestEntry] = []  # ... and the index files that hold them
        self._vectors_changed = False
        if self.mow:
            self._load_vectors(snapshot_id)

    def _load_vectors(self, snapshot_id: int) -> None:
        snap = self.table.snapshot_manager.snapshot(snapshot_id) if snapshot_id else None
        entries = self.table.index_manifest_entries(snap.index_manifest) if snap and snap.index_manifest else []
        self.dv_entries = [e for e in entries if (e.partition, e.bucket, e.index_type)
                           == (self.partition, self.bucket, dv.INDEX_TYPE)]
        for e in self.dv_entries:
            self.vectors.update(dv.read_index_file(self.table, e))

    def index_changes(self) -> List[IndexManifestEntry]:
        """Merge-on-write: the index manifest changes since the last call — the bucket's old
        deletion vector files out, one file with its current vectors in (an empty one when the
        last vectors went, as Java's maintainer writes it)."""
        if not self._vectors_changed:
            return []
        live = {f.file_name for f in self.levels.files}
        self.vectors = {name: v for name, v in self.vectors.items() if name in live and len(v)}
        changes = [replace(e, kind=DELETE) for e in self.dv_entries]
        self.dv_entries = [dv.write_index_file(self.table, self.partition, self.bucket, self.vectors)]
        self._vectors_changed = False
        return changes + self.dv_entries

    def discard(self, result: CompactResult) -> None:
        """Delete the files a failed compaction wrote (an upgraded file is the old one: kept)."""
        delete_files(self.table, [CommitMessage(self.partition, self.bucket, 0, compact_before=result.before,
                                                compact_after=result.after, compact_changelog=result.changelog)])

    def add(self, files: Sequence[DataFileMeta]) -> None:
        self.levels.update([], files)

    def compact(self, full: bool = False) -> Optional[CompactResult]:
        levels = self.levels
        runs = levels.sorted_runs()
        if full:
            unit = full_compaction(levels.num_levels, runs)
        else:
            unit = self.strategy.pick(levels.num_levels, runs)
            if unit is None and needs_level0_empty(self.table.schema):
                unit = self.strategy.force_pick_level0(levels.num_levels, runs)
        if unit is None:
            return None
        # merge-on-write drops deletes at every level above 0, as Java: the old rows are in deletion
        # vectors, and readers (Iceberg's, Java's raw reads) take the files above 0 without a merge
        drop_delete = unit.output_level != 0 and (unit.output_level >= levels.non_empty_highest_level() or self.mow)
        task = _Task(self, unit, drop_delete)
        try:
            result = task.run()
        except BaseException:
            self.discard(task.result)
            raise
        levels.update(result.before, result.after)
        if self.mow:  # changed, as Java's maintainer is modified: rows newly deleted, or rewritten files' vectors gone
            live = {f.file_name for f in levels.files}
            self._vectors_changed |= any(len(p) for p in result.deleted_rows.values()) or any(
                f.file_name in self.vectors and f.file_name not in live for f in result.before)
            for name, positions in result.deleted_rows.items():
                self.vectors.setdefault(name, BitMap()).update(positions.astype(np.uint32))
        return result

    # -- reading and writing -----------------------------------------------------------------

    def read(self, files: Sequence[DataFileMeta], level_tag: Optional[int] = None) -> List[pa.Table]:
        """The files' rows tagged with their level; rows their deletion vectors delete are left out.
        Merge-on-write adds each row's file and position (what a lookup marks deleted)."""
        dvs = tuple((f.file_name, FrozenBitMap(self.vectors[f.file_name])) for f in files
                    if f.file_name in self.vectors)
        split = Split(self.partition, self.bucket, tuple(files), deletion_vectors=dvs)
        out = []
        for f in files:
            rows = self.reader.read_kv(split, f, with_position=self.mow)
            if self.mow:
                rows = rows.append_column(FILE_COLUMN, pa.array(np.full(rows.num_rows, f.file_name, object),
                                                                pa.string()))
            tag = f.level if level_tag is None else level_tag
            out.append(rows.append_column(LEVEL, pa.array(np.full(rows.num_rows, tag, np.int32))))
        return out

    def has_deletes(self, f: DataFileMeta) -> bool:
        """Whether a file holds -U/-D rows (read from the file: not every writer counts them)."""
        path = self.table.paths.data_file_path(self.partition_values, self.bucket, f.file_name, f.external_path)
        kinds = read_file(self.table.io, path, f.file_name.rsplit(".", 1)[-1], [VALUE_KIND]).column(VALUE_KIND)
        return not bool(np.all(np.isin(kinds.to_numpy(), (row_kind.INSERT, row_kind.UPDATE_AFTER))))

    def write(self, rows: pa.Table, level: int, prefix: str = "data-") -> List[DataFileMeta]:
        names = self.table.schema.data_file_arrow_schema().names
        return write_files(self.table, rows.select(names).cast(self.table.schema.data_file_arrow_schema()),
                           self.partition_values, self.bucket, level, FILE_SOURCE_COMPACT, prefix)


class _Task:
    """One compaction unit carried out (Paimon's MergeTreeCompactTask)."""

    def __init__(self, compactor: BucketCompactor, unit: CompactUnit, drop_delete: bool):
        self.c, self.unit, self.drop_delete = compactor, unit, drop_delete
        self.output = unit.output_level
        self.max_level = compactor.levels.max_level
        self.result = CompactResult()

    def run(self) -> CompactResult:
        candidate: List[tuple] = []
        for section in sections(self.unit.files, self.c.table.key_range):
            if len(section) > 1 or section[0].file_size < self.c.min_file_size:
                candidate.append(section)
            else:  # a large file overlapping nothing: rewrite what came before, upgrade it
                self._rewrite(candidate)
                candidate = []
                self._upgrade(section[0])
        self._rewrite(candidate)
        return self.result

    def _upgrade(self, f: DataFileMeta) -> None:
        if f.level == self.output:
            return
        if self._lookup_mode([f]) and not self.c.first_row:  # Java's LookupMergeTreeCompactRewriter
            self._rewrite_files([f], keep=not self._upgrade_rewrites(f))
            return
        if self._changelog_needs_rows([f]) or (self.output == self.max_level and self.c.has_deletes(f)):
            self._rewrite_files([f])
            return
        self.result.before.append(f)
        self.result.after.append(replace(f, level=self.output))

    def _upgrade_rewrites(self, f: DataFileMeta) -> bool:
        """Java's upgrade strategy for a level-0 file moving up in lookup mode: its rows are looked up
        (deletion vectors, changelog) either way, and the file is written anew only when it has
        deletes to drop (merge-on-write; an unknown count counts) or when lookups may change its rows
        (below the top level, a merge engine other than deduplicate or a sequence field)."""
        if self.c.mow and (f.delete_row_count is None or f.delete_row_count > 0):
            return True
        options = self.c.table.options
        return not (self.output == self.max_level
                    or (options.merge_engine == "deduplicate" and not options.get("sequence.field")))

    def _rewrite(self, candidate: List[tuple]) -> None:
        files = [f for section in candidate for f in section]
        if len(files) == 1:
            self._upgrade(files[0])
        elif files:
            self._rewrite_files(files)

    def _rewrite_files(self, files: List[DataFileMeta], keep: bool = False) -> None:
        """Merge the files' rows (deletes dropped if allowed) into new files at the output level;
        ``keep``: one file whose merge leaves its rows as they are, moved up as it is instead."""
        c = self.c
        lookup = self._lookup_files(files) if self._lookup_mode(files) else []
        # older rows first, so a tie in sequence goes to the newer row, as in every read (merge_order)
        rows = pa.concat_tables(c.read(merge_order(lookup), level_tag=_LOOKUP) + c.read(merge_order(files)))
        merge = c.table.merge_function
        g = merge.group(rows, key_columns(c.table.schema))
        levels = np.asarray(g.column(LEVEL))
        own = levels != _LOOKUP
        if lookup and self.c.first_row:  # a key already in an upper level keeps its first row there
            own &= ~g.any(~own)[g.row_group()]
        if lookup and c.mow and not c.first_row:
            # merge-on-write: a key's old row joins its merge and is then deleted where it lies
            own = g.any(own)[g.row_group()]
            self._mark_deleted(g, own & (levels == _LOOKUP))
        merged = merge.merge(g.subset(own)) if lookup else merge.merge(g)
        if self.drop_delete:
            kinds = merged.column(VALUE_KIND).to_numpy()
            merged = merged.filter(pa.array((kinds == row_kind.INSERT) | (kinds == row_kind.UPDATE_AFTER)))
        self.result.before += files
        if keep:
            self.result.after += [replace(f, level=self.output) for f in files]
        elif merged.num_rows:
            self.result.after += c.write(merged, self.output)
        self._changelog(merge, g, levels, files)

    def _mark_deleted(self, g, replaced: np.ndarray) -> None:
        if not replaced.any():
            return
        where = pa.array(replaced)
        names = g.column(FILE_COLUMN).filter(where).to_numpy(zero_copy_only=False)
        positions = g.column(POSITION_COLUMN).filter(where).to_numpy(zero_copy_only=False).astype(np.int64)
        for name in np.unique(names):
            hit = positions[names == name]
            old = self.result.deleted_rows.get(name)
            self.result.deleted_rows[name] = hit if old is None else np.concatenate([old, hit])

    # -- changelog ---------------------------------------------------------------------------

    def _full_changelog(self) -> bool:
        return self.c.producer == "full-compaction" and self.output == self.max_level

    def _lookup_mode(self, files) -> bool:
        """Level-0 rows meet the upper levels' values: for lookup changelog, first-row and merge-on-write."""
        return (self.c.producer == "lookup" or self.c.first_row or self.c.mow) and any(f.level == 0 for f in files)

    def _changelog_needs_rows(self, files) -> bool:
        return self._full_changelog() or self._lookup_mode(files)

    def _lookup_files(self, files) -> List[DataFileMeta]:
        """Upper-level files outside the unit whose key range meets the level-0 files' keys."""
        key_range = self.c.table.key_range
        l0 = [key_range(f) for f in files if f.level == 0]
        lo, hi = min(r[0] for r in l0), max(r[1] for r in l0)
        names = {f.file_name for f in files}
        return [f for f in self.c.levels.files if f.level > 0 and f.file_name not in names
                and not (key_range(f)[1] < lo or key_range(f)[0] > hi)]

    def _changelog(self, merge, g, levels: np.ndarray, files) -> None:
        if self._full_changelog():
            touched, before = levels < self.max_level, levels == self.max_level
        elif self.c.producer == "lookup" and self._lookup_mode(files):
            touched, before = levels == 0, levels != 0
        else:
            return
        values = [f.name for f in self.c.table.schema.fields]
        # first-row never changes a key's value: its changelog is the +I of new keys only
        rows = changelog.diff(merge, g, touched, before, values, self.c.row_deduplicate or self.c.first_row)
        if rows.num_rows:
            self.result.changelog += self.c.write(rows, 0, prefix="changelog-")


@dataclass(frozen=True)
class BucketUnit:
    """One bucket's share of a table compaction: its live files in the base snapshot, which every
    unit of the compaction reads (0: none) and its commit checks for concurrent changes."""
    partition: bytes
    bucket: int
    total_buckets: int
    files: Tuple[DataFileMeta, ...]
    base_snapshot: int


def plan_units(table: ScanStore, partition_predicate: Optional[Predicate] = None,
               buckets: Optional[Sequence[tuple]] = None) -> List[BucketUnit]:
    """The buckets of the latest snapshot (of the partitions matching the predicate; those of
    ``buckets``, a collection of (partition, bucket), when given), in (partition, bucket) order."""
    base = table.snapshot_manager.latest_id() or 0
    if not base:
        return []
    files: Dict[tuple, List[DataFileMeta]] = {}
    total = {}
    for e in table.new_scan().filter(partition_predicate).with_snapshot(base).plan_entries():
        if e.bucket >= 0 and (buckets is None or (e.partition, e.bucket) in buckets):  # postpone: its own
            files.setdefault((e.partition, e.bucket), []).append(e.file)
            total[(e.partition, e.bucket)] = e.total_buckets
    return [BucketUnit(p, b, total[(p, b)], tuple(files[(p, b)]), base) for p, b in sorted(files)]


def compact_unit(table: ScanStore, unit: BucketUnit, full: bool = False):
    """Compact one bucket; its CommitMessage, or None when there is nothing to do. A failure
    deletes the files this unit wrote."""
    if data_evolution.enabled(table):
        return data_evolution_compact.compact_unit(table, unit, full)
    if not table.schema.is_primary_key_table:
        return append_compact.compact_unit(table, unit, full)
    compactor = BucketCompactor(table, unit.partition, unit.bucket, unit.files, unit.base_snapshot)
    result = compactor.compact(full=full)
    if result is None:
        return None
    try:
        index_changes = compactor.index_changes()
    except BaseException:
        compactor.discard(result)
        raise
    return CommitMessage(unit.partition, unit.bucket, unit.total_buckets, compact_before=result.before,
                         compact_after=result.after, compact_changelog=result.changelog,
                         compact_index_changes=index_changes, base_snapshot=unit.base_snapshot)


def compact_messages(table: ScanStore, partition_predicate: Optional[Predicate] = None, full: bool = False,
                     buckets: Optional[Sequence[tuple]] = None) -> list:
    """Commit messages compacting the planned units (:func:`plan_units`) in this process, two
    buckets at a time. When a unit fails, the files the others wrote are deleted and its error raised."""
    units = plan_units(table, partition_predicate, buckets)
    with ThreadPoolExecutor(max_workers=2) as pool:
        futures = [pool.submit(compact_unit, table, u, full) for u in units]
    failed = [f.exception() for f in futures if f.exception() is not None]
    messages = [f.result() for f in futures if f.exception() is None and f.result() is not None]
    if failed:
        delete_files(table, messages)
        raise failed[0]
    return messages
