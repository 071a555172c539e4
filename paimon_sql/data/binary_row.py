"""Paimon's BinaryRow: the byte form of partitions, min/max keys and stats, and the bucket hash.

Layout of one row (all little-endian): a null bit set of ``((arity + 63 + 8) // 64) * 8`` bytes
whose first byte is the row kind, then one 8-byte slot per field, then a variable part. Values of
up to 8 bytes live in their slot. Strings and binaries of at most 7 bytes live in the slot with
``0x80 | length`` in its last byte; longer ones go to the variable part (8-byte aligned) and the
slot holds ``offset << 32 | length``. DECIMAL with precision > 18 takes 16 bytes of the variable part
holding the unscaled value's minimal big-endian two's complement (Java's ``BigInteger.toByteArray``),
the slot ``offset << 32 | length``; TIMESTAMP with precision > 3 takes 8 bytes (epoch millis), the
slot ``offset << 32 | nano of milli``. A NULL of either still takes its bytes (zeros) and its slot
``offset << 32``, as Java's ``BinaryWriter`` null setters do — the bucket hash sees them. In Avro
records the row is prefixed by its arity as a big-endian int.

Bucket of a row = ``abs(murmur3_32(row bytes, seed 42) % buckets)`` in Java int arithmetic, which
:func:`hash_rows` computes for whole Arrow columns at once (numpy over a row-byte matrix).
"""

from __future__ import annotations

import datetime as dt
import struct
from decimal import Context, Decimal
from typing import Any, List, Sequence, Tuple

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from paimon_sql.data.types import AtomicType, DataType
from paimon_sql.exceptions import CorruptMetadataError

_EPOCH_DATE = dt.date(1970, 1, 1)
_EPOCH = dt.datetime(1970, 1, 1)
_VAR_TYPES = ("CHAR", "VARCHAR", "BINARY", "VARBINARY")
_EXACT = Context(prec=80)  # the default context's 28 digits would round a DECIMAL(38)


def null_bits_size(arity: int) -> int:
    return ((arity + 63 + 8) // 64) * 8


def _round8(n: int) -> int:
    return (n + 7) & ~7


def _atomic(t: DataType) -> AtomicType:
    if not isinstance(t, AtomicType):
        raise ValueError(f"BinaryRow fields must be atomic types, got {t}")
    return t


# ---------------------------------------------------------------------------------------------
# scalar codec


def to_bytes(values: Sequence[Any], types: Sequence[DataType], with_arity: bool = True) -> bytes:
    """Encode one row of Python values (None for NULL)."""
    arity = len(types)
    nb = null_bits_size(arity)
    fixed = bytearray(nb + 8 * arity)
    var = bytearray()
    for i, (v, t) in enumerate(zip(values, types)):
        slot = nb + 8 * i
        if v is None:  # NULL of any type (stats of nested columns are always NULL)
            fixed[(i + 8) // 8] |= 1 << ((i + 8) % 8)
            reserved = _null_var_bytes(t)
            if reserved:
                struct.pack_into("<q", fixed, slot, (len(fixed) + len(var)) << 32)
                var += b"\0" * reserved
            continue
        t = _atomic(t)
        n = t.name
        if n in _VAR_TYPES:
            data = v.encode("utf-8") if isinstance(v, str) else bytes(v)
            if len(data) <= 7:
                fixed[slot:slot + len(data)] = data
                fixed[slot + 7] = 0x80 | len(data)
            else:
                struct.pack_into("<q", fixed, slot, ((len(fixed) + len(var)) << 32) | len(data))
                var += data + b"\0" * (_round8(len(data)) - len(data))
        elif n == "DECIMAL" and t.precision > 18:
            unscaled = _unscaled(v, t.scale)
            data = unscaled.to_bytes(_java_bit_length(unscaled) // 8 + 1, "big", signed=True)
            struct.pack_into("<q", fixed, slot, ((len(fixed) + len(var)) << 32) | len(data))
            var += data + b"\0" * (16 - len(data))
        elif n in ("TIMESTAMP", "TIMESTAMP_LTZ") and t.precision > 3:
            millis, nanos = _timestamp_parts(v)
            struct.pack_into("<q", fixed, slot, ((len(fixed) + len(var)) << 32) | nanos)
            var += struct.pack("<q", millis)
        else:
            _pack_fixed(fixed, slot, n, t, v)
    row = bytes(fixed) + bytes(var)
    return struct.pack(">i", arity) + row if with_arity else row


def _null_var_bytes(t: DataType) -> int:
    """Bytes a NULL of ``t`` still takes in the variable part (Java writes them zeroed)."""
    if isinstance(t, AtomicType) and t.name == "DECIMAL" and t.precision > 18:
        return 16
    if isinstance(t, AtomicType) and t.name in ("TIMESTAMP", "TIMESTAMP_LTZ") and t.precision > 3:
        return 8
    return 0


def _unscaled(v: Any, scale: int) -> int:
    return int(Decimal(v).scaleb(scale, _EXACT).to_integral_value(context=_EXACT))


def _java_bit_length(v: int) -> int:
    """``BigInteger.bitLength``: bits of the two's complement less the sign bit (-128 needs 7)."""
    return (~v if v < 0 else v).bit_length()


def _pack_fixed(buf: bytearray, slot: int, n: str, t: AtomicType, v: Any) -> None:
    if n == "BOOLEAN":
        buf[slot] = 1 if v else 0
    elif n == "TINYINT":
        struct.pack_into("<b", buf, slot, v)
    elif n == "SMALLINT":
        struct.pack_into("<h", buf, slot, v)
    elif n == "INT":
        struct.pack_into("<i", buf, slot, v)
    elif n == "BIGINT":
        struct.pack_into("<q", buf, slot, v)
    elif n == "FLOAT":
        struct.pack_into("<f", buf, slot, v)
    elif n == "DOUBLE":
        struct.pack_into("<d", buf, slot, v)
    elif n == "DATE":
        struct.pack_into("<i", buf, slot, (v - _EPOCH_DATE).days)
    elif n == "TIME":
        struct.pack_into("<i", buf, slot, (v.hour * 3600 + v.minute * 60 + v.second) * 1000 + v.microsecond // 1000)
    elif n == "DECIMAL":
        struct.pack_into("<q", buf, slot, _unscaled(v, t.scale))
    elif n in ("TIMESTAMP", "TIMESTAMP_LTZ"):
        struct.pack_into("<q", buf, slot, _timestamp_parts(v)[0])
    else:
        raise ValueError(f"type {t} cannot be stored in a BinaryRow")


def _timestamp_parts(v: dt.datetime) -> Tuple[int, int]:
    """(epoch millis, nano of millisecond) of a naive (or UTC-aware) datetime."""
    if v.tzinfo is not None:
        v = v.astimezone(dt.timezone.utc).replace(tzinfo=None)
    delta = v - _EPOCH
    micros = (delta.days * 86400 + delta.seconds) * 1_000_000 + delta.microseconds
    return micros // 1000, (micros % 1000) * 1000


def from_bytes(data: bytes, types: Sequence[DataType], with_arity: bool = True) -> List[Any]:
    """Decode one row into Python values."""
    try:
        if with_arity:
            data = data[4:]
        nb = null_bits_size(len(types))
        out = []
        for i, t in enumerate(types):
            if data[(i + 8) // 8] & (1 << ((i + 8) % 8)):
                out.append(None)
                continue
            out.append(_read_field(data, nb + 8 * i, _atomic(t)))
        return out
    except (IndexError, struct.error, UnicodeDecodeError) as e:
        raise CorruptMetadataError(f"cannot decode BinaryRow of {len(types)} fields: {e}") from None


def _read_field(data: bytes, slot: int, t: AtomicType) -> Any:
    n = t.name
    if n in _VAR_TYPES:
        word = struct.unpack_from("<Q", data, slot)[0]
        if word & (1 << 63):
            length = (word >> 56) & 0x7F
            raw = data[slot:slot + length]
        else:
            off, length = word >> 32, word & 0xFFFFFFFF
            raw = data[off:off + length]
        return raw.decode("utf-8") if n in ("CHAR", "VARCHAR") else bytes(raw)
    if n == "BOOLEAN":
        return data[slot] != 0
    if n in ("TINYINT", "SMALLINT", "INT", "BIGINT", "FLOAT", "DOUBLE"):
        return struct.unpack_from({"TINYINT": "<b", "SMALLINT": "<h", "INT": "<i", "BIGINT": "<q",
                                   "FLOAT": "<f", "DOUBLE": "<d"}[n], data, slot)[0]
    if n == "DATE":
        return _EPOCH_DATE + dt.timedelta(days=struct.unpack_from("<i", data, slot)[0])
    if n == "TIME":
        ms = struct.unpack_from("<i", data, slot)[0]
        return (dt.datetime.min + dt.timedelta(milliseconds=ms)).time()
    if n == "DECIMAL":
        if t.precision <= 18:
            unscaled = struct.unpack_from("<q", data, slot)[0]
        else:
            word = struct.unpack_from("<Q", data, slot)[0]
            off, length = word >> 32, word & 0xFFFFFFFF
            unscaled = int.from_bytes(data[off:off + length], "big", signed=True)
        return Decimal(unscaled).scaleb(-t.scale, _EXACT)
    if n in ("TIMESTAMP", "TIMESTAMP_LTZ"):
        if t.precision <= 3:
            millis, nanos = struct.unpack_from("<q", data, slot)[0], 0
        else:
            word = struct.unpack_from("<Q", data, slot)[0]
            millis = struct.unpack_from("<q", data, word >> 32)[0]
            nanos = word & 0xFFFFFFFF
        value = _EPOCH + dt.timedelta(milliseconds=millis, microseconds=nanos // 1000)
        return value.replace(tzinfo=dt.timezone.utc) if n == "TIMESTAMP_LTZ" else value
    raise CorruptMetadataError(f"type {t} cannot be read from a BinaryRow")


def empty_row() -> bytes:
    """The BinaryRow of arity 0 (unpartitioned tables' partition)."""
    return to_bytes([], [])


# ---------------------------------------------------------------------------------------------
# vectorized: row bytes for whole columns, and Paimon's MurmurHash3 over them


_WIDTH = {"BOOLEAN": "<i1", "TINYINT": "<i1", "SMALLINT": "<i2", "INT": "<i4", "DATE": "<i4", "TIME": "<i4",
          "FLOAT": "<f4", "DOUBLE": "<f8", "BIGINT": "<i8", "DECIMAL": "<i8", "TIMESTAMP": "<i8",
          "TIMESTAMP_LTZ": "<i8"}


def _fixed_width_bytes(arr: pa.Array, t: AtomicType) -> np.ndarray:
    """(n, width) uint8 slot contents of a fixed-width column, width as Java writes it (nulls: zeros)."""
    n = t.name
    if n == "DECIMAL":
        raw = np.frombuffer(arr.buffers()[1], dtype="<i8")[arr.offset * 2:(arr.offset + len(arr)) * 2]
        vals = np.where(np.asarray(arr.is_valid()), raw[0::2], 0)
    elif n in ("TIMESTAMP", "TIMESTAMP_LTZ"):
        vals = _epoch_millis(arr)
    else:
        as_int = {"TIME": lambda a: a.cast(pa.time32("ms")).cast(pa.int32()), "DATE": lambda a: a.cast(pa.int32())}
        prepared = as_int[n](arr) if n in as_int else arr
        vals = np.asarray(pc.fill_null(prepared, False if n == "BOOLEAN" else 0).to_numpy(zero_copy_only=False))
    dtype = np.dtype(_WIDTH[n])
    return np.ascontiguousarray(vals.astype(dtype)).view(np.uint8).reshape(len(arr), dtype.itemsize)


def _epoch_millis(arr: pa.Array) -> np.ndarray:
    ints = np.asarray(pc.fill_null(arr.cast(pa.int64()), 0).to_numpy(zero_copy_only=False), dtype=np.int64)
    per_milli = {"s": 0, "ms": 1, "us": 1000, "ns": 1_000_000}[arr.type.unit]
    return ints * 1000 if per_milli == 0 else np.floor_divide(ints, per_milli)


def row_bytes_matrix(columns: Sequence[pa.Array], types: Sequence[DataType]) -> Tuple[np.ndarray, np.ndarray]:
    """Encode rows column-wise: (uint8 matrix n × width, byte length of each row).

    Rows are laid out exactly as :func:`to_bytes` (without arity) would, padded with zeros to the
    widest row. Supported: every atomic type (BinaryRow holds no nested values).
    """
    types = [_atomic(t) for t in types]
    columns = [c.combine_chunks() if isinstance(c, pa.ChunkedArray) else c for c in columns]
    n = len(columns[0]) if columns else 0
    arity = len(types)
    nb = null_bits_size(arity)
    fixed_size = nb + 8 * arity
    var_lens = []
    for col, t in zip(columns, types):
        if t.name in _VAR_TYPES:
            lens = np.asarray(pc.fill_null(pc.binary_length(col), 0).to_numpy(zero_copy_only=False), dtype=np.int64)
            var_lens.append(np.where(lens > 7, (lens + 7) & ~7, 0))
        elif _null_var_bytes(t):
            var_lens.append(np.full(n, _null_var_bytes(t), dtype=np.int64))
        else:
            var_lens.append(None)
    total_var = sum((v for v in var_lens if v is not None), np.zeros(n, dtype=np.int64))
    row_len = fixed_size + total_var
    width = int(row_len.max()) if n else fixed_size
    mat = np.zeros((n, width), dtype=np.uint8)
    rows = np.arange(n)
    var_cursor = np.full(n, fixed_size, dtype=np.int64)
    for i, (col, t) in enumerate(zip(columns, types)):
        slot = nb + 8 * i
        valid = np.asarray(col.is_valid().to_numpy(zero_copy_only=False), dtype=bool)
        if not valid.all():
            byte, bit = (i + 8) // 8, (i + 8) % 8
            mat[~valid, byte] |= np.uint8(1 << bit)
        if t.name in _VAR_TYPES:
            _place_var(mat, col, slot, var_cursor, valid)
        elif t.name in ("TIMESTAMP", "TIMESTAMP_LTZ") and t.precision > 3:
            ints = col.cast(pa.int64()).to_numpy(zero_copy_only=False)
            ints = np.nan_to_num(ints).astype(np.int64)
            per_milli = {"s": 0, "ms": 1, "us": 1000, "ns": 1_000_000}[col.type.unit]
            millis = ints * 1000 if per_milli == 0 else np.floor_divide(ints, per_milli)
            nanos = np.zeros(n, np.int64) if per_milli <= 1 else (ints - millis * per_milli) * (1_000_000 // per_milli)
            word = (var_cursor << 32) | np.where(valid, nanos, 0)
            mat[:, slot:slot + 8] = word.astype("<i8").view(np.uint8).reshape(-1, 8)
            mb = millis.astype("<i8").view(np.uint8).reshape(-1, 8)
            for b in range(8):
                mat[rows[valid], var_cursor[valid] + b] = mb[valid, b]
            var_cursor = var_cursor + 8
        elif t.name == "DECIMAL" and t.precision > 18:
            _place_big_decimal(mat, col, slot, var_cursor, valid)
            var_cursor = var_cursor + 16
        else:
            fixed = _fixed_width_bytes(col, t)
            mat[:, slot:slot + fixed.shape[1]] = fixed
    return mat, row_len


_BYTE_BITS = np.array([int(b).bit_length() for b in range(256)], dtype=np.int64)


def _place_big_decimal(mat: np.ndarray, col: pa.Array, slot: int, var_cursor: np.ndarray,
                       valid: np.ndarray) -> None:
    """Write one DECIMAL(>18) column: the unscaled value's minimal big-endian two's complement into
    16 bytes of the variable part, ``offset << 32 | length`` into the slot (NULL: length 0, zeros)."""
    if col.type.byte_width != 16:  # decimal256 holding a DECIMAL(<= 38)
        col = col.cast(pa.decimal128(col.type.precision, col.type.scale))
    n = len(col)
    le = np.frombuffer(col.buffers()[1], dtype=np.uint8)[col.offset * 16:(col.offset + n) * 16].reshape(n, 16)
    le = np.where(valid[:, None], le, 0).astype(np.uint8)
    negative = le[:, 15] >= 0x80
    magnitude = np.where(negative[:, None], ~le, le)  # BigInteger.bitLength of v < 0 is that of ~v
    nonzero = magnitude != 0
    top = np.where(nonzero.any(axis=1), 15 - np.argmax(nonzero[:, ::-1], axis=1), -1)
    top_bits = _BYTE_BITS[magnitude[np.arange(n), np.maximum(top, 0)]]
    bit_length = np.where(top >= 0, 8 * top + top_bits, 0)
    length = np.where(valid, bit_length // 8 + 1, 0)
    word = (var_cursor << 32) | length
    mat[:, slot:slot + 8] = word.astype("<i8").view(np.uint8).reshape(-1, 8)
    big_endian = le[:, ::-1]
    rows = np.arange(n)
    for b in range(16):
        sel = b < length
        mat[rows[sel], var_cursor[sel] + b] = big_endian[sel, 16 - length[sel] + b]


def _place_var(mat: np.ndarray, col: pa.Array, slot: int, var_cursor: np.ndarray, valid: np.ndarray) -> None:
    """Write one string/binary column: inline when <= 7 bytes, else into each row's variable part."""
    if pa.types.is_large_string(col.type) or pa.types.is_large_binary(col.type):
        col = col.cast(pa.binary() if pa.types.is_large_binary(col.type) else pa.string())
    offsets = np.frombuffer(col.buffers()[1], dtype=np.int32)[col.offset:col.offset + len(col) + 1].astype(np.int64)
    data_buf = col.buffers()[2]
    data = np.frombuffer(data_buf, dtype=np.uint8) if data_buf is not None else np.zeros(0, np.uint8)
    lens = np.where(valid, offsets[1:] - offsets[:-1], 0)
    starts = offsets[:-1]
    inline = valid & (lens <= 7)
    out_of_line = valid & (lens > 7)
    # inline: bytes into slot[0:len], marker in slot[7]
    max_inline = int(lens[inline].max()) if inline.any() else 0
    for b in range(max_inline):
        sel = inline & (lens > b)
        mat[sel, slot + b] = data[starts[sel] + b]
    mat[inline, slot + 7] = (0x80 | lens[inline]).astype(np.uint8)
    if out_of_line.any():
        word = (var_cursor << 32) | lens
        mat[out_of_line, slot:slot + 8] = word.astype("<i8").view(np.uint8).reshape(-1, 8)[out_of_line]
        idx = np.nonzero(out_of_line)[0]
        max_len = int(lens[idx].max())
        # copy in chunks of columns: row-wise fancy index over (rows, byte positions)
        pos = np.arange(max_len)
        for chunk in np.array_split(idx, max(1, len(idx) * max_len // 4_000_000 + 1)):
            if len(chunk) == 0:
                continue
            clen = lens[chunk][:, None]
            mask = pos[None, :] < clen
            src = np.minimum(starts[chunk][:, None] + pos[None, :], max(len(data) - 1, 0))
            dst_col = var_cursor[chunk][:, None] + pos[None, :]
            r = np.broadcast_to(chunk[:, None], mask.shape)
            mat[r[mask], dst_col[mask]] = data[src[mask]]
        var_cursor += np.where(out_of_line, (lens + 7) & ~7, 0)


_C1, _C2 = np.uint32(0xCC9E2D51), np.uint32(0x1B873593)


def _rotl(x: np.ndarray, r: int) -> np.ndarray:
    return (x << np.uint32(r)) | (x >> np.uint32(32 - r))


def murmur3_words(words: np.ndarray, nwords: np.ndarray, seed: int = 42) -> np.ndarray:
    """Paimon's MurmurHashUtils.hashBytesByWords for many rows: words (n × w uint32), count per row."""
    n = words.shape[0]
    h = np.full(n, seed, dtype=np.uint32)
    with np.errstate(over="ignore"):
        for j in range(words.shape[1]):
            k = words[:, j] * _C1
            k = _rotl(k, 15) * _C2
            nh = _rotl(h ^ k, 13) * np.uint32(5) + np.uint32(0xE6546B64)
            h = np.where(j < nwords, nh, h)
        h ^= (nwords * 4).astype(np.uint32)
        h ^= h >> np.uint32(16)
        h *= np.uint32(0x85EBCA6B)
        h ^= h >> np.uint32(13)
        h *= np.uint32(0xC2B2AE35)
        h ^= h >> np.uint32(16)
    return h.view(np.int32)


def hash_rows(columns: Sequence[pa.Array], types: Sequence[DataType]) -> np.ndarray:
    """Java ``BinaryRow.hashCode()`` (int32) of each row built from the columns."""
    mat, row_len = row_bytes_matrix(columns, types)
    words = mat.view("<u4")
    return murmur3_words(words, row_len // 4)


def bucket_of(hashes: np.ndarray, num_buckets: int) -> np.ndarray:
    """Java ``Math.abs(hash % numBuckets)`` (remainder truncates toward zero)."""
    return np.abs(np.fmod(hashes.astype(np.int64), num_buckets)).astype(np.int32)
