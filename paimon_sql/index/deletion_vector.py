"""Deletion vectors: which row positions of a data file are deleted, and their index file.

A deletion vector is a RoaringBitmap of row positions. Its index file (``index/index-<uuid>-<n>``,
one per bucket and commit) is: one version byte (1), then per vector: a 4-byte big-endian size,
the body, and a big-endian CRC32 of the body. Two bodies exist, told apart by their magic number:

- 32-bit (Paimon's ``BitmapDeletionVector``): the magic number 1581511376 as a big-endian int and
  the bitmap in RoaringBitmap's portable format; the index manifest records ``size`` as the length.
- 64-bit (Paimon 2.0's ``Bitmap64DeletionVector``, written with ``deletion-vectors.bitmap64``): the
  magic number 1681511377 as a little-endian int and the 64-bit portable format
  (:mod:`paimon_sql.index.roaring64`); the index manifest records size + 8 (size and CRC fields).

Java reads either, whatever the table's option says, and so do we. We write the table option's
format for every vector, including ones read in the other format. The bucket's index manifest entry
(type DELETION_VECTORS) lists, per data file, the offset of its size field, that length and the
cardinality. Checksums are verified on read: a corrupt vector fails with the file's name.
"""

from __future__ import annotations

import struct
import zlib
from typing import Dict, List, Tuple

import numpy as np
from pyroaring import BitMap

from paimon_sql.exceptions import CorruptMetadataError
from paimon_sql.index import roaring64
from paimon_sql.index.index_store import IndexStore
from paimon_sql.manifest.manifest_file import ADD, DeletionVectorMeta, IndexManifestEntry

MAGIC = 1581511376
MAGIC_64 = 1681511377
VERSION = 1
INDEX_TYPE = "DELETION_VECTORS"
BITMAP64 = "deletion-vectors.bitmap64"


def serialize(bitmap: BitMap, bitmap64: bool = False) -> bytes:
    """One vector as it is stored in an index file: size, body, CRC32 of the body."""
    if bitmap64:
        body = struct.pack("<i", MAGIC_64) + roaring64.serialize(bitmap)
    else:
        body = struct.pack(">i", MAGIC) + bitmap.serialize()
    return struct.pack(">i", len(body)) + body + struct.pack(">I", zlib.crc32(body) & 0xFFFFFFFF)


def deserialize(data: bytes, offset: int, length: int, where: str) -> BitMap:
    """The vector whose size field sits at ``offset`` of an index file's bytes, in either format
    (told by its magic number); ``length`` is what the index manifest records for it."""
    at = f"deletion vector in {where} at {offset}"
    try:
        (size,) = struct.unpack_from(">i", data, offset)
        body = data[offset + 4: offset + 4 + size]
        (checksum,) = struct.unpack_from(">I", data, offset + 4 + size)
    except struct.error:
        raise CorruptMetadataError(f"deletion vector file {where} is truncated") from None
    if size not in (length, length - 8) or len(body) != size or size < 4:
        raise CorruptMetadataError(f"{at}: size {size}, expected {length}")
    if zlib.crc32(body) & 0xFFFFFFFF != checksum:
        raise CorruptMetadataError(f"{at}: checksum mismatch (corrupt file)")
    if struct.unpack_from(">i", body)[0] == MAGIC and size == length:
        try:
            return BitMap.deserialize(body[4:])
        except ValueError:
            raise CorruptMetadataError(f"{at}: not a RoaringBitmap") from None
    if struct.unpack_from("<i", body)[0] == MAGIC_64 and size == length - 8:
        return roaring64.deserialize(body[4:], at)
    raise CorruptMetadataError(f"{at}: bad magic number {struct.unpack_from('>i', body)[0]} for length {length} "
                               f"(32-bit vectors: {MAGIC}, 64-bit: {MAGIC_64} little-endian)")


def write_index_file(store: IndexStore, partition: bytes, bucket: int, vectors: Dict[str,
                     BitMap]) -> IndexManifestEntry:
    """One index file holding ``vectors`` (data file name → deleted positions), in the format the
    table's ``deletion-vectors.bitmap64`` asks for; its manifest entry."""
    bitmap64 = store.options.get(BITMAP64)
    out, ranges, pos = [bytes([VERSION])], [], 1
    for name in sorted(vectors):
        blob = serialize(vectors[name], bitmap64)
        length = len(blob) if bitmap64 else len(blob) - 8  # as Java records each format's length
        ranges.append(DeletionVectorMeta(name, pos, length, len(vectors[name])))
        out.append(blob)
        pos += len(blob)
    file_name = store.paths.new_index_file_name()
    data = b"".join(out)
    store.io.write_bytes(store.paths.index_path(file_name), data)
    return IndexManifestEntry(ADD, partition, bucket, INDEX_TYPE, file_name, len(data), len(vectors), tuple(ranges))


def read_index_file(store: IndexStore, entry: IndexManifestEntry) -> Dict[str, BitMap]:
    """The vectors of one index file, which must exist with the size its entry records (cut or
    overwritten files fail before any checksum is looked at)."""
    path = entry.external_path or store.paths.index_path(entry.file_name)
    try:
        data = store.io.read_bytes(path)
    except FileNotFoundError:
        raise CorruptMetadataError(f"deletion vector file {entry.file_name} is missing") from None
    if entry.file_size is not None and len(data) != entry.file_size:
        raise CorruptMetadataError(f"deletion vector file {entry.file_name} has {len(data)} bytes, "
                                   f"its index manifest entry says {entry.file_size}")
    if not data or data[0] != VERSION:
        raise CorruptMetadataError(f"deletion vector file {entry.file_name} has unknown version "
                                   f"{data[0] if data else 'none'}")
    return {r.data_file: deserialize(data, r.offset, r.length, entry.file_name) for r in entry.dv_ranges or ()}


def keep_mask(bitmap: BitMap, num_rows: int) -> np.ndarray:
    """Per row position: True when the row is not deleted."""
    mask = np.ones(num_rows, bool)
    if len(bitmap):
        deleted = np.asarray(bitmap.to_array(), dtype=np.int64)
        mask[deleted[deleted < num_rows]] = False
    return mask


def bucket_vectors(store: IndexStore, index_entries: List[IndexManifestEntry]) -> Dict[Tuple[bytes, int],
                   Dict[str, BitMap]]:
    """All deletion vectors of a snapshot, by (partition, bucket) then data file."""
    out: Dict[Tuple[bytes, int], Dict[str, BitMap]] = {}
    for e in index_entries:
        if e.index_type == INDEX_TYPE and e.kind == ADD:
            out.setdefault((e.partition, e.bucket), {}).update(read_index_file(store, e))
    return out


def read_vectors(store: IndexStore, entries: List[IndexManifestEntry]) -> Dict[str, BitMap]:
    """The vectors of the index files ``entries``, by data file; a file's vectors in several of
    them are joined (a bucket's old and new index files, while a commit rebases)."""
    out: Dict[str, BitMap] = {}
    for e in entries:
        for name, v in read_index_file(store, e).items():
            out[name] = out[name] | v if name in out else v
    return out
