"""Manifest list, manifest and index manifest: Avro files with Paimon's record schemas.

- manifest list (``manifest-list-<uuid>-<n>``): one :class:`ManifestFileMeta` per manifest.
- manifest (``manifest-<uuid>-<n>``): :class:`ManifestEntry` records (ADD / DELETE of a data file,
  with its :class:`DataFileMeta`); entries are ordered and the last one for a file wins.
- index manifest (``index-manifest-<uuid>-<n>``): :class:`IndexManifestEntry` (HASH index files of
  dynamic buckets, DELETION_VECTORS files, and Java 2.0's global index files, whose
  :class:`GlobalIndexMeta` we keep but do not use).

Records are version 2 (entries, list) / 1 (index entries) as Java Paimon writes them; files use the
codec of ``manifest.compression`` (zstd by default). Record schemas are Java Paimon 2.0's (plus the
manifest list's ``_TOTAL_BUCKETS`` / ``_EXTRA_FILES`` that pypaimon 2.1 writes). Java reads an Avro
manifest by field name against the writer's schema: fields it does not know are skipped, fields
the file lacks read as null; so Java 1.0 reads every 2.0 field we write, and we read any field a
later writer adds (ignored; such a field is lost when we rewrite the record, as in Java).
"""

from __future__ import annotations

import datetime as dt
import io
from dataclasses import dataclass
from typing import List, Optional, Tuple

import fastavro

from paimon_sql.data.stats import SimpleStats
from paimon_sql.exceptions import CorruptMetadataError, MissingMetadataFileError

ADD, DELETE = 0, 1
FILE_SOURCE_APPEND, FILE_SOURCE_COMPACT = 0, 1

_NULL_COUNTS = {"name": "_NULL_COUNTS", "type": ["null", {"type": "array", "items": ["null", "long"]}],
                "default": None}


def _stats_schema(name: str) -> dict:
    return {"type": "record", "name": name, "fields": [
        {"name": "_MIN_VALUES", "type": "bytes"}, {"name": "_MAX_VALUES", "type": "bytes"}, _NULL_COUNTS]}


def _opt(name: str, avro_type) -> dict:
    return {"name": name, "type": ["null", avro_type], "default": None}


_STRING_ARRAY = {"type": "array", "items": "string"}

DATA_FILE_META_SCHEMA = {"type": "record", "name": "DataFileMeta", "fields": [
    {"name": "_FILE_NAME", "type": "string"},
    {"name": "_FILE_SIZE", "type": "long"},
    {"name": "_ROW_COUNT", "type": "long"},
    {"name": "_MIN_KEY", "type": "bytes"},
    {"name": "_MAX_KEY", "type": "bytes"},
    {"name": "_KEY_STATS", "type": _stats_schema("record_KEY_STATS")},
    {"name": "_VALUE_STATS", "type": _stats_schema("record_VALUE_STATS")},
    {"name": "_MIN_SEQUENCE_NUMBER", "type": "long"},
    {"name": "_MAX_SEQUENCE_NUMBER", "type": "long"},
    {"name": "_SCHEMA_ID", "type": "long"},
    {"name": "_LEVEL", "type": "int"},
    {"name": "_EXTRA_FILES", "type": _STRING_ARRAY},
    _opt("_CREATION_TIME", {"type": "long", "logicalType": "timestamp-millis"}),
    _opt("_DELETE_ROW_COUNT", "long"),
    _opt("_EMBEDDED_FILE_INDEX", "bytes"),
    _opt("_FILE_SOURCE", "int"),
    _opt("_VALUE_STATS_COLS", _STRING_ARRAY),
    _opt("_EXTERNAL_PATH", "string"),
    _opt("_FIRST_ROW_ID", "long"),
    _opt("_WRITE_COLS", _STRING_ARRAY),
]}

MANIFEST_ENTRY_SCHEMA = {"type": "record", "name": "ManifestEntry", "fields": [
    {"name": "_VERSION", "type": "int"},
    {"name": "_KIND", "type": "int"},
    {"name": "_PARTITION", "type": "bytes"},
    {"name": "_BUCKET", "type": "int"},
    {"name": "_TOTAL_BUCKETS", "type": "int"},
    {"name": "_FILE", "type": DATA_FILE_META_SCHEMA},
]}

MANIFEST_FILE_META_SCHEMA = {"type": "record", "name": "ManifestFileMeta", "fields": [
    {"name": "_VERSION", "type": "int"},
    {"name": "_FILE_NAME", "type": "string"},
    {"name": "_FILE_SIZE", "type": "long"},
    {"name": "_NUM_ADDED_FILES", "type": "long"},
    {"name": "_NUM_DELETED_FILES", "type": "long"},
    {"name": "_PARTITION_STATS", "type": _stats_schema("record_PARTITION_STATS")},
    {"name": "_SCHEMA_ID", "type": "long"},
    _opt("_MIN_BUCKET", "int"), _opt("_MAX_BUCKET", "int"),
    _opt("_MIN_LEVEL", "int"), _opt("_MAX_LEVEL", "int"),
    _opt("_MIN_ROW_ID", "long"), _opt("_MAX_ROW_ID", "long"),
    _opt("_TOTAL_BUCKETS", "int"),
    _opt("_EXTRA_FILES", _STRING_ARRAY),
]}

INDEX_MANIFEST_ENTRY_SCHEMA = {"type": "record", "name": "IndexManifestEntry", "fields": [
    {"name": "_VERSION", "type": "int"},
    {"name": "_KIND", "type": "int"},
    {"name": "_PARTITION", "type": "bytes"},
    {"name": "_BUCKET", "type": "int"},
    {"name": "_INDEX_TYPE", "type": "string"},
    {"name": "_FILE_NAME", "type": "string"},
    {"name": "_FILE_SIZE", "type": "long"},
    {"name": "_ROW_COUNT", "type": "long"},
    _opt("_DELETIONS_VECTORS_RANGES", {"type": "array", "items": {
        "type": "record", "name": "DeletionVectorMeta", "fields": [
            {"name": "f0", "type": "string"}, {"name": "f1", "type": "int"}, {"name": "f2", "type": "int"},
            _opt("_CARDINALITY", "long")]}}),
    _opt("_EXTERNAL_PATH", "string"),
    _opt("_GLOBAL_INDEX", {"type": "record", "name": "record_GLOBAL_INDEX", "fields": [
        {"name": "_ROW_RANGE_START", "type": "long"}, {"name": "_ROW_RANGE_END", "type": "long"},
        {"name": "_INDEX_FIELD_ID", "type": "int"}, _opt("_EXTRA_FIELD_IDS", {"type": "array", "items": "int"}),
        _opt("_INDEX_META", "bytes"), _opt("_SOURCE_META", "bytes")]}),
]}

_PARSED = {}


def _parsed(schema: dict):
    key = schema["name"]
    if key not in _PARSED:
        _PARSED[key] = fastavro.parse_schema(schema)
    return _PARSED[key]


# ---------------------------------------------------------------------------------------------
# records


@dataclass(frozen=True)
class DataFileMeta:
    file_name: str
    file_size: int
    row_count: int
    min_key: bytes
    max_key: bytes
    key_stats: SimpleStats
    value_stats: SimpleStats
    min_sequence_number: int
    max_sequence_number: int
    schema_id: int
    level: int
    extra_files: Tuple[str, ...] = ()
    creation_time: Optional[dt.datetime] = None
    delete_row_count: Optional[int] = None
    embedded_index: Optional[bytes] = None
    file_source: Optional[int] = None
    value_stats_cols: Optional[Tuple[str, ...]] = None
    external_path: Optional[str] = None
    first_row_id: Optional[int] = None
    write_cols: Optional[Tuple[str, ...]] = None

    def to_avro(self) -> dict:
        return {
            "_FILE_NAME": self.file_name, "_FILE_SIZE": self.file_size, "_ROW_COUNT": self.row_count,
            "_MIN_KEY": self.min_key, "_MAX_KEY": self.max_key,
            "_KEY_STATS": self.key_stats.to_avro(), "_VALUE_STATS": self.value_stats.to_avro(),
            "_MIN_SEQUENCE_NUMBER": self.min_sequence_number, "_MAX_SEQUENCE_NUMBER": self.max_sequence_number,
            "_SCHEMA_ID": self.schema_id, "_LEVEL": self.level, "_EXTRA_FILES": list(self.extra_files),
            "_CREATION_TIME": self.creation_time, "_DELETE_ROW_COUNT": self.delete_row_count,
            "_EMBEDDED_FILE_INDEX": self.embedded_index, "_FILE_SOURCE": self.file_source,
            "_VALUE_STATS_COLS": None if self.value_stats_cols is None else list(self.value_stats_cols),
            "_EXTERNAL_PATH": self.external_path, "_FIRST_ROW_ID": self.first_row_id,
            "_WRITE_COLS": None if self.write_cols is None else list(self.write_cols),
        }

    @staticmethod
    def from_avro(r: dict) -> "DataFileMeta":
        vsc = r.get("_VALUE_STATS_COLS")
        wc = r.get("_WRITE_COLS")
        return DataFileMeta(
            r["_FILE_NAME"], r["_FILE_SIZE"], r["_ROW_COUNT"], r["_MIN_KEY"], r["_MAX_KEY"],
            SimpleStats.from_avro(r["_KEY_STATS"]), SimpleStats.from_avro(r["_VALUE_STATS"]),
            r["_MIN_SEQUENCE_NUMBER"], r["_MAX_SEQUENCE_NUMBER"], r["_SCHEMA_ID"], r["_LEVEL"],
            tuple(r.get("_EXTRA_FILES") or ()), r.get("_CREATION_TIME"), r.get("_DELETE_ROW_COUNT"),
            r.get("_EMBEDDED_FILE_INDEX"), r.get("_FILE_SOURCE"),
            None if vsc is None else tuple(vsc), r.get("_EXTERNAL_PATH"), r.get("_FIRST_ROW_ID"),
            None if wc is None else tuple(wc))


@dataclass(frozen=True)
class ManifestEntry:
    kind: int
    partition: bytes
    bucket: int
    total_buckets: int
    file: DataFileMeta
    version: int = 2

    def identifier(self) -> tuple:
        """What makes two entries speak of the same file (Paimon's FileEntry.Identifier)."""
        f = self.file
        return (self.partition, self.bucket, f.level, f.file_name, f.extra_files, f.embedded_index, f.external_path)

    def to_avro(self) -> dict:
        return {"_VERSION": self.version, "_KIND": self.kind, "_PARTITION": self.partition, "_BUCKET": self.bucket,
                "_TOTAL_BUCKETS": self.total_buckets, "_FILE": self.file.to_avro()}

    @staticmethod
    def from_avro(r: dict) -> "ManifestEntry":
        return ManifestEntry(r["_KIND"], r["_PARTITION"], r["_BUCKET"], r["_TOTAL_BUCKETS"],
                             DataFileMeta.from_avro(r["_FILE"]), r.get("_VERSION", 2))


@dataclass(frozen=True)
class ManifestFileMeta:
    file_name: str
    file_size: int
    num_added_files: int
    num_deleted_files: int
    partition_stats: SimpleStats
    schema_id: int
    min_bucket: Optional[int] = None
    max_bucket: Optional[int] = None
    min_level: Optional[int] = None
    max_level: Optional[int] = None
    min_row_id: Optional[int] = None
    max_row_id: Optional[int] = None
    total_buckets: Optional[int] = None
    extra_files: Optional[Tuple[str, ...]] = None
    version: int = 2

    def to_avro(self) -> dict:
        return {"_VERSION": self.version, "_FILE_NAME": self.file_name, "_FILE_SIZE": self.file_size,
                "_NUM_ADDED_FILES": self.num_added_files, "_NUM_DELETED_FILES": self.num_deleted_files,
                "_PARTITION_STATS": self.partition_stats.to_avro(), "_SCHEMA_ID": self.schema_id,
                "_MIN_BUCKET": self.min_bucket, "_MAX_BUCKET": self.max_bucket, "_MIN_LEVEL": self.min_level,
                "_MAX_LEVEL": self.max_level, "_MIN_ROW_ID": self.min_row_id, "_MAX_ROW_ID": self.max_row_id,
                "_TOTAL_BUCKETS": self.total_buckets,
                "_EXTRA_FILES": None if self.extra_files is None else list(self.extra_files)}

    @staticmethod
    def from_avro(r: dict) -> "ManifestFileMeta":
        ef = r.get("_EXTRA_FILES")
        return ManifestFileMeta(
            r["_FILE_NAME"], r["_FILE_SIZE"], r["_NUM_ADDED_FILES"], r["_NUM_DELETED_FILES"],
            SimpleStats.from_avro(r["_PARTITION_STATS"]), r["_SCHEMA_ID"], r.get("_MIN_BUCKET"),
            r.get("_MAX_BUCKET"), r.get("_MIN_LEVEL"), r.get("_MAX_LEVEL"), r.get("_MIN_ROW_ID"),
            r.get("_MAX_ROW_ID"), r.get("_TOTAL_BUCKETS"), None if ef is None else tuple(ef), r.get("_VERSION", 2))


@dataclass(frozen=True)
class DeletionVectorMeta:
    data_file: str
    offset: int
    length: int
    cardinality: Optional[int] = None


@dataclass(frozen=True)
class GlobalIndexMeta:
    """Java 2.0's ``GlobalIndexMeta`` of a global index file: the row ids it covers, the indexed
    field, and the index's own bytes. Kept through our rewrites of the index manifest."""
    row_range_start: int
    row_range_end: int
    index_field_id: int
    extra_field_ids: Optional[Tuple[int, ...]] = None
    index_meta: Optional[bytes] = None
    source_meta: Optional[bytes] = None

    def to_avro(self) -> dict:
        return {"_ROW_RANGE_START": self.row_range_start, "_ROW_RANGE_END": self.row_range_end,
                "_INDEX_FIELD_ID": self.index_field_id,
                "_EXTRA_FIELD_IDS": None if self.extra_field_ids is None else list(self.extra_field_ids),
                "_INDEX_META": self.index_meta, "_SOURCE_META": self.source_meta}

    @staticmethod
    def from_avro(r: Optional[dict]) -> Optional["GlobalIndexMeta"]:
        if r is None:
            return None
        extra = r.get("_EXTRA_FIELD_IDS")
        return GlobalIndexMeta(r["_ROW_RANGE_START"], r["_ROW_RANGE_END"], r["_INDEX_FIELD_ID"],
                               None if extra is None else tuple(extra), r.get("_INDEX_META"), r.get("_SOURCE_META"))


@dataclass(frozen=True)
class IndexManifestEntry:
    kind: int
    partition: bytes
    bucket: int
    index_type: str
    file_name: str
    file_size: int
    row_count: int
    dv_ranges: Optional[Tuple[DeletionVectorMeta, ...]] = None
    external_path: Optional[str] = None
    global_index: Optional[GlobalIndexMeta] = None
    version: int = 1

    def to_avro(self) -> dict:
        ranges = None if self.dv_ranges is None else [
            {"f0": d.data_file, "f1": d.offset, "f2": d.length, "_CARDINALITY": d.cardinality}
            for d in self.dv_ranges]
        return {"_VERSION": self.version, "_KIND": self.kind, "_PARTITION": self.partition, "_BUCKET": self.bucket,
                "_INDEX_TYPE": self.index_type, "_FILE_NAME": self.file_name, "_FILE_SIZE": self.file_size,
                "_ROW_COUNT": self.row_count, "_DELETIONS_VECTORS_RANGES": ranges,
                "_EXTERNAL_PATH": self.external_path,
                "_GLOBAL_INDEX": None if self.global_index is None else self.global_index.to_avro()}

    @staticmethod
    def from_avro(r: dict) -> "IndexManifestEntry":
        ranges = r.get("_DELETIONS_VECTORS_RANGES")
        return IndexManifestEntry(
            r["_KIND"], r["_PARTITION"], r["_BUCKET"], r["_INDEX_TYPE"], r["_FILE_NAME"], r["_FILE_SIZE"],
            r["_ROW_COUNT"],
            None if ranges is None else tuple(DeletionVectorMeta(d["f0"], d["f1"], d["f2"], d.get("_CARDINALITY"))
                                              for d in ranges),
            r.get("_EXTERNAL_PATH"), GlobalIndexMeta.from_avro(r.get("_GLOBAL_INDEX")), r.get("_VERSION", 1))


# ---------------------------------------------------------------------------------------------
# Avro files

_CODECS = {"zstd": "zstandard", "zstandard": "zstandard", "snappy": "snappy", "deflate": "deflate",
           "none": "null", "null": "null", "uncompressed": "null"}

_FILE_KINDS = {"ManifestEntry": "manifest", "ManifestFileMeta": "manifest list", "IndexManifestEntry": "index manifest"}

_RECORD_TYPES = {
    "ManifestEntry": (MANIFEST_ENTRY_SCHEMA, ManifestEntry),
    "ManifestFileMeta": (MANIFEST_FILE_META_SCHEMA, ManifestFileMeta),
    "IndexManifestEntry": (INDEX_MANIFEST_ENTRY_SCHEMA, IndexManifestEntry),
}


def write_records(records: list, record_type: str, compression: str = "zstd") -> bytes:
    """Serialize records (dataclasses above) to an Avro container file's bytes."""
    schema, _ = _RECORD_TYPES[record_type]
    buf = io.BytesIO()
    fastavro.writer(buf, _parsed(schema), [r.to_avro() for r in records], codec=_CODECS.get(compression, "zstandard"))
    return buf.getvalue()


def read_file(io, path: str, record_type: str) -> list:
    """The records of the manifest-family file at ``path``; a missing or damaged one fails naming it."""
    try:
        data = io.read_bytes(path)
    except FileNotFoundError:
        raise MissingMetadataFileError(f"{_FILE_KINDS[record_type]} {path} is missing") from None
    return read_records(data, record_type, path)


def read_records(data: bytes, record_type: str, name: str = "") -> list:
    """Deserialize an Avro container file written by Paimon (Java, pypaimon) or us."""
    _, cls = _RECORD_TYPES[record_type]
    try:
        return [cls.from_avro(r) for r in fastavro.reader(io.BytesIO(data))]
    except Exception as e:  # a damaged file fails in the decoder of its codec (zstd, ...) or in Avro's
        raise CorruptMetadataError(f"{_FILE_KINDS[record_type]} {name or '(unnamed)'} cannot be read: "
                                   f"{type(e).__name__}: {e}") from None


def merge_entries(entries: List[ManifestEntry]) -> List[ManifestEntry]:
    """Live files after applying entries in order: an ADD then DELETE of the same file cancels."""
    live = {}
    for e in entries:
        ident = e.identifier()
        if e.kind == ADD:
            live[ident] = e
        else:
            live.pop(ident, None)
    return list(live.values())
