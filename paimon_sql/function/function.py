"""Function: a function a catalog keeps (Paimon's ``FunctionImpl``): its name, typed parameters and
results, and its definitions, one per engine or kind (a JAR class, a SQL expression, a lambda),
with a comment and options. Its JSON is Paimon's (a REST catalog's ``CreateFunctionRequest``),
and :func:`apply_changes` applies Paimon's ``FunctionChange`` JSON to it.

A definition is kept as Paimon's JSON of a ``FunctionDefinition``: ``{"type": "file" | "sql" |
"lambda", ...}``. paimon-sql keeps and serves functions (``CALL sys.create_function``, a REST
catalog's functions); it does not run them in queries.

Example::

    f = Function.from_procedure("area", '[{"id": 0, "name": "w", "type": "INT"}]',
                                '[{"id": 0, "name": "a", "type": "BIGINT"}]', True, None, "k=v")
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Dict, List, Optional, Sequence

from paimon_sql.data.types import DataField
from paimon_sql.exceptions import CorruptMetadataError, FunctionError, InvalidIdentifierError

NAME = re.compile(r"^(?=.*[A-Za-z])[A-Za-z0-9._-]+$")  # Paimon's FunctionNameValidator
DEFINITION_TYPES = ("file", "sql", "lambda")


def check_name(name: str) -> str:
    if not name or not NAME.match(name):
        raise InvalidIdentifierError(f"invalid function name {name!r}: letters, digits, '.', '_' and '-', "
                                     "with at least one letter (as Paimon)")
    return name


@dataclass(frozen=True)
class Function:
    name: str
    input_params: Optional[List[DataField]] = None
    return_params: Optional[List[DataField]] = None
    deterministic: bool = True
    definitions: Dict[str, dict] = field(default_factory=dict)
    comment: Optional[str] = None
    options: Dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict:
        params = (lambda fs: None if fs is None else [f.to_json() for f in fs])
        return {"name": self.name, "inputParams": params(self.input_params),
                "returnParams": params(self.return_params), "deterministic": self.deterministic,
                "definitions": dict(self.definitions), "comment": self.comment, "options": dict(self.options)}

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2)

    @staticmethod
    def from_dict(d: dict, where: str = "function JSON") -> "Function":
        """Paimon's function JSON (a create request or a get answer: extra keys pass)."""
        try:
            return Function(check_name(d["name"]), _fields(d.get("inputParams")), _fields(d.get("returnParams")),
                            bool(d.get("deterministic", True)),
                            {k: _definition(v) for k, v in (d.get("definitions") or {}).items()},
                            d.get("comment"), {str(k): str(v) for k, v in (d.get("options") or {}).items()})
        except (KeyError, TypeError, ValueError) as e:
            raise CorruptMetadataError(f"{where}: not a Paimon function ({type(e).__name__}: {e})") from None

    @staticmethod
    def from_json(text: str, where: str) -> "Function":
        try:
            return Function.from_dict(json.loads(text), where)
        except ValueError as e:
            raise CorruptMetadataError(f"{where}: not JSON ({e})") from None

    @staticmethod
    def from_procedure(name: str, input_params: Optional[str], return_params: Optional[str],
                       deterministic: Optional[bool], comment: Optional[str], options: Optional[str]) -> "Function":
        """The arguments of ``CALL sys.create_function``: parameters as JSON arrays of Paimon data
        fields (empty: none), options as ``k1=v1,k2=v2``."""
        return Function(check_name(name), _json_fields(input_params, "inputParams"),
                        _json_fields(return_params, "returnParams"),
                        True if deterministic is None else deterministic, {}, comment, _key_values(options))


def _fields(items) -> Optional[List[DataField]]:
    return None if items is None else [DataField.from_json(f) for f in items]


def _json_fields(text: Optional[str], what: str) -> Optional[List[DataField]]:
    if not text or not text.strip():
        return None
    try:
        return _fields(json.loads(text))
    except (ValueError, KeyError, TypeError) as e:
        raise FunctionError(f"{what}: not a JSON array of data fields ({type(e).__name__}: {e})") from None


def _key_values(text: Optional[str]) -> Dict[str, str]:
    out: Dict[str, str] = {}
    for pair in (text or "").split(","):
        if pair.strip():
            key, eq, value = pair.partition("=")
            if not eq or not key.strip():
                raise FunctionError(f"options: {pair.strip()!r} is not key=value")
            out[key.strip()] = value.strip()
    return out


def _definition(d: Any) -> dict:
    if not isinstance(d, dict) or d.get("type") not in DEFINITION_TYPES:
        raise ValueError(f"a definition must be an object with type one of {', '.join(DEFINITION_TYPES)}")
    return dict(d)


# -- Paimon's FunctionChange ------------------------------------------------------------------------

def _set_option(f: Function, c: dict) -> Function:
    return replace(f, options={**f.options, str(c["key"]): str(c["value"])})


def _remove_option(f: Function, c: dict) -> Function:
    return replace(f, options={k: v for k, v in f.options.items() if k != c["key"]})


def _add_definition(f: Function, c: dict) -> Function:
    if c["name"] in f.definitions:
        raise FunctionError(f"function {f.name} already has definition '{c['name']}'")
    return replace(f, definitions={**f.definitions, c["name"]: _definition(c["definition"])})


def _update_definition(f: Function, c: dict) -> Function:
    if c["name"] not in f.definitions:
        raise FunctionError(f"function {f.name} has no definition '{c['name']}'")
    return replace(f, definitions={**f.definitions, c["name"]: _definition(c["definition"])})


def _drop_definition(f: Function, c: dict) -> Function:
    if c["name"] not in f.definitions:
        raise FunctionError(f"function {f.name} has no definition '{c['name']}'")
    return replace(f, definitions={k: v for k, v in f.definitions.items() if k != c["name"]})


CHANGES: Dict[str, Callable[[Function, dict], Function]] = {
    "setOption": _set_option, "removeOption": _remove_option,
    "updateComment": lambda f, c: replace(f, comment=c.get("comment")),
    "addDefinition": _add_definition, "updateDefinition": _update_definition, "dropDefinition": _drop_definition,
}


def apply_changes(function: Function, changes: Sequence[dict]) -> Function:
    """``function`` with Paimon's ``FunctionChange`` JSON objects applied in order."""
    for c in changes:
        action = c.get("action") if isinstance(c, dict) else None
        if action not in CHANGES:
            raise FunctionError(f"unknown function change action {action!r} (one of {', '.join(CHANGES)})")
        try:
            function = CHANGES[action](function, c)
        except (KeyError, ValueError) as e:
            raise FunctionError(f"function change '{action}': {e}") from None
    return function


def parse_change(text: str) -> dict:
    """``CALL sys.alter_function``'s ``change``: one FunctionChange as JSON."""
    try:
        change = json.loads(text)
    except ValueError as e:
        raise FunctionError(f"change: not JSON ({e})") from None
    if not isinstance(change, dict) or change.get("action") not in CHANGES:
        raise FunctionError(f"change: a JSON object whose 'action' is one of {', '.join(CHANGES)}")
    return change
