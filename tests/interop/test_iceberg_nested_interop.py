"""Nested columns (ARRAY, MAP, MULTISET, ROW) in the Iceberg metadata, against Java Paimon 2.0 and pyiceberg.

Java's IcebergCommitCallback and Parquet writer (through tests/interop/java/PaimonDriver.java) write
the same table as we do: the Iceberg schema JSON (list/map/struct objects, the element, key and value
ids Paimon derives from the column id) and every Parquet field id of the data files, nested ones
included, must be equal; Java and we then take turns on one table. pyiceberg reads what we write
(append and primary-key tables, after an added nested column and an added ROW field) with our rows.
MULTISET is not a Spark SQL type: its table is made through the Python API, and Java's driver
writes no MULTISET values (NULL).
"""

import glob
import json

import fastavro
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from java_paimon import JavaPaimon, ok
from pyiceberg.exceptions import ResolveError
from pyiceberg.table import StaticTable
from spark.conftest import session, spark  # noqa: F401  (fixtures: one SparkSession per run)

from paimon_sql.data.types import DataField, parse_type
from paimon_sql.exceptions import SchemaError
from paimon_sql.schema.table_schema import TableSchema

pytestmark = pytest.mark.interop

ON = {"metadata.iceberg.storage": "table-location", "metadata.iceberg.manifest-compression": "deflate"}
ICEBERG = "TBLPROPERTIES ('metadata.iceberg.storage' = 'table-location', " \
          "'metadata.iceberg.manifest-compression' = 'deflate'{})"
COLUMNS = ("id BIGINT NOT NULL, ints ARRAY<INT>, people ARRAY<STRUCT<name: STRING, age: INT>>, "
           "tags MAP<STRING, ARRAY<BIGINT>>, r STRUCT<a: INT, b: STRUCT<c: STRING>>")
# (id, ints, people, tags, r) as Python values (ROW: dict, MAP: list of pairs)
ROWS = [
    (1, [1, None, 3], [{"name": "ann", "age": 30}], [("k", [1, 2]), ("z", None)], {"a": 1, "b": {"c": "x"}}),
    (2, None, [], [("e", [])], {"a": None, "b": None}),
    (3, [], [{"name": None, "age": None}, None], None, None),
]


@pytest.fixture(scope="module")
def java():
    with JavaPaimon("2.0") as driver:
        yield driver


def _java_value(v):
    """A value as PaimonDriver.java takes it: ROW as a positional list, MAP as [[k, v], ...]."""
    if isinstance(v, dict):
        return [_java_value(x) for x in v.values()]
    if isinstance(v, (list, tuple)):
        return [_java_value(x) for x in v]
    return v


def _java_rows(rows) -> list:
    return [[_java_value(v) for v in r] for r in rows]


def _arrow(table, rows) -> pa.Table:
    names = table.schema.field_names
    return pa.Table.from_pylist([dict(zip(names, r)) for r in rows], schema=table.schema.arrow_schema())


def ours(table) -> list:
    return sorted((tuple(r.values()) for r in table.new_scan().to_arrow().to_pylist()), key=lambda r: r[0])


def pyiceberg_view(rows: list, *columns: int) -> list:
    """``rows`` as pyiceberg 0.12 reads them: a NULL ARRAY or MAP of ROWs (at ``columns``) comes back
    as [] (its ArrowProjectionVisitor rebuilds such a list or map from the offsets alone, without the
    nulls), whoever wrote the file."""
    return [tuple([] if i in columns and v is None else v for i, v in enumerate(r)) for r in rows]


def metadata(table_path: str) -> dict:
    with open(f"{table_path}/metadata/version-hint.text") as f:
        return json.load(open(f"{table_path}/metadata/v{f.read().strip()}.metadata.json"))


def iceberg(table_path: str) -> list:
    with open(f"{table_path}/metadata/version-hint.text") as f:
        scan = StaticTable.from_metadata(f"{table_path}/metadata/v{f.read().strip()}.metadata.json").scan()
    return sorted((tuple(r.values()) for r in scan.to_arrow().to_pylist()), key=lambda r: r[0])


def _ids(field: pa.Field, path: str = "") -> list:
    """Every (path, Parquet field id) in ``field``, nested fields included."""
    path = f"{path}.{field.name}" if path else field.name
    own = [(path, int((field.metadata or {}).get(b"PARQUET:field_id", b"-1")))]
    t = field.type
    if pa.types.is_map(t):
        children = [t.key_field, t.item_field]
    elif pa.types.is_list(t) or pa.types.is_large_list(t):
        children = [t.value_field]
    elif pa.types.is_struct(t):
        children = list(t)
    else:
        children = []
    return own + [x for c in children for x in _ids(c, path)]


def parquet_ids(table_path: str) -> list:
    """The field ids of each data file of the table, one list per distinct file schema."""
    files = glob.glob(f"{table_path}/**/bucket-*/data-*.parquet", recursive=True)
    assert files
    return sorted({tuple(x for f in pq.ParquetFile(p).schema_arrow for x in _ids(f)) for p in files})


def _java_table(java, warehouse: str, table, rows) -> str:
    """The table ``table`` (our schema) made and written by Java in ``warehouse``; its path."""
    fields = [[f.name, f.type.to_json()] for f in table.schema.fields]
    for result in java.run([dict(op="create", warehouse=warehouse, table="db.t", fields=fields, options=ON,
                                  primary_keys=[], partition_keys=[]),
                             dict(op="write", warehouse=warehouse, table="db.t", rows=_java_rows(rows))]):
        ok(result)
    return f"{warehouse}/db.db/t"


def _entries(table_path: str) -> list:
    meta = metadata(table_path)
    current = next(s for s in meta["snapshots"] if s["snapshot-id"] == meta["current-snapshot-id"])
    name = current["manifest-list"].rsplit("/", 1)[-1]
    return [e for m in fastavro.reader(open(f"{table_path}/metadata/{name}", "rb"))
            for e in fastavro.reader(open(f"{table_path}/metadata/{m['manifest_path'].rsplit('/', 1)[-1]}", "rb"))]


def test_our_nested_schema_and_field_ids_are_javas(java, session, tmp_path):
    session.sql("CREATE DATABASE db")
    session.sql(f"CREATE TABLE db.t ({COLUMNS}) {ICEBERG.format('')}")
    t = session.catalog.get_table("db.t")
    t.write_arrow(_arrow(t, ROWS))
    theirs = _java_table(java, str(tmp_path / "java"), t, ROWS)
    mine, javas = metadata(t.path), metadata(theirs)
    assert mine["schemas"] == javas["schemas"] and mine["last-column-id"] == javas["last-column-id"] == 6
    # the top-level ids' highest, as Java's IcebergSchema.highestFieldId (nested r.b has 9)
    people = mine["schemas"][0]["fields"][2]
    assert people["type"]["element-id"] == 2 ** 31 // 4 - 1 + 2 * 1024 + 1  # SpecialFields' array element id
    assert parquet_ids(t.path) == parquet_ids(theirs)
    ids = dict(parquet_ids(t.path)[0])
    assert ids["tags.value.element"] == 2 ** 31 // 4 - 1 + 5 * 1024 + 2 and ids["r.b.c"] == 8
    assert iceberg(t.path) == iceberg(theirs) == ours(t) == sorted(ROWS)
    # Java keeps no Paimon stats for nested columns (its value_stats_cols name only 'id'); ours count
    # their nulls, and both publish what the stats hold: equal on the columns both count
    (mine_counts,), (java_counts,) = [[{c["key"]: c["value"] for c in e["data_file"]["null_value_counts"]}
                                       for e in _entries(p)] for p in (t.path, theirs)]
    assert java_counts == {0: 0} and mine_counts == {0: 0, 1: 1, 2: 0, 5: 1, 6: 1}


def test_a_multiset_is_a_map_of_counts_as_in_java(java, catalog, tmp_path):
    fields = [DataField(0, "id", parse_type("BIGINT NOT NULL")), DataField(1, "bag", parse_type("MULTISET<STRING>"))]
    t = catalog.create_table("db.t", TableSchema.create(fields, options=ON))
    rows = [(1, [("a", 2), ("b", 1)]), (2, None)]
    t.write_arrow(_arrow(t, rows))
    theirs = _java_table(java, str(tmp_path / "java"), t, [(3, None)])
    mine, javas = metadata(t.path), metadata(theirs)
    assert mine["schemas"] == javas["schemas"]
    assert mine["schemas"][0]["fields"][1]["type"] == {
        "type": "map", "key-id": 2 ** 31 // 4 - 1 - 1024 - 1, "key": "string", "value-id": 2 ** 31 // 4 - 1 + 1024 + 1,
        "value-required": True, "value": "int"}
    assert parquet_ids(t.path) == parquet_ids(theirs)
    assert iceberg(t.path) == ours(t) == rows


def test_java_and_we_take_turns_on_a_nested_table(java, session):
    session.sql("CREATE DATABASE db")
    session.sql(f"CREATE TABLE db.t ({COLUMNS}) {ICEBERG.format('')}")
    # Spark's write path (the paimon data source), SQL literals
    session.sql("INSERT INTO db.t VALUES (1, array(1, NULL, 3), array(named_struct('name', 'ann', 'age', 30)), "
                "map('k', array(1L, 2L), 'z', NULL), named_struct('a', 1, 'b', named_struct('c', 'x')))")
    t = session.catalog.get_table("db.t")
    ok(java.run([dict(op="write", warehouse=session.warehouse, table="db.t", rows=_java_rows(ROWS[1:2]))])[0])
    t.write_arrow(_arrow(t, ROWS[2:]))
    meta = metadata(t.path)
    assert [s["snapshot-id"] for s in meta["snapshots"]] == [1, 2, 3]  # each writer extended the other's
    assert iceberg(t.path) == ours(t) == sorted(ROWS)
    java_read = ok(java.run([dict(op="read", warehouse=session.warehouse, table="db.t")])[0])
    assert sorted(map(tuple, java_read), key=lambda r: r[0]) == sorted(map(tuple, _java_rows(ROWS)))


def test_pyiceberg_reads_a_primary_key_table_after_nested_alters(session):
    session.sql("CREATE DATABASE db")
    session.sql(f"CREATE TABLE db.pk ({COLUMNS}) "
                + ICEBERG.format(", 'primary-key' = 'id', 'bucket' = '1'"))
    t = session.catalog.get_table("db.pk")
    t.write_arrow(_arrow(t, ROWS))
    t.write_arrow(_arrow(t, [(1, [9], None, [("u", [7])], {"a": 9, "b": {"c": "u"}})]))
    session.sql("CALL sys.compact(table => 'db.pk', compact_strategy => 'full')")
    t = session.catalog.get_table("db.pk")
    assert iceberg(t.path) == pyiceberg_view(ours(t), 2) and ours(t)[0][1] == [9]
    session.sql("ALTER TABLE db.pk ADD COLUMN extra MAP<STRING, STRUCT<x: INT>>")
    session.sql("ALTER TABLE db.pk ADD COLUMN r.b.d INT")
    t = session.catalog.get_table("db.pk")
    t.write_arrow(_arrow(t, [(4, None, None, None, {"a": 4, "b": {"c": "n", "d": 44}}, [("m", {"x": 5})])]))
    # Iceberg sees the file compacted before the ALTERs, read by ids with the current schema
    assert iceberg(t.path) == pyiceberg_view([r for r in ours(t) if r[0] != 4], 2)  # no file has extra
    assert ours(t)[0] == (1, [9], None, [("u", [7])], {"a": 9, "b": {"c": "u", "d": None}}, None)
    session.sql("CALL sys.compact(table => 'db.pk', compact_strategy => 'full')")
    t = session.catalog.get_table("db.pk")
    got = iceberg(t.path)
    assert got == pyiceberg_view(ours(t), 2, 5)
    assert got[-1] == (4, None, [], None, {"a": 4, "b": {"c": "n", "d": 44}}, [("m", {"x": 5})])
    fields = {f["name"]: f for f in metadata(t.path)["schemas"][-1]["fields"]}
    assert fields["r"]["type"]["fields"][1]["type"]["fields"][1]["name"] == "d"
    assert metadata(t.path)["last-column-id"] == fields["extra"]["id"]


def test_nanosecond_timestamps_are_refused_as_javas_cannot_be_read(java, catalog, tmp_path):
    """Java publishes TIMESTAMP(9) as timestamp_ns (format version 2 has no such type) over Parquet INT96
    files, which pyiceberg cannot read: we refuse the write, naming the column."""
    fields = [DataField(0, "id", parse_type("BIGINT")), DataField(1, "ts", parse_type("TIMESTAMP(9)"))]
    t = catalog.create_table("db.t", TableSchema.create(fields, options=ON))
    theirs = str(tmp_path / "java")
    t9, row = [["id", "BIGINT"], ["ts", "TIMESTAMP(9)"]], [1, "2024-01-02T03:04:05.123456789"]
    for result in java.run([dict(op="create", warehouse=theirs, table="db.t", fields=t9, options=ON, primary_keys=[],
                                 partition_keys=[]),
                            dict(op="write", warehouse=theirs, table="db.t", rows=[row])]):
        ok(result)
    assert metadata(f"{theirs}/db.db/t")["schemas"][0]["fields"][1]["type"] == "timestamp_ns"
    with pytest.raises(ResolveError, match="Cannot promote timestamp to timestamp_ns"):
        iceberg(f"{theirs}/db.db/t")
    with pytest.raises(SchemaError, match=r"^column 'ts' is TIMESTAMP\(9\), which Java Paimon's Parquet files hold "
                                          "as INT96"):
        t.write_arrow(pa.table({"id": [1], "ts": [None]}, schema=t.schema.arrow_schema()))
    assert t.snapshot_manager.latest_id() is None
