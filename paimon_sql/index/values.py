"""Column values as Paimon's file indexes see them (its internal row representation).

Dates are int days, TIME int milliseconds of the day, timestamps a long of milliseconds when the
precision is <= 3 and of microseconds above, decimals their unscaled long; other types keep their
value. :func:`normalize` maps a whole Arrow column at once; :func:`literal` maps a predicate
literal the same way (through a one-element array of the column's type), or None when the literal
cannot be a value of the column — then an index can't rule anything out. :func:`unscaled` gives a
decimal literal's exact unscaled integer for any precision (Parquet's bloom filters hash it).
"""

from __future__ import annotations

from decimal import Context, Decimal, InvalidOperation
from typing import Any, Optional

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

STRINGS = ("CHAR", "VARCHAR")
BINARIES = ("BINARY", "VARBINARY")
INTEGERS = ("TINYINT", "SMALLINT", "INT", "BIGINT")
TIMESTAMPS = ("TIMESTAMP", "TIMESTAMP_LTZ")


def normalize(arr, dtype) -> pa.Array:
    """``arr`` (Arrow, of ``dtype.to_arrow()``) in Paimon's internal representation."""
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks() if arr.num_chunks != 1 else arr.chunk(0)
    name = dtype.name
    if name == "DATE":
        return arr.cast(pa.int32())
    if name == "TIME":
        if pa.types.is_time64(arr.type):
            return pc.divide(arr.cast(pa.int64()), 1000).cast(pa.int32())
        return arr.cast(pa.int32())
    if name in TIMESTAMPS:
        unit = "ms" if dtype.precision <= 3 else "us"
        return arr.cast(pa.timestamp(unit, tz=arr.type.tz), safe=False).cast(pa.int64())
    if name == "DECIMAL":
        return unscaled_longs(arr)
    if name in STRINGS and arr.type != pa.string():
        return arr.cast(pa.string())
    return arr


def unscaled_longs(arr: pa.Array) -> pa.Array:
    """A decimal128 column's unscaled values as int64 (exact for precision <= 18)."""
    words = np.frombuffer(arr.buffers()[1], dtype="<i8").reshape(-1, 2)[arr.offset: arr.offset + len(arr), 0]
    mask = None if arr.null_count == 0 else np.asarray(arr.is_null())
    return pa.array(words, pa.int64(), mask=mask)


def literal_array(value: Any, dtype) -> Optional[pa.Array]:
    """A literal as a one-element normalized array; None when it cannot be a value of ``dtype``."""
    if value is None:
        return None
    try:
        return normalize(pa.array([value], dtype.to_arrow()), dtype)
    except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, ValueError, OverflowError):
        return None


def literal(value: Any, dtype) -> Optional[Any]:
    """A literal as the index stores values of ``dtype``; None when it cannot be one."""
    arr = literal_array(value, dtype)
    return None if arr is None else arr[0].as_py()


def int64_values(arr: pa.Array) -> np.ndarray:
    """Non-null integer-like values widened to int64."""
    return np.asarray(pc.drop_null(arr).cast(pa.int64()).to_numpy(zero_copy_only=False), dtype=np.int64)


_EXACT = Context(prec=80)


def unscaled(value: Any, dtype) -> Optional[int]:
    """The unscaled integer of a DECIMAL(p, s) literal (an int or Decimal); None when the literal
    is no value of the column: more than p digits, or digits beyond scale s. Floats give None (their
    binary value is not the decimal the user wrote)."""
    if value is None or isinstance(value, (bool, float)) or not isinstance(value, (int, Decimal)):
        return None
    try:
        scaled = Decimal(value).scaleb(dtype.args[1] if len(dtype.args) > 1 else 0, _EXACT)
    except InvalidOperation:
        return None
    if not scaled.is_finite() or scaled != scaled.to_integral_value(context=_EXACT):
        return None
    n = int(scaled)
    return n if abs(n) < 10 ** dtype.precision else None
