"""Avro data files with nested types, against Java Paimon 1.0 and 2.0: the file schema is Java's (record
names, unions, defaults, string-keyed MAP as Avro map, other MAPs as arrays of key/value records with
logical type ``map``), Java reads the files we write and we read the files Java writes.

The versions differ at the top, and 2.0 wins: 2.0 writes the row record itself as the file's schema, as we
do; 1.0 wrote the union ``["null", record]`` around the same record. Each reads the other's files."""

import datetime as dt
import glob
import json
from decimal import Decimal

import fastavro
import pyarrow as pa
import pytest
from oracles.paimon_java import VERSIONS

from paimon_sql.data.types import parse_type_json

ROW = {"type": "ROW", "fields": [
    {"id": 10, "name": "a", "type": "BIGINT"},
    {"id": 11, "name": "mm", "type": {"type": "MAP", "key": "DATE NOT NULL", "value": "DOUBLE"}}]}
FIELDS = [
    ["id", "INT NOT NULL"],
    ["m_int", {"type": "MAP", "key": "INT NOT NULL", "value": "STRING"}],
    ["m_str", {"type": "MAP", "key": "STRING NOT NULL", "value": ROW}],
    ["arr", {"type": "ARRAY", "element": {"type": "MAP", "key": "DECIMAL(20, 2) NOT NULL", "value": "TINYINT"}}],
    ["r", {"type": "ROW", "fields": [
        {"id": 20, "name": "x", "type": "STRING"},
        {"id": 21, "name": "m", "type": {"type": "MAP", "key": "BIGINT NOT NULL", "value": {
            "type": "ARRAY", "element": "INT"}}}]}],
    ["ts", "TIMESTAMP(6)"],
]
# the driver's JSON: MAP as [[k, v], ...], ROW as a list, DECIMAL as text, DATE/TIMESTAMP as ISO text
JAVA_ROWS = [
    [1, [[1, "a"], [2, None]], [["k", [1, [["2024-01-02", 1.5]]]]], [[["1.25", 3]], None, []],
     ["q", [[5, [1, None]]]], "2024-05-01T12:30:00.123456"],
    [2, None, [], None, None, None],
    [3, [], None, [None], [None, None], "1969-12-31T23:59:59.999999"],
]


def _arrow_rows():
    """JAVA_ROWS as our Arrow reader returns them."""
    def ts(v):
        return None if v is None else dt.datetime.fromisoformat(v)
    return [
        {"id": 1, "m_int": [(1, "a"), (2, None)], "m_str": [("k", {"a": 1, "mm": [(dt.date(2024, 1, 2), 1.5)]})],
         "arr": [[(Decimal("1.25"), 3)], None, []], "r": {"x": "q", "m": [(5, [1, None])]},
         "ts": ts(JAVA_ROWS[0][5])},
        {"id": 2, "m_int": None, "m_str": [], "arr": None, "r": None, "ts": None},
        {"id": 3, "m_int": [], "m_str": None, "arr": [None], "r": {"x": None, "m": None}, "ts": ts(JAVA_ROWS[2][5])},
    ]


@pytest.fixture(scope="module", params=VERSIONS)
def java(request):
    """Java Paimon 1.0, then 2.0: one JVM per version for the module's batches (the one test using it)."""
    from interop.java_paimon import started  # the Java interop harness (tests/interop)
    with started(request.param) as driver:
        yield driver


def _create(java, warehouse, name):
    from interop.java_paimon import ok
    ok(java.run([dict(op="create", warehouse=warehouse, table=name, fields=FIELDS,
                      options={"file.format": "avro", "bucket": "1", "bucket-key": "id"})])[0])


def _schema_of_files(warehouse, name):
    """{(the top's form: "record" or "union", the record as JSON)} of the table's files."""
    files = glob.glob(f"{warehouse}/{name.replace('.', '.db/')}/bucket-0/*.avro")
    assert files
    schemas = set()
    for f in files:
        with open(f, "rb") as fh:
            top = fastavro.reader(fh).writer_schema
        if isinstance(top, list):  # 1.0's ["null", record]
            assert top[0] == "null" and len(top) == 2, top
            schemas.add(("union", json.dumps(top[1], sort_keys=True)))
        else:
            schemas.add(("record", json.dumps(top, sort_keys=True)))
    return schemas


def test_java_and_we_write_the_same_schema_and_read_each_other(java, catalog, warehouse):
    from interop.java_paimon import ok
    _create(java, warehouse, "db.theirs")
    ok(java.run([dict(op="write", warehouse=warehouse, table="db.theirs", rows=JAVA_ROWS)])[0])
    theirs = catalog.get_table("db.theirs").to_arrow().sort_by("id")
    assert theirs.to_pylist() == _arrow_rows()

    _create(java, warehouse, "db.ours")
    ours = catalog.get_table("db.ours")
    ours.write_arrow(theirs)
    (form, ours_schema), = _schema_of_files(warehouse, "db.ours")
    (java_form, java_schema), = _schema_of_files(warehouse, "db.theirs")
    assert (form, java_form) == ("record", "record" if java.version == "2.0" else "union")
    assert ours_schema == java_schema
    assert ours.to_arrow().sort_by("id").to_pylist() == _arrow_rows()
    back = ok(java.run([dict(op="read", warehouse=warehouse, table="db.ours")])[0])
    assert sorted(back, key=lambda r: r[0]) == sorted(ok(java.run([dict(
        op="read", warehouse=warehouse, table="db.theirs")])[0]), key=lambda r: r[0])


def test_multiset_and_local_zoned_timestamp_round_trip(catalog):
    from paimon_sql.data.types import DataField
    fields = [DataField(0, "id", parse_type_json("INT NOT NULL")),
              DataField(1, "ms", parse_type_json({"type": "MULTISET", "element": "BIGINT"})),
              DataField(2, "mss", parse_type_json({"type": "MULTISET", "element": "STRING"})),
              DataField(3, "ltz", parse_type_json("TIMESTAMP(3) WITH LOCAL TIME ZONE"))]
    schema = pa.schema([f.to_arrow() for f in fields])
    t = catalog.create_table_from_arrow("db.t", schema, options={"file.format": "avro"})
    utc = dt.timezone.utc
    rows = [{"id": 1, "ms": [(7, 2)], "mss": [("a", 1), ("b", 3)], "ltz": dt.datetime(2024, 5, 1, 12, 0, 0, 5000, utc)},
            {"id": 2, "ms": None, "mss": [], "ltz": None}]
    t.write_arrow(pa.Table.from_pylist(rows, schema))
    assert t.to_arrow().sort_by("id").to_pylist() == rows


def test_avro_refuses_nanosecond_timestamps_at_create(catalog):
    """Refused when the table is created (or altered to Avro), before anything is written."""
    from paimon_sql.exceptions import SchemaError
    ts9 = pa.schema([("id", pa.int32()), ("ts", pa.timestamp("ns"))])
    with pytest.raises(SchemaError, match="precision above 6"):
        catalog.create_table_from_arrow("db.avro_ts9", ts9, options={"file.format": "avro"})
    assert not catalog.table_exists("db.avro_ts9")
