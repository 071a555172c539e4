"""Paimon's bitmap file index, format V1 (``bitmap``, seed 003 §3.9.6.3).

A version byte (1); row count (4), number of distinct non-null values (4), has-null (1 byte) and,
when set, the null bitmap's offset (4); then per distinct value the value (strings: 4-byte length
+ UTF-8; numbers at their width: byte, short, int, long, float, double; boolean one byte; dates
int days, timestamps long millis/micros) and its bitmap's offset (4). An offset is relative to the
body that follows the head; a negative one, ``-1 - row``, means the value occurs on that single
row and has no bitmap. Body: the null bitmap (when it holds more than one row), then the other
bitmaps in head order, each in RoaringBitmap's portable format. Integers are big-endian.

Answers ``=``, ``IN``, ``!=``, ``NOT IN``, ``IS NULL``, ``IS NOT NULL`` with the matching rows.
Built per file column at once: dictionary-encode, sort positions by code, one bitmap per value.
"""

from __future__ import annotations

import struct
from typing import Dict, List, Optional

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyroaring import BitMap

from paimon_sql.exceptions import CorruptMetadataError
from paimon_sql.index import roaring
from paimon_sql.index import values as V

NAME = "bitmap"
VERSION = 1
_FIXED = {"TINYINT": ">b", "SMALLINT": ">h", "INT": ">i", "DATE": ">i", "TIME": ">i", "BIGINT": ">q",
          "TIMESTAMP": ">q", "TIMESTAMP_LTZ": ">q", "FLOAT": ">f", "DOUBLE": ">d", "BOOLEAN": ">?"}
SUPPORTED = V.STRINGS + tuple(_FIXED)


def _value_bytes(value, dtype) -> bytes:
    if dtype.name in V.STRINGS:
        raw = value.encode("utf-8")
        return struct.pack(">i", len(raw)) + raw
    return struct.pack(_FIXED[dtype.name], value)


class BitmapIndex:
    name = NAME

    def __init__(self, dtype, options: dict):
        self.dtype = dtype

    def build(self, arr: pa.Array) -> bytes:
        norm = V.normalize(arr, self.dtype)
        rows = len(norm)
        valid = np.asarray(norm.is_valid())
        nulls = np.flatnonzero(~valid)
        encoded = pc.dictionary_encode(norm)
        codes = np.asarray(encoded.indices.to_numpy(zero_copy_only=False))[valid].astype(np.int64)
        positions = np.flatnonzero(valid)[np.argsort(codes, kind="stable")]
        counts = np.bincount(codes, minlength=len(encoded.dictionary))
        groups = np.split(positions, np.cumsum(counts)[:-1]) if len(counts) else []
        body: List[bytes] = []
        offset = 0
        if len(nulls) > 1:
            body.append(roaring.serialize(roaring.of_positions(nulls)))
            offset = len(body[0])
        head = [struct.pack(">Bii?", VERSION, rows, len(groups), len(nulls) > 0)]
        if len(nulls):
            head.append(struct.pack(">i", -1 - int(nulls[0]) if len(nulls) == 1 else 0))
        for value, group in zip(encoded.dictionary.to_pylist(), groups):
            if len(group) == 1:
                head.append(_value_bytes(value, self.dtype) + struct.pack(">i", -1 - int(group[0])))
                continue
            data = roaring.serialize(roaring.of_positions(group))
            head.append(_value_bytes(value, self.dtype) + struct.pack(">i", offset))
            body.append(data)
            offset += len(data)
        return b"".join(head + body)

    def reader(self, data: bytes) -> "BitmapReader":
        return BitmapReader(self.dtype, data)


class BitmapReader:
    def __init__(self, dtype, data: bytes):
        self.dtype = dtype
        self.data = data
        self.version = data[0] if data else None
        if self.version == VERSION:
            self._read_head()

    def _read_head(self) -> None:
        data, name = self.data, self.dtype.name
        try:
            self.rows, n, has_null = struct.unpack_from(">ii?", data, 1)
            if self.rows <= 0 or n < 0:  # no data file is empty
                raise CorruptMetadataError(f"bitmap index of {self.rows} rows and {n} values is malformed")
            pos = 10
            self.null_offset = None
            if has_null:
                (self.null_offset,) = struct.unpack_from(">i", data, pos)
                pos += 4
            self.offsets: Dict[object, int] = {}
            for _ in range(n):
                if name in V.STRINGS:
                    (length,) = struct.unpack_from(">i", data, pos)
                    value = bytes(data[pos + 4: pos + 4 + length]).decode("utf-8")
                    pos += 4 + length
                else:
                    fmt = _FIXED[name]
                    (value,) = struct.unpack_from(fmt, data, pos)
                    pos += struct.calcsize(fmt)
                (self.offsets[value],) = struct.unpack_from(">i", data, pos)
                pos += 4
        except struct.error:
            raise CorruptMetadataError("bitmap file index is truncated") from None
        self.body = pos

    def _bitmap(self, offset: Optional[int]) -> BitMap:
        if offset is None:
            return BitMap()
        if offset < 0:
            return BitMap([-1 - offset])
        return roaring.deserialize_at(self.data, self.body + offset)[0]

    def _matching(self, literals) -> Optional[BitMap]:
        out = BitMap()
        for lit in literals:
            if lit is None:
                out |= self._bitmap(self.null_offset)
                continue
            key = V.literal(lit, self.dtype)
            if key is None:
                return None
            out |= self._bitmap(self.offsets.get(key))
        return out

    def visit(self, op: str, literals) -> Optional[BitMap]:
        """Rows that may match (None: every row may)."""
        if self.version != VERSION:
            return None  # a later format: the index can't be used, the file is read
        if op in ("=", "in"):
            return self._matching(literals)
        if op in ("!=", "not_in"):
            hit = self._matching(literals)
            return None if hit is None else hit.flip(0, self.rows)
        if op == "is_null":
            return self._bitmap(self.null_offset)
        if op == "is_not_null":
            return self._bitmap(self.null_offset).flip(0, self.rows)
        return None
