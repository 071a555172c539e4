"""Data files out of Arrow rows: rolled at ``target-file-size``, each described by a DataFileMeta.

Flushes, compaction rewrites and changelog files all write through :func:`write_files`, so every
file of a bucket carries the same stats, key range and sequence range whoever wrote it. Rows come
in the data-file layout (``TableSchema.data_file_arrow_schema``): for primary-key tables the key,
``_SEQUENCE_NUMBER`` and ``_VALUE_KIND`` columns hold what the file meta needs. Each Parquet field
carries its Paimon id (``PARQUET:field_id``) as Java's writer stamps it, nested ones included, so
that Iceberg readers (``metadata.iceberg.storage``, also turned on later) find every column by id.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import replace
from typing import List, Optional, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from paimon_sql.data import binary_row, row_kind, stats
from paimon_sql.data.types import ArrayType, AtomicType, DataType, MapType, MultisetType, RowType
from paimon_sql.format import parquet_bloom
from paimon_sql.format.file_format import RollingFileWriter, parquet_footer_stats
from paimon_sql.index.file_index import write_index
from paimon_sql.manifest.manifest_file import FILE_SOURCE_APPEND, DataFileMeta
from paimon_sql.schema.table_schema import KEY_PREFIX, SEQUENCE_NUMBER, VALUE_KIND
from paimon_sql.store.file_store import FileStore


_INT_MAX = 2 ** 31 - 1
# Paimon's SpecialFields ids of the system columns a data file may hold
_SYSTEM_IDS = {SEQUENCE_NUMBER: _INT_MAX - 1, VALUE_KIND: _INT_MAX - 2, "_ROW_ID": _INT_MAX - 5}
# SpecialFields' ids of what a schema gives no id: an ARRAY's element, a MAP's key and value (a
# MULTISET is a map of element to count), from the column's id and the depth below it (1 for the
# column's own children, 2 for theirs...); a ROW's fields have ids of their own
_NESTED_ID_BASE = _INT_MAX // 4
_DEPTH_LIMIT = 1 << 10
_FIELD_ID = b"PARQUET:field_id"


def element_id(field_id: int, depth: int) -> int:
    """The id of an ARRAY's element, or of a MAP's (MULTISET's) value, ``depth`` below column ``field_id``."""
    return _NESTED_ID_BASE + field_id * _DEPTH_LIMIT + depth


def key_id(field_id: int, depth: int) -> int:
    """The id of a MAP's (MULTISET's) key, ``depth`` below column ``field_id``."""
    return _NESTED_ID_BASE - field_id * _DEPTH_LIMIT - depth


def with_field_ids(arrow_schema: pa.Schema, schema) -> pa.Schema:
    """``arrow_schema`` with each column's Paimon field id (``PARQUET:field_id``) and those of its
    nested fields, as Java's Parquet writer stores them: Iceberg readers of the table find columns by id."""
    fields = {f.name: f for f in schema.fields}
    if schema.is_primary_key_table:
        fields.update({f.name: f for f in schema.key_fields()})
    out = []
    for f in arrow_schema:
        if f.name in fields:
            out.append(_with_ids(f, fields[f.name].type, fields[f.name].id, fields[f.name].id, 0))
        else:
            out.append(_stamp(f, _SYSTEM_IDS[f.name]) if f.name in _SYSTEM_IDS else f)
    return pa.schema(out, metadata=arrow_schema.metadata)


def _with_ids(f: pa.Field, t: DataType, own: int, column: int, depth: int) -> pa.Field:
    """``f`` (of Paimon type ``t``) with id ``own``, and the ids of what it holds, ``depth`` below ``column``."""
    arrow, inner = f.type, depth + 1
    if isinstance(t, ArrayType):
        element = _with_ids(arrow.value_field, t.element, element_id(column, inner), column, inner)
        arrow = pa.large_list(element) if pa.types.is_large_list(arrow) else pa.list_(element)
    elif isinstance(t, (MapType, MultisetType)):
        key_type, value_type = (t.key, t.value) if isinstance(t, MapType) else (t.element, None)
        arrow = pa.map_(_with_ids(arrow.key_field, key_type, key_id(column, inner), column, inner),
                        _with_ids(arrow.item_field, value_type, element_id(column, inner), column, inner),
                        keys_sorted=arrow.keys_sorted)
    elif isinstance(t, RowType):
        arrow = pa.struct([_with_ids(c, sub.type, sub.id, sub.id, 0) for c, sub in zip(arrow, t.fields)])
    elif isinstance(t, AtomicType) and t.name == "VARIANT":  # Java's Parquet group: value 0, metadata 1
        arrow = pa.struct([_stamp(c, i) for i, c in enumerate(arrow)])
    return _stamp(f.with_type(arrow), own)


def _stamp(f: pa.Field, field_id: int) -> pa.Field:
    return f.with_metadata({**(f.metadata or {}), _FIELD_ID: str(field_id).encode()})


def kv_table(schema, rows: pa.Table, seq: np.ndarray, kinds: pa.Array) -> pa.Table:
    """Table rows as a primary-key data file's columns: ``_KEY_*``, sequence, kind, then the values."""
    keys = [rows.column(k) for k in schema.trimmed_primary_keys]
    return pa.Table.from_arrays(keys + [pa.array(seq, pa.int64()), kinds] + rows.columns,
                                schema=schema.data_file_arrow_schema())


def write_files(table: FileStore, file_table: pa.Table, partition_values, bucket: int, level: int = 0,
                file_source: int = FILE_SOURCE_APPEND, prefix: str = "data-",
                first_sequence: Optional[int] = None, postpone: bool = False,
                columns: Optional[Sequence[str]] = None) -> List[DataFileMeta]:
    """Write ``file_table`` under the bucket's directory; files roll at the target size.

    ``first_sequence``: append tables store no sequence column, so their rows are numbered from it.
    ``postpone``: a postpone-bucket file, described as Paimon's postpone writer describes it (no
    value stats and no value stats columns, key stats of mode ``none``).
    ``columns``: a data-evolution partial file holding only these of the table's columns: one file
    (never rolled: it spans exactly the row ids it updates), its stats and indexes over them.
    A failure deletes the files this call wrote.
    """
    options = table.options
    target = options.target_file_size(table.schema.is_primary_key_table) if columns is None else float("inf")
    held = None if columns is None else set(columns)
    files: List[DataFileMeta] = []
    pos, total = 0, file_table.num_rows
    blooms = parquet_bloom.writer_options(table.schema.options, file_table.schema)
    file_schema = with_field_ids(file_table.schema, table.schema)
    plain_bytes_per_row = file_table.nbytes / max(total, 1)
    try:
        while pos < total:
            name = table.paths.new_data_file_name(prefix)
            path = table.paths.data_file_path(partition_values, bucket, name)
            writer = RollingFileWriter(table.io, path, file_schema, options.file_format,
                                       options.file_compression, blooms, table.schema.options)
            start = pos
            try:
                while pos < total and (pos == start or writer.bytes_written < target):
                    chunk = file_table.slice(pos, writer.rows_to_write(target, plain_bytes_per_row))
                    writer.write(chunk)
                    pos += chunk.num_rows
                size = writer.close()
            except BaseException:
                writer.abort()
                raise
            seq_range = None if first_sequence is None else (first_sequence + start, first_sequence + pos - 1)
            part = file_table.slice(start, pos - start)
            meta = file_meta(table, name, size, part, level, file_source, seq_range, writer.metadata, postpone, columns)
            if not prefix.startswith("changelog"):  # data files carry indexes, changelog files none
                try:
                    embedded, extra = write_index(table, table.schema, part, path) if held is None else \
                        write_index(table, table.schema, part, path, name_in_file=lambda c: c if c in held else None)
                finally:
                    files.append(meta)  # deleted below if indexing failed
                files[-1] = replace(meta, embedded_index=embedded, extra_files=extra)
            else:
                files.append(meta)
    except BaseException:
        delete_data_files(table, partition_values, bucket, files)
        raise
    return files


def delete_data_files(table: FileStore, partition_values, bucket: int, files: List[DataFileMeta]) -> None:
    """Delete data files and their extra files (``.index``) — what an aborted write leaves."""
    for f in files:
        path = table.paths.data_file_path(partition_values, bucket, f.file_name, f.external_path)
        table.io.delete(path)
        for extra in f.extra_files:
            table.io.delete(path.rsplit("/", 1)[0] + "/" + extra)


def _stats(part: pa.Table, fields, mode: str, footer) -> stats.SimpleStats:
    """From the Parquet footer just written when its values are ours, else computed from the rows."""
    if footer is not None and stats.footer_stats_match(fields):
        return stats.encode(fields, *parquet_footer_stats(footer, [f.name for f in fields]), mode)
    return stats.collect(part, fields, mode)


def file_meta(table: FileStore, name: str, size: int, part: pa.Table, level: int, file_source: int,
              seq_range=None, footer=None, postpone: bool = False,
              columns: Optional[Sequence[str]] = None) -> DataFileMeta:
    schema = table.schema
    fields = schema.fields if columns is None else schema.fields_of(columns)
    value_stats = stats.EMPTY_STATS if postpone else _stats(part, fields, table.options.stats_mode, footer)
    if schema.is_primary_key_table:
        key_fields = schema.key_fields()
        key_types = [f.type for f in key_fields]
        first = [part.column(f.name)[0].as_py() for f in key_fields]
        last = [part.column(f.name)[part.num_rows - 1].as_py() for f in key_fields]
        min_key, max_key = binary_row.to_bytes(first, key_types), binary_row.to_bytes(last, key_types)
        key_stats = _stats(part, key_fields, "none" if postpone else "full", footer)
        kinds = part.column(VALUE_KIND)
        deletes = int(pc.sum(pc.invert(row_kind.is_add(kinds))).as_py() or 0)
        mm = pc.min_max(part.column(SEQUENCE_NUMBER))
        seq_range = (mm["min"].as_py(), mm["max"].as_py())
    else:
        min_key = max_key = binary_row.empty_row()
        key_stats, deletes = stats.EMPTY_STATS, 0
    return DataFileMeta(
        file_name=name, file_size=size, row_count=part.num_rows, min_key=min_key, max_key=max_key,
        key_stats=key_stats, value_stats=value_stats,
        min_sequence_number=int(seq_range[0]), max_sequence_number=int(seq_range[1]),
        schema_id=schema.id, level=level, extra_files=(),
        creation_time=dt.datetime.now(dt.timezone.utc).replace(microsecond=0),
        delete_row_count=deletes, embedded_index=None, file_source=file_source,
        value_stats_cols=() if postpone else None, external_path=None,
        write_cols=None if columns is None else tuple(columns))


def key_columns(schema) -> List[str]:
    return [KEY_PREFIX + k for k in schema.trimmed_primary_keys]
