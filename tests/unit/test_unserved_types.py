"""Paimon 2.0's BLOB and VECTOR types: parsed from schema JSON as Java 2.0 writes them (so a table holding them
opens), refused in a table paimon-sql creates, and named per column by paimon_sql/table/unserved_features.py."""

import json

import pytest

from paimon_sql.data.types import DataField, parse_type, parse_type_json, unserved_type
from paimon_sql.exceptions import SchemaError
from paimon_sql.schema.table_schema import TableSchema
from paimon_sql.table.unserved_features import unserved_columns

# fields as Java 2.0's JsonSerdeUtil writes them (DataTypeJsonParser reads them back)
JAVA_FIELDS = [
    {"id": 0, "name": "id", "type": "INT NOT NULL"},
    {"id": 1, "name": "picture", "type": "BLOB"},
    {"id": 2, "name": "embedding", "type": {"type": "VECTOR NOT NULL", "element": "FLOAT", "length": 3}},
    {"id": 3, "name": "frames", "type": {"type": "ARRAY", "element": "BLOB"}},
    {"id": 4, "name": "raw", "type": "BYTES"},
    {"id": 5, "name": "tags", "type": {"type": "ARRAY", "element": "FLOAT"}},
]


def test_java_schema_with_blob_and_vector_opens():
    schema = TableSchema.from_json(json.dumps({
        "version": 3, "id": 0, "fields": JAVA_FIELDS, "highestFieldId": 5, "partitionKeys": [], "primaryKeys": [],
        "options": {"blob-descriptor-field": "raw", "vector-field": "tags"}, "timeMillis": 0}))
    assert [str(f.type) for f in schema.fields] == ["INT NOT NULL", "BLOB", "VECTOR<FLOAT, 3> NOT NULL",
                                                    "ARRAY<BLOB>", "BYTES", "ARRAY<FLOAT>"]
    assert [f.to_json() for f in schema.fields] == JAVA_FIELDS  # written back as Java wrote them
    assert unserved_columns(schema) == {"picture": "BLOB", "embedding": "VECTOR", "frames": "BLOB",
                                        "raw": "BLOB (stored as a descriptor)", "tags": "VECTOR"}
    schema.arrow_schema()  # every column has an Arrow shape, for the columns that are read


@pytest.mark.parametrize("text, kind", [
    ("BLOB", "BLOB"), ("BLOB NOT NULL", "BLOB"), ("VECTOR<DOUBLE, 128>", "VECTOR"), ("MAP<STRING, BLOB>", "BLOB"),
    ("ROW<`a` INT, `v` VECTOR<TINYINT, 2>>", "VECTOR"), ("ARRAY<BYTES>", None), ("VARIANT", None),
])
def test_type_strings(text, kind):
    t = parse_type(text)
    assert str(t) == text and parse_type_json(t.to_json()) == t
    assert unserved_type(t) == kind


@pytest.mark.parametrize("bad, message", [
    ("VECTOR<STRING, 3>", "VECTOR elements must be one of BOOLEAN, TINYINT, SMALLINT, INT, BIGINT, FLOAT, DOUBLE, "
                          "not STRING"),
    ("VECTOR<FLOAT, 0>", "VECTOR length must be 1..2147483647, got 0"),
])
def test_bad_vectors(bad, message):
    with pytest.raises(SchemaError, match=f"^{message}$"):
        parse_type(bad)


@pytest.mark.parametrize("text", ["BLOB", "VECTOR<FLOAT, 3>", "ARRAY<BLOB>"])
def test_we_create_no_table_holding_them(text):
    with pytest.raises(SchemaError, match=f"^column 'c' is {text.split('<')[0] if 'VECTOR' in text else 'BLOB'}, "
                                          "which paimon-sql does not write$"):
        TableSchema.create([DataField(0, "id", parse_type("INT")), DataField(1, "c", parse_type(text))])
