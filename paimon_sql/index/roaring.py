"""RoaringBitmap in its portable serialization, as Java's RoaringBitmap writes it.

File indexes concatenate several bitmaps without length prefixes (BSI slices, bitmap index
bodies), so a reader must know where one serialized bitmap ends: :func:`deserialize_at` walks the
portable format's header (cookie, container keys and cardinalities, run flags) to find it.
Bitmaps are run-optimized before serializing, as Paimon's ``RoaringBitmap32.serialize`` does.
"""

from __future__ import annotations

import array
import struct
from typing import Tuple

import numpy as np
from pyroaring import BitMap

from paimon_sql.exceptions import CorruptMetadataError

_COOKIE_RUNS, _COOKIE_NO_RUNS = 12347, 12346


def of_positions(positions: np.ndarray) -> BitMap:
    """A bitmap of row positions (numpy ints), built through the buffer protocol (no Python loop)."""
    return BitMap(array.array("I", np.ascontiguousarray(positions, dtype=np.uint32).tobytes()))


def serialize(bitmap: BitMap) -> bytes:
    bitmap = BitMap(bitmap)
    bitmap.run_optimize()
    return bitmap.serialize()


def serialized_size(data: bytes, offset: int = 0) -> int:
    """Length of the portable bitmap that starts at ``offset``."""
    try:
        (cookie,) = struct.unpack_from("<I", data, offset)
        pos = offset + 4
        if cookie & 0xFFFF == _COOKIE_RUNS:
            size, runs = (cookie >> 16) + 1, data[pos: pos + ((cookie >> 16) + 8) // 8]
            pos += len(runs)
        elif cookie == _COOKIE_NO_RUNS:
            (size,) = struct.unpack_from("<I", data, pos)
            pos, runs = pos + 4, b""
        else:
            raise CorruptMetadataError(f"not a serialized RoaringBitmap (cookie {cookie})")
        cards = [c + 1 for c in struct.unpack_from(f"<{2 * size}H", data, pos)[1::2]]
        pos += 4 * size
        if not runs or size >= 4:
            pos += 4 * size  # offset header
        for i, card in enumerate(cards):
            if runs and runs[i // 8] >> (i % 8) & 1:
                (n_runs,) = struct.unpack_from("<H", data, pos)
                pos += 2 + 4 * n_runs
            else:
                pos += 8192 if card > 4096 else 2 * card
    except struct.error:
        raise CorruptMetadataError("serialized RoaringBitmap is truncated") from None
    if pos > len(data):
        raise CorruptMetadataError("serialized RoaringBitmap is truncated")
    return pos - offset


def deserialize_at(data: bytes, offset: int) -> Tuple[BitMap, int]:
    """The bitmap at ``offset`` and the offset just after it."""
    end = offset + serialized_size(data, offset)
    return BitMap.deserialize(bytes(data[offset:end])), end
