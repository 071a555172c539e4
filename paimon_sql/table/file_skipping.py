"""Skipping whole data files by their indexes, in the order Paimon checks them.

1. At planning, before any data file is opened: the file index embedded in the manifest entry.
2. At read: the file index in ``<data file>.index``, then the data file's own Parquet bloom filters.

Only where a file's rows stand alone: append tables, and primary-key tables in merge-on-write
mode (deletion vectors), whose files are read raw. In a merge-on-read table an older version of a
key lives in another file, so a value filter may not drop a file (the old row would resurface).
``file-index.read.enabled = false`` turns all of this off.
"""

from __future__ import annotations

from typing import Callable, Optional

import pyarrow.parquet as pq

from paimon_sql.format import parquet_bloom
from paimon_sql.format.manifest import DataFileMeta
from paimon_sql.format.predicate import Predicate
from paimon_sql.index.file_index import INDEX_SUFFIX, FileIndexPredicate


def applies(table, predicate: Optional[Predicate]) -> bool:
    if predicate is None or not table.options.get("file-index.read.enabled"):
        return False
    return not table.schema.is_primary_key_table or bool(table.options.get("deletion-vectors.enabled"))


def names_in_file(table, f: DataFileMeta) -> Callable[[str], Optional[str]]:
    """A current column's name in the schema the file was written with (matched by field id)."""
    if f.schema_id == table.schema.id:
        return lambda c: c
    old = {x.id: x.name for x in table.schema_at(f.schema_id).fields}
    current = {x.name: x.id for x in table.schema.fields}
    return lambda c: old.get(current.get(c))


def embedded_may_match(table, f: DataFileMeta, predicate: Predicate) -> bool:
    if not f.embedded_index:
        return True
    index = FileIndexPredicate(f.embedded_index, table.schema_at(f.schema_id), f"embedded in {f.file_name}")
    return index.may_match(predicate, names_in_file(table, f))


def read_may_match(table, data_path: str, f: DataFileMeta, predicate: Predicate) -> bool:
    """The checks that open files: the ``.index`` file, then Parquet bloom filters."""
    name_of = names_in_file(table, f)
    directory = data_path.rsplit("/", 1)[0]
    for extra in f.extra_files:
        if extra.endswith(INDEX_SUFFIX):
            data = table.io.read_bytes(f"{directory}/{extra}")
            if not FileIndexPredicate(data, table.schema_at(f.schema_id), extra).may_match(predicate, name_of):
                return False
    if f.file_name.endswith(".parquet") and parquet_bloom.writer_options(table.schema.options,
                                                                        table.schema.field_names):
        with table.io.fs.open_input_file(table.io.arrow_path(data_path)) as source:
            def read_range(offset: int, length: int) -> bytes:
                return source.read_at(length, offset)
            metadata = pq.ParquetFile(source).metadata
            types = {x.name: x.type for x in table.schema.fields}
            return parquet_bloom.file_may_match(read_range, metadata, predicate, name_of, types.get)
    return True
