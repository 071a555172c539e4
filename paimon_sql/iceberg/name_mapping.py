"""Iceberg's default name mapping (``schema.name-mapping.default``) for data files without field ids.

Iceberg readers find a data file's columns by the field ids the file carries. Paimon's Parquet
files carry them (``PARQUET:field_id``); its ORC and Avro files do not carry Iceberg's (Java's ORC
writer stamps ``paimon.id``, pyarrow's none; Avro data files have no ``field-id``). For those,
Iceberg readers fall back to the table's name mapping: each field id with the names it is found
under in files. Java Paimon 2.0 writes no mapping, so Iceberg Java maps by the current names alone
(a renamed column reads as NULL in older files) and pyiceberg refuses such files; the mapping lists
every name a column has had, so older files keep reading after a rename.

A name is listed for one field only: an earlier name that another field now has (a column dropped
and its name reused, two names swapped) stays with the field that has it now, as readers of the
newest files need.

Example: ``name_mapping(metadata["schemas"])`` gives ``[{"field-id": 1, "names": ["id"]}, ...]`` as JSON.
"""

from __future__ import annotations

import json
from typing import Dict, List, Sequence, Union

KEY = "schema.name-mapping.default"


def name_mapping(schemas: Sequence[dict]) -> str:
    """The mapping of the newest of ``schemas`` (Iceberg schema JSON objects, oldest first), with
    the earlier names of its fields, as the JSON text of the table property."""
    earlier: Dict[int, List[str]] = {}
    for schema in schemas[:-1]:
        _names(schema["fields"], earlier)
    return json.dumps(_mapped(schemas[-1]["fields"], earlier), separators=(",", ":"))


def _names(fields: List[dict], out: Dict[int, List[str]]) -> None:
    for f in fields:
        out.setdefault(f["id"], []).append(f["name"])
        _type_names(f["type"], out)


def _type_names(t: Union[str, dict], out: Dict[int, List[str]]) -> None:
    if isinstance(t, dict) and t["type"] == "struct":
        _names(t["fields"], out)
    for child in _children(t):
        _type_names(child["type"], out)


def _mapped(fields: List[dict], earlier: Dict[int, List[str]]) -> List[dict]:
    taken = {f["name"] for f in fields}
    return [_entry(f["id"], [f["name"]] + [n for n in dict.fromkeys(earlier.get(f["id"], [])) if n not in taken],
                   f["type"], earlier) for f in fields]


def _entry(field_id: int, names: List[str], t: Union[str, dict], earlier: Dict[int, List[str]]) -> dict:
    entry: dict = {"field-id": field_id, "names": names}
    if isinstance(t, dict):  # a struct's fields, a list's element, a map's key and value
        entry["fields"] = (_mapped(t["fields"], earlier) if t["type"] == "struct" else
                           [_entry(c["id"], [c["name"]], c["type"], earlier) for c in _children(t)])
    return entry


def _children(t: Union[str, dict]) -> List[dict]:
    """A list's element or a map's key and value, as dicts of id, name and type."""
    if isinstance(t, str):
        return []
    if t["type"] == "list":
        return [{"id": t["element-id"], "name": "element", "type": t["element"]}]
    if t["type"] == "map":
        return [{"id": t["key-id"], "name": "key", "type": t["key"]},
                {"id": t["value-id"], "name": "value", "type": t["value"]}]
    return []
