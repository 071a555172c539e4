"""Iceberg manifests and manifest lists: Avro files with Iceberg's field ids (spec, "Manifests").

A manifest holds ``manifest_entry`` records (status, snapshot and sequence numbers, and the
``data_file``: path, format, partition tuple, counts, per-column null counts and bounds); a
manifest list holds one ``manifest_file`` record per manifest (counts of added / existing /
deleted files and rows, partition summaries). The record and nested-record names and field ids
are those Paimon 2.0 writes (its Avro writer with Iceberg's ids), so that Iceberg readers resolve
fields by id. ``legacy`` is Iceberg 1.4's manifest list (``added_data_files_count`` and siblings). A deletion
vector is a ``data_file`` of content POSITION_DELETES naming its blob (``content_offset``,
``content_size_in_bytes``) and the data file it applies to (``referenced_data_file``), without stats.
Format version 3 adds row lineage's ``first_row_id`` to both (``lineage``; :mod:`paimon_sql.iceberg.lineage`).
Manifests roll at ``manifest.target-file-size`` as Paimon's do (:func:`rolling_write`).
"""

from __future__ import annotations

import io
import math
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import fastavro
import fastavro.write

from paimon_sql.data.types import AtomicType, DataField
from paimon_sql.exceptions import CorruptMetadataError
from paimon_sql.iceberg.conversions import to_bytes

EXISTING, ADDED, DELETED = 0, 1, 2  # manifest entry status
DATA, DELETES = 0, 1  # manifest content
POSITION_DELETES = 1  # data file content (DATA is 0)
FIRST_PARTITION_FIELD_ID = 1000
UNASSIGNED_SEQ = -1
CHECK_ROLLING_ENTRIES = 1000  # Paimon's RollingFileWriter.CHECK_ROLLING_RECORD_CNT


@dataclass(frozen=True)
class IcebergDataFile:
    file_path: str
    file_format: str
    partition: Tuple[Any, ...]
    record_count: int
    file_size: int
    null_value_counts: Optional[Dict[int, int]] = field(default_factory=dict)
    lower_bounds: Optional[Dict[int, bytes]] = field(default_factory=dict)
    upper_bounds: Optional[Dict[int, bytes]] = field(default_factory=dict)
    content: int = DATA
    referenced_data_file: Optional[str] = None
    content_offset: Optional[int] = None
    content_size: Optional[int] = None
    first_row_id: Optional[int] = None  # format version 3: the id of the file's first row, when materialized


@dataclass(frozen=True)
class IcebergManifestEntry:
    status: int
    snapshot_id: int
    sequence_number: int
    file_sequence_number: int
    file: IcebergDataFile

    def is_live(self) -> bool:
        return self.status in (ADDED, EXISTING)


@dataclass(frozen=True)
class PartitionSummary:
    contains_null: bool
    contains_nan: bool
    lower: Optional[bytes]
    upper: Optional[bytes]


@dataclass(frozen=True)
class IcebergManifestFile:
    """One record of a manifest list."""

    path: str
    length: int
    partition_spec_id: int
    content: int
    sequence_number: int
    min_sequence_number: int
    added_snapshot_id: int
    added_files: int
    existing_files: int
    deleted_files: int
    added_rows: int
    existing_rows: int
    deleted_rows: int
    partitions: Tuple[PartitionSummary, ...] = ()
    first_row_id: Optional[int] = None  # format version 3: the first row id its files without one inherit

    def live_files(self) -> int:
        return self.added_files + self.existing_files - self.deleted_files

    def live_rows(self) -> int:
        return self.added_rows + self.existing_rows - self.deleted_rows


# -- Avro schemas ----------------------------------------------------------------------------

def _f(name: str, fid: int, avro_type, nullable: bool = False) -> dict:
    if nullable:
        return {"name": name, "type": ["null", avro_type], "default": None, "field-id": fid}
    return {"name": name, "type": avro_type, "field-id": fid}


def _int_map(name: str, fid: int, key_id: int, value_id: int, value_type: str) -> dict:
    kv = {"type": "record", "name": f"k{key_id}_v{value_id}", "fields": [
        {"name": "key", "type": "int", "field-id": key_id}, {"name": "value", "type": value_type, "field-id": value_id}]}
    return _f(name, fid, {"type": "array", "items": kv, "logicalType": "map"}, nullable=True)


def _partition_avro_type(t: AtomicType):
    """A partition value's Avro type, as Paimon's Avro writer maps the column's type."""
    n, p = t.name, t.precision
    simple = {"BOOLEAN": "boolean", "TINYINT": "int", "SMALLINT": "int", "INT": "int", "BIGINT": "long",
              "FLOAT": "float", "DOUBLE": "double", "CHAR": "string", "VARCHAR": "string", "BINARY": "bytes",
              "VARBINARY": "bytes"}
    if n in simple:
        return simple[n]
    if n == "DATE":
        return {"type": "int", "logicalType": "date"}
    if n == "TIME":
        return {"type": "int", "logicalType": "time-millis"}
    if n == "DECIMAL":
        return {"type": "bytes", "logicalType": "decimal", "precision": p, "scale": t.scale}
    prefix = "timestamp" if n == "TIMESTAMP" else "local-timestamp"
    return {"type": "long", "logicalType": f"{prefix}-{'millis' if p <= 3 else 'micros'}"}


def manifest_entry_schema(partition_fields: Sequence[DataField], lineage: bool = False) -> dict:
    partition = {"type": "record", "name": "r102", "fields": [
        _f(f.name, FIRST_PARTITION_FIELD_ID + i, _partition_avro_type(f.type), f.type.nullable)
        for i, f in enumerate(partition_fields)]}
    data_file = {"type": "record", "name": "r2", "fields": [
        _f("content", 134, "int"), _f("file_path", 100, "string"), _f("file_format", 101, "string"),
        _f("partition", 102, partition), _f("record_count", 103, "long"), _f("file_size_in_bytes", 104, "long"),
        _int_map("null_value_counts", 110, 121, 122, "long"), _int_map("lower_bounds", 125, 126, 127, "bytes"),
        _int_map("upper_bounds", 128, 129, 130, "bytes"), _f("referenced_data_file", 143, "string", True),
        _f("content_offset", 144, "long", True), _f("content_size_in_bytes", 145, "long", True)]}
    if lineage:
        data_file["fields"].append(_f("first_row_id", 142, "long", True))
    return {"type": "record", "name": "manifest_entry", "fields": [
        _f("status", 0, "int"), _f("snapshot_id", 1, "long", True), _f("sequence_number", 3, "long", True),
        _f("file_sequence_number", 4, "long", True), _f("data_file", 2, data_file)]}


def manifest_file_schema(legacy: bool, lineage: bool = False) -> dict:
    counts = "data_files_count" if legacy else "files_count"
    summary = {"type": "record", "name": "r508", "fields": [
        _f("contains_null", 509, "boolean"), _f("contains_nan", 518, "boolean", True),
        _f("lower_bound", 510, "bytes", True), _f("upper_bound", 511, "bytes", True)]}
    fields = [
        _f("manifest_path", 500, "string"), _f("manifest_length", 501, "long"), _f("partition_spec_id", 502, "int"),
        _f("content", 517, "int"), _f("sequence_number", 515, "long"), _f("min_sequence_number", 516, "long"),
        _f("added_snapshot_id", 503, "long", True), _f(f"added_{counts}", 504, "int"),
        _f(f"existing_{counts}", 505, "int"), _f(f"deleted_{counts}", 506, "int"),
        _f("added_rows_count", 512, "long"), _f("existing_rows_count", 513, "long"),
        _f("deleted_rows_count", 514, "long"),
        _f("partitions", 507, {"type": "array", "items": summary, "element-id": 508}, True)]
    if lineage:
        fields.append(_f("first_row_id", 520, "long", True))
    return {"type": "record", "name": "manifest_file", "fields": fields}


# -- writing ---------------------------------------------------------------------------------

def _avro(schema: dict, records: List[dict], codec: str) -> bytes:
    buf = io.BytesIO()
    fastavro.writer(buf, fastavro.parse_schema(schema), records, codec=codec)
    return buf.getvalue()


def _kv(d: Optional[Dict[int, Any]]) -> Optional[List[dict]]:
    return None if d is None else [{"key": k, "value": v} for k, v in d.items()]


def _entry_record(e: IcebergManifestEntry, names: Sequence[str]) -> dict:
    f = e.file
    return {"status": e.status, "snapshot_id": e.snapshot_id, "sequence_number": e.sequence_number,
            "file_sequence_number": e.file_sequence_number,
            "data_file": {"content": f.content, "file_path": f.file_path, "file_format": f.file_format,
                          "partition": dict(zip(names, f.partition)), "record_count": f.record_count,
                          "file_size_in_bytes": f.file_size, "null_value_counts": _kv(f.null_value_counts),
                          "lower_bounds": _kv(f.lower_bounds), "upper_bounds": _kv(f.upper_bounds),
                          "referenced_data_file": f.referenced_data_file, "content_offset": f.content_offset,
                          "content_size_in_bytes": f.content_size, "first_row_id": f.first_row_id}}


def _summaries(entries: Sequence[IcebergManifestEntry], partition_fields: Sequence[DataField]):
    out = []
    for i, pf in enumerate(partition_fields):
        values = [e.file.partition[i] for e in entries]
        present = [v for v in values if v is not None]
        nan = pf.type.name in ("FLOAT", "DOUBLE") and any(isinstance(v, float) and math.isnan(v) for v in present)
        ordered = [v for v in present if not (isinstance(v, float) and math.isnan(v))]
        out.append(PartitionSummary(len(present) < len(values), nan,
                                    to_bytes(pf.type, min(ordered)) if ordered else None,
                                    to_bytes(pf.type, max(ordered)) if ordered else None))
    return tuple(out)


def _manifest_file(path: str, length: int, entries: Sequence[IcebergManifestEntry],
                   partition_fields: Sequence[DataField], sequence_number: int, content: int) -> IcebergManifestFile:
    """The manifest-list record of a manifest holding ``entries``."""
    by_status = {s: [e for e in entries if e.status == s] for s in (ADDED, EXISTING, DELETED)}
    rows = {s: sum(e.file.record_count for e in es) for s, es in by_status.items()}
    return IcebergManifestFile(
        path, length, 0, content, sequence_number,
        min((e.sequence_number for e in entries), default=UNASSIGNED_SEQ), sequence_number,
        len(by_status[ADDED]), len(by_status[EXISTING]), len(by_status[DELETED]),
        rows[ADDED], rows[EXISTING], rows[DELETED], _summaries(entries, partition_fields))


def rolling_write(fio, new_path: Callable[[], str], entries: Sequence[IcebergManifestEntry],
                  partition_fields: Sequence[DataField], sequence_number: int, codec: str, target_size: int,
                  content: int = DATA, lineage: bool = False) -> List[IcebergManifestFile]:
    """Paimon's IcebergManifestFile.rollingWrite: ``entries``, in order, into manifests of about
    ``target_size`` bytes (``manifest.target-file-size``), each at a path from ``new_path``;
    returns their manifest-list records. As Paimon's rolling writer, the size is looked at after
    every 1000th entry (counted over all the manifests) and is what the file has written out so far,
    its header and full Avro blocks: a manifest rolls after 1000 entries at the fewest. ``lineage``
    (format version 3) writes the files' ``first_row_id``."""
    schema = fastavro.parse_schema(manifest_entry_schema(partition_fields, lineage))
    names = [f.name for f in partition_fields]
    out: List[IcebergManifestFile] = []
    current: List[IcebergManifestEntry] = []
    buf = io.BytesIO()
    writer = None

    def close() -> None:
        writer.flush()
        path, data = new_path(), buf.getvalue()
        fio.write_bytes(path, data)
        out.append(_manifest_file(path, len(data), current, partition_fields, sequence_number, content))

    for n, e in enumerate(entries, 1):
        if writer is None:
            buf, current = io.BytesIO(), []
            writer = fastavro.write.Writer(buf, schema, codec=codec)
        writer.write(_entry_record(e, names))
        current.append(e)
        if n % CHECK_ROLLING_ENTRIES == 0 and buf.tell() >= target_size:
            close()
            writer = None
    if writer is not None:
        close()
    return out


def write_manifest_list(fio, path: str, manifests: Sequence[IcebergManifestFile], codec: str, legacy: bool,
                        lineage: bool = False) -> None:
    counts = "data_files_count" if legacy else "files_count"
    records = [{"manifest_path": m.path, "manifest_length": m.length, "partition_spec_id": m.partition_spec_id,
                "content": m.content, "sequence_number": m.sequence_number,
                "min_sequence_number": m.min_sequence_number, "added_snapshot_id": m.added_snapshot_id,
                f"added_{counts}": m.added_files, f"existing_{counts}": m.existing_files,
                f"deleted_{counts}": m.deleted_files, "added_rows_count": m.added_rows,
                "existing_rows_count": m.existing_rows, "deleted_rows_count": m.deleted_rows,
                "partitions": [{"contains_null": p.contains_null, "contains_nan": p.contains_nan,
                                "lower_bound": p.lower, "upper_bound": p.upper} for p in m.partitions],
                "first_row_id": m.first_row_id}
               for m in manifests]
    fio.write_bytes(path, _avro(manifest_file_schema(legacy, lineage), records, codec))


# -- reading ---------------------------------------------------------------------------------

def _records(fio, path: str, kind: str) -> List[dict]:
    try:
        return list(fastavro.reader(io.BytesIO(fio.read_bytes(path))))
    except FileNotFoundError:
        raise CorruptMetadataError(f"Iceberg {kind} {path} is missing") from None
    except Exception as e:  # a damaged file fails in its codec's decoder or in Avro's
        raise CorruptMetadataError(f"Iceberg {kind} {path} cannot be read: {type(e).__name__}: {e}") from None


def read_manifest(fio, path: str, partition_fields: Sequence[DataField]) -> List[IcebergManifestEntry]:
    names = [f.name for f in partition_fields]
    out = []
    for r in _records(fio, path, "manifest"):
        d = r["data_file"]
        part = d.get("partition") or {}
        kv = {k: None if d.get(k) is None else {x["key"]: x["value"] for x in d[k]}
              for k in ("null_value_counts", "lower_bounds", "upper_bounds")}
        file = IcebergDataFile(d["file_path"], d["file_format"], tuple(part.get(n) for n in names),
                               d["record_count"], d["file_size_in_bytes"], kv["null_value_counts"],
                               kv["lower_bounds"], kv["upper_bounds"], d.get("content", DATA),
                               d.get("referenced_data_file"), d.get("content_offset"),
                               d.get("content_size_in_bytes"), d.get("first_row_id"))
        out.append(IcebergManifestEntry(r["status"], r["snapshot_id"], r["sequence_number"],
                                        r["file_sequence_number"], file))
    return out


def read_manifest_list(fio, path: str) -> List[IcebergManifestFile]:
    out = []
    for r in _records(fio, path, "manifest list"):
        def count(what: str) -> int:
            return r[f"{what}_files_count"] if f"{what}_files_count" in r else r[f"{what}_data_files_count"]
        parts = tuple(PartitionSummary(p["contains_null"], p.get("contains_nan") or False, p.get("lower_bound"),
                                       p.get("upper_bound")) for p in (r.get("partitions") or []))
        out.append(IcebergManifestFile(
            r["manifest_path"], r["manifest_length"], r["partition_spec_id"], r.get("content", DATA),
            r["sequence_number"], r["min_sequence_number"], r["added_snapshot_id"], count("added"),
            count("existing"), count("deleted"), r["added_rows_count"], r["existing_rows_count"],
            r["deleted_rows_count"], parts, r.get("first_row_id")))
    return out
