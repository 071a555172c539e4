"""Paimon types as Iceberg types, and values in Iceberg's binary single-value form.

Iceberg's schema names a primitive type by string (``int``, ``decimal(10, 2)``) and a nested one by
an object: ARRAY is a ``list``, MAP a ``map``, MULTISET a ``map`` of element to ``int`` count, ROW a
``struct`` of its fields. A ROW's fields carry their own Paimon ids; an ARRAY's element and a MAP's
key and value have none in Paimon's schema, so they get Paimon's derived ids (SpecialFields, see
``write.file_writer.element_id``), which Paimon's Parquet files carry too, as Java's do.
Bounds of a data file and a manifest's partition summaries are single values: little-endian
numbers, UTF-8 text, big-endian unscaled decimals, microseconds for times and timestamps
(Iceberg spec, "Binary single-value serialization"). What Paimon's Iceberg compatibility refuses
(VARIANT, BLOB, VECTOR) is refused here, and so are timestamps finer than microseconds: Java publishes
them as ``timestamp_ns`` (in format version 2 too, which has no such type), but Java's Parquet files
hold them as INT96, not Iceberg's nanosecond INT64, and Iceberg readers fail on them.
Data files carry the same ids (``PARQUET:field_id``, written by ``write.file_writer``).
"""

from __future__ import annotations

import datetime as dt
import struct
from decimal import Decimal
from typing import Any, Optional, Union

from paimon_sql.data.types import AtomicType, ArrayType, DataField, DataType, MapType, MultisetType, RowType
from paimon_sql.exceptions import SchemaError
from paimon_sql.write.file_writer import element_id, key_id

_SIMPLE = {"BOOLEAN": "boolean", "TINYINT": "int", "SMALLINT": "int", "INT": "int", "BIGINT": "long",
           "FLOAT": "float", "DOUBLE": "double", "DATE": "date", "CHAR": "string", "VARCHAR": "string",
           "BINARY": "binary", "VARBINARY": "binary"}
_EPOCH = dt.datetime(1970, 1, 1)
_EPOCH_DATE = dt.date(1970, 1, 1)


def iceberg_field(f: DataField, parent: Optional[str] = None) -> dict:
    """A column (or a ROW's field, inside ``parent``) as an Iceberg schema field."""
    path = f.name if parent is None else f"{parent}.{f.name}"
    d = {"id": f.id, "name": f.name, "required": not f.type.nullable, "type": iceberg_type(f.type, path, f.id)}
    if f.description is not None:
        d["doc"] = f.description
    return d


def iceberg_type(t: DataType, path: str, field_id: int, depth: int = 0) -> Union[str, dict]:
    """``t``, held at ``path`` (a column, or inside one: ``c.element``, ``c.key``, ``c.value``,
    ``c.f``) by the column or ROW field of id ``field_id``, ``depth`` levels down in it."""
    inner = depth + 1
    if isinstance(t, AtomicType):
        return _atomic(t, path)
    if isinstance(t, ArrayType):
        return {"type": "list", "element-id": element_id(field_id, inner), "element-required": not t.element.nullable,
                "element": iceberg_type(t.element, f"{path}.element", field_id, inner)}
    if isinstance(t, MapType):
        value = iceberg_type(t.value, f"{path}.value", field_id, inner)
        return _map(t.key, value, not t.value.nullable, path, field_id, inner)
    if isinstance(t, MultisetType):  # a map of each element to its count
        return _map(t.element, "int", True, path, field_id, inner)
    if isinstance(t, RowType):
        return {"type": "struct", "fields": [iceberg_field(f, path) for f in t.fields]}
    raise SchemaError(f"column '{path}' is {t}, which has no Iceberg type")


def _map(key: DataType, value: Union[str, dict], value_required: bool, path: str, field_id: int,
         depth: int) -> dict:
    return {"type": "map", "key-id": key_id(field_id, depth), "key": iceberg_type(key, f"{path}.key", field_id, depth),
            "value-id": element_id(field_id, depth), "value-required": value_required, "value": value}


def _atomic(t: AtomicType, path: str) -> str:
    n = t.name
    if n in _SIMPLE:
        return _SIMPLE[n]
    if n == "DECIMAL":
        return f"decimal({t.precision}, {t.scale})"
    if n == "TIME" and t.precision <= 3:
        return "time"
    if n in ("TIMESTAMP", "TIMESTAMP_LTZ") and 3 <= t.precision <= 6:
        return "timestamp" if n == "TIMESTAMP" else "timestamptz"
    if n in ("TIMESTAMP", "TIMESTAMP_LTZ") and t.precision > 6:
        raise SchemaError(f"column '{path}' is {t}, which Java Paimon's Parquet files hold as INT96: Iceberg "
                          "readers cannot read it as timestamp_ns (precision 3 to 6 can be published)")
    if n == "VARIANT":
        raise SchemaError(f"column '{path}' is {t}, which Paimon's Iceberg compatibility does not publish "
                          "(Java Paimon refuses it too)")
    raise SchemaError(f"column '{path}' is {t}, which Paimon's Iceberg metadata cannot describe "
                      "(timestamps of precision 3 to 6 and times of precision 0 to 3 can be)")


def has_bounds(t: DataType) -> bool:
    """Whether a column's min/max go into a data file's Iceberg bounds (not for nested types)."""
    return isinstance(t, AtomicType)


def to_bytes(t: AtomicType, value: Any) -> Optional[bytes]:
    """``value`` (as Paimon's stats decode it) in Iceberg's single-value form; None for None."""
    if value is None:
        return None
    n = t.name
    if n == "BOOLEAN":
        return b"\x01" if value else b"\x00"
    if n in ("TINYINT", "SMALLINT", "INT"):
        return struct.pack("<i", value)
    if n == "DATE":
        return struct.pack("<i", (value - _EPOCH_DATE).days)
    if n == "BIGINT":
        return struct.pack("<q", value)
    if n == "FLOAT":
        return struct.pack("<f", value)
    if n == "DOUBLE":
        return struct.pack("<d", value)
    if n in ("CHAR", "VARCHAR"):
        return value.encode("utf-8")
    if n in ("BINARY", "VARBINARY"):
        return bytes(value)
    if n == "DECIMAL":
        unscaled = int(Decimal(value).scaleb(t.scale))
        return unscaled.to_bytes((unscaled + (unscaled < 0)).bit_length() // 8 + 1, "big", signed=True)
    if n in ("TIMESTAMP", "TIMESTAMP_LTZ"):
        naive = value.replace(tzinfo=None) if value.tzinfo is None else value.astimezone(dt.timezone.utc).replace(
            tzinfo=None)
        return struct.pack("<q", (naive - _EPOCH) // dt.timedelta(microseconds=1))
    if n == "TIME":
        return struct.pack("<q", (value.hour * 3600 + value.minute * 60 + value.second) * 1_000_000
                           + value.microsecond)
    raise SchemaError(f"type {t} has no Iceberg single-value form")
