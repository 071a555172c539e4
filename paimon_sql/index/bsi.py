"""Paimon's bit-sliced index, format V1 (``bsi``, seed 003 §3.9.6.4-5): a range index for integers.

A version byte (1), row count (4), then has-positive (1 byte) + the positive values' BSI, and
has-negative (1 byte) + the BSI of the negative values' magnitudes. A BSI is: version byte (1),
min and max (8 bytes each; Paimon's writer always records min 0), the existence bitmap, the slice
count (4) = bit length of ``max - min``, and per bit i the bitmap of rows whose ``value - min``
has bit i set. Bitmaps are portable RoaringBitmaps; integers big-endian.

Types: TINYINT to BIGINT, DATE (days), TIMESTAMP / TIMESTAMP_LTZ (millis or micros) and DECIMAL up to
precision 18 (unscaled). Comparisons use min/max first, then O'Neil's bit-sliced compare.
"""

from __future__ import annotations

import struct
from typing import List, Optional, Tuple

import numpy as np
import pyarrow as pa
from pyroaring import BitMap

from paimon_sql.exceptions import CorruptMetadataError
from paimon_sql.index import roaring
from paimon_sql.index import values as V

NAME = "bsi"
VERSION = 1
SUPPORTED = V.INTEGERS + V.TIMESTAMPS + ("DATE", "DECIMAL")


def supports(dtype) -> bool:
    return dtype.name in SUPPORTED and not (dtype.name == "DECIMAL" and dtype.precision > 18)


def _serialize_slices(mask: np.ndarray, magnitudes: np.ndarray) -> bytes:
    top = int(magnitudes[mask].max())
    out = [struct.pack(">Bqq", VERSION, 0, top), roaring.serialize(roaring.of_positions(np.flatnonzero(mask)))]
    out.append(struct.pack(">i", top.bit_length()))
    for bit in range(top.bit_length()):
        out.append(roaring.serialize(roaring.of_positions(np.flatnonzero(mask & ((magnitudes >> bit) & 1 == 1)))))
    return b"".join(out)


class BsiIndex:
    name = NAME

    def __init__(self, dtype, options: dict):
        self.dtype = dtype

    def build(self, arr: pa.Array) -> bytes:
        norm = V.normalize(arr, self.dtype).cast(pa.int64())
        valid = np.asarray(norm.is_valid())
        values = np.asarray(norm.fill_null(0).to_numpy(zero_copy_only=False), dtype=np.int64)
        out = [struct.pack(">Bi", VERSION, len(norm))]
        for mask, magnitudes in ((valid & (values >= 0), values), (valid & (values < 0), -values)):
            out.append(struct.pack(">?", bool(mask.any())))
            if mask.any():
                out.append(_serialize_slices(mask, magnitudes))
        return b"".join(out)

    def reader(self, data: bytes) -> "BsiReader":
        return BsiReader(self.dtype, data)


class SlicedBitmap:
    """One side (positive or negative magnitudes) of a BSI."""

    def __init__(self, lo: int = 0, hi: int = 0, ebm: BitMap = None, slices: Tuple[BitMap, ...] = ()):
        self.min, self.max, self.ebm, self.slices = lo, hi, ebm if ebm is not None else BitMap(), slices

    @classmethod
    def read(cls, data: bytes, pos: int) -> Tuple["SlicedBitmap", int]:
        version, lo, hi = struct.unpack_from(">Bqq", data, pos)
        if version > VERSION:
            raise CorruptMetadataError(f"bsi index has unsupported version {version}")
        ebm, pos = roaring.deserialize_at(data, pos + 17)
        (count,) = struct.unpack_from(">i", data, pos)
        pos += 4
        slices: List[BitMap] = []
        for _ in range(count):
            bm, pos = roaring.deserialize_at(data, pos)
            slices.append(bm)
        return cls(lo, hi, ebm, tuple(slices)), pos

    def compare(self, op: str, value: int) -> BitMap:
        """Rows whose value ``op`` ``value`` (op in =, !=, <, <=, >, >=)."""
        lo, hi = self.min, self.max
        everything, nothing = BitMap(self.ebm), BitMap()
        shortcut = {
            "=": everything if lo == hi == value else nothing if value < lo or value > hi else None,
            "!=": nothing if lo == hi == value else everything if value < lo or value > hi else None,
            ">=": everything if value <= lo else nothing if value > hi else None,
            ">": everything if value < lo else nothing if value >= hi else None,
            "<=": everything if value >= hi else nothing if value < lo else None,
            "<": everything if value > hi else nothing if value <= lo else None,
        }[op]
        if shortcut is not None:
            return shortcut
        target = value - lo
        gt, lt, eq = BitMap(), BitMap(), BitMap(self.ebm)
        for bit in range(len(self.slices) - 1, -1, -1):
            s = self.slices[bit]
            if (target >> bit) & 1:
                lt |= eq - s
                eq &= s
            else:
                gt |= eq & s
                eq -= s
        return {"=": eq, "!=": self.ebm - eq, ">": gt, "<": lt, "<=": lt | eq, ">=": gt | eq}[op] & self.ebm


_MIRROR = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "=": "=", "!=": "!="}


class BsiReader:
    def __init__(self, dtype, data: bytes):
        self.dtype = dtype
        try:
            version, self.rows, has_pos = struct.unpack_from(">Bi?", data, 0)
            if version > VERSION:
                raise CorruptMetadataError(f"bsi index has unsupported version {version}")
            if self.rows <= 0:  # no data file is empty: zeroed bytes, which would rule every row out
                raise CorruptMetadataError(f"bsi index of {self.rows} rows is malformed")
            pos = 6
            self.positive, self.negative = SlicedBitmap(), SlicedBitmap()
            if has_pos:
                self.positive, pos = SlicedBitmap.read(data, pos)
            (has_neg,) = struct.unpack_from(">?", data, pos)
            if has_neg:
                self.negative, _ = SlicedBitmap.read(data, pos + 1)
        except struct.error:
            raise CorruptMetadataError("bsi file index is truncated") from None

    def _compare(self, op: str, value: int) -> BitMap:
        pos, neg = self.positive, self.negative
        if op in ("=", "!="):
            side, other = (neg, pos) if value < 0 else (pos, neg)
            hit = side.compare("=", abs(value))
            return hit if op == "=" else (side.ebm - hit) | other.ebm
        if value < 0:  # among negatives the order of magnitudes is reversed
            return neg.compare(_MIRROR[op], -value) | (pos.ebm if op in (">", ">=") else BitMap())
        return pos.compare(op, value) | (neg.ebm if op in ("<", "<=") else BitMap())

    def visit(self, op: str, literals) -> Optional[BitMap]:
        present = self.positive.ebm | self.negative.ebm
        if op == "is_null":
            return present.flip(0, self.rows)
        if op == "is_not_null":
            return present
        if op not in ("=", "!=", "<", "<=", ">", ">=", "in", "not_in"):
            return None
        keys = [V.literal(v, self.dtype) for v in literals]
        if any(k is None for k in keys):
            return None
        if op == "in":
            return BitMap().union(*(self._compare("=", k) for k in keys))
        if op == "not_in":
            return present - BitMap().union(*(self._compare("=", k) for k in keys))
        return self._compare(op, keys[0])
