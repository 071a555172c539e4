"""Parquet's own bloom filters: written when the table asks, checked before a file is read.

Paimon passes ``parquet.*`` table options to the Parquet writer; parquet-mr reads
``parquet.bloom.filter.enabled`` (every column), ``parquet.bloom.filter.enabled#<col>``,
``parquet.bloom.filter.expected.ndv#<col>`` and ``parquet.bloom.filter.fpp#<col>``. We hand the
same to pyarrow's ``bloom_filter_options`` (Spark's writer takes them as they are).

A Parquet bloom filter is a split-block filter per column chunk: 32-byte blocks of eight 32-bit
words; a value's xxHash64 (seed 0) of its plain encoding picks the block from its upper half,
and its lower half times eight salts sets one bit per word. It sits at the chunk's
``bloom_filter_offset`` behind a small Thrift header; its bit set is the region's last
``numBytes`` bytes. A file is skipped when for an ``=`` / ``IN`` no row group can hold a literal.
DECIMAL literals are looked up as their exact unscaled integer in the column's physical type (INT32,
INT64 or FIXED_LEN_BYTE_ARRAY, whichever the file has — older files hold small decimals in FLBA).
These are checked after Paimon's file index (seed 000: the two kinds coexist, ours first). A
filter that can't be parsed, or has no bit set (all NULL, or zeroed bytes), rules nothing out.
"""

from __future__ import annotations

import struct
from typing import Dict, Iterable, Mapping, Optional

import numpy as np
import pyarrow as pa
import xxhash

from paimon_sql.data.predicate import Predicate
from paimon_sql.index import values as V

_ENABLED, _NDV, _FPP = "parquet.bloom.filter.enabled", "parquet.bloom.filter.expected.ndv", \
    "parquet.bloom.filter.fpp"
_SALT = np.array([0x47B6137B, 0x44974D91, 0x8824AD5B, 0xA2B7289D, 0x705495C7, 0x2DF1424B, 0x9EFC4947, 0x5C6BFB31],
                 dtype=np.uint64)


def writer_options(options: Mapping[str, str], fields: Iterable[pa.Field]) -> Optional[Dict[str, dict]]:
    """pyarrow's ``bloom_filter_options`` for these table options and columns (None: no bloom
    filters). BOOLEAN columns get none, as parquet-mr gives them none (pyarrow refuses one)."""
    every = str(options.get(_ENABLED, "false")).lower() == "true"
    out = {}
    for c in (f.name for f in fields if not pa.types.is_boolean(f.type)):
        flag = options.get(f"{_ENABLED}#{c}")
        if (str(flag).lower() == "true") if flag is not None else every:
            spec = {}
            if options.get(f"{_NDV}#{c}") is not None:
                spec["ndv"] = int(options[f"{_NDV}#{c}"])
            if options.get(f"{_FPP}#{c}") is not None:
                spec["fpp"] = float(options[f"{_FPP}#{c}"])
            out[c] = spec or True
    return out or None


def _plain(value, physical: str, length: int = 0) -> Optional[bytes]:
    """A literal in Parquet's plain encoding for its column's physical type (None: can't tell).
    A DECIMAL's literal is its unscaled int: INT32 / INT64 as any int, FIXED_LEN_BYTE_ARRAY of
    ``length`` bytes big-endian two's complement."""
    if value is None or isinstance(value, bool):
        return None
    if physical == "FIXED_LEN_BYTE_ARRAY" and isinstance(value, int) and length > 0:
        try:
            return value.to_bytes(length, "big", signed=True)
        except OverflowError:
            return b""  # wider than the column: matches nothing
    if physical == "BYTE_ARRAY" and isinstance(value, (str, bytes)):
        return value.encode("utf-8") if isinstance(value, str) else value
    if physical in ("INT32", "INT64") and isinstance(value, int):
        fmt = "<i" if physical == "INT32" else "<q"
        try:
            return struct.pack(fmt, value)
        except struct.error:
            return b""  # out of the column's range: matches nothing
    if physical in ("FLOAT", "DOUBLE") and isinstance(value, float):
        return struct.pack("<f" if physical == "FLOAT" else "<d", value)
    return None


def _might_contain(bitset: bytes, h: int) -> bool:
    words = np.frombuffer(bitset, dtype="<u4")
    blocks = len(words) // 8
    block = ((h >> 32) * blocks) >> 32
    key = np.uint64(h & 0xFFFFFFFF)
    bits = ((key * _SALT) & np.uint64(0xFFFFFFFF)) >> np.uint64(27)
    return bool(np.all(words[block * 8: block * 8 + 8] & (np.uint32(1) << bits.astype(np.uint32))))


def file_may_match(read_range, metadata, predicate: Predicate, name_of, type_of) -> bool:
    """False when the file's bloom filters rule out every row of ``predicate`` (top-level ``AND``
    of ``=`` / ``IN``). ``read_range(offset, length)`` reads bytes of the file; ``name_of`` and
    ``type_of`` give a predicate column's name in the file and its Paimon type."""
    leaves = predicate.children if predicate.op == "and" else (predicate,)
    for p in leaves:
        if p.op not in ("=", "in") or any(v is None for v in p.literals):
            continue
        column = name_of(p.column)
        if column is None or metadata.num_row_groups == 0:
            continue
        index = next((i for i in range(metadata.num_columns)
                      if metadata.schema.column(i).path == column), None)
        if index is None:
            continue
        schema = metadata.schema.column(index)
        dtype = type_of(p.column)
        if dtype is None or (dtype.name in V.TIMESTAMPS and dtype.precision > 6):
            continue
        lookup = V.unscaled if dtype.name == "DECIMAL" else V.literal
        encoded = [_plain(lookup(v, dtype), schema.physical_type, schema.length) for v in p.literals]
        if any(e is None for e in encoded):
            continue
        if not any(_row_group_may_contain(read_range, metadata.row_group(r).column(index), encoded)
                   for r in range(metadata.num_row_groups)):
            return False
    return True


def _row_group_may_contain(read_range, chunk, encoded) -> bool:
    offset, length = chunk.bloom_filter_offset, chunk.bloom_filter_length
    if offset is None or not length or length <= 0:
        return True  # no filter for this chunk
    region = read_range(offset, length)
    num_bytes = _header_num_bytes(region)
    if num_bytes is None or num_bytes > len(region) or num_bytes % 32:
        return True
    bitset = region[len(region) - num_bytes:]
    if any(e != b"" and _might_contain(bitset, xxhash.xxh64_intdigest(e)) for e in encoded):
        return True
    # no bit set: an all-NULL chunk, or a zeroed region; either way it must not hide rows
    return bitset.count(0) == len(bitset)


def _header_num_bytes(region: bytes) -> Optional[int]:
    """numBytes, field 1 (i32) of the Thrift compact BloomFilterHeader."""
    if not region or region[0] != 0x15:
        return None
    value, shift, pos = 0, 0, 1
    while pos < len(region):
        b = region[pos]
        value |= (b & 0x7F) << shift
        pos += 1
        if not b & 0x80:
            return (value >> 1) ^ -(value & 1)
        shift += 7
    return None
