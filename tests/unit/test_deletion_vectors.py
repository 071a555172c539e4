"""Deletion vectors: the file format, reading with them, and deleting rows of append tables."""

import struct
import zlib

import pyarrow as pa
import pytest
from pyroaring import BitMap
from support import SCHEMA

from paimon_sql.data import predicate as P
from paimon_sql.exceptions import CorruptMetadataError
from paimon_sql.index import deletion_vector as dv


def batch(ids, dt="d"):
    return pa.table({"id": ids, "name": [f"n{i}" for i in ids], "value": [float(i) for i in ids],
                     "dt": [dt] * len(ids)}, schema=SCHEMA)


def ids(t):
    return sorted(r["id"] for r in t.to_arrow().to_pylist())


def test_vector_bytes_follow_the_spec():
    bitmap = BitMap([1, 5, 100000])
    blob = dv.serialize(bitmap)
    size, magic = struct.unpack_from(">ii", blob, 0)
    body = blob[4:4 + size]
    assert magic == 1581511376 and body[4:] == bitmap.serialize()  # RoaringBitmap portable format
    assert struct.unpack_from(">I", blob, 4 + size)[0] == zlib.crc32(body)
    assert len(blob) == 4 + size + 4
    assert dv.deserialize(blob, 0, size, "x") == bitmap


def test_corrupt_vector_fails_naming_the_file():
    blob = bytearray(dv.serialize(BitMap([3])))
    blob[10] ^= 0xFF
    with pytest.raises(CorruptMetadataError, match="in idx-file.*checksum"):
        dv.deserialize(bytes(blob), 0, len(blob) - 8, "idx-file")


@pytest.mark.parametrize("with_dv", [True, False], ids=["deletion-vectors", "copy-on-write"])
def test_delete_where_on_append_table(catalog, with_dv):
    options = {"deletion-vectors.enabled": "true"} if with_dv else {}
    t = catalog.create_table_from_arrow("db.a", SCHEMA, partition_keys=["dt"], options=options)
    t.write_arrow(batch(list(range(10)), "x"))
    t.write_arrow(batch(list(range(10, 20)), "y"))
    files_before = {e.file.file_name for e in t.new_scan().plan_entries()}
    assert t.delete_where(P.or_(P.less_than("id", 3), P.equal("id", 15))) == 4
    assert ids(t) == [i for i in range(20) if i >= 3 and i != 15]
    files_after = {e.file.file_name for e in t.new_scan().plan_entries()}
    snap = t.snapshot_manager.latest()
    if with_dv:
        assert files_after == files_before  # nothing rewritten
        entries = t.index_manifest_entries(snap.index_manifest)
        assert {e.index_type for e in entries} == {"DELETION_VECTORS"} and len(entries) == 2
    else:
        assert len(files_after & files_before) == 0  # both files touched, both rewritten
    # a second delete in the same bucket merges with the existing vector
    assert t.delete_where(P.is_in("id", [4, 5])) == 2
    assert ids(t) == [i for i in range(20) if i >= 3 and i not in (4, 5, 15)]
    if with_dv:
        assert len(t.index_manifest_entries(t.snapshot_manager.latest().index_manifest)) == 2
    assert sorted(r["id"] for r in t.new_scan().with_snapshot(2).to_arrow().to_pylist()) == list(range(20))


def test_corrupt_index_file_fails_the_read(catalog):
    t = catalog.create_table_from_arrow("db.a", SCHEMA, options={"deletion-vectors.enabled": "true"})
    t.write_arrow(batch(list(range(5))))
    t.delete_where(P.equal("id", 2))
    (entry,) = t.index_manifest_entries(t.snapshot_manager.latest().index_manifest)
    path = t.paths.index_path(entry.file_name)
    data = bytearray(t.io.read_bytes(path))
    data[-6] ^= 0x01
    t.io.write_bytes(path, bytes(data))
    with pytest.raises(CorruptMetadataError, match=entry.file_name):
        t.to_arrow()
