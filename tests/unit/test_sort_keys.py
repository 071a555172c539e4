"""Sort compaction keys (paimon_sql.compact.sort_keys) against Paimon's definitions.

The expected hex values were computed with Java Paimon's own ``ZOrderByteUtils`` and
``HilbertIndexer.hilbertCurvePosBytes`` (the Paimon 1.0 bundle), so z-order interleaving and the
Hilbert curve are Paimon's bit for bit where their inputs are the same.
"""

import datetime as dt
from decimal import Decimal

import numpy as np
import pyarrow as pa
import pytest

from paimon_sql.compact import sort_keys
from paimon_sql.exceptions import InvalidOptionError


def hexes(matrix):
    return [bytes(row).hex() for row in matrix]


def ints(*values):
    return sort_keys.ordered_bytes(pa.array(values, pa.int32()))


def test_integers_are_eight_bytes_with_the_sign_bit_flipped():
    assert hexes(ints(5, -1, None)) == ["8000000000000005", "7fffffffffffffff", "0000000000000000"]
    longs = sort_keys.ordered_bytes(pa.array([-(2 ** 63), 2 ** 63 - 1], pa.int64()))
    assert hexes(longs) == ["0000000000000000", "ffffffffffffffff"]


def test_interleave_of_two_ints_is_paimons():
    # 5 = 0x80..05, -1 = 0x7f..ff: first bits 1,0 then 0,1 ... -> 0x95 0x55 ... 0x77 (Java Paimon)
    keys = sort_keys.zorder_keys([pa.array([5, 3], pa.int32()), pa.array([-1, 10], pa.int32())])
    assert [k.hex() for k in keys.to_pylist()] == ["95555555555555555555555555555577",
                                                    "c000000000000000000000000000004e"]


def test_interleave_of_three_columns_and_a_short_string_is_paimons():
    three = sort_keys.interleave([ints(1), ints(2), ints(3)])
    assert hexes(three) == ["e0000000000000000000000000000000000000000000001d"]
    # a 4-byte string prefix: once its 32 bits are used, the int's remaining bits follow alone
    mixed = sort_keys.interleave([ints(7), sort_keys.ordered_bytes(pa.array(["abcdefg"]), 4)])
    assert hexes(mixed) == ["940114041405141000000007"]


def test_strings_and_binaries_are_their_zero_padded_prefix():
    values = pa.array(["", "ab", None, "abcdefghij", "é"])
    assert hexes(sort_keys.ordered_bytes(values)) == [
        "0000000000000000", "6162000000000000", "0000000000000000", "6162636465666768", "c3a9000000000000"]
    assert hexes(sort_keys.ordered_bytes(values.slice(1, 2), 3)) == ["616200", "000000"]
    assert hexes(sort_keys.ordered_bytes(pa.array([b"\xff\x01", None], pa.binary()), 4)) == ["ff010000", "00000000"]


def test_booleans_as_paimon():
    assert hexes(sort_keys.ordered_bytes(pa.array([True, False, None]))) == [
        "8100000000000000", "0000000000000000", "0000000000000000"]


def spark_order(values, arrow_type):
    """Positions of ``values`` sorted by their ordered bytes (stable)."""
    keys = [bytes(r) for r in sort_keys.ordered_bytes(pa.array(values, arrow_type))]
    return sorted(range(len(values)), key=lambda i: keys[i])


def test_doubles_order_as_spark_nan_last_and_negative_zero_equal_to_zero():
    values = [float("nan"), 1.5, -0.0, float("inf"), -1e300, 0.0, float("-inf"), -1.0, 1.0000000000000002, 1.0,
              None]
    ordered = [values[i] for i in spark_order(values, pa.float64())]
    assert ordered[:-1] == [None, float("-inf"), -1e300, -1.0, -0.0, 0.0, 1.0, 1.0000000000000002, 1.5,
                            float("inf")]
    assert np.isnan(ordered[-1])
    zeros = sort_keys.ordered_bytes(pa.array([-0.0, 0.0]))
    assert bytes(zeros[0]) == bytes(zeros[1])
    floats = [0.5, -2.5, None, 3.25]
    assert spark_order(floats, pa.float32()) == [2, 1, 0, 3]


@pytest.mark.parametrize("values, arrow_type", [
    ([Decimal("1.50"), Decimal("-0.01"), None, Decimal("12345678901234567.89"), Decimal("0.00")], pa.decimal128(20, 2)),
    ([dt.date(2020, 1, 1), None, dt.date(1960, 1, 1), dt.date(1970, 1, 1)], pa.date32()),
    ([dt.datetime(2020, 1, 1, 0, 0, 0, 1), dt.datetime(2020, 1, 1), None, dt.datetime(1900, 5, 5)],
     pa.timestamp("us", tz="UTC")),
    ([3, -128, None, 127, 0], pa.int8()),
])
def test_fixed_width_types_keep_their_order_with_nulls_first(values, arrow_type):
    expected = sorted(range(len(values)), key=lambda i: (values[i] is not None, values[i] or 0))
    assert spark_order(values, arrow_type) == expected


def test_huge_decimals_saturate_instead_of_wrapping():
    values = [Decimal("1e25"), Decimal("-1e25"), Decimal("1")]
    assert hexes(sort_keys.ordered_bytes(pa.array(values, pa.decimal128(38, 2)))) == [
        "ffffffffffffffff", "0000000000000000", "8000000000000064"]


def test_hilbert_index_is_paimons_curve():
    # HilbertIndexer.hilbertCurvePosBytes (63 bits per coordinate) of these points, from Java Paimon
    points = [(0, 0), (0, 1), (1, 1), (1, 0), (3, 5), (5, 3), (123456789, 987654321), ((2 ** 63 - 1) >> 1, 7)]
    expected = [0x0, 0x1, 0x2, 0x3, 0x1c, 0x34, 0xfd362b3ccbb4cb2, 0x555555555555555555555555555556a]
    index = sort_keys.hilbert_index([np.array([p[0] for p in points], np.uint64),
                                     np.array([p[1] for p in points], np.uint64)], bits=63)
    assert [int(bytes(r).hex(), 16) for r in index] == expected
    three = sort_keys.hilbert_index([np.array([v], np.uint64) for v in (1, 2, 3)], bits=63)
    assert int(bytes(three[0]).hex(), 16) == 0x30


def test_hilbert_curve_visits_neighbouring_cells():
    # every cell of an 8x8 grid once, each step to an adjacent cell: the defining property
    xs, ys = np.meshgrid(np.arange(8, dtype=np.uint64), np.arange(8, dtype=np.uint64))
    index = sort_keys.hilbert_index([xs.ravel(), ys.ravel()], bits=3)
    position = [int(bytes(r).hex(), 16) for r in index]
    assert sorted(position) == list(range(64))
    path = [(int(x), int(y)) for _, x, y in sorted(zip(position, xs.ravel(), ys.ravel()))]
    assert all(abs(x1 - x2) + abs(y1 - y2) == 1 for (x1, y1), (x2, y2) in zip(path, path[1:]))


def test_keys_are_binary_one_per_row_and_order_with_the_columns():
    a = pa.array([3, 1, None, 2], pa.int64())
    b = pa.array(["x", "y", "z", None])
    for keys in (sort_keys.zorder_keys([a, b]), sort_keys.hilbert_keys([a, b])):
        assert keys.type == pa.binary() and len(keys) == 4
        assert len(set(keys.to_pylist())) == 4
    # one column: the z-order key is the column's ordered bytes, so it sorts as the column
    single = sort_keys.zorder_keys([a]).to_pylist()
    assert sorted(range(4), key=lambda i: single[i]) == [2, 1, 3, 0]


def test_var_length_contribution_must_be_positive():
    assert sort_keys.check_var_length("4") == 4
    with pytest.raises(InvalidOptionError, match="zorder.var-length-contribution"):
        sort_keys.check_var_length("0")


def test_nested_types_are_not_sortable():
    assert sort_keys.sortable(pa.int32()) and sort_keys.sortable(pa.string())
    assert not sort_keys.sortable(pa.list_(pa.int32()))
    with pytest.raises(TypeError):
        sort_keys.ordered_bytes(pa.array([[1]]))
