"""Schema changes as Paimon's REST catalog sends them (catalog/rest/schema_changes.py): each of
ours survives its JSON, and Paimon's moves and flags are read against the schema they change."""

import pytest

from paimon_sql.catalog.rest.schema_changes import from_json, to_json
from paimon_sql.data.types import DataField, parse_type
from paimon_sql.exceptions import SchemaError
from paimon_sql.schema.schema_change import (AddColumn, DropColumn, RemoveOption, RenameColumn, SetOption,
                                             UpdateColumnComment, UpdateColumnNullability, UpdateColumnPosition,
                                             UpdateColumnType, UpdateComment, apply)
from paimon_sql.schema.table_schema import TableSchema

SCHEMA = TableSchema.create([DataField(0, "a", parse_type("INT NOT NULL")), DataField(1, "b", parse_type("STRING")),
                             DataField(2, "s", parse_type("ROW<x INT, y INT>")), DataField(5, "c", parse_type("INT"))],
                            primary_keys=["a"], options={"bucket": "1"})


@pytest.mark.parametrize("change", [
    SetOption("k", "v"), RemoveOption("k"), UpdateComment("hi"), UpdateComment(None),
    AddColumn("d", parse_type("BIGINT"), "new", None), AddColumn("d", parse_type("INT"), None, "FIRST"),
    AddColumn(("s", "z"), parse_type("INT"), None, "AFTER x"), RenameColumn("b", "b2"), RenameColumn(("s", "x"), "x2"),
    DropColumn("c"), DropColumn(("s", "y")), UpdateColumnType("c", parse_type("BIGINT")),
    UpdateColumnComment("b", "note"), UpdateColumnNullability("b", True), UpdateColumnPosition("c", "FIRST"),
    UpdateColumnPosition("c", "AFTER a"),
])
def test_each_change_survives_its_json(change):
    assert from_json([to_json(change)], SCHEMA) == [change]


def test_paimon_moves_before_and_last_read_against_the_schema():
    before = {"action": "updateColumnPosition", "move": {"fieldName": "c", "referenceFieldName": "b", "type": "BEFORE"}}
    first = dict(before, move={"fieldName": "c", "referenceFieldName": "a", "type": "BEFORE"})
    last = {"action": "addColumn", "fieldNames": ["d"], "dataType": "INT",
            "move": {"fieldName": "d", "referenceFieldName": None, "type": "LAST"}}
    assert from_json([before, first], SCHEMA) == [UpdateColumnPosition("c", "AFTER a"),
                                                  UpdateColumnPosition("c", "FIRST")]
    assert from_json([last], SCHEMA) == [AddColumn("d", parse_type("INT"), None, "AFTER c")]
    moved = apply(SCHEMA, from_json([before], SCHEMA))
    assert [f.name for f in moved.fields] == ["a", "c", "b", "s"]


def test_type_change_without_keep_nullability_takes_the_new_types():
    loose = {"action": "updateColumnType", "fieldNames": ["c"], "newDataType": "BIGINT", "keepNullability": False}
    assert from_json([loose], SCHEMA) == [UpdateColumnType("c", parse_type("BIGINT"))]
    tight = dict(loose, newDataType="BIGINT NOT NULL")
    assert from_json([tight], SCHEMA)[1] == UpdateColumnNullability("c", False)
    with pytest.raises(SchemaError, match="NOT NULL"):
        apply(SCHEMA, from_json([tight], SCHEMA))


@pytest.mark.parametrize("item, message", [
    ({"action": "dropPrimaryKey"}, "dropping a primary key"),
    ({"action": "updateColumnDefaultValue", "fieldNames": ["b"], "newDefaultValue": "'x'"}, "default values"),
    ({"action": "nope"}, "unknown schema change action 'nope'"),
    ({"action": "renameColumn", "fieldNames": ["b"]}, "lacks field 'newName'"),
    ({"action": "dropColumn", "fieldNames": []}, "names no column"),
])
def test_what_cannot_be_honoured_is_refused_by_name(item, message):
    with pytest.raises(SchemaError, match=message):
        from_json([item], SCHEMA)
