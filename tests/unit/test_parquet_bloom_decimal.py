"""Parquet bloom filters on DECIMAL columns: a literal is looked up as its unscaled integer in the
column's plain encoding (INT32 / INT64 as we store precision <= 18, FIXED_LEN_BYTE_ARRAY above it and
in older files), so ``d = 12.34`` skips the files that lack it and reads the one that has it."""

import io
from decimal import Decimal

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from paimon_sql.data import predicate as P
from paimon_sql.data.types import parse_type
from paimon_sql.exceptions import InvalidOptionError
from paimon_sql.format import parquet_bloom


def _files_read(table, predicate):
    scan = table.new_scan().filter(predicate)
    reader = scan.reader()
    return sum(len(reader.files_to_read(s)) for s in scan.plan().splits)


@pytest.mark.parametrize("precision", [5, 12, 30])
def test_point_query_skips_files_without_the_decimal(catalog, precision):
    dtype = pa.decimal128(precision, 2)
    t = catalog.create_table_from_arrow("db.t", pa.schema([("id", pa.int64()), ("d", dtype)]),
                                        options={"parquet.bloom.filter.enabled#d": "true"})
    for k in range(3):  # every file spans -999..999: min/max stats rule none out
        values = [Decimal(-999), Decimal(999)] + [Decimal(k * 100 + 7 * i).scaleb(-2) for i in range(20)]
        values += [Decimal("12.34")] if k == 1 else []
        t.write_arrow(pa.table({"id": pa.array(range(len(values)), pa.int64()), "d": pa.array(values, dtype)}))
    assert _files_read(t, P.equal("d", Decimal("12.34"))) == 1
    assert t.new_scan().filter(P.equal("d", Decimal("12.34"))).to_arrow().column("d").to_pylist() == [Decimal("12.34")]
    assert _files_read(t, P.equal("d", Decimal("12.35"))) == 0
    assert _files_read(t, P.is_in("d", (Decimal("12.35"), Decimal("-999")))) == 3
    assert _files_read(t, P.equal("d", Decimal("12.345"))) == 3  # no value of DECIMAL(p, 2): not looked up


def _footer_and_reader(table: pa.Table, **kwargs):
    buf = io.BytesIO()
    pq.write_table(table, buf, bloom_filter_options={"d": True}, **kwargs)
    data = buf.getvalue()
    return pq.read_metadata(io.BytesIO(data)), lambda offset, length: data[offset:offset + length]


@pytest.mark.parametrize("as_integer", [True, False])
def test_small_decimal_in_either_physical_type(as_integer):
    """Files written before small decimals became INT32/INT64 hold them as FIXED_LEN_BYTE_ARRAY."""
    data = pa.table({"d": pa.array([Decimal("12.34"), Decimal("-0.01")], pa.decimal128(7, 2))})
    meta, read_range = _footer_and_reader(data, store_decimal_as_integer=as_integer)
    assert meta.schema.column(0).physical_type == ("INT32" if as_integer else "FIXED_LEN_BYTE_ARRAY")
    dtype = parse_type("DECIMAL(7, 2)")

    def may_match(literal):
        return parquet_bloom.file_may_match(read_range, meta, P.equal("d", literal), lambda c: c, lambda c: dtype)
    assert may_match(Decimal("12.34")) and may_match(Decimal("-0.01")) and may_match(Decimal("12.340"))
    assert not may_match(Decimal("12.35")) and not may_match(Decimal("0.01"))


def test_paimon_bloom_filter_index_refuses_decimal(catalog):
    """Java Paimon 1.0's BloomFilterFileIndex throws 'Does not support decimal': so do we, at CREATE."""
    with pytest.raises(InvalidOptionError, match="does not support column d of type DECIMAL"):
        catalog.create_table_from_arrow("db.t", pa.schema([("d", pa.decimal128(10, 2))]),
                                        options={"file-index.bloom-filter.columns": "d"})
