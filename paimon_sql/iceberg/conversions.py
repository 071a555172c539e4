"""Paimon types as Iceberg types, and values in Iceberg's binary single-value form.

Iceberg's schema names a type by string (``int``, ``decimal(10, 2)``); nested columns (Iceberg's
list, map and struct objects) are not published yet.
Bounds of a data file and a manifest's partition summaries are single values: little-endian
numbers, UTF-8 text, big-endian unscaled decimals, microseconds for times and timestamps
(Iceberg spec, "Binary single-value serialization"). What Paimon's Iceberg compatibility refuses
(timestamps finer than microseconds in format version 2, VARIANT, BLOB, VECTOR) is refused here.
Data files carry the same ids (``PARQUET:field_id``, written by ``write.file_writer``).
"""

from __future__ import annotations

import datetime as dt
import struct
from decimal import Decimal
from typing import Any, Optional

from paimon_sql.data.types import AtomicType, DataField, DataType
from paimon_sql.exceptions import SchemaError

_SIMPLE = {"BOOLEAN": "boolean", "TINYINT": "int", "SMALLINT": "int", "INT": "int", "BIGINT": "long",
           "FLOAT": "float", "DOUBLE": "double", "DATE": "date", "CHAR": "string", "VARCHAR": "string",
           "BINARY": "binary", "VARBINARY": "binary"}
_EPOCH = dt.datetime(1970, 1, 1)
_EPOCH_DATE = dt.date(1970, 1, 1)


def iceberg_field(f: DataField) -> dict:
    """A column as an Iceberg schema field."""
    d = {"id": f.id, "name": f.name, "required": not f.type.nullable, "type": iceberg_type(f.type, f.name)}
    if f.description is not None:
        d["doc"] = f.description
    return d


def iceberg_type(t: DataType, column: str) -> str:
    if isinstance(t, AtomicType):
        return _atomic(t, column)
    raise SchemaError(f"column '{column}' is {t}: nested columns are not published to Iceberg by paimon-sql yet")


def _atomic(t: AtomicType, column: str) -> str:
    n = t.name
    if n in _SIMPLE:
        return _SIMPLE[n]
    if n == "DECIMAL":
        return f"decimal({t.precision}, {t.scale})"
    if n == "TIME" and t.precision <= 3:
        return "time"
    if n in ("TIMESTAMP", "TIMESTAMP_LTZ") and 3 <= t.precision <= 6:
        return "timestamp" if n == "TIMESTAMP" else "timestamptz"
    raise SchemaError(f"column '{column}' is {t}, which Iceberg format version 2 metadata cannot describe "
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
