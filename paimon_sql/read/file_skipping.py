"""Skipping whole data files by their indexes, in the order Paimon checks them.

1. At planning, before any data file is opened: the file index embedded in the manifest entry.
2. At read: the file index in ``<data file>.index``, then the data file's own Parquet bloom filters.

An index that is missing, can't be read or doesn't decode rules nothing out: the data file is read
(and fails loudly itself if it is damaged too).

Only where a file's rows stand alone: append tables, and primary-key tables in merge-on-write
mode (deletion vectors), whose files are read raw. In a merge-on-read table an older version of a
key lives in another file, so a value filter may not drop a file (the old row would resurface).
``file-index.read.enabled = false`` turns all of this off.
"""

from __future__ import annotations

import math
from dataclasses import replace
from functools import partial
from typing import Callable, Optional

import pyarrow as pa
import pyarrow.parquet as pq

from paimon_sql.data.predicate import Predicate
from paimon_sql.format import parquet_bloom
from paimon_sql.index import file_index
from paimon_sql.index.file_index import INDEX_SUFFIX
from paimon_sql.manifest.manifest_file import DataFileMeta
from paimon_sql.store.file_store import FileStore


def applies(table: FileStore, predicate: Optional[Predicate]) -> bool:
    if predicate is None or not table.options.get("file-index.read.enabled"):
        return False
    return not table.schema.is_primary_key_table or bool(table.options.get("deletion-vectors.enabled"))


def names_in_file(table: FileStore, f: DataFileMeta) -> Callable[[str], Optional[str]]:
    """A current column's name in the schema the file was written with (matched by field id)."""
    if f.schema_id == table.schema.id:
        return lambda c: c
    old = {x.id: x.name for x in table.schema_at(f.schema_id).fields}
    current = {x.name: x.id for x in table.schema.fields}
    return lambda c: old.get(current.get(c))


def for_indexes(predicate: Predicate) -> Optional[Predicate]:
    """``predicate`` as indexes, which hash a value's bits, may test it (None: they can't): Spark's
    -0.0 equals 0.0, so an equality with either zero looks up both; NaN literals are left to the read."""
    floats = [v for v in _literals(predicate) if isinstance(v, float)]
    if any(math.isnan(v) for v in floats):
        return None
    return _both_zeros(predicate) if any(v == 0 for v in floats) else predicate


def _literals(p: Predicate):
    yield from p.literals
    for c in p.children:
        yield from _literals(c)


def _both_zeros(p: Predicate) -> Predicate:
    if p.children:
        return replace(p, children=tuple(_both_zeros(c) for c in p.children))
    if p.op not in ("=", "!=", "in", "not_in") or not any(isinstance(v, float) and v == 0 for v in p.literals):
        return p
    literals = tuple(v for v in p.literals if not (isinstance(v, float) and v == 0)) + (0.0, -0.0)
    return replace(p, op="not_in" if p.op in ("!=", "not_in") else "in", literals=literals)


def embedded_may_match(table: FileStore, f: DataFileMeta, predicate: Predicate) -> bool:
    predicate = for_indexes(predicate)
    if not f.embedded_index or predicate is None:
        return True
    return file_index.may_match(lambda: f.embedded_index, table.schema_at(f.schema_id), f"embedded in {f.file_name}",
                                predicate, names_in_file(table, f))


def read_may_match(table: FileStore, data_path: str, f: DataFileMeta, predicate: Predicate) -> bool:
    """The checks that open files: the ``.index`` file, then Parquet bloom filters."""
    predicate = for_indexes(predicate)
    if predicate is None:
        return True
    name_of = names_in_file(table, f)
    directory = data_path.rsplit("/", 1)[0]
    for extra in f.extra_files:
        if extra.endswith(INDEX_SUFFIX) and not file_index.may_match(
                partial(table.io.read_bytes, f"{directory}/{extra}"), table.schema_at(f.schema_id), extra,
                predicate, name_of):
            return False
    if f.file_name.endswith(".parquet") and parquet_bloom.writer_options(
            table.schema.options, [x.to_arrow() for x in table.schema.fields]):
        return _parquet_bloom_may_match(table, data_path, predicate, name_of)
    return True


def _parquet_bloom_may_match(table: FileStore, data_path: str, predicate: Predicate, name_of) -> bool:
    """A data file whose footer or bloom filters can't be read is not skipped: reading it then
    fails loudly if the file itself is damaged."""
    types = {x.name: x.type for x in table.schema.fields}
    try:
        with table.io.fs.open_input_file(table.io.arrow_path(data_path)) as source:
            def read_range(offset: int, length: int) -> bytes:
                return source.read_at(length, offset)
            metadata = pq.ParquetFile(source).metadata
            return parquet_bloom.file_may_match(read_range, metadata, predicate, name_of, types.get)
    except (OSError, ValueError, pa.ArrowException):
        return True
