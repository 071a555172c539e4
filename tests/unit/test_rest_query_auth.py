"""Row filters and column masks as Paimon's query auth JSON (paimon_sql/server/rest/query_auth.py): the
strings match what Paimon 2.0's ``JsonSerdeUtil.toFlatJson`` writes (PredicateJsonSerdeTest's examples),
NOT reaches the leaves, and every rule without an exact Paimon form is refused naming itself."""

import json

import pytest

from paimon_sql.access.policy import Rules
from paimon_sql.data.types import DataField, parse_type
from paimon_sql.schema.table_schema import TableSchema
from paimon_sql.server.rest.query_auth import NotSendable, convert

COLUMNS = [("id", "INT NOT NULL"), ("Region", "STRING"), ("ssn", "VARCHAR(11)"), ("ok", "BOOLEAN"),
           ("score", "DOUBLE"), ("day", "DATE"), ("tiny", "TINYINT"), ("code", "CHAR(2)"), ("big", "BIGINT")]
SCHEMA = TableSchema(0, [DataField(i, n, parse_type(t)) for i, (n, t) in enumerate(COLUMNS)], len(COLUMNS) - 1)


def ref(name):
    i = [n for n, _ in COLUMNS].index(name)
    return {"index": i, "name": name, "type": COLUMNS[i][1]}


def leaf(name, function, *literals):
    return {"kind": "LEAF", "transform": {"name": "FIELD_REF", "fieldRef": ref(name)}, "function": function,
            "literals": list(literals)}


def compound(function, *children):
    return {"kind": "COMPOUND", "function": function, "children": list(children)}


def one_filter(where):
    [text] = convert(Rules((where,), {}), SCHEMA).filters
    return json.loads(text)


def one_mask(column, mask):
    return {k: json.loads(v) for k, v in convert(Rules((), {column: mask}), SCHEMA).masks.items()}


def test_flat_json_as_java_writes_it():
    """Byte for byte PredicateJsonSerdeTest's shape: kind, transform, function, literals; no spaces."""
    [text] = convert(Rules(("id = 1",), {}), SCHEMA).filters
    assert text == ('{"kind":"LEAF","transform":{"name":"FIELD_REF","fieldRef":{"index":0,"name":"id",'
                    '"type":"INT NOT NULL"}},"function":"EQUAL","literals":[1]}')


@pytest.mark.parametrize("where, expected", [
    ("id > 1", leaf("id", "GREATER_THAN", 1)),
    ("1 < id", leaf("id", "GREATER_THAN", 1)),
    ("id != -3", leaf("id", "NOT_EQUAL", -3)),
    ("region = 'EU'", leaf("Region", "EQUAL", "EU")),
    ("region = 'O''Brien'", leaf("Region", "EQUAL", "OBrien")),  # Spark joins adjacent literals
    ("ok", leaf("ok", "EQUAL", True)),
    ("ok = false", leaf("ok", "EQUAL", False)),
    ("region IS NULL", leaf("Region", "IS_NULL")),
    ("score IS NOT NULL", leaf("score", "IS_NOT_NULL")),
    ("tiny IN (1, 2)", leaf("tiny", "IN", 1, 2)),
    ("region NOT IN ('a')", leaf("Region", "NOT_IN", "a")),
    ("big BETWEEN 1 AND 9", compound("AND", leaf("big", "GREATER_OR_EQUAL", 1), leaf("big", "LESS_OR_EQUAL", 9))),
    ("big NOT BETWEEN 1 AND 9", compound("OR", leaf("big", "LESS_THAN", 1), leaf("big", "GREATER_THAN", 9))),
    ("region LIKE 'E%'", leaf("Region", "STARTS_WITH", "E")),
    ("region LIKE '%U'", leaf("Region", "ENDS_WITH", "U")),
    ("region LIKE '%x%'", leaf("Region", "CONTAINS", "x")),
    ("region NOT LIKE 'EU'", leaf("Region", "NOT_EQUAL", "EU")),
    ("id > 1 AND (region = 'EU' OR region = 'US') AND ok",
     compound("AND", leaf("id", "GREATER_THAN", 1),
              compound("OR", leaf("Region", "EQUAL", "EU"), leaf("Region", "EQUAL", "US")), leaf("ok", "EQUAL", True))),
    ("NOT (id < 5 OR region IS NULL)", compound("AND", leaf("id", "GREATER_OR_EQUAL", 5),
                                                leaf("Region", "IS_NOT_NULL"))),
    ("NOT NOT id = 1", leaf("id", "EQUAL", 1)),
])
def test_filters(where, expected):
    assert one_filter(where) == expected


@pytest.mark.parametrize("where, reason", [
    ("score > 1.5", "DOUBLE"),
    ("day = DATE '2024-01-01'", "DATE"),
    ("code = 'ab'", "CHAR(2)"),
    ("id = 1.5", "not a INT NOT NULL literal"),
    ("tiny < 1000", "outside the range"),
    ("region = NULL", "NULL literal"),
    ("id = big", "not a INT NOT NULL literal"),
    ("upper(region) = 'EU'", "is not a column"),
    ("region LIKE 'E_'", "no _ or escapes"),
    ("region NOT LIKE 'E%'", "no negation"),
    ("region RLIKE 'E.*'", "has no Paimon predicate"),
    ("nope = 1", "no column nope"),
    ("id", "not a BOOLEAN"),
])
def test_filters_refused(where, reason):
    with pytest.raises(NotSendable) as e:
        convert(Rules((where,), {}), SCHEMA)
    assert f"row filter {where!r}" in str(e.value) and reason in str(e.value)


@pytest.mark.parametrize("column, mask, expected", [
    ("ssn", "'***'", {"name": "CONCAT", "inputs": ["***"]}),
    ("ssn", "NULL", {"name": "NULL"}),
    ("big", "CAST(NULL AS BIGINT)", {"name": "NULL"}),
    ("region", "region", {"name": "FIELD_REF", "fieldRef": ref("Region")}),
    ("ssn", "concat('x-', ssn)", {"name": "CONCAT", "inputs": ["x-", ref("ssn")]}),
    ("ssn", "'<' || ssn || '>'", {"name": "CONCAT", "inputs": ["<", ref("ssn"), ">"]}),
    ("region", "concat_ws('/', region, 'z')", {"name": "CONCAT_WS", "inputs": ["/", ref("Region"), "z"]}),
    ("region", "upper(region)", {"name": "UPPER", "inputs": [ref("Region")]}),
    ("region", "lower(region)", {"name": "LOWER", "inputs": [ref("Region")]}),
])
def test_masks(column, mask, expected):
    assert one_mask(column, mask) == {COLUMNS[[n.lower() for n, _ in COLUMNS].index(column)][0]: expected}


@pytest.mark.parametrize("column, mask, reason", [
    ("ssn", "concat('***-**-', right(ssn, 4))", "inputs are the column and string literals"),
    ("ssn", "substring(ssn, 1, 3)", "no Paimon transform"),
    ("ssn", "upper(region)", "only its own column"),
    ("id", "NULL", "NOT NULL"),
    ("big", "-1", "only NULL or the column itself"),
    ("code", "'**'", "only NULL or the column itself"),
])
def test_masks_refused(column, mask, reason):
    with pytest.raises(NotSendable) as e:
        convert(Rules((), {column: mask}), SCHEMA)
    assert f"column mask {mask!r}" in str(e.value) and reason in str(e.value)


def test_body_and_inert_masks():
    """No rules: nulls, as Java's AuthTableQueryResponse; a mask of a column the table lacks is not sent."""
    assert convert(Rules((), {"gone": "NULL"}), SCHEMA).body() == {"filter": None, "columnMasking": None}
    body = convert(Rules(("id > 1", "ok"), {"ssn": "'x'"}), SCHEMA).body()
    assert len(body["filter"]) == 2 and set(body["columnMasking"]) == {"ssn"}
