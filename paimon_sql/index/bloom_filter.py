"""Paimon's bloom filter file index (``bloom-filter``, seed 003 §3.9.6.2).

Serialized: the number of hash functions (4 bytes, big-endian), then the bit set as bytes, bit i
in byte i // 8 at bit i % 8. Sizing as Java's BloomFilter64: ``n = int(-items * ln(fpp) / ln(2)^2)``
bits rounded up to the next multiple of 8 (always adding a byte), ``k = max(1, round(bits / items
* ln 2))``. A reader takes the bit count from the length, so any whole number of bytes is valid.
Each value is hashed to 64 bits — xxHash64 (seed 0) of the bytes for strings and binaries,
Thomas Wang's 64-bit integer hash of the value widened to a long for numbers (float/double by
their IEEE bits, timestamps in millis or micros) — and sets bits ``h1 + i*h2`` (32-bit
arithmetic, negative flipped, modulo the bit count) for i = 1..k. Only ``=`` / ``IN`` can rule a
file out. Numbers and positions are computed for all distinct values at once with numpy.
"""

from __future__ import annotations

import math
import struct
from typing import Optional

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import xxhash
from pyroaring import BitMap

from paimon_sql.exceptions import CorruptMetadataError
from paimon_sql.index import values as V

NAME = "bloom-filter"
DEFAULT_ITEMS = 1_000_000
DEFAULT_FPP = 0.1
SUPPORTED = V.STRINGS + V.BINARIES + V.INTEGERS + V.TIMESTAMPS + ("FLOAT", "DOUBLE", "DATE", "TIME")


def thomas_wang(keys: np.ndarray) -> np.ndarray:
    """Thomas Wang's 64-bit integer hash over int64 (wrapping, arithmetic shifts — as Java's long)."""
    k = keys.astype(np.int64, copy=True)
    with np.errstate(over="ignore"):
        k = ~k + (k << 21)
        k = k ^ (k >> 24)
        k = k + (k << 3) + (k << 8)
        k = k ^ (k >> 14)
        k = k + (k << 2) + (k << 4)
        k = k ^ (k >> 28)
        k = k + (k << 31)
    return k


def hashes(arr: pa.Array, dtype) -> np.ndarray:
    """64-bit hashes (int64) of the distinct non-null values of a normalized column."""
    arr = pc.unique(pc.drop_null(arr))
    name = dtype.name
    if name in V.STRINGS or name in V.BINARIES:
        items = arr.cast(pa.binary()).to_pylist()
        return np.array([xxhash.xxh64_intdigest(b) for b in items], dtype=np.uint64).view(np.int64)
    if name == "FLOAT":
        bits = np.asarray(arr.to_numpy(zero_copy_only=False), dtype=np.float32).view(np.int32)
        return thomas_wang(bits.astype(np.int64))
    if name == "DOUBLE":
        return thomas_wang(np.asarray(arr.to_numpy(zero_copy_only=False), dtype=np.float64).view(np.int64))
    return thomas_wang(V.int64_values(arr))


def _positions(hashes64: np.ndarray, num_hashes: int, num_bits: int) -> np.ndarray:
    """Bit positions, one row per hash function, one column per value."""
    h1 = hashes64.astype(np.int32)  # low 32 bits
    h2 = (hashes64.view(np.uint64) >> np.uint64(32)).astype(np.uint32).view(np.int32)
    with np.errstate(over="ignore"):
        combined = h1[None, :] + np.arange(1, num_hashes + 1, dtype=np.int32)[:, None] * h2[None, :]
    combined = np.where(combined < 0, ~combined, combined)
    return combined.astype(np.int64) % num_bits


def sizing(items: int, fpp: float):
    """(hash functions, bits) of BloomFilter64(items, fpp)."""
    nb = int(-items * math.log(fpp) / (math.log(2) * math.log(2)))
    num_bits = nb + (8 - nb % 8)
    return max(1, int(math.floor(num_bits / items * math.log(2) + 0.5))), num_bits


class BloomFilterIndex:
    name = NAME

    def __init__(self, dtype, options: dict):
        self.dtype = dtype
        self.items = int(options.get("items", DEFAULT_ITEMS))
        self.fpp = float(options.get("fpp", DEFAULT_FPP))
        if not 0 < self.fpp < 1:
            raise ValueError(f"bloom filter 'fpp' must be in (0, 1), got {self.fpp}")
        if self.items <= 0:
            raise ValueError(f"bloom filter 'items' must be positive, got {self.items}")

    def build(self, arr: pa.Array) -> bytes:
        num_hashes, num_bits = sizing(self.items, self.fpp)
        bits = np.zeros(num_bits, dtype=bool)
        bits[_positions(hashes(V.normalize(arr, self.dtype), self.dtype), num_hashes, num_bits).ravel()] = True
        return struct.pack(">i", num_hashes) + np.packbits(bits, bitorder="little").tobytes()

    def reader(self, data: bytes) -> "BloomFilterReader":
        return BloomFilterReader(self.dtype, data)


class BloomFilterReader:
    def __init__(self, dtype, data: bytes):
        if len(data) < 5:
            raise CorruptMetadataError(f"bloom filter index of {len(data)} bytes is malformed")
        self.dtype = dtype
        (self.num_hashes,) = struct.unpack_from(">i", data, 0)
        self.bytes = np.frombuffer(data, dtype=np.uint8, offset=4)  # bit i: byte i // 8, bit i % 8
        if not 0 < self.num_hashes <= len(self.bytes) * 8:
            raise CorruptMetadataError(f"bloom filter index with {self.num_hashes} hash functions is malformed")

    def _contains(self, value) -> bool:
        arr = V.literal_array(value, self.dtype)
        if arr is None:
            return True
        pos = _positions(hashes(arr, self.dtype), self.num_hashes, len(self.bytes) * 8)
        return bool(np.all((self.bytes[pos >> 3] >> (pos & 7).astype(np.uint8)) & 1))

    def visit(self, op: str, literals) -> Optional[BitMap]:
        """Empty bitmap: no row matches; None: the filter can't tell — also when no bit is set
        (every value NULL, which stats rule out anyway, or zeroed bytes, which must not hide rows)."""
        if op != "=" and op != "in":
            return None
        if any(v is None or self._contains(v) for v in literals) or not self.bytes.any():
            return None
        return BitMap()

