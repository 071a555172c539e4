"""File indexes: byte layouts against seed 003 §3.9.6, Java semantics of the hashes, skipping files,
and the property that an index never changes a query's rows."""

import datetime as dt
import os
import struct
from decimal import Decimal

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import xxhash
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pyroaring import BitMap

from paimon_sql.data import predicate as P
from paimon_sql.data.types import AtomicType
from paimon_sql.exceptions import CorruptMetadataError, InvalidOptionError
from paimon_sql.index import bitmap, bloom_filter, bsi, file_index_format, roaring

STRING, INT, BIGINT = AtomicType("VARCHAR", (2147483647,)), AtomicType("INT"), AtomicType("BIGINT")


def java_long_hash(key: int) -> int:
    """Thomas Wang's hash with Java long semantics, in plain Python ints (an independent reference)."""
    mask = (1 << 64) - 1

    def signed(x):
        x &= mask
        return x - (1 << 64) if x >> 63 else x
    k = signed(key)
    k = signed(~k + (k << 21))
    k = signed(k ^ (k >> 24))
    k = signed(k + (k << 3) + (k << 8))
    k = signed(k ^ (k >> 14))
    k = signed(k + (k << 2) + (k << 4))
    k = signed(k ^ (k >> 28))
    return signed(k + (k << 31))


def java_bloom_positions(h: int, k: int, num_bits: int):
    """BloomFilter64.addHash in Java int arithmetic, in plain Python."""
    def i32(x):
        x &= 0xFFFFFFFF
        return x - (1 << 32) if x >> 31 else x
    h1, h2 = i32(h), i32((h & ((1 << 64) - 1)) >> 32)
    out = []
    for i in range(1, k + 1):
        c = i32(h1 + i * h2)
        out.append((~c if c < 0 else c) % num_bits)
    return out


# -- container ------------------------------------------------------------------------------------

def test_container_layout_follows_the_seed():
    blob = file_index_format.write({"c": {"bitmap": b"\x01\x02", "bsi": b"\x03"}, "d": {"bloom-filter": b"\x04"}})
    names = b"\x00\x01c" + b"\x00\x06bitmap" + b"\x00\x03bsi" + b"\x00\x01d" + b"\x00\x0cbloom-filter"
    head_length = 8 + 4 + 4 + 4 + 3 * 8 + 2 * 4 + 4 + len(names)
    expected = (struct.pack(">qii", 1493475289347502, 1, head_length) + struct.pack(">i", 2)
                + b"\x00\x01c" + struct.pack(">i", 2)
                + b"\x00\x06bitmap" + struct.pack(">ii", head_length, 2)
                + b"\x00\x03bsi" + struct.pack(">ii", head_length + 2, 1)
                + b"\x00\x01d" + struct.pack(">i", 1)
                + b"\x00\x0cbloom-filter" + struct.pack(">ii", head_length + 3, 1)
                + struct.pack(">i", 0) + b"\x01\x02\x03\x04")
    assert blob == expected
    assert file_index_format.read_header(blob, "f") == {
        "c": {"bitmap": (head_length, 2), "bsi": (head_length + 2, 1)}, "d": {"bloom-filter": (head_length + 3, 1)}}


def test_java_modified_utf8_names():
    assert file_index_format.java_utf("a\x00é") == b"\x00\x05a\xc0\x80\xc3\xa9"
    assert file_index_format.java_utf("\U0001F600") == b"\x00\x06\xed\xa0\xbd\xed\xb8\x80"  # CESU-8 surrogates
    blob = file_index_format.write({"m##\U0001F600": {"bitmap": b""}})
    assert list(file_index_format.read_header(blob, "f")) == ["m##\U0001F600"]


def test_corrupt_container_is_named():
    with pytest.raises(CorruptMetadataError, match="x.index.*magic"):
        file_index_format.read_header(b"\x00" * 32, "x.index")
    blob = file_index_format.write({"c": {"bitmap": b"\x01\x02"}})
    with pytest.raises(CorruptMetadataError, match="x.index"):
        file_index_format.read_header(blob[:30], "x.index")


# -- bloom filter ---------------------------------------------------------------------------------

def test_bloom_filter_sizing_and_numeric_hash_match_java():
    assert bloom_filter.sizing(100, 0.01) == (7, 960)  # 958 bits rounded up to a multiple of 8
    assert bloom_filter.sizing(1_000_000, 0.1) == (3, 4792536)
    keys = np.array([0, 1, -1, 42, 2**31 - 1, -2**63, 2**63 - 1, 123456789012], dtype=np.int64)
    assert bloom_filter.thomas_wang(keys).tolist() == [java_long_hash(int(k)) for k in keys]


def test_bloom_filter_bits_match_java_positions():
    index = bloom_filter.BloomFilterIndex(INT, {"items": "50", "fpp": "0.05"})
    values = [3, -7, 1 << 30, 0]
    data = index.build(pa.array(values + [None], pa.int32()))
    k, num_bits = bloom_filter.sizing(50, 0.05)
    assert struct.unpack(">i", data[:4])[0] == k and len(data) == 4 + num_bits // 8
    expected = bytearray(num_bits // 8)
    for v in values:
        for pos in java_bloom_positions(java_long_hash(v), k, num_bits):
            expected[pos // 8] |= 1 << (pos % 8)  # BloomFilter64.BitSet: byte pos // 8, bit pos % 8
    assert data[4:] == bytes(expected)


def test_bloom_filter_strings_use_xxhash64():
    assert xxhash.xxh64_intdigest(b"") == 0xEF46DB3751D8E999
    index = bloom_filter.BloomFilterIndex(STRING, {"items": "10", "fpp": "0.01"})
    data = index.build(pa.array(["héllo"]))
    k, num_bits = bloom_filter.sizing(10, 0.01)
    expected = bytearray(num_bits // 8)
    for pos in java_bloom_positions(xxhash.xxh64_intdigest("héllo".encode()), k, num_bits):
        expected[pos // 8] |= 1 << (pos % 8)
    assert data[4:] == bytes(expected)
    reader = index.reader(data)
    assert reader.visit("=", ["héllo"]) is None and reader.visit("=", ["nope"]) == BitMap()
    assert reader.visit("in", ["x", "héllo"]) is None and reader.visit("<", ["a"]) is None


# -- bitmap ---------------------------------------------------------------------------------------

def test_portable_roaring_format():
    assert BitMap([0, 3]).serialize().hex() == "3a30000001000000" "00000100" "10000000" "00000300"
    many = BitMap(range(0, 200000, 2)) | BitMap(range(300000, 400000))
    blob = roaring.serialize(many) + b"tail"
    assert roaring.deserialize_at(blob, 0) == (many, len(blob) - 4)


def test_bitmap_layout_follows_the_seed():
    data = bitmap.BitmapIndex(STRING, {}).build(pa.array(["a", "b", None, "a", "c", None]))
    nulls, a = BitMap([2, 5]).serialize(), BitMap([0, 3]).serialize()
    expected = (b"\x01" + struct.pack(">ii?i", 6, 3, True, 0)
                + struct.pack(">i", 1) + b"a" + struct.pack(">i", len(nulls))
                + struct.pack(">i", 1) + b"b" + struct.pack(">i", -1 - 1)  # single row: -1 - position
                + struct.pack(">i", 1) + b"c" + struct.pack(">i", -1 - 4)
                + nulls + a)
    assert data == expected
    ints = bitmap.BitmapIndex(INT, {}).build(pa.array([7, 7, None], pa.int32()))
    assert ints == b"\x01" + struct.pack(">ii?i", 3, 1, True, -1 - 2) + struct.pack(">ii", 7, 0) + \
        BitMap([0, 1]).serialize()


def test_bitmap_answers():
    r = bitmap.BitmapIndex(STRING, {}).reader(bitmap.BitmapIndex(STRING, {}).build(
        pa.array(["a", "b", None, "a", "c", None])))
    assert r.visit("=", ["a"]) == BitMap([0, 3]) and r.visit("=", ["zz"]) == BitMap()
    assert r.visit("in", ["b", "c"]) == BitMap([1, 4]) and r.visit("is_null", []) == BitMap([2, 5])
    assert r.visit("is_not_null", []) == BitMap([0, 1, 3, 4]) and r.visit("not_in", ["a"]) == BitMap([1, 2, 4, 5])
    assert r.visit(">", ["a"]) is None
    later = bitmap.BitmapIndex(STRING, {}).reader(b"\x02" + b"\x00" * 12)
    assert later.visit("=", ["a"]) is None  # V2 (newer Paimon): not used, the file is read


# -- BSI ------------------------------------------------------------------------------------------

def test_bsi_layout_follows_the_seed():
    data = bsi.BsiIndex(BIGINT, {}).build(pa.array([5, -3, None, 0], pa.int64()))
    s = roaring.serialize
    positive = struct.pack(">Bqq", 1, 0, 5) + s(BitMap([0, 3])) + struct.pack(">i", 3) + \
        s(BitMap([0])) + s(BitMap()) + s(BitMap([0]))
    negative = struct.pack(">Bqq", 1, 0, 3) + s(BitMap([1])) + struct.pack(">i", 2) + s(BitMap([1])) + s(BitMap([1]))
    assert data == struct.pack(">Bi", 1, 4) + b"\x01" + positive + b"\x01" + negative


@settings(max_examples=60, deadline=None)
@given(st.lists(st.one_of(st.none(), st.integers(-300, 300)), min_size=1, max_size=80),
       st.integers(-320, 320), st.sampled_from(["=", "!=", "<", "<=", ">", ">="]))
def test_bsi_compares_exactly(values, literal, op):
    r = bsi.BsiIndex(INT, {}).reader(bsi.BsiIndex(INT, {}).build(pa.array(values, pa.int32())))
    py = {"=": lambda v: v == literal, "!=": lambda v: v != literal, "<": lambda v: v < literal,
          "<=": lambda v: v <= literal, ">": lambda v: v > literal, ">=": lambda v: v >= literal}[op]
    assert list(r.visit(op, [literal])) == [i for i, v in enumerate(values) if v is not None and py(v)]
    assert list(r.visit("is_null", [])) == [i for i, v in enumerate(values) if v is None]


def test_bsi_dates_timestamps_decimals():
    day = AtomicType("DATE")
    r = bsi.BsiIndex(day, {}).reader(bsi.BsiIndex(day, {}).build(
        pa.array([dt.date(2024, 1, 1), dt.date(1960, 5, 5), None])))
    assert list(r.visit("<", [dt.date(2000, 1, 1)])) == [1] and list(r.visit("=", [dt.date(2024, 1, 1)])) == [0]
    ts = AtomicType("TIMESTAMP", (3,))
    r = bsi.BsiIndex(ts, {}).reader(bsi.BsiIndex(ts, {}).build(
        pa.array([dt.datetime(2024, 1, 1, 12), dt.datetime(2024, 1, 2)], pa.timestamp("ms"))))
    assert list(r.visit(">=", [dt.datetime(2024, 1, 1, 13)])) == [1]
    dec = AtomicType("DECIMAL", (10, 2))
    r = bsi.BsiIndex(dec, {}).reader(bsi.BsiIndex(dec, {}).build(
        pa.array([Decimal("1.50"), Decimal("-2.25"), Decimal("9.99")], pa.decimal128(10, 2))))
    assert list(r.visit(">", [Decimal("1.5")])) == [2] and list(r.visit("<", [Decimal("0")])) == [1]
    assert r.visit("=", [Decimal("1.005")]) is None  # not a value of DECIMAL(10, 2): can't tell


# -- options and tables ---------------------------------------------------------------------------

SCHEMA = pa.schema([("id", pa.int64()), ("s", pa.string()), ("c", pa.string()), ("n", pa.int32()),
                    ("m", pa.map_(pa.string(), pa.string()))])
INDEXED = {"file-index.bloom-filter.columns": "s,m[k]", "file-index.bloom-filter.s.items": "500",
           "file-index.bitmap.columns": "c", "file-index.bsi.columns": "n"}


def rows(start, count, seed):
    rng = np.random.default_rng(seed)
    ids = np.arange(start, start + count)
    return pa.table({"id": ids, "s": [f"s{i}" for i in rng.permutation(ids)],
                     "c": [["x", "y", "z", None][i % 4] for i in range(count)] if seed % 2 else ["w"] * count,
                     "n": pa.array(rng.integers(-1000, 1000, count), pa.int32()),
                     "m": pa.array([[("k", f"v{i}")] for i in ids], SCHEMA.field("m").type)}, schema=SCHEMA)


@pytest.mark.parametrize("options, message", [
    ({"file-index.bloom-filter.columns": "flag"}, "bloom-filter file index does not support column flag of type BOOL"),
    ({"file-index.bitmap.columns": "d"}, "bitmap file index does not support column d of type DECIMAL"),
    ({"file-index.bsi.columns": "s"}, "bsi file index does not support column s"),
    ({"file-index.range-bitmap.columns": "s"}, "file index type 'range-bitmap' is not supported"),
    ({"file-index.bitmap.columns": "nope"}, "no column nope"),
    ({"file-index.bitmap.columns": "s[k]"}, r"s\[k\] needs s to be a MAP"),
    ({"file-index.bloom-filter.columns": "s", "file-index.bloom-filter.x.fpp": "0.1"}, "column x is not in"),
    ({"file-index.bloom-filter.columns": "s", "file-index.bloom-filter.s.fpp": "2"}, "fpp"),
])
def test_unsupported_indexes_rejected_at_create(catalog, options, message):
    schema = pa.schema([("s", pa.string()), ("flag", pa.bool_()), ("d", pa.decimal128(10, 2))])
    with pytest.raises(InvalidOptionError, match=message):
        catalog.create_table_from_arrow("db.bad", schema, options=options)


def test_small_indexes_embedded_large_ones_in_index_files(catalog):
    small = catalog.create_table_from_arrow("db.small", SCHEMA, options={"file-index.bitmap.columns": "c"})
    small.write_arrow(rows(0, 20, 1))
    (f,) = [e.file for e in small.new_scan().plan_entries()]
    assert f.embedded_index and f.extra_files == ()
    assert list(file_index_format.read_header(f.embedded_index, "x")) == ["c"]
    big = catalog.create_table_from_arrow("db.big", SCHEMA, options=INDEXED)
    big.write_arrow(rows(0, 200, 1))
    (f,) = [e.file for e in big.new_scan().plan_entries()]
    assert f.embedded_index is None and f.extra_files == (f.file_name + ".index",)
    path = big.paths.data_file_path([], 0, f.file_name) + ".index"
    header = file_index_format.read_header(big.io.read_bytes(path), "x")
    assert header.keys() == {"s", "m##k", "c", "n"} and set(header["s"]) == {"bloom-filter"}


def _file_count(table, predicate):
    reader = table.new_scan().filter(predicate).reader()
    return sum(len(reader.files_to_read(s)) for s in table.new_scan().filter(predicate).plan().splits)


def test_point_query_skips_files(catalog):
    t = catalog.create_table_from_arrow("db.t", SCHEMA, options=INDEXED)
    for k in range(6):  # ids interleaved across files: min/max stats can't prune on s
        t.write_arrow(rows(k * 100, 100, k))
    assert _file_count(t, None) == 6
    assert _file_count(t, P.equal("s", "s250")) == 1
    assert t.new_scan().filter(P.equal("s", "s250")).to_arrow().column("s").to_pylist() == ["s250"]
    assert _file_count(t, P.equal("s", "nothing")) <= 1  # 500 items at fpp 0.1
    assert _file_count(t, P.equal("c", "y")) == 3 and _file_count(t, P.equal("c", "w")) == 3
    assert _file_count(t, P.is_null("c")) == 3 and _file_count(t, P.and_(P.equal("c", "w"), P.equal("s", "s150"))) == 0
    assert _file_count(t, P.or_(P.equal("s", "s150"), P.equal("s", "s450"))) == 2
    assert _file_count(t, P.greater_than("n", 5000)) == 0  # BSI: above every value


def test_embedded_indexes_prune_at_planning(catalog):
    t = catalog.create_table_from_arrow("db.t", SCHEMA, options={"file-index.bitmap.columns": "c"})
    for k in range(4):  # every file spans a..z: stats can't tell which holds "w"
        t.write_arrow(rows(k * 10, 10, k).set_column(2, "c", pa.array(["a", "z"] + ["w" if k % 2 else "m"] * 8)))
    plan = t.new_scan().filter(P.equal("c", "w")).plan()
    assert (plan.stats.files_after_stats, plan.stats.files_planned) == (4, 2)
    assert sorted(t.new_scan().filter(P.equal("c", "w")).to_arrow().column("id").to_pylist()) == \
        list(range(12, 20)) + list(range(32, 40))


def test_corrupt_index_file_is_ignored_naming_it(catalog, caplog):
    """A damaged index rules nothing out (tests/unit/test_damaged_files.py has the other cases)."""
    t = catalog.create_table_from_arrow("db.t", SCHEMA, options=INDEXED)
    t.write_arrow(rows(0, 100, 1))
    (f,) = [e.file for e in t.new_scan().plan_entries()]
    path = t.paths.data_file_path([], 0, f.file_name) + ".index"
    t.io.write_bytes(path, b"garbage" * 10)
    assert t.new_scan().filter(P.equal("s", "s1")).to_arrow().num_rows == 1
    assert f.extra_files[0] in caplog.text


def test_read_enabled_false_ignores_indexes(catalog):
    t = catalog.create_table_from_arrow("db.t", SCHEMA, options={**INDEXED, "file-index.read.enabled": "false"})
    t.write_arrow(rows(0, 100, 1))
    t.write_arrow(rows(100, 100, 2))
    assert _file_count(t, P.equal("s", "s150")) == 2


def test_aborted_write_removes_index_files(catalog, tmp_path):
    t = catalog.create_table_from_arrow("db.t", SCHEMA, options=INDEXED)
    w = t.new_write()
    w.write_arrow(rows(0, 100, 1))
    messages = w.prepare_commit()
    t.new_commit().abort(messages)
    left = [n for _, _, names in os.walk(t.path) for n in names if n.startswith("data-")]
    assert left == []


def test_compaction_indexes_its_output(catalog):
    options = {**INDEXED, "bucket": "1", "file-index.bloom-filter.columns": "s"}
    schema = pa.schema([pa.field("id", pa.int64(), False)] + list(SCHEMA)[1:4])
    t = catalog.create_table_from_arrow("db.pk", schema, primary_keys=["id"],
                                        options={k: v for k, v in options.items() if "m[" not in v})
    for k in range(3):
        t.write_arrow(rows(k * 50, 100, k).select(schema.names).cast(schema))
    t.compact(full=True)
    files = [e.file for e in t.new_scan().plan_entries()]
    assert len(files) == 1 and files[0].extra_files == (files[0].file_name + ".index",)


def test_parquet_bloom_filters(catalog):
    t = catalog.create_table_from_arrow("db.t", SCHEMA, options={
        "parquet.bloom.filter.enabled#s": "true", "parquet.bloom.filter.fpp#s": "0.01"})
    for k in range(4):
        t.write_arrow(rows(k * 100, 100, k))
    f = t.new_scan().plan_entries()[0].file
    meta = pq.read_metadata(t.paths.data_file_path([], 0, f.file_name))
    assert meta.row_group(0).column(1).bloom_filter_offset is not None  # written for s
    assert meta.row_group(0).column(0).bloom_filter_offset is None  # not for id
    assert _file_count(t, P.equal("s", "s123")) == 1
    assert t.new_scan().filter(P.equal("s", "s123")).to_arrow().column("s").to_pylist() == ["s123"]


QUERIES = st.one_of(
    st.builds(P.equal, st.just("s"), st.sampled_from(["s1", "s77", "s150", "s399", "none"])),
    st.builds(P.equal, st.just("c"), st.sampled_from(["x", "y", "w", "q"])),
    st.builds(P.not_equal, st.just("c"), st.sampled_from(["x", "w"])),
    st.builds(P.is_in, st.just("c"), st.lists(st.sampled_from(["x", "z", "w", "q"]), min_size=1, max_size=3)),
    st.builds(P.is_null, st.just("c")), st.builds(P.is_not_null, st.just("c")),
    st.builds(lambda op, v: P.Predicate(op, "n", (v,)), st.sampled_from(["<", "<=", ">", ">=", "=", "!="]),
              st.integers(-1100, 1100)),
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(QUERIES, min_size=1, max_size=3), st.sampled_from(["and", "or"]))
def test_indexes_never_change_rows(indexed_pair, queries, combine):
    plain, indexed = indexed_pair
    predicate = queries[0] if len(queries) == 1 else P.Predicate(combine, children=tuple(queries))
    expected = sorted(plain.new_scan().filter(predicate).to_arrow().column("id").to_pylist())
    assert sorted(indexed.new_scan().filter(predicate).to_arrow().column("id").to_pylist()) == expected
    assert sorted(indexed.new_scan().filter(P.not_(predicate)).to_arrow().column("id").to_pylist()) == \
        sorted(plain.new_scan().filter(P.not_(predicate)).to_arrow().column("id").to_pylist())


@pytest.fixture(scope="module")
def indexed_pair(tmp_path_factory):
    from paimon_sql.catalog import load_catalog
    cat = load_catalog(str(tmp_path_factory.mktemp("wh")))
    cat.create_database("db")
    plain = cat.create_table_from_arrow("db.plain", SCHEMA)
    indexed = cat.create_table_from_arrow("db.indexed", SCHEMA,
                                          options={**INDEXED, "file-index.bloom-filter.s.items": "50"})
    for k in range(4):
        for t in (plain, indexed):
            t.write_arrow(rows(k * 100, 100, k))
    return plain, indexed


def test_rewrite_file_index_after_options_change(catalog):
    from dataclasses import replace
    t = catalog.create_table_from_arrow("db.t", SCHEMA)
    for k in range(3):
        t.write_arrow(rows(k * 100, 100, k))
    assert _file_count(t, P.equal("s", "s150")) == 2  # no index yet: only stats prune (s200..s299)
    schema = replace(t.schema, id=t.schema.id + 1, options={**t.schema.options, **INDEXED})
    t.schema_manager.commit(schema)
    t = catalog.get_table("db.t")
    before = t.snapshot_manager.latest().id
    sid = t.rewrite_file_index()
    snap = t.snapshot_manager.latest()
    assert sid == snap.id == before + 1 and snap.commit_kind == "COMPACT"
    files = [e.file for e in t.new_scan().plan_entries()]
    assert len(files) == 3 and all(f.extra_files == (f.file_name + ".index",) for f in files)
    assert _file_count(t, P.equal("s", "s150")) == 1
    assert t.new_scan().filter(P.equal("s", "s150")).to_arrow().column("s").to_pylist() == ["s150"]
    assert t.new_scan().with_snapshot(before).to_arrow().num_rows == 300  # the old snapshot still reads
    again = t.rewrite_file_index()  # as Java: an index in its own file is written anew, under a new name
    assert again == sid + 1
    assert all(e.file.extra_files == (e.file.file_name + "-1.index",) for e in t.new_scan().plan_entries())
    assert t.new_scan().with_snapshot(sid).filter(P.equal("s", "s150")).to_arrow().num_rows == 1
