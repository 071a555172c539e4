"""Sort keys of sort compaction: Paimon's z-order and Hilbert-curve keys over Arrow columns.

A z-order or Hilbert key makes rows that are close in every order column close in one sort order,
so after sorting by it each data file covers a small box of the order columns' space and its min/max
stats skip it for point and range queries on any of them. Both start from each value's
order-preserving fixed-width bytes (:func:`ordered_bytes`, Paimon's ``ZOrderByteUtils``): integers,
dates and timestamps as 8 big-endian bytes with the sign bit flipped, floats by their sign-magnitude
bits, strings and binaries as their first ``zorder.var-length-contribution`` bytes, zero-padded.
The z-order key interleaves those bytes bit by bit (:func:`interleave`, Paimon's ``interleaveBits``);
the Hilbert key is the Hilbert-curve position of the columns' first 8 bytes read as unsigned
64-bit coordinates (Skilling's algorithm, as the davidmoten curve Paimon's ``HilbertIndexer`` uses).

Where Paimon's key functions do not keep Spark's order, these do: floats use the full 64-bit
sign-magnitude flip (Paimon's shifts by 31, scrambling the low mantissa bits), -0.0 sorts with 0.0
and NaN above +Infinity (as Spark orders them); Hilbert coordinates are order-preserving unsigned
values (Paimon passes signed longs and raw double bits); decimals count (as their unscaled value)
and timestamps keep microseconds. NULL is all zero bytes: first, as Spark's ascending sort.
Everything is vectorized over whole Arrow arrays (numpy), no per-row Python.
"""

from __future__ import annotations

from typing import List, Sequence

import numpy as np
import pyarrow as pa

from paimon_sql.exceptions import InvalidOptionError

PRIMITIVE_SIZE = 8  # bytes a fixed-width value contributes (Paimon's PRIMITIVE_BUFFER_SIZE)
VAR_LENGTH_CONTRIBUTION = "zorder.var-length-contribution"
_SIGN = np.uint64(1 << 63)


def _big_endian(values: np.ndarray) -> np.ndarray:
    """uint64 values as an (n, 8) matrix of their big-endian bytes."""
    return values.astype(">u8").view(np.uint8).reshape(-1, PRIMITIVE_SIZE)


def _valid(array: pa.Array) -> np.ndarray:
    return np.ones(len(array), bool) if array.null_count == 0 else np.asarray(array.is_valid())


def _int64(array: pa.Array) -> np.ndarray:
    """Integers, or dates / times / timestamps as their stored integer (days, micros...), as int64."""
    if not pa.types.is_integer(array.type):
        array = array.view(pa.int32() if array.type.bit_width == 32 else pa.int64())
    return np.asarray(array.fill_null(0)).astype(np.int64)


def _signed_to_ordered(values: np.ndarray) -> np.ndarray:
    """int64 → uint64 in the same order (Paimon's ``longToOrderedBytes``: flip the sign bit)."""
    return values.view(np.uint64) ^ _SIGN


def _double_to_ordered(values: np.ndarray) -> np.ndarray:
    """float64 → uint64 in Spark's order: sign-magnitude bits made two's-complement-free (negatives
    inverted, positives with the sign bit set); -0.0 as 0.0, every NaN as one NaN above +Infinity."""
    values = np.where(values == 0.0, 0.0, values)
    values = np.where(np.isnan(values), np.nan, values)
    bits = values.view(np.int64)
    return (bits ^ ((bits >> np.int64(63)) | np.int64(-1 << 63))).view(np.uint64)


def _decimal_to_int64(array: pa.Array) -> np.ndarray:
    """A decimal128 column's unscaled values, saturated to int64 (order kept; only values beyond
    ±9.2e18 units tie)."""
    array = array.cast(pa.decimal128(array.type.precision, array.type.scale))
    words = np.frombuffer(array.buffers()[1], dtype="<i8")[2 * array.offset: 2 * (array.offset + len(array))]
    low, high = words[0::2], words[1::2]
    fits = ((high == 0) & (low >= 0)) | ((high == -1) & (low < 0))
    return np.where(fits, low, np.where(high < 0, np.iinfo(np.int64).min, np.iinfo(np.int64).max))


def _prefix_bytes(array: pa.Array, width: int) -> np.ndarray:
    """Strings (UTF-8) and binaries as their first ``width`` bytes, zero-padded
    (Paimon's ``stringToOrderedBytes`` / ``byteTruncateOrFill``)."""
    array = array.cast(pa.large_binary())
    offsets = np.frombuffer(array.buffers()[1], dtype=np.int64)[array.offset: array.offset + len(array) + 1]
    data = array.buffers()[2]
    data = np.frombuffer(data, dtype=np.uint8) if data is not None else np.zeros(0, np.uint8)
    data = np.append(data, np.uint8(0))  # a safe index for the positions past each value
    lengths = np.minimum(np.diff(offsets), width)
    cols = np.arange(width)
    index = np.where(cols < lengths[:, None], offsets[:-1, None] + cols, len(data) - 1)
    return data[index]


def ordered_bytes(array: pa.Array, var_length: int = PRIMITIVE_SIZE) -> np.ndarray:
    """``array`` as an (n, width) uint8 matrix whose rows compare (unsigned, byte by byte) as Spark
    orders the values; NULL is all zeros. Width is 8, or ``var_length`` for strings and binaries."""
    t = array.type
    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks()
    if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_binary(t) \
            or pa.types.is_large_binary(t) or pa.types.is_fixed_size_binary(t):
        out = _prefix_bytes(array, var_length)
    elif pa.types.is_boolean(t):  # Paimon: true is 0x81 then zeros, false is zeros
        out = np.zeros((len(array), PRIMITIVE_SIZE), np.uint8)
        out[:, 0] = np.where(np.asarray(array.fill_null(False)), 0x81, 0)
    else:
        out = _big_endian(ordered_uint64(array))
    out[~_valid(array)] = 0
    return out


def ordered_uint64(array: pa.Array) -> np.ndarray:
    """Fixed-width values (integers, floats, decimals, dates, timestamps) as order-preserving uint64."""
    t = array.type
    if pa.types.is_floating(t):
        return _double_to_ordered(np.asarray(array.fill_null(0).cast(pa.float64())))
    if pa.types.is_decimal(t):
        return _signed_to_ordered(_decimal_to_int64(array))
    if pa.types.is_integer(t) or pa.types.is_date(t) or pa.types.is_timestamp(t) or pa.types.is_time(t):
        return _signed_to_ordered(_int64(array))
    raise TypeError(f"values of type {t} have no sort key")


def interleave(columns: Sequence[np.ndarray]) -> np.ndarray:
    """Paimon's ``ZOrderByteUtils.interleaveBits`` on (n, width_i) byte matrices: the first bit of
    each column in turn, then the second..., a column that has run out of bits skipped; the result
    has the sum of the widths."""
    bits = [np.unpackbits(c, axis=1) for c in columns]
    order: List[int] = []
    starts = np.cumsum([0] + [b.shape[1] for b in bits])
    for position in range(max(b.shape[1] for b in bits)):
        order += [start + position for start, b in zip(starts, bits) if position < b.shape[1]]
    return np.packbits(np.concatenate(bits, axis=1)[:, order], axis=1)


def _binary(matrix: np.ndarray) -> pa.Array:
    """An (n, width) byte matrix as a binary array of n values (Spark's BINARY compares unsigned)."""
    n, width = matrix.shape
    offsets = pa.py_buffer(np.arange(0, (n + 1) * width, width, dtype=np.int32))
    return pa.Array.from_buffers(pa.binary(), n, [None, offsets, pa.py_buffer(np.ascontiguousarray(matrix))])


def zorder_keys(columns: Sequence[pa.Array], var_length: int = PRIMITIVE_SIZE) -> pa.Array:
    """Each row's z-order key over ``columns`` (Paimon's ZorderSorter value)."""
    return _binary(interleave([ordered_bytes(c, var_length) for c in columns]))


def hilbert_transpose(points: Sequence[np.ndarray], bits: int = 64) -> List[np.ndarray]:
    """Skilling's AxestoTranspose on uint64 coordinate columns of ``bits`` bits: the Hilbert index
    in transposed form (its bits are those of the result interleaved, first column first)."""
    x = [np.array(p, dtype=np.uint64) for p in points]
    m = np.uint64(1 << (bits - 1))
    q = m
    while q > 1:  # inverse undo
        p = q - np.uint64(1)
        for i in range(len(x)):
            high = (x[i] & q) != 0
            t = np.where(high, np.uint64(0), (x[0] ^ x[i]) & p)
            x[0] = np.where(high, x[0] ^ p, x[0] ^ t)
            if i:
                x[i] = x[i] ^ t
        q >>= np.uint64(1)
    for i in range(1, len(x)):  # Gray encode
        x[i] = x[i] ^ x[i - 1]
    t = np.zeros_like(x[0])
    q = m
    while q > 1:
        t = np.where((x[-1] & q) != 0, t ^ (q - np.uint64(1)), t)
        q >>= np.uint64(1)
    return [c ^ t for c in x]


def hilbert_index(points: Sequence[np.ndarray], bits: int = 64) -> np.ndarray:
    """The Hilbert-curve position of each row of ``points`` (uint64 columns, ``bits`` bits used)
    as (n, 8 * dims) big-endian bytes, the top ``64 - bits`` bits of each coordinate zero."""
    transposed = [_big_endian(c << np.uint64(64 - bits)) for c in hilbert_transpose(points, bits)]
    flat = np.unpackbits(interleave(transposed), axis=1)[:, : bits * len(points)]
    return np.packbits(np.pad(flat, ((0, 0), (64 * len(points) - flat.shape[1], 0))), axis=1)


def hilbert_keys(columns: Sequence[pa.Array]) -> pa.Array:
    """Each row's Hilbert key over ``columns`` (two or more): the curve position of each column's
    first 8 ordered bytes (:func:`ordered_bytes`) read as an unsigned coordinate."""
    coords = [ordered_bytes(c, PRIMITIVE_SIZE).view(">u8")[:, 0].astype(np.uint64) for c in columns]
    return _binary(hilbert_index(coords))


def sortable(array_type: pa.DataType) -> bool:
    """Whether values of this Arrow type have a sort key here."""
    t = array_type
    return (pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_decimal(t) or pa.types.is_date(t)
            or pa.types.is_timestamp(t) or pa.types.is_time(t) or pa.types.is_boolean(t) or pa.types.is_string(t)
            or pa.types.is_large_string(t) or pa.types.is_binary(t) or pa.types.is_large_binary(t)
            or pa.types.is_fixed_size_binary(t))


def check_var_length(value) -> int:
    """``zorder.var-length-contribution`` as a positive byte count."""
    n = int(value)
    if n < 1:
        raise InvalidOptionError(f"'{VAR_LENGTH_CONTRIBUTION}' must be at least 1, got {value}")
    return n
