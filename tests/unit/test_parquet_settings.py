"""Parquet data files written as Paimon writes them (issue 46, bytes on disk): a dictionary only
where parquet-mr would keep one, Paimon's zstd level, and the ``parquet.*`` options Paimon hands
parquet-mr honoured (or refused, never ignored)."""

import glob
import os

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from support import parquet_leaves, parquet_page_rows

from paimon_sql.exceptions import InvalidOptionError
from paimon_sql.format.writer_settings import dictionary_columns

N = 200_000
SCHEMA = pa.schema([pa.field("id", pa.int64(), False), ("b", pa.float64()), ("c", pa.int32()), ("s", pa.string()),
                    ("flag", pa.bool_())])


def _rows(n: int = N) -> pa.Table:
    ids = np.arange(n, dtype=np.int64)
    return pa.table({"id": ids, "b": np.random.default_rng(7).random(n), "c": (ids % 100).astype(np.int32),
                     "s": pa.array(np.char.add("s-", (ids % 1000).astype(str))), "flag": ids % 2 == 0},
                    schema=SCHEMA)


def _data_files(table):
    return sorted(glob.glob(os.path.join(table.path, "**/data-*.parquet"), recursive=True))


def _dictionary(path: str) -> dict:
    meta = pq.ParquetFile(path).metadata
    return {meta.schema.column(i).path: meta.row_group(0).column(i).has_dictionary_page
            for i in range(meta.num_columns)}


def test_a_dictionary_only_where_it_pays():
    """parquet-mr's test after its first page: dictionary + indexes smaller than the plain values."""
    assert dictionary_columns({}, _rows()) == ["c", "s"]  # not the unique ids, random doubles, booleans


def test_sorted_keys_and_sequence_numbers_are_plain_low_cardinality_columns_keep_a_dictionary(catalog):
    t = catalog.create_table_from_arrow("db.t", SCHEMA, primary_keys=["id"], options={"bucket": "1"})
    t.write_arrow(_rows())
    (path,) = _data_files(t)
    assert _dictionary(path) == {"_KEY_id": False, "_SEQUENCE_NUMBER": False, "_VALUE_KIND": True, "id": False,
                                 "b": False, "c": True, "s": True, "flag": False}
    # with every column dictionary-encoded (pyarrow's default) this file was 3,175,116 bytes; now 2,119,933
    assert os.path.getsize(path) < 2_300_000
    assert t.to_arrow().sort_by("id").equals(_rows())


def test_append_files_too(catalog):
    t = catalog.create_table_from_arrow("db.t", SCHEMA)
    t.write_arrow(_rows())
    (path,) = _data_files(t)
    assert _dictionary(path) == {"id": False, "b": False, "c": True, "s": True, "flag": False}


@pytest.mark.parametrize("options, dictionaries", [
    ({"parquet.enable.dictionary": "false"}, set()),
    ({"parquet.enable.dictionary": "false", "parquet.enable.dictionary#s": "true"}, {"s"}),
    ({"parquet.enable.dictionary#c": "false"}, {"s"}),
    ({"parquet.enable.dictionary#id": "true"}, {"c", "s"}),  # asked for, but it does not pay
])
def test_parquet_enable_dictionary_as_parquet_mr_reads_it(catalog, options, dictionaries):
    t = catalog.create_table_from_arrow("db.t", SCHEMA, options=options)
    t.write_arrow(_rows())
    (path,) = _data_files(t)
    assert {c for c, has in _dictionary(path).items() if has} == dictionaries


def test_nested_leaves_are_named_as_the_file_names_them(catalog):
    schema = pa.schema([("id", pa.int64()), ("tags", pa.list_(pa.string())), ("m", pa.map_(pa.string(), pa.int64())),
                        ("r", pa.struct([("x", pa.string()), ("y", pa.float64())]))])
    n = 50_000
    ids = np.arange(n)
    rows = pa.table({"id": ids, "tags": [[f"t{i % 3}", f"u{i % 5}"] for i in ids],
                     "m": [[(f"k{i % 4}", int(i))] for i in ids], "r": [{"x": f"x{i % 7}", "y": i * 0.1} for i in ids]},
                    schema=schema)
    chosen = dictionary_columns({}, rows)
    assert chosen == ["tags.list.element", "m.key_value.key", "r.x"]
    t = catalog.create_table_from_arrow("db.t", schema)
    t.write_arrow(rows)
    (path,) = _data_files(t)
    assert set(chosen) <= set(parquet_leaves(path))
    assert {c for c, has in _dictionary(path).items() if has} == set(chosen)


@pytest.mark.parametrize("fmt", ["parquet", "avro"])
def test_file_compression_zstd_level_is_the_level_written(catalog, fmt):
    sizes = {}
    for level in ("1", "19"):
        t = catalog.create_table_from_arrow(f"db.t{level}", SCHEMA, options={
            "file.format": fmt, "file.compression.zstd-level": level})
        t.write_arrow(_rows(20_000))
        (path,) = glob.glob(os.path.join(t.path, f"**/data-*.{fmt}"), recursive=True)
        sizes[level] = os.path.getsize(path)
    assert sizes["19"] < sizes["1"]


def test_a_zstd_level_zstd_has_not_or_orc_cannot_write_is_refused(catalog):
    with pytest.raises(InvalidOptionError, match="^option 'file.compression.zstd-level' must be between "):
        catalog.create_table_from_arrow("db.t", SCHEMA, options={"file.compression.zstd-level": "23"})
    with pytest.raises(InvalidOptionError, match="must be 1 for orc files"):
        catalog.create_table_from_arrow("db.t", SCHEMA, options={"file.format": "orc",
                                                                 "file.compression.zstd-level": "3"})
    catalog.create_table_from_arrow("db.t", SCHEMA, options={"file.format": "orc", "file.compression.zstd-level": "1"})


def test_parquet_page_sizes_are_honoured(catalog):
    sizes = {}
    for name, options in {"default": {}, "small pages": {"parquet.page.size": "4096"},
                          "few rows a page": {"parquet.page.row.count.limit": "1000"}}.items():
        t = catalog.create_table_from_arrow(f"db.t{len(sizes)}", SCHEMA, options=options)
        t.write_arrow(_rows())
        (path,) = _data_files(t)
        sizes[name] = os.path.getsize(path)
    assert sizes["small pages"] > sizes["default"] and sizes["few rows a page"] > sizes["default"]


def test_pages_of_20k_rows_with_a_page_index_and_one_row_group_as_parquet_mr_writes(catalog):
    """parquet-mr's defaults, which Paimon's files have: pages of at most 20,000 rows, each column
    chunk with a column and offset index (readers skip pages by them), a row group per 128 MB."""
    t = catalog.create_table_from_arrow("db.t", SCHEMA, primary_keys=["id"], options={"bucket": "1"})
    t.write_arrow(_rows())
    (path,) = _data_files(t)
    meta = pq.ParquetFile(path).metadata
    assert meta.num_row_groups == 1  # rows were written in chunks of 256k rows a row group before
    chunks = [meta.row_group(0).column(i) for i in range(meta.num_columns)]
    assert all(c.has_column_index and c.has_offset_index for c in chunks)
    assert parquet_page_rows(path, "_KEY_id") == [20_000] * 10


@pytest.mark.parametrize("options", [{"parquet.block.size": "400000"},
                                     {"file.block-size": "400000 b", "parquet.block.size": "9"}])  # Paimon's wins
def test_parquet_block_size_cuts_row_groups_by_bytes(catalog, options):
    t = catalog.create_table_from_arrow("db.t", SCHEMA, options=options)
    t.write_arrow(_rows())
    (path,) = _data_files(t)
    meta = pq.ParquetFile(path).metadata
    sizes = [sum(meta.row_group(i).column(c).total_compressed_size for c in range(meta.num_columns))
             for i in range(meta.num_row_groups)]
    assert len(sizes) > 3 and max(sizes) < 440_000  # the first row group is cut by its size in memory
    assert t.to_arrow().equals(_rows())


def test_file_block_size_is_the_orc_stripe_size(catalog):
    import pyarrow.orc as paorc
    stripes = {}
    for options in ({}, {"file.block-size": "300 kb"}):
        t = catalog.create_table_from_arrow(f"db.t{len(stripes)}", SCHEMA, options=dict(options, **{"file.format": "orc"}))
        t.write_arrow(_rows())
        (path,) = glob.glob(os.path.join(t.path, "**/data-*.orc"), recursive=True)
        stripes[len(stripes)] = paorc.ORCFile(path).nstripes
    assert stripes[0] == 1 and stripes[1] > 2


@pytest.mark.parametrize("key, value", [("parquet.block.size", "big"), ("parquet.writer.version", "v2"),
                                        ("parquet.compression", "snappy"), ("parquet.page.size", "big")])
def test_parquet_keys_the_writer_cannot_follow_fail_the_write(catalog, key, value):
    t = catalog.create_table_from_arrow("db.t", SCHEMA, options={key: value})
    with pytest.raises(InvalidOptionError, match=f"^option '{key}' "):
        t.write_arrow(_rows(10))
    assert _data_files(t) == []


def test_parquet_mr_defaults_are_accepted(catalog):
    t = catalog.create_table_from_arrow("db.t", SCHEMA, options={
        "parquet.block.size": "134217728", "parquet.writer.version": "v1", "parquet.compression": "zstd",
        "parquet.compression.codec.zstd.level": "3"})
    t.write_arrow(_rows(10))
    assert t.to_arrow().num_rows == 10
