"""ORC and Avro data files under Iceberg metadata: published as Java Paimon 2.0 publishes them, and
found by Iceberg readers through the name mapping (``schema.name-mapping.default``), since neither
format carries Iceberg's field ids.

Iceberg Java 1.10.1 (tests/interop/java/IcebergReadDriver.java) reads both formats; its generic
reader maps a file's columns by their current names (it ignores the table's name mapping, which
Iceberg's Spark reader and Trino apply), so it is asked before any rename. pyiceberg 0.12 reads ORC
(no Avro data files) with the name mapping: it must see the rows paimon-sql reads after a column
is renamed (older files hold the old name) and one is added. A Parquet table gets no
mapping: its files carry the ids, and its metadata stays as Java writes it.
"""

import datetime as dt
import json
from decimal import Decimal

import pyarrow as pa
import pytest
from java_paimon import Driver
from oracles import iceberg_java
from pyiceberg.table import StaticTable
from test_iceberg_interop import latest_metadata

from paimon_sql.data.types import parse_type
from paimon_sql.iceberg.name_mapping import KEY
from paimon_sql.schema.schema_change import AddColumn, RenameColumn

pytestmark = pytest.mark.interop

SCHEMA = pa.schema([("id", pa.int64()), ("ok", pa.bool_()), ("price", pa.decimal128(10, 2)),
                    ("day", pa.date32()), ("at", pa.timestamp("us")), ("tags", pa.list_(pa.string())),
                    ("dt", pa.string())])
OPTIONS = {"metadata.iceberg.storage": "table-location"}


def _batch(ids) -> pa.Table:
    return pa.table({"id": ids, "ok": [i % 2 == 0 for i in ids], "price": [Decimal(f"{i}.25") for i in ids],
                     "day": [dt.date(2026, 1, 1 + i) for i in ids], "at": [dt.datetime(2026, 1, 1, 0, 0, i) for i in ids],
                     "tags": [[f"t{i}"] * (i % 3) for i in ids], "dt": ["x" if i < 3 else "y" for i in ids]},
                    schema=SCHEMA)


def _plain(v):
    """A value as Iceberg Java's driver prints it (JSON lines: a decimal a number, a list its
    Java ``toString``)."""
    if isinstance(v, Decimal):
        return float(v)
    if isinstance(v, list):
        return "[" + ", ".join(map(str, v)) + "]"
    if isinstance(v, (dt.date, dt.datetime)):
        return v.isoformat()
    return v


def ours(table) -> list:
    return sorted(json.loads(json.dumps([[_plain(v) for v in r.values()]
                                        for r in table.new_scan().to_arrow().to_pylist()], default=str)))


def iceberg_java_rows(java: Driver, table) -> list:
    return sorted(java.batch({"op": "read", "metadata": latest_metadata(f"{table.path}/metadata")}))


def pyiceberg_rows(table) -> list:
    scan = StaticTable.from_metadata(latest_metadata(f"{table.path}/metadata")).scan()
    return sorted(json.loads(json.dumps([[_plain(v) for v in r.values()] for r in scan.to_arrow().to_pylist()],
                                        default=str)))


@pytest.fixture(scope="module")
def java():
    with Driver(iceberg_java.driver_command()) as driver:
        yield driver


@pytest.mark.parametrize("fmt", ["orc", "avro"])
def test_iceberg_readers_read_orc_and_avro_files_by_name(catalog, java, fmt):
    t = catalog.create_table_from_arrow(f"db.{fmt}", SCHEMA, partition_keys=["dt"],
                                        options={**OPTIONS, "file.format": fmt})
    t.write_arrow(_batch([1, 2]))
    t.write_arrow(_batch([3]))
    want = ours(t)
    assert len(want) == 3 and iceberg_java_rows(java, t) == want
    if fmt == "orc":
        assert pyiceberg_rows(t) == want
    # a rename: older files hold 'price', newer ones 'cost'; an added column is NULL in older files
    t.schema_manager.commit_changes([RenameColumn(["price"], "cost"), AddColumn("note", parse_type("STRING"))])
    t = catalog.get_table(f"db.{fmt}")
    new = {("cost" if k == "price" else k): v for k, v in _batch([4]).to_pydict().items()}
    t.write_arrow(pa.table({**new, "note": ["new"]}, schema=t.schema.arrow_schema()))
    want = ours(t)
    assert [r[2] for r in want] == [1.25, 2.25, 3.25, 4.25] and [r[-1] for r in want] == [None] * 3 + ["new"]
    if fmt == "orc":
        assert pyiceberg_rows(t) == want
    meta = json.load(open(latest_metadata(f"{t.path}/metadata")))
    mapping = {m["field-id"]: m["names"] for m in json.loads(meta["properties"][KEY])}
    assert mapping[2] == ["cost", "price"] and mapping[7] == ["note"]


def test_parquet_tables_get_no_name_mapping(catalog):
    t = catalog.create_table_from_arrow("db.p", SCHEMA, partition_keys=["dt"], options=OPTIONS)
    t.write_arrow(_batch([1]))
    assert json.load(open(latest_metadata(f"{t.path}/metadata")))["properties"] == {}
