"""Partition directory names as Java Paimon computes them, under both values of
``partition.legacy-name`` (default true).

Expected texts were printed by Java Paimon (1.0 bundle jar): ``InternalRowPartitionComputer``'s
``generatePartValues`` (legacy: the value's ``toString``) and ``CastExecutors.resolve(type,
STRING).cast(value)`` (legacy false), and ``PartitionPathUtils.generatePartitionPath``.
"""

import datetime as dt
from decimal import Decimal

import pyarrow as pa
import pytest

from paimon_sql.data import binary_row
from paimon_sql.data.partition_names import java_float_text, value_text
from paimon_sql.data.types import AtomicType
from paimon_sql.exceptions import CorruptDataFileError, InvalidOptionError, SchemaError
from paimon_sql.io.paths import PathFactory, shown_partition
from paimon_sql.schema.schema_change import RemoveOption, SetOption


def T(name, *args):
    return AtomicType(name, args)


# (type, value, Java legacy text, Java cast text)
JAVA = [
    (T("DATE"), dt.date(2024, 5, 1), "19844", "2024-05-01"),
    (T("TIMESTAMP", 6), dt.datetime(2024, 5, 1, 12, 30), "2024-05-01T12:30", "2024-05-01 12:30:00.000000"),
    (T("TIMESTAMP", 3), dt.datetime(2024, 5, 1, 12, 30, 15, 500000), "2024-05-01T12:30:15.500",
     "2024-05-01 12:30:15.500"),
    (T("TIMESTAMP", 0), dt.datetime(2024, 5, 1), "2024-05-01T00:00", "2024-05-01 00:00:00"),
    (T("TIMESTAMP", 6), dt.datetime(2024, 5, 1, 12, 30, 15, 123456), "2024-05-01T12:30:15.123456",
     "2024-05-01 12:30:15.123456"),
    (T("TIMESTAMP", 6), dt.datetime(2024, 5, 1, 12, 0, 0, 10000), "2024-05-01T12:00:00.010",
     "2024-05-01 12:00:00.010000"),
    (T("DECIMAL", 10, 2), Decimal("1.5"), "1.50", "1.50"),
    (T("DECIMAL", 10, 2), Decimal("-0.00"), "0.00", "0.00"),
    (T("BOOLEAN"), True, "true", "true"),
    (T("DOUBLE"), 1e10, "1.0E10", "1.0E10"),
    (T("DOUBLE"), 0.0001, "1.0E-4", "1.0E-4"),
    (T("FLOAT"), 0.10000000149011612, "0.1", "0.1"),  # the FLOAT 0.1f read back as a Python float
    (T("DOUBLE"), 123.25, "123.25", "123.25"),
    (T("TIME", 0), dt.time(12, 30), "45000000", "12:30:00"),
    (T("TIME", 3), dt.time(12, 30, 0, 500000), "45000500", "12:30:00.5"),
    (T("TIME", 3), dt.time(12, 30, 0, 120000), "45000120", "12:30:00.12"),
    (T("BIGINT"), -5, "-5", "-5"),
]


@pytest.mark.parametrize("dtype,value,legacy,cast", JAVA, ids=[f"{t}-{v}" for t, v, _, _ in JAVA])
def test_value_texts_are_javas(dtype, value, legacy, cast):
    assert value_text(value, dtype, True) == legacy
    assert value_text(value, dtype, False) == cast


def test_blank_values_and_null_take_the_default_name():
    s = T("VARCHAR", 10)
    assert value_text(" ", s, True) is None and value_text("", s, False) is None and value_text(None, s, True) is None
    assert value_text("\xa0", s, True) == "\xa0"  # not whitespace to Java


def test_timestamp_ltz_legacy_is_utc():
    ltz = T("TIMESTAMP_LTZ", 6)
    value = dt.datetime(2024, 5, 1, 14, 30, tzinfo=dt.timezone(dt.timedelta(hours=2)))
    assert value_text(value, ltz, True) == "2024-05-01T12:30"


def test_java_float_text():
    assert [java_float_text(x, False) for x in (1e7, 9999999.0, 0.001, 0.00099, -2.5, 0.0, -0.0, 1e-300)] == [
        "1.0E7", "9999999.0", "0.001", "9.9E-4", "-2.5", "0.0", "-0.0", "1.0E-300"]
    assert [java_float_text(x, False) for x in (float("nan"), float("inf"), float("-inf"))] == [
        "NaN", "Infinity", "-Infinity"]
    assert java_float_text(float(pa.array([3.3], pa.float32())[0].as_py()), True) == "3.3"


SCHEMA = pa.schema([("id", pa.int32()), ("d", pa.date32()), ("ts", pa.timestamp("us")),
                    ("price", pa.decimal128(10, 2)), ("flag", pa.bool_())])
ROWS = {"id": [1, 2], "d": [dt.date(2024, 5, 1), None], "ts": [dt.datetime(2024, 5, 1, 12, 30)] * 2,
        "price": [Decimal("1.50"), Decimal("20.00")], "flag": [True, False]}
KEYS = ["d", "ts", "price", "flag"]


def _dirs(t):
    found = []
    for e in t.new_scan().plan_entries():
        values = binary_row.from_bytes(e.partition, [f.type for f in t.schema.fields_of(KEYS)])
        path = t.paths.data_file_path(values, e.bucket, e.file.file_name)
        assert t.io.exists(path)
        found.append(path[len(t.path) + 1:].rsplit("/bucket-", 1)[0])
    return sorted(found)


@pytest.mark.parametrize("options,expected", [
    ({}, ["d=19844/ts=2024-05-01T12%3A30/price=1.50/flag=true",
          "d=__DEFAULT_PARTITION__/ts=2024-05-01T12%3A30/price=20.00/flag=false"]),
    ({"partition.legacy-name": "false"},
     ["d=2024-05-01/ts=2024-05-01 12%3A30%3A00.000000/price=1.50/flag=true",
      "d=__DEFAULT_PARTITION__/ts=2024-05-01 12%3A30%3A00.000000/price=20.00/flag=false"]),
])
def test_directories_and_round_trip(catalog, options, expected):
    t = catalog.create_table_from_arrow("db.t", SCHEMA, partition_keys=KEYS, options=options)
    t.write_arrow(pa.table(ROWS, schema=SCHEMA))
    assert _dirs(t) == expected
    dirs = sorted(p for p in t.io.list_dirs(t.path) if p.startswith("d="))
    assert dirs == sorted({e.split("/")[0] for e in expected})
    assert sorted(t.new_scan().to_arrow().to_pylist(), key=lambda r: r["id"]) == [
        dict(zip(ROWS, vals)) for vals in zip(*ROWS.values())]


def test_binary_partition_needs_cast_names(catalog):
    schema = pa.schema([("id", pa.int32()), ("b", pa.binary())])
    data = pa.table({"id": [1], "b": [b"ab"]}, schema=schema)
    legacy = catalog.create_table_from_arrow("db.l", schema, partition_keys=["b"])
    with pytest.raises(InvalidOptionError, match="partition.legacy-name"):
        legacy.write_arrow(data)
    assert legacy.new_scan().plan_entries() == []
    cast = catalog.create_table_from_arrow("db.c", schema, partition_keys=["b"],
                                           options={"partition.legacy-name": "false"})
    cast.write_arrow(data)
    assert "b=ab" in cast.io.list_dirs(cast.path)
    assert cast.new_scan().to_arrow().to_pylist() == [{"id": 1, "b": b"ab"}]


def test_partition_spec_literals_compare_as_values(catalog):
    """A spec's text is cast to the column types: it drops its own partition, not every one."""
    t = catalog.create_table_from_arrow("db.t", SCHEMA, partition_keys=KEYS)
    t.write_arrow(pa.table(ROWS, schema=SCHEMA))
    t.new_commit().overwrite([], partition={"ts": "2024-05-01 12:30:00", "price": "20.00", "flag": "false"})
    assert [r["id"] for r in t.new_scan().to_arrow().to_pylist()] == [1]
    t.new_commit().overwrite([], partition={"d": "2024-05-02"})
    assert [r["id"] for r in t.new_scan().to_arrow().to_pylist()] == [1]
    with pytest.raises(SchemaError, match="'d' is not a DATE"):
        t.new_commit().overwrite([], partition={"d": "May 1st"})
    t.new_commit().overwrite([], partition={"d": "2024-05-01"})
    assert t.new_scan().to_arrow().num_rows == 0


def test_older_date_tables_read_again_with_the_option_false(catalog):
    """A table written under cast names without the key (as paimon-sql wrote before) is read as
    Java reads it, under legacy names, and misses its files; setting the option false fixes it."""
    schema = pa.schema([("id", pa.int32()), ("d", pa.date32())])
    t = catalog.create_table_from_arrow("db.old", schema, partition_keys=["d"],
                                        options={"partition.legacy-name": "false"})
    t.write_arrow(pa.table({"id": [1], "d": [dt.date(2024, 5, 1)]}, schema=schema))
    t.schema_manager.commit_changes([RemoveOption("partition.legacy-name")])
    old = catalog.get_table("db.old")
    assert old.paths.partition_dir([dt.date(2024, 5, 1)]) == "d=19844"
    with pytest.raises(CorruptDataFileError, match="/d=19844/bucket-0/.* is missing"):
        old.new_scan().to_arrow()
    old.schema_manager.commit_changes([SetOption("partition.legacy-name", "false")])
    assert catalog.get_table("db.old").new_scan().to_arrow().to_pylist() == [{"id": 1, "d": dt.date(2024, 5, 1)}]


def test_directory_escaping_is_javas():
    """PartitionPathUtils.generatePartitionPath escapes '}' and NUL too (Spark's SHOW PARTITIONS not)."""
    paths = PathFactory("/t", ["k}"], "parquet", partition_types=[T("VARCHAR", 20)])
    assert paths.partition_dir(["a}{:/b c\x00%é"]) == "k%7D=a%7D%7B%3A%2Fb c%00%25é"
    assert shown_partition(["k}"], ["a}{"], "__DEFAULT_PARTITION__") == "k}=a}%7B"


@pytest.mark.interop
@pytest.mark.parametrize("legacy", ["true", "false"])
def test_pypaimon_finds_our_partition_directories(pypaimon, catalog, warehouse, legacy):
    """pypaimon 2.1 computes the same names (it follows Java): it reads every row we wrote."""
    schema = pa.schema([("id", pa.int32()), ("d", pa.date32()), ("ts", pa.timestamp("us"))])
    t = catalog.create_table_from_arrow("db.pp", schema, partition_keys=["d", "ts"],
                                        options={"partition.legacy-name": legacy})
    t.write_arrow(pa.table({"id": [1, 2], "d": [dt.date(2024, 5, 1), None],
                            "ts": [dt.datetime(2024, 5, 1, 12, 30, 15, 500000), dt.datetime(2024, 5, 1)]},
                           schema=schema))
    assert sorted(r["id"] for r in pypaimon(op="read", warehouse=warehouse, table="db.pp", snapshot=1)) == [1, 2]
