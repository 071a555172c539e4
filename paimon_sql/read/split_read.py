"""SplitReader: the rows of one split as an Arrow table.

Files are read through their own schema (``_SCHEMA_ID``) and matched to the current one by field
id, so renamed columns keep their data, dropped ones vanish and added ones read NULL — inside ROW
columns too, whose fields are matched by id the same way (:func:`evolve`). Append
files are concatenated. Primary-key files are read raw when their section has one file (only
``_VALUE_KIND`` +I/+U rows kept) and merged by the table's merge function when sections overlap. The
scan's predicate is applied to the rows after merging (never before: an old version of a row
must not survive because the new one was filtered out) — but its conjuncts on key and partition
columns alone are applied to each file's rows before the merge too, as Paimon pushes its key
filter into every file of a merge: every version of a key passes or fails them together, and a
point lookup merges its key's few rows instead of the whole bucket.
"""

from __future__ import annotations

from dataclasses import replace
from typing import List, Optional, Sequence, Tuple

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from paimon_sql.data import binary_row, row_kind
from paimon_sql.data.predicate import Predicate
from paimon_sql.data.types import ArrayType, AtomicType, DataType, MapType, RowType
from paimon_sql.exceptions import PaimonError
from paimon_sql.format.file_format import read_file
from paimon_sql.manifest.manifest_file import DataFileMeta
from paimon_sql.mergetree.interval_partition import sections
from paimon_sql.read import data_evolution, file_skipping
from paimon_sql.read.data_file_cache import DataFileCache
from paimon_sql.schema.table_schema import KEY_PREFIX, ROW_ID, SEQUENCE_NUMBER, VALUE_KIND
from paimon_sql.store.file_store import FileStore


FILE_COLUMN, POSITION_COLUMN = "__paimon_file", "__paimon_position"
TRACKING = (ROW_ID, SEQUENCE_NUMBER)  # row tracking's columns, as Java's SpecialFields.rowTypeWithRowTracking


class SplitReader:
    def __init__(self, table: FileStore, projection: Optional[Sequence[str]] = None,
                 predicate: Optional[Predicate] = None,
                 keep_row_kind: bool = False, files: Optional[DataFileCache] = None):
        """``keep_row_kind``: keep retractions (-U/-D) that merging leaves and return each row's
        ``_VALUE_KIND`` and ``_SEQUENCE_NUMBER`` after the projection (what ``$audit_log`` shows).
        ``files``: decoded files to read through (the driver's), else each file is decoded."""
        self.table = table
        self._read_data_file = files.read if files is not None else read_file
        self.keep_row_kind = keep_row_kind
        self.schema = table.schema
        self.projection = list(projection) if projection is not None else self.schema.field_names
        self.predicate = predicate
        needed = set(self.projection) | (predicate.columns() if predicate else set())
        if self.schema.is_primary_key_table:
            needed |= table.merge_function.extra_fields(needed)
        self.read_fields = [f for f in self.schema.fields if f.name in needed]
        self.output_schema = pa.schema([self.schema.field(c).to_arrow() for c in self.projection])
        self._part_types = [f.type for f in self.schema.fields_of(self.schema.partition_keys)]
        keyed = set(self.schema.trimmed_primary_keys) | set(self.schema.partition_keys)
        key_filter = predicate.only(keyed) if predicate is not None and self.schema.is_primary_key_table else None
        self._key_filter = key_filter.to_arrow() if key_filter is not None else None

    def read(self, split) -> pa.Table:
        if split.before:
            return self._read_diff(split)
        if self.schema.is_primary_key_table:
            parts = [self._read_section(split, section) for section in self._sections(split)]
        elif data_evolution.enabled(self.table):
            parts = [self._with_insert_kind(self._read_group(split, g)[0])
                     for g in data_evolution.row_id_groups(split.files, self.table.name)]
        else:
            parts = [self._with_insert_kind(self._read_file(split, f, with_system=False))
                     for f in self.files_to_read(split)]
        rows = pa.concat_tables(parts) if parts else self._empty()
        if self.predicate is not None:
            rows = rows.filter(self.predicate.to_arrow())
        return rows.select(self.projection + ([VALUE_KIND, SEQUENCE_NUMBER] if self.keep_row_kind else []))

    def _read_diff(self, split) -> pa.Table:
        """Incremental diff of one bucket: rows of its files (the end snapshot) that are new or
        changed next to its ``before`` files (the start snapshot); with row kinds, +I for new keys,
        +U for changed ones and -D for keys the end snapshot no longer has."""
        full = SplitReader(self.table, None, None, keep_row_kind=False)
        after = full.read(replace(split, before=()))
        old = replace(split, files=split.before, sections=tuple(sections(split.before, self.table.key_range)),
                      before=(), deletion_vectors=())
        before = full.read(old)
        keys = self.schema.primary_keys
        # join on the keys with row numbers only (Arrow joins carry no nested columns), then take
        left = after.select(keys).append_column("__a", pa.array(np.arange(after.num_rows)))
        right = before.select(keys).append_column("__b", pa.array(np.arange(before.num_rows)))
        pairs = left.join(right, keys, join_type="left outer")
        now, then = after.take(pairs.column("__a")), before.take(pairs.column("__b"))
        same = pc.is_valid(pairs.column("__b"))
        for name in self.schema.field_names:
            if name not in keys:
                same = pc.and_(same, _same(now.column(name), then.column(name)))
        changed = pc.invert(same)
        rows = now.filter(changed)
        if self.keep_row_kind:
            new_key = pc.is_null(pairs.column("__b")).filter(changed)
            kinds = pc.if_else(new_key, row_kind.INSERT, row_kind.UPDATE_AFTER).cast(pa.int8())
            rows = rows.append_column(VALUE_KIND, kinds).append_column(SEQUENCE_NUMBER, pa.nulls(rows.num_rows,
                                                                                                  pa.int64()))
            kept = pc.is_in(right.column("__b"), value_set=pairs.column("__b").drop_null().combine_chunks())
            gone = before.filter(pc.invert(kept))
            gone = gone.append_column(VALUE_KIND, pa.array(np.full(gone.num_rows, row_kind.DELETE, np.int8))) \
                .append_column(SEQUENCE_NUMBER, pa.nulls(gone.num_rows, pa.int64()))
            rows = pa.concat_tables([rows, gone])
        if self.predicate is not None:
            rows = rows.filter(self.predicate.to_arrow())
        return rows.select(self.projection + ([VALUE_KIND, SEQUENCE_NUMBER] if self.keep_row_kind else []))

    def _with_insert_kind(self, rows: pa.Table) -> pa.Table:
        """Append rows are all +I; their sequence number is unknown (NULL)."""
        if not self.keep_row_kind:
            return rows
        n = rows.num_rows
        return rows.append_column(VALUE_KIND, pa.array(np.zeros(n, np.int8))) \
            .append_column(SEQUENCE_NUMBER, pa.nulls(n, pa.int64()))

    def read_positions(self, split, tracked: bool = False) -> pa.Table:
        """A split's live rows (filtered, projected) with the data file and row position each came
        from (``FILE_COLUMN``, ``POSITION_COLUMN``): what row-level deletes and the metadata columns
        need. Only for rows read as they lie in a file: append files, or primary-key files that need
        no merge (their retractions dropped). ``tracked``: a row-tracking table's ``_ROW_ID`` and
        ``_SEQUENCE_NUMBER`` too, after the projection (:func:`with_tracking`)."""
        if self.schema.is_primary_key_table and not split.raw_convertible:
            raise PaimonError(f"table {self.table.name}: row positions of a bucket that must be merged")
        parts = []
        for f, group in self._units(split):
            if group is not None:
                rows, f = self._read_group(split, group, with_position=True, tracked=tracked)
            else:
                rows = self._read_file(split, f, with_system=self.schema.is_primary_key_table, with_position=True,
                                       tracked=tracked)
            if self.schema.is_primary_key_table:
                rows = rows.filter(row_kind.is_add(rows.column(VALUE_KIND)))
            if self.predicate is not None:
                rows = rows.filter(self.predicate.to_arrow())
            parts.append(rows.append_column(FILE_COLUMN, pa.repeat(pa.scalar(f.file_name, pa.string()), rows.num_rows)))
        names = self.projection + (list(TRACKING) if tracked else []) + [POSITION_COLUMN, FILE_COLUMN]
        if not parts:
            empty = self._empty()
            for name in (TRACKING if tracked else ()) + (POSITION_COLUMN,):
                empty = empty.append_column(name, pa.array([], pa.int64()))
            return empty.append_column(FILE_COLUMN, pa.array([], pa.string())).select(names)
        return pa.concat_tables(parts).select(names)

    def _units(self, split):
        """What :meth:`read_positions` reads one at a time: ``(file, None)`` per file to read, or, on a
        data-evolution table, ``(None, group)`` per row id group."""
        if data_evolution.enabled(self.table) and not self.schema.is_primary_key_table:
            return [(None, g) for g in data_evolution.row_id_groups(split.files, self.table.name)]
        return [(f, None) for f in self.files_to_read(split)]

    def files_to_read(self, split) -> List[DataFileMeta]:
        """The split's files less those their ``.index`` files or Parquet bloom filters rule out."""
        if not file_skipping.applies(self.table, self.predicate):
            return list(split.files)
        return [f for f in split.files
                if file_skipping.read_may_match(self.table, self.file_path(split, f), f, self.predicate)]

    def _sections(self, split):
        if not file_skipping.applies(self.table, self.predicate):  # merge-on-read: every section
            return split.sections
        kept = {f.file_name for f in self.files_to_read(split)}
        return [s for s in split.sections if all(f.file_name in kept for f in s)]

    def file_path(self, split, f: DataFileMeta) -> str:
        pvals = binary_row.from_bytes(split.partition, self._part_types)
        return self.table.paths.data_file_path(pvals, split.bucket, f.file_name, f.external_path)

    def _empty(self) -> pa.Table:
        fields = [f.to_arrow() for f in self.read_fields]
        if self.keep_row_kind:
            fields += [pa.field(VALUE_KIND, pa.int8()), pa.field(SEQUENCE_NUMBER, pa.int64())]
        return pa.schema(fields).empty_table()

    def _read_section(self, split, files: Tuple[DataFileMeta, ...]) -> pa.Table:
        if len(files) == 1 and files[0].delete_row_count == 0 and not self.keep_row_kind:
            return self._read_file(split, files[0], with_system=False)  # only +I/+U: read it as is
        if len(files) == 1:
            rows = self._read_file(split, files[0], with_system=True)
        else:
            rows = pa.concat_tables([self._keyed(self._read_file(split, f, with_system=True)) for f in files])
            if rows.num_rows:  # the key filter may leave none
                merge = self.table.merge_function
                rows = merge.merge(merge.group(rows, [KEY_PREFIX + k for k in self.schema.trimmed_primary_keys]))
        if self.keep_row_kind:
            return rows.select([f.name for f in self.read_fields] + [VALUE_KIND, SEQUENCE_NUMBER])
        if split.keep_retractions:
            return rows.select([f.name for f in self.read_fields])
        rows = rows.select([f.name for f in self.read_fields] + [VALUE_KIND])
        live = row_kind.is_add(rows.column(VALUE_KIND))
        if not pc.all(live).as_py():  # most sections hold no retractions: skip the copy
            rows = rows.filter(live)
        return rows.drop_columns([VALUE_KIND])

    def _keyed(self, rows: pa.Table) -> pa.Table:
        """A file's rows less those the predicate's key-only conjuncts rule out (before merging)."""
        return rows if self._key_filter is None else rows.filter(self._key_filter)

    def _read_group(self, split, group, with_position: bool = False,
                    tracked: bool = False) -> Tuple[pa.Table, DataFileMeta]:
        """A data-evolution row id group's rows (:mod:`~paimon_sql.read.data_evolution`), each column
        from its newest holder, the anchor's deletion vector applied to all; and the anchor (the file
        its positions and deletion vector belong to). Files are not skipped by their stats or
        indexes: an older file's values of a column a newer file rewrote are stale."""
        anchor = data_evolution.anchor(group)
        group = data_evolution.read_files(self.table, group, self.read_fields)
        newest = group[0]
        if len(group) == 1:
            return self._read_file(split, newest, False, with_position, tracked, vector_of=anchor.file_name), anchor
        claims = data_evolution.claims(self.table, group, self.read_fields)
        partition = set(self.schema.partition_keys)
        claimed = {x.id for fields in claims.values() for x in fields if x.name not in partition}
        unclaimed = [x for x in self.read_fields if x.id not in claimed and x.name not in partition]
        data_evolution.check_unclaimed(self.table, group, unclaimed)
        columns = {}
        for f in group:
            if f.file_name not in claims:
                continue
            mine = [x for x in claims[f.file_name] if x.name not in partition]
            if f is newest:  # partition values and columns no file holds (NULL) come with the newest
                mine = [x for x in self.read_fields if x in mine or x.id not in claimed or x.name in partition]
            elif not mine:
                continue
            part = self._read_file(split, f, False, with_position and f is newest, tracked and f is newest,
                                   fields=mine, vector_of=anchor.file_name)
            columns.update((n, (part.schema.field(n), part.column(n))) for n in part.column_names)
        names = [x.name for x in self.read_fields] + (list(TRACKING) if tracked else []) + \
            ([POSITION_COLUMN] if with_position else [])
        return pa.Table.from_arrays([columns[n][1] for n in names],
                                    schema=pa.schema([columns[n][0] for n in names])), anchor

    def read_kv(self, split, f: DataFileMeta, with_position: bool = False) -> pa.Table:
        """A primary-key file's rows with its key and system columns (what merges consume)."""
        return self._read_file(split, f, with_system=True, with_position=with_position)

    def _read_file(self, split, f: DataFileMeta, with_system: bool, with_position: bool = False,
                   tracked: bool = False, fields: Optional[Sequence] = None, vector_of: Optional[str] = None) -> pa.Table:
        """One data file as the current schema's ``read_fields`` (or ``fields`` of them; + key/system
        columns, + the row-tracking columns when ``tracked``), rows deleted by the deletion vector of
        ``vector_of`` (default: its own) dropped. Columns the file does not hold (not in its schema,
        or not in its ``_WRITE_COLS``) read NULL."""
        file_schema = self.table.schema_at(f.schema_id)
        held = data_evolution.held_ids(file_schema, f)
        by_id = {x.id: x for x in file_schema.fields if x.id in held}
        wanted: List[Tuple[str, Optional[str], pa.Field]] = []  # (output name, file column, type)
        if with_system:
            for cur in self.schema.fields_of(self.schema.trimmed_primary_keys):
                old = by_id.get(cur.id)
                wanted.append((KEY_PREFIX + cur.name, KEY_PREFIX + old.name if old else None,
                               pa.field(KEY_PREFIX + cur.name, cur.type.to_arrow(), False)))
            wanted.append((SEQUENCE_NUMBER, SEQUENCE_NUMBER, pa.field(SEQUENCE_NUMBER, pa.int64(), False)))
            wanted.append((VALUE_KIND, VALUE_KIND, pa.field(VALUE_KIND, pa.int8(), False)))
        keys = set(self.schema.trimmed_primary_keys) if with_system else set()
        nested = {}  # columns whose ROW fields changed since the file was written: old type, new type
        # a partition column's value is the file's partition, not read from the file (Java's
        # PartitionInfo): files adopted by migrate_table from a Hive layout do not hold it
        partition = dict(zip(self.schema.partition_keys, binary_row.from_bytes(split.partition, self._part_types)))
        for cur in (self.read_fields if fields is None else fields):
            if cur.name in partition:
                wanted.append((cur.name, None, cur.to_arrow()))
                continue
            old = by_id.get(cur.id)
            # a key column's value equals its _KEY_ column: read that once
            source = (KEY_PREFIX + old.name if cur.name in keys else old.name) if old else None
            wanted.append((cur.name, source, cur.to_arrow()))
            if old is not None and not isinstance(cur.type, AtomicType) and old.type != cur.type:
                nested[cur.name] = (old.type, cur.type)
        file_cols = list(dict.fromkeys(c for _, c, _ in wanted if c is not None))
        if tracked:  # compacted files hold them (their rows' own); a new file's come from its meta
            file_cols += [c for c in TRACKING if c in (f.write_cols or ())]
        path = self.file_path(split, f)
        vector = split.deletion_vector(vector_of or f.file_name)
        deleted = np.asarray(vector.to_array(), np.int64) if vector is not None and len(vector) else None
        data = self._read_data_file(self.table.io, path, f.file_name.rsplit(".", 1)[-1], file_cols, deleted,
                                    file_size=f.file_size, row_count=f.row_count)
        if with_position or tracked:
            positions = np.arange(f.row_count if deleted is not None else data.num_rows, dtype=np.int64)
            if deleted is not None:
                positions = np.delete(positions, deleted[deleted < len(positions)])
        if tracked:
            data = with_tracking(data, f, positions, self.table.name)
            wanted += [(c, c, pa.field(c, pa.int64(), False)) for c in TRACKING]
        if with_position:
            wanted.append((POSITION_COLUMN, POSITION_COLUMN, pa.field(POSITION_COLUMN, pa.int64(), False)))
            data = data.append_column(POSITION_COLUMN, pa.array(positions))
        arrays = []
        for name, col, fld in wanted:
            if col is None:
                arrays.append(pa.repeat(pa.scalar(partition.get(name), fld.type), data.num_rows))
                continue
            arr = data.column(col)
            if name in nested:
                arrays.append(evolve(arr, *nested[name]))
            else:
                arrays.append(arr if arr.type.equals(fld.type) else arr.cast(fld.type))
        return pa.Table.from_arrays(arrays, schema=pa.schema([fld.with_nullable(True) if fld.nullable else fld
                                                              for _, _, fld in wanted]))


def with_tracking(data: pa.Table, f: DataFileMeta, positions: np.ndarray, table_name: str) -> pa.Table:
    """``data`` (one file's live rows at ``positions``) with ``_ROW_ID`` and ``_SEQUENCE_NUMBER`` as
    Java's DataFileRecordReader gives them: a value the file holds wins (a compacted file keeps its
    rows' own), else the file's ``first_row_id`` + the row's position and its max sequence number."""
    n = data.num_rows
    fallback = {SEQUENCE_NUMBER: lambda: pa.array(np.full(n, f.max_sequence_number, np.int64))}
    if f.first_row_id is not None:
        fallback[ROW_ID] = lambda: pa.array(positions + f.first_row_id)
    for name in TRACKING:
        held = data.column(name) if name in data.column_names else None
        if held is not None and held.null_count == 0:
            continue
        if name not in fallback:
            raise PaimonError(f"table {table_name}: data file {f.file_name} has no first row id and no {ROW_ID} "
                              f"column: its rows have no row ids")
        value = fallback[name]() if held is None else pc.coalesce(held, fallback[name]())
        data = data.drop_columns([name]).append_column(name, value) if held is not None else \
            data.append_column(name, value)
    return data


def evolve(column, old: DataType, new: DataType):
    """A file's column written as ``old`` read as ``new``: ROW fields matched by id (one the file
    lacks reads NULL, a renamed one keeps its values, a dropped one vanishes), through ARRAY
    elements and MAP values; other values cast (a widened type)."""
    target = new.to_arrow()
    if isinstance(column, pa.ChunkedArray):
        return pa.chunked_array([evolve(c, old, new) for c in column.chunks], target)
    if isinstance(old, RowType) and isinstance(new, RowType):
        children = column.flatten()  # offset and parent NULLs applied
        by_id = {f.id: (i, f) for i, f in enumerate(old.fields)}
        out = [evolve(children[by_id[f.id][0]], by_id[f.id][1].type, f.type) if f.id in by_id
               else pa.nulls(len(column), f.type.to_arrow()) for f in new.fields]
        return pa.StructArray.from_arrays(out, fields=list(target), mask=column.is_null())
    if isinstance(old, (ArrayType, MapType)) and type(new) is type(old):
        offsets = column.offsets
        start, end = offsets[0].as_py(), offsets[-1].as_py()
        offsets, mask = pc.subtract(offsets, start), column.is_null()  # rebased: Arrow takes no sliced offsets
        if isinstance(old, ArrayType):
            values = evolve(column.values.slice(start, end - start), old.element, new.element)
            return pa.ListArray.from_arrays(offsets, values, type=target, mask=mask)
        keys = evolve(column.keys.slice(start, end - start), old.key, new.key)
        items = evolve(column.items.slice(start, end - start), old.value, new.value)
        return pa.MapArray.from_arrays(offsets, keys, items, type=target, mask=mask)
    return column if column.type.equals(target) else column.cast(target)


def _same(a: pa.ChunkedArray, b: pa.ChunkedArray) -> pa.Array:
    """Per row: equal values, or both NULL. Nested types (no equality kernel) are compared as
    Python values: only an incremental diff over tables with such columns pays for that."""
    try:
        eq = pc.fill_null(pc.equal(a, b), False)
    except (pa.ArrowNotImplementedError, pa.ArrowInvalid):
        return pa.array([x == y for x, y in zip(a.to_pylist(), b.to_pylist())], pa.bool_())
    return pc.or_(eq, pc.and_(a.is_null(), b.is_null()))
