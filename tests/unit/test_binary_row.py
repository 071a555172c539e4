import datetime as dt
import random
from decimal import Decimal

import numpy as np
import pyarrow as pa
import pytest

from paimon_sql.data import binary_row
from paimon_sql.data.types import parse_type
from paimon_sql.exceptions import CorruptMetadataError

# Bytes pypaimon 2.1.0 wrote for the partition value 'x' (STRING) and the key 2 (BIGINT).
GOLDEN = [
    (["x"], ["STRING"], b"\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x00x\x00\x00\x00\x00\x00\x00\x81"),
    ([2], ["BIGINT"], b"\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x00\x02\x00\x00\x00\x00\x00\x00\x00"),
    ([], [], b"\x00\x00\x00\x00" + b"\x00" * 8),
]


@pytest.mark.parametrize("values, types, expected", GOLDEN)
def test_golden_bytes(values, types, expected):
    ts = [parse_type(t) for t in types]
    assert binary_row.to_bytes(values, ts) == expected
    assert binary_row.from_bytes(expected, ts) == values


def test_round_trip_all_atomic_types():
    types = [parse_type(t) for t in [
        "BOOLEAN", "TINYINT", "SMALLINT", "INT", "BIGINT", "FLOAT", "DOUBLE", "STRING", "STRING", "BYTES",
        "DECIMAL(10, 2)", "DECIMAL(30, 5)", "DATE", "TIME(3)", "TIMESTAMP(3)", "TIMESTAMP(6)", "INT"]]
    values = [True, -5, 300, -70000, 2 ** 40, 1.5, -2.25, "short", "a string longer than seven", b"\x00\x01",
              Decimal("12345678.91"), Decimal("-1234567890123456789012.34567"), dt.date(2024, 2, 29),
              dt.time(13, 45, 1, 123000), dt.datetime(2024, 1, 2, 3, 4, 5, 678000),
              dt.datetime(1969, 12, 31, 23, 59, 59, 999999), None]
    data = binary_row.to_bytes(values, types)
    assert len(data[4:]) % 8 == 0
    assert binary_row.from_bytes(data, types) == values


def test_corrupt_row_is_a_clear_error():
    with pytest.raises(CorruptMetadataError):
        binary_row.from_bytes(b"\x00\x00\x00\x02\x00", [parse_type("STRING"), parse_type("INT")])


def test_vectorized_rows_equal_scalar_rows():
    rng = random.Random(7)
    n = 500
    ints = [rng.randint(-2 ** 31, 2 ** 31 - 1) if rng.random() > 0.1 else None for _ in range(n)]
    strs = ["".join(rng.choice("abé") for _ in range(rng.randint(0, 15))) for _ in range(n)]
    dates = [dt.date(2000, 1, 1) + dt.timedelta(days=rng.randint(0, 9000)) for _ in range(n)]
    decs = [Decimal(rng.randint(-10 ** 9, 10 ** 9)).scaleb(-2) for _ in range(n)]
    types = [parse_type(t) for t in ["INT", "STRING", "DATE", "DECIMAL(12, 2)"]]
    cols = [pa.array(ints, pa.int32()), pa.array(strs), pa.array(dates), pa.array(decs, pa.decimal128(12, 2))]
    mat, lengths = binary_row.row_bytes_matrix(cols, types)
    for i in range(n):
        assert bytes(mat[i, :lengths[i]]) == binary_row.to_bytes([ints[i], strs[i], dates[i], decs[i]], types, False)


def test_bucket_is_java_abs_of_remainder():
    assert list(binary_row.bucket_of(np.array([-7, 7, -2 ** 31, 0], dtype=np.int32), 3)) == [1, 1, 2, 0]
