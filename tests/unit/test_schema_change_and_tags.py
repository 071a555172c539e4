"""Schema changes applied to schemas (no Spark), tag files in Java's shape, time travel by options."""

import datetime as dt
import json

import pyarrow as pa
import pytest

from paimon_sql.data.types import DataField, parse_type
from paimon_sql.exceptions import InvalidOptionError, SchemaError, SnapshotNotFoundError, TagError
from paimon_sql.schema import schema_change as sc
from paimon_sql.schema.table_schema import TableSchema
from paimon_sql.snapshot.tag_manager import Tag
from paimon_sql.store.time_travel import travel_snapshot


def _schema():
    fields = [DataField(0, "id", parse_type("INT")), DataField(1, "v", parse_type("STRING")),
              DataField(2, "n", parse_type("SMALLINT")), DataField(3, "dt", parse_type("STRING"))]
    return TableSchema.create(fields, partition_keys=["dt"], primary_keys=["id", "dt"], options={"bucket": "1"})


@pytest.mark.parametrize("old, new, ok", [
    ("TINYINT", "BIGINT", True), ("INT", "SMALLINT", False), ("INT", "DOUBLE", True), ("BIGINT", "DOUBLE", False),
    ("SMALLINT", "FLOAT", True), ("INT", "DECIMAL(12, 2)", True), ("INT", "DECIMAL(10, 2)", False),
    ("FLOAT", "DOUBLE", True), ("DOUBLE", "FLOAT", False), ("DECIMAL(10, 2)", "DECIMAL(12, 3)", True),
    ("DECIMAL(10, 2)", "DECIMAL(10, 3)", False), ("VARCHAR(5)", "STRING", True), ("STRING", "VARCHAR(5)", False),
    ("CHAR(3)", "VARCHAR(3)", True), ("DATE", "TIMESTAMP(3)", True), ("TIMESTAMP(6)", "TIMESTAMP(3)", False),
    ("STRING", "INT", False), ("BOOLEAN", "INT", False)])
def test_safe_widenings(old, new, ok):
    assert sc._widens(parse_type(old), parse_type(new)) is ok


def test_changes_keep_field_ids_and_number_new_ones():
    s0 = _schema()
    s1 = sc.apply(s0, [sc.AddColumn("c", parse_type("DOUBLE"), "x", "AFTER id"), sc.RenameColumn("v", "w"),
                       sc.UpdateColumnType("n", parse_type("BIGINT")), sc.DropColumn("n"),
                       sc.UpdateColumnPosition("dt", "FIRST"), sc.SetOption("k", "v"), sc.UpdateComment("hi")])
    assert s1.id == 1 and s1.highest_field_id == 4
    assert [(f.id, f.name) for f in s1.fields] == [(3, "dt"), (0, "id"), (4, "c"), (1, "w")]
    assert s1.field("c").description == "x" and s1.options["k"] == "v" and s1.comment == "hi"
    assert TableSchema.from_json(s1.to_json()) == s1
    s2 = sc.apply(s1, [sc.RemoveOption("k"), sc.RenameColumn("id", "key")])
    assert "k" not in s2.options and s2.primary_keys == ["key", "dt"]


@pytest.mark.parametrize("change, message", [
    (sc.DropColumn("id"), "primary key"), (sc.DropColumn("dt"), "partition key"),
    (sc.RenameColumn("dt", "d"), "partition key"), (sc.AddColumn("v", parse_type("INT")), "already exists"),
    (sc.AddColumn("z", parse_type("INT NOT NULL")), "NOT NULL"), (sc.UpdateColumnType("id", parse_type("BIGINT")),
                                                                 "primary key"),
    (sc.SetOption("merge-engine", "first-row"), "cannot be changed"), (sc.SetOption("bucket", "-1"), "dynamic"),
    (sc.SetOption("bucket", "x"), "bucket"), (sc.UpdateColumnPosition("v", "AFTER v"), "after itself"),
    (sc.AddColumn("_SEQUENCE_NUMBER", parse_type("INT")), "reserved"), (sc.DropColumn("nope"), "does not exist")])
def test_bad_changes_are_refused(change, message):
    with pytest.raises((SchemaError, InvalidOptionError), match=message):
        sc.apply(_schema(), [change])


def test_tag_file_has_javas_shape(catalog):
    t = catalog.create_table_from_arrow("db.t", pa.schema([("id", pa.int64())]))
    t.write_arrow(pa.table({"id": [1]}))
    tag = t.tag_manager.create("v1", t.snapshot_manager.latest(), dt.timedelta(days=1))
    d = json.loads(t.io.read_text(t.paths.tag_path("v1")))
    assert d["id"] == 1 and d["tagTimeRetained"] == 86400.0 and len(d["tagCreateTime"]) == 7
    back = Tag.from_json("v1", t.io.read_text(t.paths.tag_path("v1")))
    assert back.snapshot == tag.snapshot and back.time_retained == dt.timedelta(days=1)
    assert abs((back.create_time - tag.create_time).total_seconds()) < 0.001
    with pytest.raises(TagError, match="already exists"):
        t.tag_manager.create("v1", t.snapshot_manager.latest())
    plain = t.tag_manager.create("12", t.snapshot_manager.latest())  # digits: a name in Paimon 2.0
    d = json.loads(t.io.read_text(t.paths.tag_path("12")))
    assert "tagCreateTime" not in d and "tagTimeRetained" not in d and plain.create_time is None  # as Java
    assert travel_snapshot(t.copy({"scan.version": "12"})).id == 1  # the tag, not snapshot 12


def test_travel_options(catalog):
    t = catalog.create_table_from_arrow("db.t", pa.schema([("id", pa.int64())]))
    for i in range(3):
        t.write_arrow(pa.table({"id": [i]}))
    t.tag_manager.create("two", t.snapshot_manager.snapshot(2))
    assert travel_snapshot(t).id == 3
    assert travel_snapshot(t.copy({"scan.snapshot-id": "1"})).id == 1
    assert travel_snapshot(t.copy({"scan.tag-name": "two"})).id == 2
    assert travel_snapshot(t.copy({"scan.version": "two"})).id == 2
    assert travel_snapshot(t.copy({"scan.version": "1"})).id == 1
    millis = t.snapshot_manager.snapshot(2).time_millis
    assert travel_snapshot(t.copy({"scan.timestamp-millis": str(millis)})).id >= 2
    assert t.travel({"scan.snapshot-id": "1"}).to_arrow().num_rows == 1
    with pytest.raises(InvalidOptionError, match="conflict"):
        travel_snapshot(t.copy({"scan.snapshot-id": "1", "scan.tag-name": "two"}))
    with pytest.raises(InvalidOptionError, match="needs option 'scan.snapshot-id'"):
        travel_snapshot(t.copy({"scan.mode": "from-snapshot"}))
    with pytest.raises(SnapshotNotFoundError, match="no snapshot at or before"):
        travel_snapshot(t.copy({"scan.timestamp-millis": "1000"}))


def test_incremental_diff_with_nested_columns(catalog):
    schema = pa.schema([pa.field("id", pa.int64(), False), ("tags", pa.list_(pa.string())), ("n", pa.int64())])
    t = catalog.create_table_from_arrow("db.n", schema, primary_keys=["id"], options={"bucket": "1"})
    t.write_arrow(pa.table({"id": [1, 2, 3], "tags": [["a"], ["b"], None], "n": [1, 2, 3]}, schema=schema))
    t.write_arrow(pa.table({"id": [1, 2, 4], "tags": [["a"], ["b", "c"], []], "n": [1, 2, 4]}, schema=schema))
    diff = t.copy({"incremental-between": "1,2", "incremental-between-scan-mode": "diff"}).to_arrow()
    assert sorted(diff.to_pylist(), key=lambda r: r["id"]) == [{"id": 2, "tags": ["b", "c"], "n": 2},
                                                               {"id": 4, "tags": [], "n": 4}]
    delta = t.copy({"incremental-between": "1,2"}).to_arrow()  # delta: every row the commit wrote
    assert sorted(delta.column("id").to_pylist()) == [1, 2, 4]
