"""Damaged files: a data, manifest or deletion-vector file that can't be read fails the read with a
one-line error naming it, never fewer rows; a damaged file index only stops skipping (its data file
is read). tests/spark/test_damaged_files_sql.py covers the same through SQL."""

import os

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from support import SCHEMA

from paimon_sql.data import predicate as P
from paimon_sql.exceptions import CorruptDataFileError, CorruptMetadataError
from paimon_sql.format import parquet_bloom
from paimon_sql.format.file_format import read_file
from paimon_sql.index import file_index_format

INDEXED = {"file-index.bloom-filter.columns": "name", "file-index.bloom-filter.name.items": "1000"}


def batch(ids):
    return pa.table({"id": ids, "name": [f"n{i}" for i in ids], "value": [float(i) for i in ids],
                     "dt": ["d"] * len(ids)}, schema=SCHEMA)


def three_files(catalog, **options):
    t = catalog.create_table_from_arrow("db.t", SCHEMA, options={k: str(v) for k, v in options.items()})
    for k in range(3):
        t.write_arrow(batch(list(range(k * 10, k * 10 + 10))))
    return t


def data_path(t, f):
    return t.paths.data_file_path([], 0, f.file_name)


def first_file(t):
    """The file of the first commit (ids 0-9)."""
    (entry,) = t.new_scan().with_snapshot(1).plan_entries()
    return entry.file


def damage(path, how):
    """zero: truncate to 0 bytes; cut: keep the first half; tail: lose the last bytes (the footer's
    magic); missing: delete; flip: same size, the footer's length field changed."""
    data = open(path, "rb").read()
    if how == "missing":
        os.remove(path)
        return
    out = {"zero": b"", "cut": data[: len(data) // 2], "tail": data[:-10],
           "flip": data[:-7] + bytes([data[-7] ^ 0x7F]) + data[-6:]}[how]
    with open(path, "wb") as f:
        f.write(out)


def fresh(catalog):
    """The table loaded again (no metadata cached from before the damage)."""
    return catalog.get_table("db.t")


@pytest.mark.parametrize("how", ["zero", "cut", "tail", "missing"])
def test_damaged_data_file_fails_naming_it(catalog, how):
    t = three_files(catalog)
    f = first_file(t)
    damage(data_path(t, f), how)
    with pytest.raises(CorruptDataFileError, match=f"{f.file_name} (is missing|has \\d+ bytes)"):
        t.new_scan().to_arrow()


@pytest.mark.parametrize("fmt", ["orc", "avro"])
def test_damaged_file_of_every_format_fails(catalog, fmt):
    t = three_files(catalog, **{"file.format": fmt})
    f = first_file(t)
    damage(data_path(t, f), "zero")
    with pytest.raises(CorruptDataFileError, match=f.file_name):
        t.new_scan().to_arrow()


def test_undecodable_file_of_the_right_size_fails(catalog):
    t = three_files(catalog)
    f = first_file(t)
    damage(data_path(t, f), "flip")
    with pytest.raises(CorruptDataFileError, match=f"{f.file_name} cannot be read"):
        t.new_scan().to_arrow()


def test_row_count_other_than_the_manifest_fails(catalog):
    t = three_files(catalog)
    f = first_file(t)
    with pytest.raises(CorruptDataFileError, match=f"{f.file_name} holds 10 rows, its manifest entry says 11"):
        read_file(t.io, data_path(t, f), "parquet", file_size=f.file_size, row_count=11)


def test_damaged_file_with_deletion_vector_fails(catalog):
    t = three_files(catalog, **{"deletion-vectors.enabled": "true"})
    t.delete_where(P.equal("id", 3))  # the first file is now read through its deletion vector
    f = first_file(t)
    damage(data_path(t, f), "cut")
    with pytest.raises(CorruptDataFileError, match=f.file_name):
        t.new_scan().to_arrow()


def test_damaged_file_in_a_merged_section_fails(catalog):
    t = catalog.create_table_from_arrow("db.t", SCHEMA, primary_keys=["id"], options={"bucket": "1"})
    t.write_arrow(batch(list(range(10))))
    t.write_arrow(batch(list(range(5, 15))))  # overlaps: the two files are merged
    f = first_file(t)
    damage(data_path(t, f), "zero")
    with pytest.raises(CorruptDataFileError, match=f.file_name):
        t.new_scan().to_arrow()


# -- file indexes: damage stops skipping, never hides rows ---------------------------------------

def bloom_region(t, f):
    """(start, length) of the bloom filter of ``name`` in the file's ``.index`` file."""
    data = open(data_path(t, f) + ".index", "rb").read()
    return file_index_format.read_header(data, "x")["name"]["bloom-filter"]


def zero_bloom_bits(path, start, length):
    """Keep the container and the hash count, clear every bit: 'no value is here'."""
    data = bytearray(open(path, "rb").read())
    data[start + 4: start + length] = bytes(length - 4)
    open(path, "wb").write(bytes(data))


@pytest.mark.parametrize("how", ["zeroed", "zeroed-bits", "missing", "garbage"])
def test_damaged_index_file_is_read_past(catalog, how, caplog):
    t = three_files(catalog, **INDEXED)
    f = first_file(t)
    path = data_path(t, f) + ".index"
    size = os.path.getsize(path)
    if how == "zeroed":
        open(path, "wb").write(bytes(size))
    elif how == "zeroed-bits":
        zero_bloom_bits(path, *bloom_region(t, f))
    elif how == "missing":
        os.remove(path)
    else:
        open(path, "wb").write(b"garbage!" * (size // 8))
    assert t.new_scan().filter(P.equal("name", "n5")).to_arrow().column("id").to_pylist() == [5]
    assert t.new_scan().filter(P.equal("name", "n15")).to_arrow().column("id").to_pylist() == [15]
    if how != "zeroed-bits":  # cleared bits are also what an all-NULL column gives: no warning
        assert f.extra_files[0] in caplog.text


@pytest.mark.parametrize("fill", [b"\x00", b"\xff"])
@pytest.mark.parametrize("index", ["bloom-filter", "bitmap", "bsi"])
def test_index_body_overwritten_is_read_past(catalog, index, fill):
    column = "value" if index == "bsi" else "name"
    t = catalog.create_table_from_arrow("db.t", pa.schema([pa.field("id", pa.int64()), ("name", pa.string()),
                                                           ("value", pa.int64())]),
                                        options={f"file-index.{index}.columns": column,
                                                 "file-index.in-manifest-threshold": "1"})
    t.write_arrow(pa.table({"id": range(100), "name": [f"n{i}" for i in range(100)], "value": range(100)}))
    (f,) = [e.file for e in t.new_scan().plan_entries()]
    path = data_path(t, f) + ".index"
    data = bytearray(open(path, "rb").read())
    start, length = file_index_format.read_header(bytes(data), "x")[column][index]
    data[start: start + length] = fill * length
    open(path, "wb").write(bytes(data))
    literal = "n7" if column == "name" else 7
    assert t.new_scan().filter(P.equal(column, literal)).to_arrow().column("id").to_pylist() == [7]


def test_garbage_embedded_index_is_read_past(catalog, caplog):
    t = three_files(catalog, **INDEXED, **{"file-index.in-manifest-threshold": "10000",
                                           "manifest.compression": "none"})
    f = first_file(t)
    for name in os.listdir(f"{t.path}/manifest"):  # the blob sits uncompressed in its manifest
        path = f"{t.path}/manifest/{name}"
        data = open(path, "rb").read()
        if f.embedded_index in data:
            open(path, "wb").write(data.replace(f.embedded_index, b"\xee" * len(f.embedded_index)))
    t = fresh(catalog)
    assert t.new_scan().filter(P.equal("name", "n5")).to_arrow().column("id").to_pylist() == [5]
    assert f"embedded in {f.file_name}" in caplog.text


def test_zeroed_parquet_bloom_filter_is_read_past(catalog):
    t = three_files(catalog, **{"parquet.bloom.filter.enabled#name": "true"})
    path = data_path(t, first_file(t))
    chunk = pq.ParquetFile(path).metadata.row_group(0).column(1)
    data = bytearray(open(path, "rb").read())
    end = chunk.bloom_filter_offset + chunk.bloom_filter_length
    bits = parquet_bloom._header_num_bytes(bytes(data[chunk.bloom_filter_offset: end]))
    data[end - bits: end] = bytes(bits)  # the bit set ends the filter's region
    open(path, "wb").write(bytes(data))
    assert t.new_scan().filter(P.equal("name", "n5")).to_arrow().column("id").to_pylist() == [5]


# -- deletion vectors and manifests ---------------------------------------------------------------

def dv_table(catalog):
    t = three_files(catalog, **{"deletion-vectors.enabled": "true"})
    t.delete_where(P.equal("id", 3))
    (entry,) = t.index_manifest_entries(t.snapshot_manager.latest().index_manifest)
    return t, entry, t.paths.index_path(entry.file_name)


def test_missing_deletion_vector_file_fails_naming_it(catalog):
    t, entry, path = dv_table(catalog)
    os.remove(path)
    with pytest.raises(CorruptMetadataError, match=f"{entry.file_name} is missing"):
        fresh(catalog).new_scan().to_arrow()


def test_deletion_vector_file_of_another_size_fails(catalog):
    t, entry, path = dv_table(catalog)
    with open(path, "ab") as out:
        out.write(b"\x00" * 8)
    with pytest.raises(CorruptMetadataError, match=f"{entry.file_name} has \\d+ bytes"):
        fresh(catalog).new_scan().to_arrow()


def avro_header_only(path):
    """Cut an Avro file after its header: it still decodes, to no records."""
    data = open(path, "rb").read()
    sync = data[-16:]
    open(path, "wb").write(data[: data.index(sync) + 16])


def test_cut_manifest_fails_naming_it(catalog):
    t = three_files(catalog)
    snap = t.snapshot_manager.latest()
    meta = t.manifest_list(snap.delta_manifest_list)[0]
    avro_header_only(t.paths.manifest_path(meta.file_name))
    with pytest.raises(CorruptMetadataError, match=f"manifest {meta.file_name} holds 0 entries"):
        fresh(catalog).new_scan().to_arrow()


def test_manifest_cut_inside_a_compressed_block_fails_naming_it(catalog):
    t = three_files(catalog)
    meta = t.manifest_list(t.snapshot_manager.latest().delta_manifest_list)[0]
    path = t.paths.manifest_path(meta.file_name)
    data = t.io.read_bytes(path)
    with open(path, "wb") as f:  # the last bytes of its zstd block gone
        f.write(data[:-20])
    with pytest.raises(CorruptMetadataError, match=meta.file_name):
        fresh(catalog).new_scan().to_arrow()


def test_cut_or_missing_manifest_list_fails_naming_it(catalog):
    t = three_files(catalog)
    name = t.snapshot_manager.latest().base_manifest_list
    avro_header_only(t.paths.manifest_path(name))
    with pytest.raises(CorruptMetadataError, match=f"manifest list {name} has \\d+ bytes"):
        fresh(catalog).new_scan().to_arrow()
    os.remove(t.paths.manifest_path(name))
    with pytest.raises(CorruptMetadataError, match=f"manifest list {name} is missing"):
        fresh(catalog).new_scan().to_arrow()


def test_missing_manifest_fails_naming_it(catalog):
    t = three_files(catalog)
    meta = t.manifest_list(t.snapshot_manager.latest().delta_manifest_list)[0]
    os.remove(t.paths.manifest_path(meta.file_name))
    with pytest.raises(CorruptMetadataError, match=f"manifest {meta.file_name} is missing"):
        fresh(catalog).new_scan().to_arrow()
