"""64-bit deletion vectors (``deletion-vectors.bitmap64``, Paimon 2.0's Bitmap64DeletionVector): their
bytes, reading either format by its magic number, and every writer honouring the option.
tests/interop/test_dv64_interop.py checks the bytes against Java's."""

import struct
import zlib

import pyarrow as pa
import pytest
from pyroaring import BitMap
from support import SCHEMA

from paimon_sql.data import predicate as P
from paimon_sql.exceptions import CorruptMetadataError
from paimon_sql.index import deletion_vector as dv
from paimon_sql.index import roaring, roaring64

BITMAPS = {
    "empty": BitMap(),
    "sparse": BitMap([0, 7, 70000, 2**31 + 5, 2**32 - 1]),
    "runs": BitMap(range(100, 5000)) | BitMap(range(200000, 200010)),
    "dense": BitMap(range(0, 60000, 3)),
}
ON = {"deletion-vectors.enabled": "true", "deletion-vectors.bitmap64": "true"}
PK_SCHEMA = pa.schema([pa.field("id", pa.int64(), False), ("v", pa.string())])


def batch(ids, dt="d"):
    return pa.table({"id": ids, "name": [f"n{i}" for i in ids], "value": [float(i) for i in ids],
                     "dt": [dt] * len(ids)}, schema=SCHEMA)


def ids(t):
    return sorted(r["id"] for r in t.to_arrow().to_pylist())


def magics(t) -> list:
    """Per vector of the latest snapshot: its magic number read in the byte order of its format."""
    out = []
    for e in t.index_manifest_entries(t.snapshot_manager.latest().index_manifest):
        data = t.io.read_bytes(t.paths.index_path(e.file_name))
        for r in e.dv_ranges:
            (size,) = struct.unpack_from(">i", data, r.offset)
            big, little = struct.unpack_from(">i", data, r.offset + 4)[0], struct.unpack_from("<i", data, r.offset + 4)[0]
            out.append(64 if little == dv.MAGIC_64 and r.length == size + 8 else 32 if big == dv.MAGIC else None)
    return out


def body64(payload: bytes) -> bytes:
    """A complete 64-bit vector (size, magic, ``payload``, valid CRC)."""
    body = struct.pack("<i", dv.MAGIC_64) + payload
    return struct.pack(">i", len(body)) + body + struct.pack(">I", zlib.crc32(body))


@pytest.mark.parametrize("name", sorted(BITMAPS))
def test_64_bit_vector_bytes_and_round_trip(name):
    bitmap = BITMAPS[name]
    blob = dv.serialize(bitmap, bitmap64=True)
    (size,) = struct.unpack_from(">i", blob, 0)
    body = blob[4:4 + size]
    assert len(blob) == 4 + size + 4 and struct.unpack_from(">I", blob, 4 + size)[0] == zlib.crc32(body)
    assert struct.unpack_from("<i", body, 0)[0] == 1681511377  # little-endian, unlike the 32-bit magic
    if bitmap:
        assert struct.unpack_from("<qi", body, 4) == (1, 0)  # one 32-bit bitmap, key 0
        assert body[16:] == roaring.serialize(bitmap)  # run-optimized, as Java's runLengthEncode
    else:
        assert body[4:] == struct.pack("<q", 0)
    assert dv.deserialize(blob, 0, len(blob), "x") == bitmap  # the index manifest records size + 8


def test_dispatch_by_magic_number():
    bitmap = BITMAPS["runs"]
    b32, b64 = dv.serialize(bitmap), dv.serialize(bitmap, bitmap64=True)
    data = b"\x01" + b32 + b64
    assert dv.deserialize(data, 1, len(b32) - 8, "f") == bitmap
    assert dv.deserialize(data, 1 + len(b32), len(b64), "f") == bitmap
    assert b32 != b64 and b32[4:8] == struct.pack(">i", dv.MAGIC) and b64[4:8] == struct.pack("<i", dv.MAGIC_64)


def test_java_dense_keys_and_sparse_keys_read():
    empty = BitMap().serialize()
    dense = struct.pack("<q", 3) + struct.pack("<i", 0) + roaring.serialize(BitMap([4, 9])) + \
        struct.pack("<i", 1) + empty + struct.pack("<i", 2) + empty
    assert roaring64.deserialize(dense, "f") == BitMap([4, 9])
    only_empty_high = struct.pack("<qi", 1, 3) + empty
    assert roaring64.deserialize(only_empty_high, "f") == BitMap()


@pytest.mark.parametrize("payload, message", [
    (struct.pack("<qi", 1, 1) + BitMap([1]).serialize(), "positions of 2\\^32 and above"),
    (struct.pack("<qi", 2, 0) + BitMap([1]).serialize() + struct.pack("<i", 0) + BitMap().serialize(),
     "keys not ascending"),
    (struct.pack("<q", 5), "bad 64-bit bitmap count 5"),
    (struct.pack("<qi", 1, 0) + BitMap([1]).serialize()[:-1], "truncated"),
    (struct.pack("<qi", 1, 0) + b"\x00" * 12, "not a serialized RoaringBitmap"),
    (roaring64.serialize(BitMap([1])) + b"\x00", "1 bytes after the 64-bit bitmap"),
])
def test_malformed_64_bit_vector_names_the_file(payload, message):
    blob = body64(payload)
    with pytest.raises(CorruptMetadataError, match=f"^deletion vector in idx-f at 0: .*{message}"):
        dv.deserialize(blob, 0, len(blob), "idx-f")


def test_corrupt_64_bit_vector_fails_naming_the_file():
    blob = bytearray(dv.serialize(BitMap([3, 4]), bitmap64=True))
    blob[14] ^= 0xFF
    with pytest.raises(CorruptMetadataError, match="^deletion vector in idx-file at 0: checksum mismatch"):
        dv.deserialize(bytes(blob), 0, len(blob), "idx-file")
    good = dv.serialize(BitMap([3, 4]), bitmap64=True)
    with pytest.raises(CorruptMetadataError, match=f"idx-file at 0: size {len(good) - 8}, expected 20"):
        dv.deserialize(good, 0, 20, "idx-file")
    wrong = bytearray(good)
    wrong[4:8] = struct.pack("<i", 12345)
    body = bytes(wrong[4:-4])
    wrong[-4:] = struct.pack(">I", zlib.crc32(body))
    with pytest.raises(CorruptMetadataError, match="idx-file at 0: bad magic number"):
        dv.deserialize(bytes(wrong), 0, len(wrong), "idx-file")


@pytest.mark.parametrize("bitmap64", [True, False], ids=["bitmap64", "32-bit"])
def test_append_table_deletes_write_the_options_format(catalog, bitmap64):
    options = ON if bitmap64 else {"deletion-vectors.enabled": "true"}
    t = catalog.create_table_from_arrow("db.a", SCHEMA, partition_keys=["dt"], options=options)
    t.write_arrow(batch(list(range(10)), "x"))
    t.write_arrow(batch(list(range(10, 20)), "y"))
    assert t.delete_where(P.or_(P.less_than("id", 3), P.equal("id", 15))) == 4
    assert t.delete_where(P.is_in("id", [4, 5])) == 2  # merges with the bucket's vector
    assert ids(t) == [i for i in range(20) if i >= 3 and i not in (4, 5, 15)]
    assert magics(t) == [64 if bitmap64 else 32] * 2
    entries = t.index_manifest_entries(t.snapshot_manager.latest().index_manifest)
    assert sorted(r.cardinality for e in entries for r in e.dv_ranges) == [1, 5]
    t.compact(full=True)  # compaction applies the 64-bit vectors
    assert ids(t) == [i for i in range(20) if i >= 3 and i not in (4, 5, 15)]


def test_switching_the_option_rewrites_old_vectors_in_the_new_format(catalog):
    t = catalog.create_table_from_arrow("db.a", SCHEMA, options={"deletion-vectors.enabled": "true", "bucket": "1",
                                                                 "bucket-key": "id"})
    t.write_arrow(batch(list(range(8))))
    t.write_arrow(batch(list(range(8, 12))))
    t.delete_where(P.equal("id", 1))
    assert magics(t) == [32]
    wide = t.copy({"deletion-vectors.bitmap64": "true"})
    wide.delete_where(P.equal("id", 9))
    assert magics(t) == [64, 64]  # the 32-bit vector read and written again as 64-bit
    assert ids(t) == ids(wide) == [i for i in range(12) if i not in (1, 9)]
    t.delete_where(P.equal("id", 2))  # and back: a 64-bit vector read, written 32-bit
    assert magics(t) == [32, 32] and ids(t) == [i for i in range(12) if i not in (1, 2, 9)]


def test_primary_key_table_compaction_writes_64_bit_vectors(catalog):
    t = catalog.create_table_from_arrow("db.pk", PK_SCHEMA, primary_keys=["id"], options={**ON, "bucket": "2"})
    t.write_arrow(pa.table({"id": list(range(40)), "v": ["a"] * 40}, schema=PK_SCHEMA))
    t.write_arrow(pa.table({"id": list(range(0, 40, 4)), "v": ["b"] * 10}, schema=PK_SCHEMA))
    t.write_arrow(pa.table({"id": [3, 99], "v": ["c", "c"]}, schema=PK_SCHEMA))
    found = magics(t)
    assert found and set(found) == {64}
    rows = {r["id"]: r["v"] for r in t.to_arrow().to_pylist()}
    assert len(rows) == 41 and rows[4] == "b" and rows[3] == "c" and rows[1] == "a"


def test_corrupt_64_bit_index_file_fails_the_read_naming_it(catalog):
    t = catalog.create_table_from_arrow("db.a", SCHEMA, options=ON)
    t.write_arrow(batch(list(range(5))))
    t.delete_where(P.equal("id", 2))
    (entry,) = t.index_manifest_entries(t.snapshot_manager.latest().index_manifest)
    path = t.paths.index_path(entry.file_name)
    data = bytearray(t.io.read_bytes(path))
    data[20] ^= 0x01  # inside the bitmap
    t.io.write_bytes(path, bytes(data))
    with pytest.raises(CorruptMetadataError, match=f"^deletion vector in {entry.file_name} at 1: checksum mismatch"):
        t.to_arrow()
