"""Avro data files as Java Paimon 2.0 writes them (``AvroSchemaConverter``, ``FieldWriterFactory``).

The schema is Java's, name for name: the top record named ``org.apache.paimon.avro.generated.record``
(2.0 writes the record itself; 1.0 wrote the union ``["null", record]``, and both read either), a
nested ROW ``<parent>_<field>``; a nullable type is the union ``["null", T]`` and a nullable record
field has ``"default": null``. ARRAY elements and string-keyed MAP values reuse the parent's name. A
MAP (or MULTISET, values INT) with a CHAR/VARCHAR key is an Avro ``map``; any other key type makes
an ``array`` of records named like the column with fields ``key`` and ``value`` (name suffixes
``_key`` / ``_value``) carrying the logical type ``map``. Both directions go through fastavro row by
row; around it the work is Arrow's: array-maps become lists of key/value structs before
``to_pylist``, and Arrow columns of the file's own shape are rebuilt into maps after reading.
"""

from __future__ import annotations

import io as _io
from typing import Any, List, Tuple

import fastavro
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from paimon_sql.exceptions import SchemaError

TOP_RECORD = "org.apache.paimon.avro.generated.record"
_CODECS = {"zstd": "zstandard", "snappy": "snappy", "deflate": "deflate"}
_PRIMITIVE = {"boolean": pa.bool_(), "int": pa.int32(), "long": pa.int64(), "float": pa.float32(),
              "double": pa.float64(), "string": pa.string(), "bytes": pa.binary()}


def _is_array_map(t: pa.DataType) -> bool:
    return pa.types.is_map(t) and not (pa.types.is_string(t.key_type) or pa.types.is_large_string(t.key_type))


def _schema(t: pa.DataType, nullable: bool, name: str) -> Any:
    """Java's ``AvroSchemaConverter.convertToSchema`` for the Arrow form of a Paimon type."""
    body = _body(t, name)
    return ["null", body] if nullable else body


def _body(t: pa.DataType, name: str) -> Any:
    if pa.types.is_boolean(t):
        return "boolean"
    if pa.types.is_int8(t) or pa.types.is_int16(t) or pa.types.is_int32(t):
        return "int"
    if pa.types.is_int64(t):
        return "long"
    if pa.types.is_float32(t):
        return "float"
    if pa.types.is_float64(t):
        return "double"
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return "string"
    if pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_fixed_size_binary(t):
        return "bytes"
    if pa.types.is_date32(t):
        return {"type": "int", "logicalType": "date"}
    if pa.types.is_decimal(t):
        return {"type": "bytes", "logicalType": "decimal", "precision": t.precision, "scale": t.scale}
    if pa.types.is_timestamp(t):
        if t.unit == "ns":
            raise SchemaError("Avro does not support TIMESTAMP with precision above 6 (Java Paimon refuses it too)")
        kind = "millis" if t.unit in ("s", "ms") else "micros"
        return {"type": "long", "logicalType": f"local-timestamp-{kind}" if t.tz else f"timestamp-{kind}"}
    if pa.types.is_time(t):
        return {"type": "int", "logicalType": "time-millis"}
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return {"type": "array", "items": _schema(t.value_type, t.value_field.nullable, name)}
    if _is_array_map(t):
        value = {"name": "value", "type": _schema(t.item_type, t.item_field.nullable, f"{name}_value")}
        if t.item_field.nullable:
            value["default"] = None
        return {"type": "array", "logicalType": "map", "items": {"type": "record", "name": name, "fields": [
            {"name": "key", "type": _schema(t.key_type, False, f"{name}_key")}, value]}}
    if pa.types.is_map(t):
        return {"type": "map", "values": _schema(t.item_type, t.item_field.nullable, name)}
    if pa.types.is_struct(t):
        return _record(list(t), name)
    raise SchemaError(f"Arrow type {t} cannot be written to Avro")


def _record(fields: List[pa.Field], name: str) -> dict:
    out = []
    for f in fields:
        field = {"name": f.name, "type": _schema(f.type, f.nullable, f"{name}_{f.name}")}
        if f.nullable:
            field["default"] = None
        out.append(field)
    return {"type": "record", "name": name, "fields": out}


def avro_schema(schema: pa.Schema) -> dict:
    """The Avro schema Java Paimon 2.0 writes for a data file of this (Arrow) row type: the top
    record (Java Paimon 1.0 wrote ``["null", record]``; readers of either resolve both)."""
    return _record(list(schema), TOP_RECORD)


# -- writing ---------------------------------------------------------------------------------------

def _entries_shape(arr: pa.Array) -> pa.Array:
    """Array-maps (at any depth) as lists of {key, value} structs, which is what fastavro writes
    for Java's array-of-records; other values unchanged (string-keyed maps stay maps)."""
    t = arr.type
    mask = arr.is_null() if arr.null_count else None
    if pa.types.is_struct(t):
        children = [_entries_shape(arr.field(i)) for i in range(t.num_fields)]
        return pa.StructArray.from_arrays(children, fields=[pa.field(f.name, c.type, f.nullable)
                                                            for f, c in zip(t, children)], mask=mask)
    if pa.types.is_map(t):
        entries = _as_list(arr)
        flat = entries.flatten()
        keys, items = _entries_shape(flat.field(0)), _entries_shape(flat.field(1))
        offsets = _list_offsets(entries)
        if _is_array_map(t):
            entries = pa.StructArray.from_arrays([keys, items], fields=[pa.field("key", keys.type, False),
                                                                        pa.field("value", items.type)])
            return pa.ListArray.from_arrays(offsets, entries, mask=mask)
        return pa.MapArray.from_arrays(offsets, keys, items, mask=mask)
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        values = _entries_shape(arr.flatten())
        return pa.ListArray.from_arrays(_list_offsets(arr), values, mask=mask)
    return arr


def _as_list(arr: pa.Array) -> pa.Array:
    """A map array viewed as the list of key/value structs it is laid out as (Arrow can't flatten maps)."""
    t = arr.type
    return arr.view(pa.list_(pa.field("entries", pa.struct([t.key_field, t.item_field]), False)))


def _list_offsets(arr: pa.Array) -> pa.Array:
    """Offsets into ``arr.flatten()`` (which drops what null lists or maps cover) of each list or map."""
    lengths = pc.fill_null(pc.list_value_length(arr), 0)
    return pa.array(np.concatenate([[0], np.cumsum(lengths.to_numpy(zero_copy_only=False))]).astype(np.int32))


def _needs_shaping(t: pa.DataType) -> bool:
    if _is_array_map(t):
        return True
    if pa.types.is_map(t):
        return _needs_shaping(t.key_type) or _needs_shaping(t.item_type)
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return _needs_shaping(t.value_type)
    return pa.types.is_struct(t) and any(_needs_shaping(f.type) for f in t)


def avro_bytes(table: pa.Table, compression: str, zstd_level: int) -> bytes:
    """A whole Avro data file of ``table`` (zstd at ``zstd_level``, snappy or deflate blocks; else
    uncompressed)."""
    schema = fastavro.parse_schema(avro_schema(table.schema))
    columns = [pa.chunked_array([_entries_shape(c) for c in col.chunks], type=None) if _needs_shaping(col.type)
               and col.num_chunks else col for col in table.columns]
    shaped = pa.Table.from_arrays(columns, names=table.column_names)
    buf = _io.BytesIO()
    fastavro.writer(buf, schema, shaped.to_pylist(maps_as_pydicts="strict"), codec=_CODECS.get(compression, "null"),
                    codec_compression_level=zstd_level if compression == "zstd" else None)
    return buf.getvalue()


# -- reading ---------------------------------------------------------------------------------------

def _arrow_of(s: Any) -> Tuple[pa.DataType, bool]:
    """(Arrow type of the values fastavro returns for Avro schema ``s``, nullable)."""
    if isinstance(s, list):
        branches = [b for b in s if b != "null"]
        if len(branches) != 1:
            raise SchemaError(f"Avro union {s} is not a Paimon type")
        return _arrow_of(branches[0])[0], "null" in s
    if isinstance(s, str):
        if s not in _PRIMITIVE:
            raise SchemaError(f"Avro type {s} is not a Paimon type")
        return _PRIMITIVE[s], False
    kind, logical = s["type"], s.get("logicalType")
    if logical == "decimal":
        return pa.decimal128(s["precision"], s.get("scale", 0)), False
    if logical == "date":
        return pa.date32(), False
    if logical == "time-millis":
        return pa.time32("ms"), False
    if logical in ("timestamp-millis", "timestamp-micros", "local-timestamp-millis", "local-timestamp-micros"):
        return pa.timestamp("ms" if logical.endswith("millis") else "us", tz="UTC"), False
    if kind == "array":
        if logical == "map":
            key, value = s["items"]["fields"]
            return pa.list_(pa.struct([_field("key", key["type"]), _field("value", value["type"])])), False
        return pa.list_(_field("element", s["items"])), False
    if kind == "map":
        return pa.map_(pa.string(), _field("value", s["values"])), False
    if kind == "record":
        return pa.struct([_field(f["name"], f["type"]) for f in s["fields"]]), False
    if kind == "fixed":
        return pa.binary(), False
    return _arrow_of(kind)


def _field(name: str, s: Any) -> pa.Field:
    t, nullable = _arrow_of(s)
    return pa.field(name, t, nullable)


def _maps_of_entries(arr: pa.Array, s: Any) -> pa.Array:
    """Rebuild, after reading, the Avro array-maps (lists of key/value structs) as Arrow maps."""
    if isinstance(s, list):
        s = next(b for b in s if b != "null")
    if not isinstance(s, dict):
        return arr
    mask = arr.is_null() if arr.null_count else None
    kind = s["type"]
    if kind == "record":
        children = [_maps_of_entries(arr.field(i), f["type"]) for i, f in enumerate(s["fields"])]
        return pa.StructArray.from_arrays(children, fields=[pa.field(f.name, c.type, f.nullable)
                                                            for f, c in zip(arr.type, children)], mask=mask)
    if kind == "map":
        entries = _as_list(arr)
        flat = entries.flatten()
        values = _maps_of_entries(flat.field(1), s["values"])
        return pa.MapArray.from_arrays(_list_offsets(entries), flat.field(0), values, mask=mask)
    if kind == "array":
        values = _maps_of_entries(arr.flatten(), s["items"])
        offsets = _list_offsets(arr)
        if s.get("logicalType") == "map":
            key_s, value_s = (f["type"] for f in s["items"]["fields"])
            return pa.MapArray.from_arrays(offsets, _maps_of_entries(values.field(0), key_s),
                                           _maps_of_entries(values.field(1), value_s), mask=mask)
        return pa.ListArray.from_arrays(offsets, values, mask=mask)
    return arr


def _has_map(s: Any) -> bool:
    if isinstance(s, list):
        return any(_has_map(b) for b in s)
    if not isinstance(s, dict):
        return False
    if s["type"] == "map" or s.get("logicalType") == "map":
        return True
    if s["type"] == "array":
        return _has_map(s["items"])
    return s["type"] == "record" and any(_has_map(f["type"]) for f in s["fields"])


def avro_table(data: bytes) -> pa.Table:
    """Rows of an Avro data file as Arrow, in the types its own schema names (INT for TINYINT and
    SMALLINT, timestamps in UTC); the caller casts to the file's Paimon schema. Each block codec's
    library (zstd, snappy, deflate) raises its own error type on damaged bytes: all become ValueError."""
    try:
        reader = fastavro.reader(_io.BytesIO(data))
        records = list(reader)
    except Exception as e:  # noqa: BLE001 - see docstring
        raise ValueError(f"not a readable Avro file: {e}") from None
    top = reader.writer_schema
    fields = next(b for b in top if b != "null")["fields"] if isinstance(top, list) else top["fields"]
    schema = pa.schema([_field(f["name"], f["type"]) for f in fields])
    table = pa.Table.from_pylist(records, schema=schema)
    return pa.Table.from_arrays([_maps_of_entries(table.column(i).combine_chunks(), f["type"])
                                 if _has_map(f["type"]) else table.column(i) for i, f in enumerate(fields)],
                                names=table.column_names)
