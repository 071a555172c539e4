"""Partition values as text, exactly as Java Paimon prints them (InternalRowPartitionComputer).

Two spellings, chosen by the table option ``partition.legacy-name`` (default true):

- legacy (true): Java's ``toString`` of the value's internal form — DATE as days since 1970-01-01
  (``19844``), TIME as milliseconds of the day, TIMESTAMP as ``java.time.LocalDateTime`` prints
  (``2024-05-01T12:30``, seconds only when not zero, a fraction of 3, 6 or 9 digits; a
  TIMESTAMP_LTZ in UTC). BINARY would be the array's identity hash (``[B@1b6d3586``), a name no
  reader can compute again, so it is refused.
- cast (false): Paimon's CAST to STRING — DATE ``2024-05-01``, TIME ``12:30:00[.f]``, TIMESTAMP
  ``2024-05-01 12:30:00.000000`` (fraction padded to the type's precision), a TIMESTAMP_LTZ in this
  machine's time zone (the JVM's default zone in Java), BINARY as UTF-8.

Both print DECIMAL plainly at the column's scale, FLOAT/DOUBLE as Java does (``1.5``, ``1.0E10``),
BOOLEAN ``true``/``false``, numbers and strings as they are. NULL, ``''`` and whitespace-only
text become ``partition.default-name``. The names of data directories use the table's spelling;
``$partitions`` always shows the cast spelling (as Java's PartitionsTable).

The other direction, :func:`spec_values`: the literals of a PARTITION clause (text, as SQL and
the Spark writer's options carry them) become the columns' values, as Spark casts them, so a
spec is compared with partitions by value, never by its text.
"""

from __future__ import annotations

import datetime as dt
import math
from decimal import Decimal
from typing import Any, Optional

import numpy as np
import pyarrow as pa

from paimon_sql.data.predicate import and_, equal, is_null, or_
from paimon_sql.exceptions import InvalidOptionError, SchemaError

LEGACY_NAME = "partition.legacy-name"
_EPOCH = dt.datetime(1970, 1, 1)
_NOT_JAVA_WHITESPACE = "\xa0\u2007\u202f\x85"


def value_text(value: Any, dtype, legacy: bool) -> Optional[str]:
    """The text of one non-null partition value; None where Paimon uses the default name."""
    text = _text(value, dtype, legacy) if value is not None else None
    if text is None or (not text[:1].isalnum() and all(c.isspace() and c not in _NOT_JAVA_WHITESPACE for c in text)):
        return None
    return text


def cast_text(value: Any, dtype) -> str:
    """A value as Paimon's cast to STRING spells it (``null`` for NULL): how ``{v1, v2}`` renderings
    of a partition row (``$files``, ``$buckets``) show each value."""
    return "null" if value is None else _text(value, dtype, False)


def _text(v: Any, dtype, legacy: bool) -> str:
    name = dtype.name
    if name == "BOOLEAN":
        return "true" if v else "false"
    if name == "DATE":
        return str((v - _EPOCH.date()).days) if legacy else v.isoformat()
    if name == "TIME":
        millis = (v.hour * 3600 + v.minute * 60 + v.second) * 1000 + v.microsecond // 1000
        return str(millis) if legacy else _time_text(millis, dtype.precision)
    if name in ("TIMESTAMP", "TIMESTAMP_LTZ"):
        return _timestamp_text(v, name == "TIMESTAMP_LTZ", dtype.precision, legacy)
    if name == "DECIMAL":
        d = Decimal(v).quantize(Decimal(1).scaleb(-dtype.scale))
        return format(abs(d) if d == 0 else d, "f")
    if name in ("FLOAT", "DOUBLE"):
        return java_float_text(float(v), name == "FLOAT")
    if name in ("BINARY", "VARBINARY"):
        if legacy:
            raise InvalidOptionError(
                f"a {name} partition column has no stable directory name with '{LEGACY_NAME}' = 'true' "
                f"(Java Paimon names it by the array's identity hash): set '{LEGACY_NAME}' = 'false'")
        return bytes(v).decode("utf-8", "replace")
    return str(v)


def _time_text(millis: int, precision: int) -> str:
    """DateTimeUtils.formatTimestampMillis: ``HH:mm:ss``, then for a precision > 0 the millis'
    digits up to the last non-zero one (at least one digit)."""
    s, ms = divmod(millis, 1000)
    text = f"{s // 3600:02d}:{s // 60 % 60:02d}:{s % 60:02d}"
    if precision > 0:
        text += "." + (f"{ms:03d}"[:precision].rstrip("0") or "0")
    return text


def _timestamp_text(v: dt.datetime, local_zone: bool, precision: int, legacy: bool) -> str:
    if v.tzinfo is not None:
        v = v.astimezone(dt.timezone.utc).replace(tzinfo=None)
    nanos = v.microsecond * 1000
    if legacy:  # LocalDateTime.toString of the stored (UTC for LTZ) value
        text = f"{v.year:04d}-{v.month:02d}-{v.day:02d}T{v.hour:02d}:{v.minute:02d}"
        if v.second or nanos:
            text += f":{v.second:02d}"
        if nanos:
            text += "." + (f"{nanos // 1_000_000:03d}" if nanos % 1_000_000 == 0 else
                           f"{nanos // 1000:06d}" if nanos % 1000 == 0 else f"{nanos:09d}")
        return text
    if local_zone:  # the instant in the local zone, as Java casts TIMESTAMP_LTZ
        v = v.replace(tzinfo=dt.timezone.utc).astimezone().replace(tzinfo=None)
    fraction = f"{nanos:09d}"
    while len(fraction) > precision and fraction.endswith("0"):
        fraction = fraction[:-1]
    text = f"{v.year:04d}-{v.month:02d}-{v.day:02d} {v.hour:02d}:{v.minute:02d}:{v.second:02d}"
    return f"{text}.{fraction}" if fraction else text


def java_float_text(x: float, single: bool) -> str:
    """Java's Float/Double.toString: the shortest digits that read back to the same value, plain
    for magnitudes in [1e-3, 1e7) with at least one decimal, else ``d.dddE<exp>``."""
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    if x == 0:
        return "-0.0" if math.copysign(1.0, x) < 0 else "0.0"
    sci = np.format_float_scientific(np.float32(x) if single else x, unique=True, trim="-")
    mantissa, exp = sci.split("e")
    exp = int(exp)
    sign = "-" if mantissa.startswith("-") else ""
    digits = mantissa.lstrip("-").replace(".", "")
    if 1e-3 <= abs(x) < 1e7:
        point = exp + 1
        if point <= 0:
            body = "0." + "0" * -point + digits
        elif point >= len(digits):
            body = digits + "0" * (point - len(digits)) + ".0"
        else:
            body = digits[:point] + "." + digits[point:]
    else:
        body = f"{digits[0]}.{digits[1:] or '0'}E{exp}"
    return sign + body


def spec_values(schema, spec: dict) -> dict:
    """``{key: literal}`` of a partition spec as ``{key: value}`` of the partition columns' types
    (``d='2024-05-01'`` is a DATE, ``p='1.50'`` a DECIMAL); NULL stays None."""
    types = {f.name: f.type for f in schema.fields_of(list(spec))}
    out = {}
    for key, literal in spec.items():
        try:
            out[key] = None if literal is None else pa.array([literal]).cast(types[key].to_arrow()).to_pylist()[0]
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):
            raise SchemaError(f"partition value {literal!r} of '{key}' is not a {types[key]}") from None
    return out


def specs_predicate(schema, specs):
    """The partitions of any of ``specs`` (each ``{key: literal}``, a prefix of the partition keys,
    literals as :func:`spec_values` types them) as one predicate on the partition columns."""
    return or_(*[and_(*[is_null(k) if v is None else equal(k, v) for k, v in spec_values(schema, spec).items()])
                 for spec in specs])
