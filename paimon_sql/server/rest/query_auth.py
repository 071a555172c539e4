"""A user's row filters and column masks (Spark SQL in the policy file) as Paimon's table query auth:
the ``filter`` (Predicate JSON strings) and ``columnMasking`` (Transform JSON strings) of ``POST
.../auth``, which Paimon 2.0's clients (Java's ``TableQueryAuthResult``, pypaimon 2.1's) apply to
the rows they read.

Only what Paimon evaluates exactly as Spark SQL does is sent; any other rule raises
:class:`NotSendable` (the table is refused, never sent a weaker rule):

* filters: a column compared (``= <> != < <= > >=``) with a literal, ``IS [NOT] NULL``, ``[NOT] IN``
  and ``[NOT] BETWEEN`` literals, ``LIKE`` of the forms ``'abc'``, ``'abc%'``, ``'%abc'``,
  ``'%abc%'`` (no ``_``, no escapes), a bare BOOLEAN column, joined by ``AND`` / ``OR`` / ``NOT``
  (``NOT`` is pushed to the leaves, whose negations drop NULLs as SQL does). Literals only for
  BOOLEAN, integer (in range, no fraction) and STRING / VARCHAR columns: Paimon 2.0's clients
  cannot read back a JSON literal of DATE, TIMESTAMP or DECIMAL, and compare FLOAT / DOUBLE
  unlike Spark (``-0.0``, NaN); ``IS [NOT] NULL`` takes any column.
* masks: ``NULL`` (a nullable column), the column itself, and for a STRING / VARCHAR column a
  string literal, ``concat``, ``concat_ws``, ``upper``, ``lower`` of the column and string
  literals. A mask reads only its own column: Paimon's Java client does not add the columns a
  mask reads to the read. ``upper`` / ``lower`` follow the client's case mapping (Java's; pypaimon
  Arrow's), which may differ from Spark's for a few non-ASCII letters.

A mask on a column the table does not have is inert, as in SQL, and not sent.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional

import sqlglot
from sqlglot import exp

from paimon_sql.access.policy import Rules
from paimon_sql.data.types import DataField
from paimon_sql.schema.table_schema import TableSchema

OPTION = "query-auth.enabled"  # a table's option that makes Paimon's clients call /auth
SYSTEM_FIELDS = ("_SEQUENCE_NUMBER", "_VALUE_KIND", "_LEVEL", "_ROW_ID")  # Paimon's SpecialFields a read may select

_INTEGER_BITS = {"TINYINT": 8, "SMALLINT": 16, "INT": 32, "BIGINT": 64}
_STRING = "VARCHAR"  # STRING is VARCHAR of the largest length
_COMPARE = {exp.EQ: "EQUAL", exp.NEQ: "NOT_EQUAL", exp.LT: "LESS_THAN", exp.LTE: "LESS_OR_EQUAL",
            exp.GT: "GREATER_THAN", exp.GTE: "GREATER_OR_EQUAL"}
_FLIPPED = {"EQUAL": "EQUAL", "NOT_EQUAL": "NOT_EQUAL", "LESS_THAN": "GREATER_THAN",
            "LESS_OR_EQUAL": "GREATER_OR_EQUAL", "GREATER_THAN": "LESS_THAN", "GREATER_OR_EQUAL": "LESS_OR_EQUAL"}
# Paimon's LeafFunction#negate where both sides are false on NULL, as SQL's NOT of a NULL comparison
_NEGATED = {"EQUAL": "NOT_EQUAL", "NOT_EQUAL": "EQUAL", "LESS_THAN": "GREATER_OR_EQUAL",
            "GREATER_OR_EQUAL": "LESS_THAN", "LESS_OR_EQUAL": "GREATER_THAN", "GREATER_THAN": "LESS_OR_EQUAL",
            "IS_NULL": "IS_NOT_NULL", "IS_NOT_NULL": "IS_NULL", "IN": "NOT_IN", "NOT_IN": "IN"}
_LIKE_FORMS = ((re.compile(r"%([^%]*)%\Z", re.S), "CONTAINS"), (re.compile(r"%([^%]*)\Z", re.S), "ENDS_WITH"),
               (re.compile(r"([^%]*)%\Z", re.S), "STARTS_WITH"), (re.compile(r"([^%]*)\Z", re.S), "EQUAL"))


class NotSendable(ValueError):
    """A rule Paimon's query auth cannot express exactly; the message names the rule and why."""


@dataclass(frozen=True)
class AuthResult:
    """Paimon's ``AuthTableQueryResponse``: each entry a JSON string, as Java's ``toFlatJson`` writes it."""

    filters: List[str]
    masks: Dict[str, str]

    def body(self) -> Dict[str, Any]:
        return {"filter": self.filters or None, "columnMasking": self.masks or None}


def convert(rules: Rules, schema: TableSchema) -> AuthResult:
    """``rules`` of one user on a table of ``schema`` as Paimon's query auth; raises NotSendable."""
    fields = {f.name.lower(): f for f in schema.fields}
    filters = [_dumps(_filter(text, fields)) for text in rules.filters]
    masks = {fields[c].name: _dumps(_mask(text, fields[c], fields)) for c, text in rules.masks.items() if c in fields}
    return AuthResult(filters, masks)


def _dumps(node: Dict[str, Any]) -> str:
    return json.dumps(node, separators=(",", ":"), ensure_ascii=False)


class _Refused(Exception):
    """Why one part of a rule has no exact Paimon form (turned into NotSendable naming the rule)."""


def _parse(text: str) -> exp.Expression:
    return sqlglot.parse_one(text, dialect="spark")


def _filter(text: str, fields: Dict[str, DataField]) -> Dict[str, Any]:
    try:
        return _predicate(_parse(text), fields, False)
    except _Refused as e:
        raise NotSendable(f"row filter {text!r} ({e})") from None


def _mask(text: str, field: DataField, fields: Dict[str, DataField]) -> Dict[str, Any]:
    try:
        return _transform(_parse(text), field, fields)
    except _Refused as e:
        raise NotSendable(f"column mask {text!r} of column {field.name} ({e})") from None


# ---- filters: NOT is carried down as ``negated`` to the leaves

def _predicate(node: exp.Expression, fields: Dict[str, DataField], negated: bool) -> Dict[str, Any]:
    handler = _PREDICATES.get(type(node))
    if handler is None:
        raise _Refused(f"{node.sql(dialect='spark')!r} has no Paimon predicate")
    return handler(node, fields, negated)


def _compound(node: exp.Connector, fields: Dict[str, DataField], negated: bool) -> Dict[str, Any]:
    function = "AND" if isinstance(node, exp.And) ^ negated else "OR"
    children = [_predicate(c, fields, negated) for c in node.flatten()]
    return {"kind": "COMPOUND", "function": function, "children": children}


def _not(node: exp.Not, fields: Dict[str, DataField], negated: bool) -> Dict[str, Any]:
    return _predicate(node.this, fields, not negated)


def _paren(node: exp.Paren, fields: Dict[str, DataField], negated: bool) -> Dict[str, Any]:
    return _predicate(node.this, fields, negated)


def _compare(node: exp.Binary, fields: Dict[str, DataField], negated: bool) -> Dict[str, Any]:
    function, column, value = _COMPARE[type(node)], node.this, node.expression
    if not isinstance(column, exp.Column):
        function, column, value = _FLIPPED[function], value, column
    field = _column(column, fields)
    return _leaf(field, function, [_literal(value, field)], negated)


def _is(node: exp.Is, fields: Dict[str, DataField], negated: bool) -> Dict[str, Any]:
    if not isinstance(node.expression, exp.Null):
        raise _Refused(f"{node.sql(dialect='spark')!r}: only IS [NOT] NULL has a Paimon predicate")
    return _leaf(_column(node.this, fields), "IS_NULL", [], negated)


def _in(node: exp.In, fields: Dict[str, DataField], negated: bool) -> Dict[str, Any]:
    if node.args.get("query") or node.args.get("unnest") or node.args.get("field"):
        raise _Refused(f"{node.sql(dialect='spark')!r}: only IN a list of literals has a Paimon predicate")
    field = _column(node.this, fields)
    return _leaf(field, "IN", [_literal(v, field) for v in node.expressions], negated)


def _between(node: exp.Between, fields: Dict[str, DataField], negated: bool) -> Dict[str, Any]:
    field = _column(node.this, fields)
    low = _leaf(field, "GREATER_OR_EQUAL", [_literal(node.args["low"], field)], negated)
    high = _leaf(field, "LESS_OR_EQUAL", [_literal(node.args["high"], field)], negated)
    return {"kind": "COMPOUND", "function": "OR" if negated else "AND", "children": [low, high]}


def _like(node: exp.Like, fields: Dict[str, DataField], negated: bool) -> Dict[str, Any]:
    field = _column(node.this, fields)
    pattern = _literal(node.expression, field)
    if _root(field) != _STRING or "_" in pattern or "\\" in pattern:
        raise _Refused(f"{node.sql(dialect='spark')!r}: only LIKE 'abc', 'abc%', '%abc' or '%abc%' (no _ or "
                       "escapes) on a STRING column has an exact Paimon predicate")
    for form, function in _LIKE_FORMS:
        found = form.match(pattern)
        if found:
            return _leaf(field, function, [found.group(1)], negated ^ bool(node.args.get("negate")))
    raise _Refused(f"LIKE pattern {pattern!r} has no exact Paimon predicate (only 'abc', 'abc%', '%abc', '%abc%')")


def _boolean_column(node: exp.Column, fields: Dict[str, DataField], negated: bool) -> Dict[str, Any]:
    field = _column(node, fields)
    if _root(field) != "BOOLEAN":
        raise _Refused(f"column {field.name} is {field.type}, not a BOOLEAN to filter by")
    return _leaf(field, "EQUAL", [True], negated)


_PREDICATES: Dict[type, Callable[..., Dict[str, Any]]] = {
    exp.And: _compound, exp.Or: _compound, exp.Not: _not, exp.Paren: _paren, exp.Is: _is, exp.In: _in,
    exp.Between: _between, exp.Like: _like, exp.Column: _boolean_column,
    **{cls: _compare for cls in _COMPARE},
}


def _leaf(field: DataField, function: str, literals: List[Any], negated: bool) -> Dict[str, Any]:
    if negated:
        if function not in _NEGATED:
            raise _Refused(f"Paimon's {function} has no negation (NOT of it cannot be sent)")
        function = _NEGATED[function]
    return {"kind": "LEAF", "transform": {"name": "FIELD_REF", "fieldRef": _field_ref(field)},
            "function": function, "literals": literals}


def _field_ref(field: DataField) -> Dict[str, Any]:
    """Paimon's FieldRef: the field id as its index (clients find the column by name)."""
    return {"index": field.id, "name": field.name, "type": field.type.to_json()}


def _column(node: exp.Expression, fields: Dict[str, DataField]) -> DataField:
    if not isinstance(node, exp.Column) or node.table:
        raise _Refused(f"{node.sql(dialect='spark')!r} is not a column of the table (a predicate compares a "
                       "column with literals)")
    field = fields.get(node.name.lower())
    if field is None:
        raise _Refused(f"the table has no column {node.name}")
    return field


def _root(field: DataField) -> str:
    """The type's name without its arguments (VARCHAR for STRING); a nested type's class name."""
    return getattr(field.type, "name", type(field.type).__name__)


# ---- literals, typed as Paimon's LeafPredicate serialises them for the column's type

def _literal(node: exp.Expression, field: DataField) -> Any:
    reader = _LITERALS.get(_root(field))
    if reader is None:
        raise _Refused(f"column {field.name} is {field.type}: only IS [NOT] NULL is sent for its type")
    if isinstance(node, exp.Null):
        raise _Refused("a NULL literal is not sent (compare with IS NULL)")
    value = reader(node, field)
    if value is None:
        raise _Refused(f"{node.sql(dialect='spark')!r} is not a {field.type} literal")
    return value


def _integer(node: exp.Expression, field: DataField) -> Optional[int]:
    sign = -1 if isinstance(node, exp.Neg) else 1
    inner = node.this if isinstance(node, exp.Neg) else node
    if not isinstance(inner, exp.Literal) or inner.is_string or not re.fullmatch(r"\d+", inner.this):
        return None
    value, bits = sign * int(inner.this), _INTEGER_BITS[_root(field)]
    if not -(1 << (bits - 1)) <= value < 1 << (bits - 1):
        raise _Refused(f"{value} is outside the range of column {field.name} ({field.type})")
    return value


def _string(node: exp.Expression, field: DataField) -> Optional[str]:
    """A string literal; adjacent literals (``'a' 'b'``, which Spark joins) and concat of literals too."""
    if isinstance(node, exp.Literal) and node.is_string:
        return node.this
    if isinstance(node, exp.Concat):
        parts = [_string(p, field) for p in node.expressions]
        return None if None in parts else "".join(parts)
    return None


def _boolean(node: exp.Expression, field: DataField) -> Optional[bool]:
    return node.this if isinstance(node, exp.Boolean) else None


_LITERALS: Dict[str, Callable[[exp.Expression, DataField], Any]] = {
    "BOOLEAN": _boolean, _STRING: _string, **{name: _integer for name in _INTEGER_BITS},
}


# ---- masks

def _transform(node: exp.Expression, field: DataField, fields: Dict[str, DataField]) -> Dict[str, Any]:
    if isinstance(node, (exp.Cast, exp.TryCast)) and isinstance(node.this, exp.Null):
        node = node.this  # CAST(NULL AS t): the column's NULL
    if isinstance(node, exp.Null):
        if not field.type.nullable:
            raise _Refused(f"column {field.name} is NOT NULL")
        return {"name": "NULL"}
    if isinstance(node, exp.Column):
        return {"name": "FIELD_REF", "fieldRef": _field_ref(_own(node, field, fields))}
    if _root(field) != _STRING:
        raise _Refused(f"for a {field.type} column only NULL or the column itself is sent")
    text = _string(node, field)
    if text is not None:
        return {"name": "CONCAT", "inputs": [text]}
    handler = _STRING_TRANSFORMS.get(type(node))
    if handler is None:
        raise _Refused(f"{node.sql(dialect='spark')!r} has no Paimon transform (sent: NULL, the column, a string, "
                       "concat, concat_ws, upper, lower)")
    name, args = handler(node)
    return {"name": name, "inputs": [_input(a, field, fields) for a in args]}


_STRING_TRANSFORMS: Dict[type, Callable[[exp.Expression], tuple]] = {
    exp.Concat: lambda n: ("CONCAT", n.expressions),
    exp.DPipe: lambda n: ("CONCAT", list(n.flatten())),
    exp.ConcatWs: lambda n: ("CONCAT_WS", n.expressions),
    exp.Upper: lambda n: ("UPPER", [n.this]),
    exp.Lower: lambda n: ("LOWER", [n.this]),
}


def _input(node: exp.Expression, field: DataField, fields: Dict[str, DataField]) -> Any:
    """One input of a string transform: the masked column or a string literal."""
    if isinstance(node, exp.Column):
        return _field_ref(_own(node, field, fields))
    text = _string(node, field)
    if text is None:
        raise _Refused(f"{node.sql(dialect='spark')!r}: a transform's inputs are the column and string literals")
    return text


def _own(node: exp.Column, field: DataField, fields: Dict[str, DataField]) -> DataField:
    named = _column(node, fields)
    if named is not field:
        raise _Refused(f"it reads column {named.name}: a mask may read only its own column (Paimon's Java client "
                       "does not read the columns a mask needs)")
    return field
