"""Decimals in data files as Java Paimon stores them (issue 13).

Java's ParquetSchemaConverter: INT32 for precision <= 9, INT64 for <= 18, else
FIXED_LEN_BYTE_ARRAY of the fewest bytes that hold the precision; always annotated DECIMAL(p, s).
Paimon 1.0 cannot read a small decimal stored as FIXED_LEN_BYTE_ARRAY, which pyarrow writes unless
told otherwise. ORC holds ``decimal(p,s)``, Avro ``bytes`` with the ``decimal`` logical type.
"""

import glob
import os
from decimal import Decimal

import fastavro
import pyarrow as pa
import pyarrow.orc as paorc
import pyarrow.parquet as pq
import pytest
from support import assert_java_decimal
from support import parquet_leaves as columns

from paimon_sql.data import predicate as P


def data_files(table, ext="parquet"):
    return sorted(glob.glob(os.path.join(table.path, "**", f"*.{ext}"), recursive=True))


def test_every_precision_stored_as_java_stores_it(catalog):
    precisions = range(1, 39)
    schema = pa.schema([(f"d{p}", pa.decimal128(p, min(p, 2))) for p in precisions])
    t = catalog.create_table_from_arrow("db.t", schema)
    low, high = ({f"d{p}": Decimal((sign, (9,) * p, -min(p, 2))) for p in precisions} for sign in (1, 0))
    t.write_arrow(pa.Table.from_pylist([low, high], schema=schema))  # each precision's limits
    [path] = data_files(t)
    cols = columns(path)
    for p in precisions:
        assert_java_decimal(cols[f"d{p}"], p, min(p, 2))
    back = t.new_scan().to_arrow()
    assert back.schema == schema and back.to_pylist() == [low, high]


NESTED = pa.schema([
    ("a", pa.list_(pa.decimal128(5, 2))),
    ("m", pa.map_(pa.string(), pa.decimal128(12, 3))),
    ("km", pa.map_(pa.decimal128(9, 0), pa.decimal128(25, 5))),
    ("r", pa.struct([("x", pa.decimal128(18, 4)), ("y", pa.decimal128(38, 10)),
                     ("z", pa.list_(pa.decimal128(3, 1)))])),
])


def test_nested_decimals_stored_as_java_stores_them(catalog):
    t = catalog.create_table_from_arrow("db.n", NESTED)
    rows = [{"a": [Decimal("1.25"), None], "m": [("k", Decimal("-3.500"))], "km": [(Decimal(7), Decimal("1.00001"))],
             "r": {"x": Decimal("12.3456"), "y": Decimal("-1.5000000000"), "z": [Decimal("9.9")]}}]
    t.write_arrow(pa.Table.from_pylist(rows, schema=NESTED))
    cols = columns(data_files(t)[0])
    assert_java_decimal(cols["a.list.element"], 5, 2)
    assert_java_decimal(cols["m.key_value.value"], 12, 3)
    assert_java_decimal(cols["km.key_value.key"], 9, 0)
    assert_java_decimal(cols["km.key_value.value"], 25, 5)
    assert_java_decimal(cols["r.x"], 18, 4)
    assert_java_decimal(cols["r.y"], 38, 10)
    assert_java_decimal(cols["r.z.list.element"], 3, 1)
    assert t.new_scan().to_arrow().to_pylist() == rows


PK = pa.schema([pa.field("k", pa.decimal128(10, 2), False), pa.field("k2", pa.decimal128(4, 0), False),
                ("v", pa.decimal128(7, 3)), ("w", pa.decimal128(20, 0))])


def pk_rows(keys):
    return pa.Table.from_pylist([{"k": Decimal(k).scaleb(-2), "k2": Decimal(k % 7), "v": Decimal(k).scaleb(-3),
                                  "w": Decimal(k) * 10 ** 15} for k in keys], schema=PK)


def test_primary_key_and_bucketed_files_keys_and_values(catalog):
    t = catalog.create_table_from_arrow("db.pk", PK, primary_keys=["k", "k2"], options={"bucket": "2"})
    t.write_arrow(pk_rows(range(-50, 50)))
    t.write_arrow(pk_rows(range(0, 10)))  # upserts: a second sorted run, merged on read
    paths = data_files(t)
    assert len(paths) >= 2
    for path in paths:
        cols = columns(path)
        assert_java_decimal(cols["_KEY_k"], 10, 2)
        assert_java_decimal(cols["_KEY_k2"], 4, 0)
        assert_java_decimal(cols["k"], 10, 2)
        assert_java_decimal(cols["v"], 7, 3)
        assert_java_decimal(cols["w"], 20, 0)
    got = sorted(t.new_scan().to_arrow().to_pylist(), key=lambda r: r["k"])
    assert got == pk_rows(range(-50, 50)).to_pylist()
    # key stats and min/max keys (from the footer) are the decimals written, negatives included
    key_types = [f.type for f in t.schema.key_fields()]
    lows = [e.file.key_stats.decode(key_types).mins[0] for e in t.new_scan().plan_entries()]
    assert min(lows) == Decimal("-0.50")
    assert _count(t, P.less_than("k", Decimal("-0.49"))) >= 1
    assert t.new_scan().filter(P.equal("k", Decimal("-0.37"))).to_arrow().column("v").to_pylist() == [
        Decimal("-0.037")]


def _count(table, predicate):
    return len(table.new_scan().filter(predicate).plan_entries())


def test_footer_stats_and_pruning_on_decimal_columns(catalog):
    schema = pa.schema([("id", pa.int32()), ("d", pa.decimal128(9, 2)), ("e", pa.decimal128(18, 6)),
                        ("f", pa.decimal128(30, 4))])
    t = catalog.create_table_from_arrow("db.s", schema, options={"file-index.bsi.columns": "d"})
    for lo in (-300, -100, 100):  # three files with disjoint ranges, negatives on both sides of zero
        t.write_arrow(pa.Table.from_pylist([{"id": i, "d": Decimal(i).scaleb(-2), "e": Decimal(i).scaleb(-6),
                                             "f": Decimal(i) * 10 ** 20} for i in range(lo, lo + 100)],
                                           schema=schema))
    for path in data_files(t):
        st = pq.ParquetFile(path).metadata.row_group(0)
        assert st.column(1).statistics.physical_type == "INT32" and st.column(2).statistics.physical_type == "INT64"
        assert isinstance(st.column(1).statistics.min, Decimal)
    types = [f.type for f in t.schema.fields]
    stats = sorted((e.file.value_stats.decode(types) for e in t.new_scan().plan_entries()), key=lambda s: s.mins[0])
    assert [(s.mins[1], s.maxs[1]) for s in stats] == [
        (Decimal("-3.00"), Decimal("-2.01")), (Decimal("-1.00"), Decimal("-0.01")), (Decimal("1.00"), Decimal("1.99"))]
    assert stats[0].mins[2] == Decimal("-0.000300") and stats[2].maxs[3] == Decimal(199) * 10 ** 20
    assert _count(t, P.greater_than("d", Decimal("0"))) == 1
    assert _count(t, P.less_than("e", Decimal("-0.000101"))) == 1
    assert _count(t, P.greater_or_equal("f", Decimal(150) * 10 ** 20)) == 1
    assert _count(t, P.equal("d", Decimal("-0.50"))) == 1
    assert _count(t, P.equal("d", Decimal("-1.50"))) == 0  # between the files' ranges
    got = t.new_scan().filter(P.equal("d", Decimal("-0.50"))).to_arrow()
    assert got.column("id").to_pylist() == [-50]


def test_orc_and_avro_decimals_as_java_writes_them(catalog):
    schema = pa.schema([("a", pa.decimal128(5, 2)), ("b", pa.decimal128(18, 0)), ("c", pa.decimal128(38, 9)),
                        ("l", pa.list_(pa.decimal128(12, 1)))])
    rows = [{"a": Decimal("-1.23"), "b": Decimal(10 ** 17), "c": Decimal("-12345678901234567890.123456789"),
             "l": [Decimal("0.5"), None]}, {"a": None, "b": None, "c": None, "l": None}]
    orc = catalog.create_table_from_arrow("db.o", schema, options={"file.format": "orc"})
    orc.write_arrow(pa.Table.from_pylist(rows, schema=schema))
    # ORC's type is decimal(p,s) as Java's OrcTypeUtil makes it (pyarrow maps exactly that to decimal128(p, s))
    assert paorc.ORCFile(data_files(orc, "orc")[0]).schema == schema
    assert orc.new_scan().to_arrow().to_pylist() == rows
    avro = catalog.create_table_from_arrow("db.v", schema, options={"file.format": "avro"})
    avro.write_arrow(pa.Table.from_pylist(rows, schema=schema))
    with open(data_files(avro, "avro")[0], "rb") as f:
        fields = {fl["name"]: fl["type"] for fl in fastavro.reader(f).writer_schema["fields"]}
    assert fields["a"][1] == {"type": "bytes", "logicalType": "decimal", "precision": 5, "scale": 2}
    assert fields["c"][1] == {"type": "bytes", "logicalType": "decimal", "precision": 38, "scale": 9}
    assert fields["l"][1]["items"][1] == {"type": "bytes", "logicalType": "decimal", "precision": 12, "scale": 1}
    assert avro.new_scan().to_arrow().to_pylist() == rows


@pytest.mark.interop
def test_old_fixed_len_decimal_files_still_read(warehouse, catalog, pypaimon):
    """pypaimon (like our writer before issue 13) stores every decimal as FIXED_LEN_BYTE_ARRAY;
    such files stay readable next to ours, and stats pruning works across both."""
    schema = pa.schema([("id", pa.int32()), ("d", pa.decimal128(9, 2)), ("e", pa.decimal128(15, 0))])
    t = catalog.create_table_from_arrow("db.old", schema)
    pypaimon(op="append", warehouse=warehouse, table="db.old", rows=[{"id": 1, "d": 3, "e": -4}])
    [old] = data_files(t)
    assert columns(old)["d"].physical_type == "FIXED_LEN_BYTE_ARRAY"
    t.write_arrow(pa.Table.from_pylist([{"id": 2, "d": Decimal("-7.25"), "e": Decimal(9)}], schema=schema))
    new = [p for p in data_files(t) if p != old]
    assert columns(new[0])["d"].physical_type == "INT32"
    assert sorted(t.new_scan().to_arrow().to_pylist(), key=lambda r: r["id"]) == [
        {"id": 1, "d": Decimal("3.00"), "e": Decimal(-4)}, {"id": 2, "d": Decimal("-7.25"), "e": Decimal(9)}]
    assert _count(t, P.greater_than("d", Decimal(0))) == 1
    assert pypaimon(op="read", warehouse=warehouse, table="db.old")  # and pypaimon reads ours
