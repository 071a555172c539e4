"""File indexes of data files: which to build (options), building them, and testing predicates.

Options (as Paimon's FileIndexOptions): ``file-index.<type>.columns`` lists columns — ``m[key]``
for one key of a MAP<STRING, _> column, indexed under ``m##key`` — and
``file-index.<type>.<column>.<option>`` tunes one (bloom filter ``items``, ``fpp``). Types:
``bloom-filter``, ``bitmap``, ``bsi``. Each data file's indexes go into one container blob
(:mod:`file_index_format`), kept in the manifest (``_EMBEDDED_FILE_INDEX``) when it is at most
``file-index.in-manifest-threshold`` bytes, else written beside the data file as
``<data file>.index`` and listed in ``_EXTRA_FILES``.

Reading: :func:`may_match` evaluates a scan predicate against a file's indexes; a file is
skipped only when every row is ruled out. Indexes on columns the predicate does not mention,
index types we do not know (written by a newer Paimon), and indexes that can't be read or decoded
rule nothing out: a damaged index costs a read of the data file, never its rows.
"""

from __future__ import annotations

import logging
import struct
from dataclasses import dataclass, replace
from typing import Callable, Dict, List, Mapping, Optional, Tuple

import pyarrow as pa
import pyarrow.compute as pc
from pyroaring import BitMap

from paimon_sql.data.predicate import Predicate
from paimon_sql.data.types import AtomicType, MapType
from paimon_sql.exceptions import CorruptMetadataError, InvalidOptionError
from paimon_sql.index import bitmap, bloom_filter, bsi, file_index_format
from paimon_sql.index.index_store import IndexStore

PREFIX = "file-index."
INDEX_SUFFIX = ".index"
MAP_JUNCTION = "##"
INDEXES = {bloom_filter.NAME: bloom_filter.BloomFilterIndex, bitmap.NAME: bitmap.BitmapIndex,
           bsi.NAME: bsi.BsiIndex}
# what decoding damaged index bytes raises besides our own CorruptMetadataError (pyroaring and
# UTF-8 decoding: ValueError; slicing and lookups: IndexError, KeyError)
_DECODE_ERRORS = (CorruptMetadataError, ValueError, IndexError, KeyError, struct.error, OverflowError)
_log = logging.getLogger(__name__)
_SUPPORTS: Dict[str, Callable] = {bloom_filter.NAME: lambda t: t.name in bloom_filter.SUPPORTED,
                                  bitmap.NAME: lambda t: t.name in bitmap.SUPPORTED, bsi.NAME: bsi.supports}


@dataclass(frozen=True)
class IndexedColumn:
    """One index to build: on ``column`` (or one key of a map column), of ``index_type``."""

    column: str
    map_key: Optional[str]
    index_type: str
    options: Tuple[Tuple[str, str], ...]

    @property
    def index_name(self) -> str:
        """The name in the container head: the column, or ``column##key`` for a map entry."""
        return self.column if self.map_key is None else self.column + MAP_JUNCTION + self.map_key


def indexed_columns(options: Mapping[str, str]) -> List[IndexedColumn]:
    """The indexes a table's options ask for, with their per-column options."""
    wanted: Dict[Tuple[str, str], Dict[str, str]] = {}
    for key, value in options.items():
        if key.startswith(PREFIX) and key.endswith(".columns"):
            index_type = key[len(PREFIX): -len(".columns")]
            for name in str(value).split(","):
                if not name.strip():
                    raise InvalidOptionError(f"option {key} lists an empty column")
                wanted.setdefault((index_type, name.strip()), {})
    for key, value in options.items():
        parts = key[len(PREFIX):].split(".") if key.startswith(PREFIX) else []
        if len(parts) == 3 and parts[2] != "columns":
            if (parts[0], parts[1]) not in wanted:
                raise InvalidOptionError(f"option {key}: column {parts[1]} is not in {PREFIX}{parts[0]}.columns")
            wanted[(parts[0], parts[1])][parts[2]] = value
    out = []
    for (index_type, name), opts in wanted.items():
        column, map_key = name, None
        if "[" in name and name.endswith("]"):
            column, map_key = name[: name.index("[")], name[name.index("[") + 1: -1]
        out.append(IndexedColumn(column, map_key, index_type, tuple(sorted(opts.items()))))
    return out


def _value_type(schema, col: IndexedColumn):
    field = next((f for f in schema.fields if f.name == col.column), None)
    if field is None:
        raise InvalidOptionError(f"{PREFIX}{col.index_type}.columns: no column {col.column}")
    if col.map_key is None:
        return field.type
    if not isinstance(field.type, MapType) or getattr(field.type.key, "name", None) not in ("CHAR", "VARCHAR"):
        raise InvalidOptionError(f"{PREFIX}{col.index_type}.columns: {col.column}[{col.map_key}] needs "
                                 f"{col.column} to be a MAP with string keys")
    return field.type.value


def check(schema, options: Mapping[str, str]) -> None:
    """Raise when the options ask for an index we can't build (CREATE / ALTER TABLE time)."""
    for col in indexed_columns(options):
        if col.index_type not in INDEXES:
            raise InvalidOptionError(f"file index type '{col.index_type}' is not supported "
                                     f"(supported: {', '.join(INDEXES)})")
        dtype = _value_type(schema, col)
        if not isinstance(dtype, AtomicType) or not _SUPPORTS[col.index_type](dtype):
            raise InvalidOptionError(f"{col.index_type} file index does not support column {col.index_name} "
                                     f"of type {dtype}")
        try:
            INDEXES[col.index_type](dtype, dict(col.options))
        except ValueError as e:
            raise InvalidOptionError(f"{PREFIX}{col.index_type}.{col.index_name}: {e}") from None


def build(schema, options: Mapping[str, str], rows: pa.Table,
          name_in_file: Callable[[str], Optional[str]] = lambda c: c) -> Optional[bytes]:
    """The container blob of every index the options ask for over ``rows`` (None: no index).

    ``schema`` is the one ``rows`` were written with; ``name_in_file`` maps an option's column
    (a current name) to its name there, None when the file predates the column."""
    indexes: Dict[str, Dict[str, bytes]] = {}
    for col in indexed_columns(options):
        column = name_in_file(col.column)
        if column is None:
            continue
        col = replace(col, column=column)
        dtype = _value_type(schema, col)
        values = rows.column(col.column)
        if col.map_key is not None:
            values = pc.map_lookup(values, pa.scalar(col.map_key, pa.string()), "first")
        index = INDEXES[col.index_type](dtype, dict(col.options))
        indexes.setdefault(col.index_name, {})[col.index_type] = index.build(values)
    return file_index_format.write(indexes) if indexes else None


class FileIndexPredicate:
    """The indexes of one data file, tested against predicates."""

    def __init__(self, data: bytes, file_schema, where: str):
        self.data = data
        self.file_schema = file_schema
        self.header = file_index_format.read_header(data, where)
        self.where = where

    def _readers(self, column: str):
        dtype = _type_of(self.file_schema, column)
        for index_type, (start, length) in self.header.get(column, {}).items():
            if index_type in INDEXES and dtype is not None:
                yield INDEXES[index_type](dtype, {}).reader(self.data[start: start + length])

    def rows(self, p: Predicate, name_of: Callable[[str], Optional[str]]) -> Optional[BitMap]:
        """Rows that may satisfy ``p`` (None: any row may). ``name_of`` maps a predicate column to
        its name in this file."""
        if p.op == "and":
            out = None
            for child in p.children:
                r = self.rows(child, name_of)
                out = r if out is None else out if r is None else out & r
            return out
        if p.op == "or":
            parts = [self.rows(child, name_of) for child in p.children]
            return None if any(r is None for r in parts) else BitMap().union(*parts)
        if p.op == "not":
            negated = p.children[0].negate()
            return None if negated.op == "not" else self.rows(negated, name_of)
        column = name_of(p.column)
        out = None
        try:
            for reader in self._readers(column) if column is not None else ():
                r = reader.visit(p.op, p.literals)
                out = r if out is None else out if r is None else out & r
        except _DECODE_ERRORS as e:
            raise CorruptMetadataError(f"file index {self.where}: {e}") from None
        return out

    def may_match(self, p: Predicate, name_of: Callable[[str], Optional[str]]) -> bool:
        rows = self.rows(p, name_of)
        return rows is None or len(rows) > 0


def may_match(load: Callable[[], bytes], file_schema, where: str, p: Predicate,
              name_of: Callable[[str], Optional[str]]) -> bool:
    """Whether some row of a data file may satisfy ``p`` by its index blob (``load`` reads it). An
    index that can't be read or decoded rules nothing out: the data file is read (with a warning),
    for a damaged index must never hide rows."""
    try:
        return FileIndexPredicate(load(), file_schema, where).may_match(p, name_of)
    except (OSError, CorruptMetadataError) as e:
        _log.warning("file index %s is unusable, its data file is read: %s", where, e)
        return True


def _type_of(file_schema, index_name: str):
    """The value type an index named ``column`` or ``column##key`` holds (None: not in the schema)."""
    column, _, key = index_name.partition(MAP_JUNCTION)
    field = next((f for f in file_schema.fields if f.name == column), None)
    if field is None or (key and not isinstance(field.type, MapType)):
        return None
    return field.type.value if key else field.type


def write_index(store: IndexStore, file_schema, rows: pa.Table, data_path: str,
                name_in_file: Callable[[str], Optional[str]] = lambda c: c,
                index_path: Optional[str] = None) -> Tuple[Optional[bytes], Tuple[str, ...]]:
    """Index ``rows`` (one data file's, written with ``file_schema``) as the store's options ask:
    (embedded bytes, extra files). An index too big for the manifest goes to ``index_path``
    (default ``<data file>.index``)."""
    blob = build(file_schema, store.options.raw, rows, name_in_file)
    if blob is None:
        return None, ()
    if len(blob) <= store.options.get("file-index.in-manifest-threshold"):
        return blob, ()
    index_path = index_path or data_path + INDEX_SUFFIX
    store.io.write_bytes(index_path, blob)
    return None, (index_path.rsplit("/", 1)[-1],)


def next_index_name(name: str) -> str:
    """The name a rewritten index file takes, as Java's ``createNewFileIndexFilePath``: a counter
    after the last ``-`` goes up by one (``data-<uuid>-0.parquet-1.index`` → ``...-2.index``), else
    ``-1`` is added before the suffix (``data-<uuid>-0.parquet.index`` → ``...parquet-1.index``)."""
    stem = name[:name.rfind(".")]
    head, dash, counter = stem.rpartition("-")
    if dash and counter.isdigit():
        return f"{head}-{int(counter) + 1}{INDEX_SUFFIX}"
    return f"{stem}-1{INDEX_SUFFIX}"
