"""64-bit roaring bitmaps in the portable format Paimon 2.0's ``OptimizedRoaringBitmap64`` writes.

The format (RoaringFormatSpec's 64-bit extension, all little-endian): the number of 32-bit bitmaps
as 8 bytes, then per bitmap, keys ascending, its key (the high 32 bits of its positions) as 4 bytes
and the bitmap in the 32-bit portable format. Java keeps a dense array of bitmaps, one per key from
0 up to the highest, and writes the empty ones too; readers must accept gaps in the keys.

Row positions of a data file fit in 32 bits (no file holds 2^32 rows), so paimon-sql keeps vectors
as 32-bit :class:`BitMap` and reads a 64-bit one only when every position lies under key 0. Java
run-optimizes each bitmap before writing it, as :func:`roaring.serialize` does, so the bytes match.
"""

from __future__ import annotations

import struct

from pyroaring import BitMap

from paimon_sql.exceptions import CorruptMetadataError
from paimon_sql.index import roaring

_COUNT, _KEY = struct.Struct("<q"), struct.Struct("<i")


def serialize(bitmap: BitMap) -> bytes:
    """``bitmap`` as Java writes it: an empty one has no bitmaps, any other one bitmap of key 0."""
    if not bitmap:
        return _COUNT.pack(0)
    return _COUNT.pack(1) + _KEY.pack(0) + roaring.serialize(bitmap)


def deserialize(data: bytes, where: str) -> BitMap:
    """The positions of the 64-bit bitmap that fills ``data``; ``where`` names it in errors."""
    try:
        return _positions(data)
    except struct.error:
        raise CorruptMetadataError(f"{where}: 64-bit bitmap is truncated") from None
    except (ValueError, CorruptMetadataError) as e:  # ValueError: ours, or pyroaring's on a bad container
        raise CorruptMetadataError(f"{where}: {e}") from None


def _positions(data: bytes) -> BitMap:
    (count,) = _COUNT.unpack_from(data, 0)
    if not 0 <= count <= (len(data) - _COUNT.size) // (_KEY.size + 8):  # 8: the smallest 32-bit bitmap
        raise ValueError(f"bad 64-bit bitmap count {count}")
    out, pos, last = BitMap(), _COUNT.size, -1
    for _ in range(count):
        (key,) = _KEY.unpack_from(data, pos)
        if key <= last:
            raise ValueError(f"64-bit bitmap keys not ascending ({key} after {last})")
        bitmap, pos = roaring.deserialize_at(data, pos + _KEY.size)
        if key > 0 and bitmap:
            raise ValueError(f"positions of 2^32 and above (key {key}) are not supported")
        out, last = (bitmap if key == 0 else out), key
    if pos != len(data):
        raise ValueError(f"{len(data) - pos} bytes after the 64-bit bitmap")
    return out
