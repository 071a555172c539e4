"""Catalog functions (paimon_sql/function/function.py): Paimon's function JSON and FunctionChange,
and the filesystem catalog keeping them in the warehouse (``<db>.db/$functions/<name>.json``)."""

import json

import pytest

from paimon_sql.catalog import FileSystemCatalog
from paimon_sql.exceptions import (FunctionAlreadyExistsError, FunctionError, FunctionNotFoundError,
                                   InvalidIdentifierError)
from paimon_sql.function.function import Function, apply_changes, parse_change

LAMBDA = {"type": "lambda", "definition": "(Integer a, Integer b) -> (long) a * b", "language": "JAVA"}


def area() -> Function:
    return Function.from_procedure("area", '[{"id": 0, "name": "w", "type": "INT"}, {"id": 1, "name": "h", '
                                   '"type": "INT"}]', '[{"id": 0, "name": "a", "type": "BIGINT"}]', None, "w*h",
                                   "k1=v1, k2=v2")


def test_a_function_survives_paimons_json():
    f = area()
    assert f.deterministic and f.options == {"k1": "v1", "k2": "v2"} and [p.name for p in f.input_params] == ["w", "h"]
    d = f.to_dict()
    assert set(d) == {"name", "inputParams", "returnParams", "deterministic", "definitions", "comment", "options"}
    assert Function.from_dict(json.loads(json.dumps(d))) == f
    assert Function.from_procedure("nothing", "", None, False, None, None).input_params is None


def test_changes_apply_in_order_and_bad_ones_are_refused():
    f = apply_changes(area(), [{"action": "addDefinition", "name": "spark", "definition": LAMBDA},
                               {"action": "setOption", "key": "k3", "value": "v3"},
                               {"action": "removeOption", "key": "k1"},
                               {"action": "updateComment", "comment": None}])
    assert f.definitions == {"spark": LAMBDA} and f.options == {"k2": "v2", "k3": "v3"} and f.comment is None
    f = apply_changes(f, [parse_change('{"action": "updateDefinition", "name": "spark", "definition": '
                                       '{"type": "sql", "definition": "w * h"}}')])
    assert f.definitions["spark"]["type"] == "sql"
    assert apply_changes(f, [{"action": "dropDefinition", "name": "spark"}]).definitions == {}
    for change, message in [({"action": "addDefinition", "name": "spark", "definition": LAMBDA}, "already has"),
                            ({"action": "dropDefinition", "name": "flink"}, "has no definition 'flink'"),
                            ({"action": "addDefinition", "name": "x", "definition": {"type": "cobol"}}, "type one of"),
                            ({"action": "rename"}, "unknown function change action 'rename'")]:
        with pytest.raises(FunctionError, match=message):
            apply_changes(f, [change])
    with pytest.raises(FunctionError, match="not JSON"):
        parse_change("{")
    with pytest.raises(InvalidIdentifierError, match="invalid function name"):
        Function.from_procedure("../x", "", "", None, None, None)
    with pytest.raises(FunctionError, match="inputParams"):
        Function.from_procedure("f", "[{\"name\": 1}]", "", None, None, None)


def test_the_filesystem_catalog_keeps_functions_in_the_warehouse(tmp_path):
    catalog = FileSystemCatalog(str(tmp_path))
    catalog.create_database("db")
    catalog.create_function("db", area())
    with pytest.raises(FunctionAlreadyExistsError):
        catalog.create_function("db", area())
    catalog.create_function("db", area(), ignore_if_exists=True)
    assert catalog.list_functions("db") == ["area"]
    assert (tmp_path / "db.db" / "$functions" / "area.json").exists()
    catalog.alter_function("db", "area", [{"action": "addDefinition", "name": "spark", "definition": LAMBDA}])
    assert FileSystemCatalog(str(tmp_path)).get_function("db", "area").definitions == {"spark": LAMBDA}
    assert catalog.list_tables("db") == [] and catalog.list_views("db") == []
    catalog.drop_function("db", "area")
    with pytest.raises(FunctionNotFoundError):
        catalog.get_function("db", "area")
    catalog.drop_function("db", "area", ignore_if_not_exists=True)
    with pytest.raises(FunctionNotFoundError):
        catalog.alter_function("db", "area", [])
