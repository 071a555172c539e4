"""Schema changes as Paimon's REST catalog sends them: the JSON of Java's ``SchemaChange`` (an
``action`` and its fields), to and from paimon-sql's changes (:mod:`paimon_sql.schema.schema_change`).

A REST client alters a table by ``POST .../tables/{t}`` with ``{"changes": [...]}``; the server
applies them to the latest schema. Both halves of paimon-sql use this one mapping: the client
sends what ALTER TABLE asked for, the server reads what Java, paimon-spark or pypaimon sent.

Caveats: Paimon places a column ``BEFORE`` another or ``LAST``; paimon-sql's changes say ``FIRST``
or ``AFTER <column>``, so those moves are read against the schema they change (the column before
the reference, the last column). ``updateColumnType`` without ``keepNullability`` also takes the
new type's nullability (a column made nullable; NOT NULL stays refused, as ALTER refuses it).
``updateColumnDefaultValue`` and ``dropPrimaryKey`` are refused by name: paimon-sql cannot honour them.

Example::

    to_json(AddColumn("c", parse_type("INT")))
    # {'action': 'addColumn', 'fieldNames': ['c'], 'dataType': 'INT', 'comment': None, 'move': None}
"""

from __future__ import annotations

from typing import Callable, Dict, List, Optional, Sequence

from paimon_sql.data.types import DataField, RowType, parse_type_json
from paimon_sql.exceptions import SchemaError
from paimon_sql.schema.schema_change import (AddColumn, DropColumn, RemoveOption, RenameColumn, SchemaChange,
                                             SetOption, UpdateColumnComment, UpdateColumnNullability,
                                             UpdateColumnPosition, UpdateColumnType, UpdateComment, path_of)
from paimon_sql.schema.table_schema import TableSchema

ACTION = "action"


def _names(change) -> List[str]:
    return list(path_of(change.name))


def _move(field: str, position: Optional[str]) -> Optional[dict]:
    """Our position (None: last, ``FIRST``, ``AFTER <column>``) as Paimon's ``Move``."""
    if position is None:
        return None
    if position.upper() == "FIRST":
        return {"fieldName": field, "referenceFieldName": None, "type": "FIRST"}
    return {"fieldName": field, "referenceFieldName": position.split(None, 1)[1], "type": "AFTER"}


_TO_JSON: Dict[type, Callable[[SchemaChange], dict]] = {
    SetOption: lambda c: {ACTION: "setOption", "key": c.key, "value": c.value},
    RemoveOption: lambda c: {ACTION: "removeOption", "key": c.key},
    UpdateComment: lambda c: {ACTION: "updateComment", "comment": c.comment},
    AddColumn: lambda c: {ACTION: "addColumn", "fieldNames": _names(c), "dataType": c.type.to_json(),
                          "comment": c.comment, "move": _move(_names(c)[-1], c.position)},
    RenameColumn: lambda c: {ACTION: "renameColumn", "fieldNames": _names(c), "newName": c.new_name},
    DropColumn: lambda c: {ACTION: "dropColumn", "fieldNames": _names(c)},
    # ours keeps the column's nullability
    UpdateColumnType: lambda c: {ACTION: "updateColumnType", "fieldNames": _names(c),
                                 "newDataType": c.type.to_json(), "keepNullability": True},
    UpdateColumnComment: lambda c: {ACTION: "updateColumnComment", "fieldNames": _names(c),
                                    "newComment": c.comment},
    UpdateColumnNullability: lambda c: {ACTION: "updateColumnNullability", "fieldNames": _names(c),
                                        "newNullability": c.nullable},
    UpdateColumnPosition: lambda c: {ACTION: "updateColumnPosition", "move": _move(c.name, c.position)},
}


def to_json(change: SchemaChange) -> dict:
    """``change`` as the JSON of Paimon's ``SchemaChange``."""
    return _TO_JSON[type(change)](change)


# -- from Paimon's JSON ----------------------------------------------------------------------------

def _siblings(schema: TableSchema, path: Sequence[str]) -> List[DataField]:
    """The fields beside the one at ``path`` (the top-level columns, or a ROW's fields)."""
    fields: Sequence[DataField] = schema.fields
    for name in path[:-1]:
        found = next((f for f in fields if f.name == name), None)
        t = found.type if found is not None else None
        while t is not None and not isinstance(t, RowType):  # through ARRAY element / MAP value
            t = getattr(t, "element", None) or getattr(t, "value", None)
        if t is None:
            raise SchemaError(f"column '{'.'.join(path)}': '{name}' is not a ROW column")
        fields = t.fields
    return list(fields)


def _position(move: Optional[dict], schema: TableSchema, path: Sequence[str]) -> Optional[str]:
    """Paimon's ``Move`` as our position, read against the fields beside ``path``."""
    if not move:
        return None
    kind, ref = str(move.get("type", "")).upper(), move.get("referenceFieldName")
    names = [f.name for f in _siblings(schema, path) if f.name != path[-1]]
    if kind == "FIRST":
        return "FIRST"
    if kind == "AFTER":
        return f"AFTER {ref}"
    if kind == "LAST":
        return f"AFTER {names[-1]}" if names else None
    if kind == "BEFORE":
        if ref not in names:
            raise SchemaError(f"column '{'.'.join(path)}': cannot move before unknown column '{ref}'")
        i = names.index(ref)
        return "FIRST" if i == 0 else f"AFTER {names[i - 1]}"
    raise SchemaError(f"unknown column move type {move.get('type')!r}")


def _name(d: dict):
    names = d.get("fieldNames") or []
    if not names:
        raise SchemaError(f"schema change '{d.get(ACTION)}' names no column (fieldNames)")
    return names[0] if len(names) == 1 else tuple(names)


def _field(schema: TableSchema, path: Sequence[str]) -> Optional[DataField]:
    return next((f for f in _siblings(schema, path) if f.name == path[-1]), None)


def _update_type(d: dict, schema: TableSchema) -> List[SchemaChange]:
    name, new = _name(d), parse_type_json(d["newDataType"])
    changes: List[SchemaChange] = [UpdateColumnType(name, new)]
    old = _field(schema, path_of(name))
    if not d.get("keepNullability") and old is not None and old.type.nullable != new.nullable:
        changes.append(UpdateColumnNullability(name, new.nullable))
    return changes


def _add(d: dict, schema: TableSchema) -> List[SchemaChange]:
    name = _name(d)
    return [AddColumn(name, parse_type_json(d["dataType"]), d.get("comment"),
                      _position(d.get("move"), schema, path_of(name)))]


def _reposition(d: dict, schema: TableSchema) -> List[SchemaChange]:
    move = d.get("move") or {}
    field = move.get("fieldName")
    position = _position(move, schema, (field,))
    return [UpdateColumnPosition(field, position)] if position else []


_FROM_JSON: Dict[str, Callable[[dict, TableSchema], List[SchemaChange]]] = {
    "setOption": lambda d, s: [SetOption(d["key"], d["value"])],
    "removeOption": lambda d, s: [RemoveOption(d["key"])],
    "updateComment": lambda d, s: [UpdateComment(d.get("comment"))],
    "addColumn": _add,
    "renameColumn": lambda d, s: [RenameColumn(_name(d), d["newName"])],
    "dropColumn": lambda d, s: [DropColumn(_name(d))],
    "updateColumnType": _update_type,
    "updateColumnComment": lambda d, s: [UpdateColumnComment(_name(d), d.get("newComment"))],
    "updateColumnNullability": lambda d, s: [UpdateColumnNullability(_name(d), bool(d["newNullability"]))],
    "updateColumnPosition": _reposition,
}
_REFUSED = {"updateColumnDefaultValue": "column default values", "dropPrimaryKey": "dropping a primary key"}


def from_json(items: Sequence[dict], schema: TableSchema) -> List[SchemaChange]:
    """Paimon's ``SchemaChange`` JSON list as our changes to ``schema`` (the latest, which they change)."""
    changes: List[SchemaChange] = []
    for d in items:
        action = d.get(ACTION) if isinstance(d, dict) else None
        if action in _REFUSED:
            raise SchemaError(f"schema change '{action}' is not supported: paimon-sql cannot honour "
                              f"{_REFUSED[action]}")
        if action not in _FROM_JSON:
            raise SchemaError(f"unknown schema change action {action!r}")
        try:
            changes += _FROM_JSON[action](d, schema)
        except KeyError as e:
            raise SchemaError(f"schema change '{action}' lacks field {e}") from None
    return changes
