"""DECIMAL(p > 18) and TIMESTAMP(p > 3) in a BinaryRow as Java Paimon 1.0 lays them out: the row bytes,
``BinaryRow.hashCode()`` and ``KeyAndBucketExtractor.bucket(hash, 7)`` below were printed by the Paimon
1.0 bundle jar (a projection of ``GenericRow.of(decimal, 7)`` to a BinaryRow of (DECIMAL, INT))."""

from decimal import Decimal

import pyarrow as pa
import pytest

from paimon_sql.data import binary_row
from paimon_sql.data.types import parse_type

# unscaled value, hash, bucket of 7, row bytes (without arity): identical for DECIMAL(19, 2) and (38, 3)
JAVA = [
    (0, -653599726, 3, "00000000000000000100000018000000070000000000000000000000000000000000000000000000"),
    (1, 1972399408, 0, "00000000000000000100000018000000070000000000000001000000000000000000000000000000"),
    (-1, -1610781272, 2, "000000000000000001000000180000000700000000000000ff000000000000000000000000000000"),
    (-128, 2102988318, 4, "00000000000000000100000018000000070000000000000080000000000000000000000000000000"),
    (128, -1580372244, 3, "00000000000000000200000018000000070000000000000000800000000000000000000000000000"),
    (-129, -937109009, 4, "000000000000000002000000180000000700000000000000ff7f0000000000000000000000000000"),
    (-32768, -1094088231, 5, "00000000000000000200000018000000070000000000000080000000000000000000000000000000"),
    (32767, 392282420, 5, "0000000000000000020000001800000007000000000000007fff0000000000000000000000000000"),
    (-9223372036854775808, 1344438608, 2,
     "00000000000000000800000018000000070000000000000080000000000000000000000000000000"),
    (None, 98186438, 0, "00010000000000000000000018000000070000000000000000000000000000000000000000000000"),
]
JAVA_38_ONLY = [
    (1234567890123456789012, 1992988932, 4,
     "00000000000000000900000018000000070000000000000042ed123b0bd8203a1400000000000000"),
    (-99999999999999999999999999999999999999, -1198713516, 0,
     "000000000000000010000000180000000700000000000000b4c4b357a5793b85f675ddc000000001"),
    (99999999999999999999999999999999999999, 1187215320, 4,
     "0000000000000000100000001800000007000000000000004b3b4ca85a86c47a098a223fffffffff"),
]
CASES = [((19, 2), *c) for c in JAVA] + [((38, 3), *c) for c in JAVA + JAVA_38_ONLY]


def _value(unscaled, scale):
    return None if unscaled is None else Decimal(f"{unscaled}E-{scale}")


@pytest.mark.parametrize("ps, unscaled, java_hash, java_bucket, java_bytes", CASES)
def test_one_row_matches_java(ps, unscaled, java_hash, java_bucket, java_bytes):
    types = [parse_type(f"DECIMAL({ps[0]}, {ps[1]})"), parse_type("INT")]
    value = _value(unscaled, ps[1])
    assert binary_row.to_bytes([value, 7], types, with_arity=False).hex() == java_bytes
    assert binary_row.from_bytes(binary_row.to_bytes([value, 7], types), types) == [value, 7]


@pytest.mark.parametrize("ps", [(19, 2), (38, 3)])
def test_columns_hash_and_bucket_as_java(ps):
    cases = [c for c in CASES if c[0] == ps]
    types = [parse_type(f"DECIMAL({ps[0]}, {ps[1]})"), parse_type("INT")]
    decimals = pa.array([_value(c[1], ps[1]) for c in cases], pa.decimal128(*ps))
    ints = pa.array([7] * len(cases), pa.int32())
    mat, lengths = binary_row.row_bytes_matrix([decimals, ints], types)
    assert [bytes(mat[i, :lengths[i]]).hex() for i in range(len(cases))] == [c[4] for c in cases]
    hashes = binary_row.hash_rows([decimals, ints], types)
    assert hashes.tolist() == [c[2] for c in cases]
    assert binary_row.bucket_of(hashes, 7).tolist() == [c[3] for c in cases]


def test_null_timestamp_and_decimal_keep_their_variable_bytes():
    """Java's null setters still reserve 8 (TIMESTAMP(6)) and 16 (DECIMAL(20, 0)) zero bytes and
    write ``offset << 32`` into the slot; printed by Paimon 1.0 for (NULL, NULL, 'abcdefghijk')."""
    java = ("0003000000000000000000002000000000000000280000000b00000038000000000000000000000000000000"
            "0000000000000000000000006162636465666768696a6b0000000000")
    types = [parse_type("TIMESTAMP(6)"), parse_type("DECIMAL(20, 0)"), parse_type("STRING")]
    assert binary_row.to_bytes([None, None, "abcdefghijk"], types, with_arity=False).hex() == java
    cols = [pa.array([None], pa.timestamp("us")), pa.array([None], pa.decimal128(20, 0)), pa.array(["abcdefghijk"])]
    mat, lengths = binary_row.row_bytes_matrix(cols, types)
    assert bytes(mat[0, :lengths[0]]).hex() == java
    assert binary_row.hash_rows(cols, types).tolist() == [2029703490]
