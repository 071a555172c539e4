import pyarrow as pa
import pytest

from paimon_sql.data.types import from_arrow, parse_type, parse_type_json
from paimon_sql.exceptions import SchemaError

TYPE_STRINGS = [
    "BOOLEAN", "TINYINT", "SMALLINT", "INT NOT NULL", "BIGINT", "FLOAT", "DOUBLE", "DATE", "CHAR(3)",
    "VARCHAR(20)", "STRING", "BINARY(4)", "VARBINARY(9)", "BYTES", "DECIMAL(10, 2)", "DECIMAL(38, 18)",
    "TIME(0)", "TIMESTAMP(3)", "TIMESTAMP(6)", "TIMESTAMP(9)", "TIMESTAMP(6) WITH LOCAL TIME ZONE",
    "ARRAY<INT NOT NULL>", "MULTISET<STRING>", "MAP<STRING, ARRAY<DOUBLE>>", "ROW<`a` INT, `b` STRING> NOT NULL",
]


@pytest.mark.parametrize("text", TYPE_STRINGS)
def test_type_string_round_trip(text):
    t = parse_type(text)
    assert str(t) == text
    assert parse_type_json(t.to_json()) == t
    t.to_arrow()  # every type has an Arrow form


@pytest.mark.parametrize("alias, canonical", [
    ("INTEGER", "INT"), ("DEC(5,1)", "DECIMAL(5, 1)"), ("NUMERIC", "DECIMAL(10, 0)"), ("TIMESTAMP", "TIMESTAMP(6)"),
    ("TIMESTAMP_LTZ(3)", "TIMESTAMP(3) WITH LOCAL TIME ZONE"), ("VARCHAR(2147483647)", "STRING"),
    ("int not null", "INT NOT NULL"), ("ROW<a INT>", "ROW<`a` INT>"),
])
def test_aliases(alias, canonical):
    assert str(parse_type(alias)) == canonical


def test_nested_json_form_matches_java():
    assert parse_type("MAP<STRING, ARRAY<INT>>").to_json() == {
        "type": "MAP", "key": "STRING", "value": {"type": "ARRAY", "element": "INT"}}


@pytest.mark.parametrize("bad", ["FOO", "DECIMAL(40, 2)", "DECIMAL(5, 6)", "TIMESTAMP(12)", "ARRAY<INT", "INT INT"])
def test_bad_types_are_clear_errors(bad):
    with pytest.raises(SchemaError):
        parse_type(bad)


def test_arrow_round_trip():
    for text in ["BIGINT NOT NULL", "STRING", "DECIMAL(12, 3)", "TIMESTAMP(3)", "DATE", "ARRAY<STRING>",
                 "MAP<STRING, BIGINT>"]:
        t = parse_type(text)
        assert from_arrow(t.to_arrow(), t.nullable) == t
    assert str(from_arrow(pa.timestamp("us", tz="UTC"))) == "TIMESTAMP(6) WITH LOCAL TIME ZONE"
