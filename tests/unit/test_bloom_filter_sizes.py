"""Bloom filter file indexes whose bit set is a whole number of bytes but not of 64-bit words,
as Java Paimon's BloomFilter64 sizes them (bits rounded up to a multiple of 8).

The expected bytes were printed by Java Paimon's BloomFilterFileIndex writer (1.0 bundle jar):
``BloomFilterFileIndexFactory().create(type, {items, fpp}).createWriter()``, values written, then
``serializedBytes()`` in hex.
"""

import pyarrow as pa
import pytest
from pyroaring import BitMap

from paimon_sql.data.types import AtomicType
from paimon_sql.exceptions import CorruptMetadataError
from paimon_sql.index import bloom_filter

INT = AtomicType("INT")
STRING = AtomicType("VARCHAR", (2147483647,))

# items=100, fpp=0.05 -> 623 bits -> 624 bits = 78 bytes (not a multiple of 8 bytes); INTs 3, -7, 2^30, 0
JAVA_INT_FILTER = bytes.fromhex(
    "00000004410000000000000000000060090000000000000000000000000000004000000000000000000000000000"
    "000008100100000000000000000000008400000000000000000000000000000400000000")
# items=10, fpp=0.01 -> 95 bits -> 96 bits = 12 bytes; strings 'héllo', 'paimon'
JAVA_STRING_FILTER = bytes.fromhex("00000007102812084004008000001001")


def test_reader_accepts_a_java_filter_of_78_bytes():
    reader = bloom_filter.BloomFilterIndex(INT, {}).reader(JAVA_INT_FILTER)
    for v in (3, -7, 1 << 30, 0):
        assert reader.visit("=", [v]) is None
    assert reader.visit("=", [5]) == BitMap()
    assert reader.visit("in", [5, 4]) == BitMap()
    assert reader.visit("in", [5, -7]) is None


def test_reader_accepts_a_java_string_filter_of_12_bytes():
    reader = bloom_filter.BloomFilterIndex(STRING, {}).reader(JAVA_STRING_FILTER)
    assert reader.visit("=", ["héllo"]) is None and reader.visit("=", ["paimon"]) is None
    assert reader.visit("=", ["nope"]) == BitMap()


def test_writer_sizes_and_fills_the_bit_set_as_java():
    assert bloom_filter.sizing(100, 0.05) == (4, 624)
    assert bloom_filter.sizing(1_000_000, 0.1) == (3, 4792536)  # Java: 599067 bytes of bits
    ints = bloom_filter.BloomFilterIndex(INT, {"items": "100", "fpp": "0.05"})
    assert ints.build(pa.array([3, -7, 1 << 30, 0, None], pa.int32())) == JAVA_INT_FILTER
    strings = bloom_filter.BloomFilterIndex(STRING, {"items": "10", "fpp": "0.01"})
    assert strings.build(pa.array(["héllo", "paimon"])) == JAVA_STRING_FILTER


def test_a_filter_without_bit_bytes_is_malformed():
    with pytest.raises(CorruptMetadataError, match="4 bytes"):
        bloom_filter.BloomFilterIndex(INT, {}).reader(b"\x00\x00\x00\x01")
