"""TableScan: a value you narrow (filter, select, with_snapshot) and then plan or materialize.

Planning reads the snapshot's manifest lists once, skips manifests whose partition stats cannot
match, merges the entries into live files, drops files by partition values, by bucket (a filter
pinning the bucket key reads the buckets its values hash to: :mod:`paimon_sql.read.bucket_select`)
and by stats (key stats for primary-key tables, value stats for append tables), and groups what
is left into splits:

- append tables: files bin-packed by size (``source.split.target-size``, ``source.split.open-file-cost``);
- primary-key tables: one split per bucket, its files cut into *sections* of overlapping key
  ranges; a section of one file is read raw, a section of several is merged.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Dict, List, Optional, Protocol, Sequence, Tuple

import pyarrow as pa
from pyroaring import FrozenBitMap

from paimon_sql.data import binary_row
from paimon_sql.data.predicate import FieldStats, Predicate, and_
from paimon_sql.data.types import DataField, parse_type
from paimon_sql.exceptions import CorruptMetadataError, MissingMetadataFileError, SchemaError
from paimon_sql.index.deletion_vector import bucket_vectors
from paimon_sql.manifest import manifest_file
from paimon_sql.manifest.manifest_file import DataFileMeta, ManifestEntry, ManifestFileMeta
from paimon_sql.mergetree.interval_partition import sections
from paimon_sql.mergetree.levels import num_levels
from paimon_sql.read import bucket_select, data_evolution, file_skipping, incremental
from paimon_sql.read.data_file_cache import DataFileCache
from paimon_sql.read.postpone import real_buckets
from paimon_sql.read.split import Split
from paimon_sql.read.split_read import TRACKING, SplitReader
from paimon_sql.snapshot.snapshot import Snapshot
from paimon_sql.store.changelog_lifecycle import snapshot_or_changelog
from paimon_sql.store.file_store import FileStore
from paimon_sql.store.time_travel import travel_snapshot


def manifest_list(table: FileStore, name: Optional[str], size: Optional[int]) -> List[ManifestFileMeta]:
    """A snapshot's manifest list, checked against the size the snapshot records (when it does):
    an Avro file cut at a block boundary decodes, without an error, to fewer manifests."""
    if name and size is not None:
        _check_list_size(table.io, table.paths.manifest_path(name), size)
    return table.manifest_list(name)


@lru_cache(maxsize=4096)
def _check_list_size(io, path: str, size: int) -> None:
    """Once per process for a file that passes: metadata files are never rewritten under their name
    (a failure is not cached: a restored file reads again)."""
    name, actual = path.rsplit("/", 1)[-1], io.file_size(path)
    if actual is None:  # gone, as an expired snapshot's are: callers that race expiry catch FileNotFoundError
        raise MissingMetadataFileError(f"manifest list {name} is missing")
    if actual != size:
        raise CorruptMetadataError(f"manifest list {name} has {actual} bytes, its snapshot says {size}")


def manifest_entries(table: FileStore, metas: Sequence[ManifestFileMeta]) -> List[ManifestEntry]:
    """The entries of manifests (read on threads), each checked against the entry count its
    manifest list records: a cut manifest must not lose data files without an error."""
    if len(metas) <= 1:  # a small table's one manifest: no pool to start (a BI tool's point query)
        lists = [_entries_of(table, m) for m in metas]
    else:
        with ThreadPoolExecutor(max_workers=min(8, len(metas))) as pool:
            lists = list(pool.map(_entries_of, [table] * len(metas), metas))
    return [e for lst in lists for e in lst]


def _entries_of(table: FileStore, meta: ManifestFileMeta) -> List[ManifestEntry]:
    try:
        entries = table.manifest_entries(meta.file_name)
    except FileNotFoundError:
        raise MissingMetadataFileError(f"manifest {meta.file_name} is missing") from None
    expected = meta.num_added_files + meta.num_deleted_files
    if len(entries) != expected:
        raise CorruptMetadataError(f"manifest {meta.file_name} holds {len(entries)} entries, "
                                   f"its manifest list says {expected}")
    return entries


@dataclass
class PlanStats:
    manifests_total: int = 0
    manifests_read: int = 0
    files_total: int = 0
    files_after_partition: int = 0
    files_after_buckets: int = 0  # in the buckets the filter's bucket-key values hash to
    files_after_stats: int = 0
    files_planned: int = 0  # after the file indexes embedded in manifests


@dataclass
class Plan:
    snapshot: Optional[Snapshot]
    splits: List[Split]
    stats: PlanStats = field(default_factory=PlanStats)


@dataclass(frozen=True)
class TableScan:
    table: FileStore
    predicate: Optional[Predicate] = None
    projection: Optional[Tuple[str, ...]] = None
    snapshot_id: Optional[int] = None
    tag: Optional[str] = None
    read_optimized: bool = False  # primary-key tables: only fully compacted files (``$ro``)
    keep_row_kind: bool = False  # rows with their kind, retractions kept (``$audit_log``)

    # -- narrowing --------------------------------------------------------------------------

    def filter(self, predicate: Optional[Predicate]) -> "TableScan":
        if predicate is not None:
            unknown = predicate.columns() - set(self.table.schema.field_names)
            if unknown:
                raise SchemaError(f"filter on unknown column(s) of {self.table.name}: {', '.join(sorted(unknown))}")
        return replace(self, predicate=and_(self.predicate, predicate))

    def select(self, *columns: str) -> "TableScan":
        cols = columns[0] if len(columns) == 1 and isinstance(columns[0], (list, tuple)) else columns
        unknown = [c for c in cols if c not in self.table.schema.field_names]
        if unknown:
            raise SchemaError(f"unknown column(s) of {self.table.name}: {', '.join(unknown)}")
        return replace(self, projection=tuple(cols))

    def with_snapshot(self, snapshot_id: Optional[int]) -> "TableScan":
        return replace(self, snapshot_id=snapshot_id, tag=None)

    def with_read_optimized(self, read_optimized: bool = True) -> "TableScan":
        """Read only what needs no merge: a primary-key table's max-level files (Paimon's ``$ro``)."""
        return replace(self, read_optimized=read_optimized)

    def with_row_kind(self, keep: bool = True) -> "TableScan":
        return replace(self, keep_row_kind=keep)

    def with_tag(self, tag: str) -> "TableScan":
        """Read the snapshot a tag (``tag/tag-<name>``) preserved."""
        return replace(self, tag=tag, snapshot_id=None)

    # -- planning ---------------------------------------------------------------------------

    def snapshot(self) -> Optional[Snapshot]:
        if self.tag is not None:
            return self.table.tag_manager.get(self.tag).snapshot
        if self.snapshot_id is not None:
            return self.table.snapshot_manager.snapshot(self.snapshot_id)
        return travel_snapshot(self.table)

    def plan_entries(self) -> List[ManifestEntry]:
        """Live files of the snapshot that survive partition and stats pruning."""
        snap = self.snapshot()
        return [] if snap is None else self._entries(snap, PlanStats())

    def _entries(self, snap: Snapshot, stats: PlanStats) -> List[ManifestEntry]:
        table = self.table
        schema = table.schema
        part_fields = schema.fields_of(schema.partition_keys)
        part_types = [f.type for f in part_fields]
        part_pred = self.predicate.only(set(schema.partition_keys)) if self.predicate else None
        metas = (manifest_list(table, snap.base_manifest_list, snap.base_manifest_list_size)
                 + manifest_list(table, snap.delta_manifest_list, snap.delta_manifest_list_size))
        stats.manifests_total = len(metas)
        if part_pred is not None and part_types:
            metas = [m for m in metas if part_pred.may_match(_partition_stats_lookup(m, part_fields))]
        stats.manifests_read = len(metas)
        entries = manifest_file.merge_entries(manifest_entries(table, metas))
        stats.files_total = len(entries)
        if part_pred is not None and part_types:
            entries = in_partitions(entries, part_pred, schema)
        stats.files_after_partition = len(entries)
        selector = bucket_select.selector(table, self.predicate)
        if selector is not None:
            entries = selector.keep(entries)
        stats.files_after_buckets = len(entries)
        # a data-evolution file's stats can be stale for columns a newer file of its group rewrote
        evolving = data_evolution.enabled(table)
        if self.predicate is not None and not evolving:
            entries = [e for e in entries if self._stats_may_match(e.file)]
        stats.files_after_stats = len(entries)
        if file_skipping.applies(table, self.predicate) and not evolving:
            entries = [e for e in entries if file_skipping.embedded_may_match(table, e.file, self.predicate)]
        stats.files_planned = len(entries)
        return entries

    def _stats_may_match(self, f: DataFileMeta) -> bool:
        schema = self.table.schema
        if schema.is_primary_key_table:
            pred = self.predicate.only(set(schema.trimmed_primary_keys))
            if pred is None:
                return True
            names = schema.trimmed_primary_keys
            decoded = f.key_stats.decode([t.type for t in schema.fields_of(names)])
        else:
            file_schema = self.table.schema_at(f.schema_id)
            stat_fields = _stat_fields(file_schema, f)
            decoded = f.value_stats.decode([x.type for x in stat_fields])
            by_id = {x.id: i for i, x in enumerate(stat_fields)}
            names = [None] * len(stat_fields)
            for cur in schema.fields:
                if cur.id in by_id and cur.type == stat_fields[by_id[cur.id]].type:
                    names[by_id[cur.id]] = cur.name
            pred = self.predicate
        lookup = {n: FieldStats(decoded.mins[i], decoded.maxs[i], decoded.null_counts[i], f.row_count)
                  for i, n in enumerate(names) if n is not None}
        return pred.may_match(lookup.get)

    def plan(self) -> Plan:
        stats = PlanStats()
        window = incremental.between(self.table)
        if window is not None:
            start, end, mode = window
            if start == end:  # Paimon's empty result
                return Plan(None, [], stats)
            return Plan(snapshot_or_changelog(self.table, end), incremental.splits(self, start, end, mode), stats)
        snap = self.snapshot()
        entries = real_buckets(self.table, self._entries(snap, stats) if snap is not None else [])
        pk = self.table.schema.is_primary_key_table
        merge_on_write = pk and bool(self.table.options.get("deletion-vectors.enabled"))
        if pk and self.read_optimized:  # ``$ro``: the top level only, deletion vectors or not (Paimon's withLevel)
            top = num_levels(self.table.options) - 1
            entries = [e for e in entries if e.file.level == top]
        elif pk and (merge_on_write or self.table.options.merge_engine == "first-row"):
            entries = [e for e in entries if e.file.level > 0]  # as Paimon: level 0 counts once compacted
        groups: Dict[Tuple[bytes, int], List[DataFileMeta]] = {}
        for e in entries:
            groups.setdefault((e.partition, e.bucket), []).append(e.file)
        if pk:
            splits = [self._pk_split(p, b, files, merge_on_write) for (p, b), files in sorted(groups.items())]
        else:
            splits = [s for (p, b), files in sorted(groups.items()) for s in self._append_splits(p, b, files)]
        if snap is not None and snap.index_manifest:
            splits = self._with_deletion_vectors(snap, splits)
        return Plan(snap, splits, stats)

    def _with_deletion_vectors(self, snap: Snapshot, splits: List[Split]) -> List[Split]:
        vectors = bucket_vectors(self.table, self.table.index_manifest_entries(snap.index_manifest))
        if not vectors:
            return splits
        out = []
        for s in splits:
            dvs = vectors.get((s.partition, s.bucket), {})
            mine = tuple((f.file_name, FrozenBitMap(dvs[f.file_name])) for f in s.files if f.file_name in dvs)
            out.append(replace(s, deletion_vectors=mine) if mine else s)
        return out

    def _pk_split(self, partition: bytes, bucket: int, files: List[DataFileMeta], merge_on_write: bool) -> Split:
        """Merge-on-write (deletion vectors) keeps each key in one live row: every file reads raw."""
        parts = [(f,) for f in files] if merge_on_write else sections(files, self.table.key_range)
        return Split(partition, bucket, tuple(files), tuple(parts))

    def _append_splits(self, partition: bytes, bucket: int, files: List[DataFileMeta]) -> List[Split]:
        target = self.table.options.get("source.split.target-size")
        open_cost = self.table.options.get("source.split.open-file-cost")
        # a data-evolution table's row id groups are read whole: packed as units
        units = data_evolution.row_id_groups(files, self.table.name) if data_evolution.enabled(self.table) \
            else [(f,) for f in files]
        splits, current, weight = [], [], 0
        for unit in units:
            w = max(sum(f.file_size for f in unit), open_cost)
            if current and weight + w > target:
                splits.append(Split(partition, bucket, tuple(current)))
                current, weight = [], 0
            current.extend(unit)
            weight += w
        if current:
            splits.append(Split(partition, bucket, tuple(current)))
        return splits

    # -- materializing ----------------------------------------------------------------------

    def reader(self, files: Optional[DataFileCache] = None):
        """The SplitReader for this scan's columns and filter (splits may be read anywhere), reading
        through ``files`` when given."""
        return SplitReader(self.table, self.projection, self.predicate, self.keep_row_kind, files)

    def changelog(self) -> pa.Table:
        """The changelog rows the snapshot committed (its ``changelog-*`` files), with ``_VALUE_KIND``.

        Projection and filter are not applied: these are the raw +I/-U/+U/-D records."""
        snap = self.snapshot()
        if snap is None or not snap.changelog_manifest_list:
            return self.table.schema.data_file_arrow_schema().empty_table()
        table = self.table
        metas = manifest_list(table, snap.changelog_manifest_list, snap.changelog_manifest_list_size)
        entries = manifest_file.merge_entries(manifest_entries(table, metas))
        reader = type(self)(table).reader()
        parts = [reader.read_kv(Split(e.partition, e.bucket, (e.file,)), e.file) for e in entries]
        names = table.schema.data_file_arrow_schema().names
        return pa.concat_tables([p.select(names) for p in parts]) if parts else \
            table.schema.data_file_arrow_schema().empty_table()

    def to_arrow(self) -> pa.Table:
        """Every split read (:func:`read_splits`)."""
        return read_splits(self.reader(), self.plan().splits)


def read_splits(reader, splits: Sequence) -> pa.Table:
    """``splits`` read by ``reader`` (a SplitReader), in parallel threads: Arrow's readers and kernels
    release the GIL."""
    if len(splits) <= 1:
        parts = [reader.read(s) for s in splits]
    else:
        with ThreadPoolExecutor(max_workers=min(len(splits), os.cpu_count() or 2)) as pool:
            parts = list(pool.map(reader.read, splits))
    return pa.concat_tables(parts) if parts else reader.output_schema.empty_table()


def in_partitions(entries: List[ManifestEntry], predicate: Predicate, schema) -> List[ManifestEntry]:
    """Entries whose partition values satisfy ``predicate`` (each distinct partition decoded once)."""
    types = [f.type for f in schema.fields_of(schema.partition_keys)]
    verdict: Dict[bytes, bool] = {}
    out = []
    for e in entries:
        if e.partition not in verdict:
            values = dict(zip(schema.partition_keys, binary_row.from_bytes(e.partition, types)))
            verdict[e.partition] = predicate.test_values(values)
        if verdict[e.partition]:
            out.append(e)
    return out


def _partition_stats_lookup(meta, part_fields: Sequence):
    decoded = meta.partition_stats.decode([f.type for f in part_fields])
    table = {f.name: FieldStats(decoded.mins[i], decoded.maxs[i], decoded.null_counts[i], None)
             for i, f in enumerate(part_fields)}
    return table.get


def _stat_fields(file_schema, f: DataFileMeta) -> List[DataField]:
    """The columns an append file's value stats cover: ``_VALUE_STATS_COLS``, else the file's
    ``_WRITE_COLS`` (Java's SimpleStatsEvolutions; a row-tracking table's compacted file written by
    Java has stats for its ``_ROW_ID`` / ``_SEQUENCE_NUMBER`` too: decoded, matched to no column),
    else the file schema's columns."""
    cols = f.value_stats_cols if f.value_stats_cols is not None else f.write_cols
    if cols is None:
        return list(file_schema.fields)
    return [DataField(-1 - i, c, parse_type("BIGINT")) if c in TRACKING else file_schema.field(c)
            for i, c in enumerate(cols)]


class ScanStore(FileStore, Protocol):
    """A store that plans scans of itself: what the layers above the read (writes, compactions,
    commits, maintenance, Iceberg) read a table through (Paimon's ``FileStore.newScan()``)."""

    def new_scan(self) -> TableScan: ...
