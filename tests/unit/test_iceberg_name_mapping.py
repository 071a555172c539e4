"""Iceberg's name mapping (paimon_sql/iceberg/name_mapping.py): every name a field has had, nested
fields included, and a name another field holds now left to that field."""

import json

from paimon_sql.iceberg.name_mapping import name_mapping


def _schema(*fields) -> dict:
    return {"type": "struct", "fields": list(fields)}


def _f(fid: int, name: str, t="long") -> dict:
    return {"id": fid, "name": name, "required": False, "type": t}


def test_earlier_names_follow_the_current_one():
    schemas = [_schema(_f(1, "a"), _f(2, "b")), _schema(_f(1, "x"), _f(2, "b")), _schema(_f(1, "y"), _f(2, "b"))]
    assert json.loads(name_mapping(schemas)) == [{"field-id": 1, "names": ["y", "a", "x"]},
                                                 {"field-id": 2, "names": ["b"]}]


def test_a_name_held_by_another_field_now_stays_with_it():
    # 'a' dropped (id 1) and added again (id 3); 'p' and 'q' swapped
    schemas = [_schema(_f(1, "a"), _f(4, "p"), _f(5, "q")),
               _schema(_f(3, "a"), _f(4, "q"), _f(5, "p"))]
    assert json.loads(name_mapping(schemas)) == [{"field-id": 3, "names": ["a"]}, {"field-id": 4, "names": ["q"]},
                                                 {"field-id": 5, "names": ["p"]}]


def test_nested_fields_lists_and_maps():
    row_v1 = {"type": "struct", "fields": [_f(7, "c")]}
    row_v2 = {"type": "struct", "fields": [_f(7, "d"), _f(8, "e")]}
    listed = {"type": "list", "element-id": 100, "element-required": False, "element": row_v2}
    mapped = {"type": "map", "key-id": 200, "key": "string", "value-id": 201, "value-required": False,
              "value": "int"}
    schemas = [_schema(_f(6, "r", row_v1)), _schema(_f(6, "r", row_v2), _f(9, "l", listed), _f(10, "m", mapped))]
    assert json.loads(name_mapping(schemas)) == [
        {"field-id": 6, "names": ["r"], "fields": [{"field-id": 7, "names": ["d", "c"]},
                                                   {"field-id": 8, "names": ["e"]}]},
        {"field-id": 9, "names": ["l"], "fields": [
            {"field-id": 100, "names": ["element"], "fields": [{"field-id": 7, "names": ["d", "c"]},
                                                               {"field-id": 8, "names": ["e"]}]}]},
        {"field-id": 10, "names": ["m"], "fields": [{"field-id": 200, "names": ["key"]},
                                                    {"field-id": 201, "names": ["value"]}]}]
