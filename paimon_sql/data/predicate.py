"""Predicates: a small expression tree that prunes by stats and filters Arrow rows.

Leaves compare one column with literals (``=``, ``!=``, ``<``, ``<=``, ``>``, ``>=``, ``in``,
``not_in``, ``is_null``, ``is_not_null``, ``starts_with``); ``and`` / ``or`` / ``not`` combine.
:meth:`Predicate.may_match` answers "can a file (or partition) with these min/max/null counts hold
a matching row?" — conservatively: anything unknown (no stats, truncated max, uncomparable
types) answers True. :meth:`Predicate.to_arrow` gives the exact row filter.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Optional, Set, Tuple

import pyarrow.compute as pc

_NEGATE = {"=": "!=", "!=": "=", "<": ">=", ">=": "<", ">": "<=", "<=": ">", "in": "not_in", "not_in": "in",
           "is_null": "is_not_null", "is_not_null": "is_null"}


@dataclass(frozen=True)
class FieldStats:
    """What is known of one column in one file: None means unknown."""

    min: Any
    max: Any
    null_count: Optional[int]
    row_count: Optional[int]


@dataclass(frozen=True)
class Predicate:
    op: str
    column: Optional[str] = None
    literals: Tuple[Any, ...] = ()
    children: Tuple["Predicate", ...] = ()

    # -- structure --------------------------------------------------------------------------

    def columns(self) -> Set[str]:
        if self.column is not None:
            return {self.column}
        return set().union(*(c.columns() for c in self.children)) if self.children else set()

    def negate(self) -> "Predicate":
        if self.op == "and":
            return Predicate("or", children=tuple(c.negate() for c in self.children))
        if self.op == "or":
            return Predicate("and", children=tuple(c.negate() for c in self.children))
        if self.op == "not":
            return self.children[0]
        if self.op in _NEGATE:
            return Predicate(_NEGATE[self.op], self.column, self.literals)
        return Predicate("not", children=(self,))

    def only(self, allowed: Set[str]) -> Optional["Predicate"]:
        """The part of this predicate that mentions only ``allowed`` columns (None: nothing)."""
        if self.op == "and":
            kept = [p for p in (c.only(allowed) for c in self.children) if p is not None]
            return None if not kept else kept[0] if len(kept) == 1 else Predicate("and", children=tuple(kept))
        return self if self.columns() <= allowed else None

    # -- pruning ----------------------------------------------------------------------------

    def may_match(self, stats: Callable[[str], Optional[FieldStats]]) -> bool:
        try:
            return self._may_match(stats)
        except TypeError:  # literal and stats of different kinds: cannot prune
            return True

    def _may_match(self, stats) -> bool:
        op = self.op
        if op == "and":
            return all(c._may_match(stats) for c in self.children)
        if op == "or":
            return any(c._may_match(stats) for c in self.children)
        if op == "not":
            negated = self.children[0].negate()
            # a leaf with no negated form (starts_with) comes back as this NOT: nothing to prune by
            return True if negated == self else negated._may_match(stats)
        s = stats(self.column)
        if s is None:
            return True
        all_null = s.null_count is not None and s.row_count is not None and s.null_count >= s.row_count
        if op == "is_null":
            return s.null_count is None or s.null_count > 0
        if op == "is_not_null":
            return not all_null
        if all_null:
            return False  # comparisons with NULL are never true
        if _nan_blind(op, self.literals):
            return True
        lo, hi = _number(s.min), _number(s.max)
        if op == "=":
            v = self.literals[0]
            return (lo is None or lo <= v) and (hi is None or v <= hi)
        if op == "in":
            return any(Predicate("=", self.column, (v,))._may_match(stats) for v in self.literals if v is not None)
        if op == "!=":
            v = self.literals[0]
            return not (lo is not None and lo == hi == v and s.null_count == 0)
        if op == "not_in":
            return not (lo is not None and lo == hi and lo in self.literals and s.null_count == 0)
        if op == "<":
            return lo is None or lo < self.literals[0]
        if op == "<=":
            return lo is None or lo <= self.literals[0]
        if op == ">":
            return hi is None or hi > self.literals[0]
        if op == ">=":
            return hi is None or hi >= self.literals[0]
        if op == "starts_with":
            p = self.literals[0]
            return (hi is None or hi >= p) and (lo is None or lo[:len(p)] <= p)
        return True

    def test_values(self, values: dict) -> bool:
        """Exact test on one row of known values (a partition): unknown columns pass."""
        return self.may_match(lambda c: FieldStats(values[c], values[c], int(values[c] is None), 1)
                              if c in values else None)

    def describe(self) -> str:
        """Readable SQL-like text (EXPLAIN)."""
        if self.op in ("and", "or"):
            return "(" + f" {self.op.upper()} ".join(c.describe() for c in self.children) + ")"
        if self.op == "not":
            return f"NOT {self.children[0].describe()}"
        if self.op in ("is_null", "is_not_null"):
            return f"{self.column} {'IS NULL' if self.op == 'is_null' else 'IS NOT NULL'}"
        if self.op in ("in", "not_in"):
            return f"{self.column} {'IN' if self.op == 'in' else 'NOT IN'} ({', '.join(map(repr, self.literals))})"
        return f"{self.column} {self.op.upper().replace('_', ' ')} {self.literals[0]!r}"

    # -- rows -------------------------------------------------------------------------------

    def to_arrow(self) -> pc.Expression:
        op = self.op
        if op == "and":
            return _fold(pc.Expression.__and__, (c.to_arrow() for c in self.children))
        if op == "or":
            return _fold(pc.Expression.__or__, (c.to_arrow() for c in self.children))
        if op == "not":
            return ~self.children[0].to_arrow()
        f = pc.field(self.column)
        lits = self.literals
        if lits and all(isinstance(v, float) for v in lits):
            spark = _spark_double(f, op, lits)
            if spark is not None:
                return spark
        if op == "is_null":
            return f.is_null()
        if op == "is_not_null":
            return f.is_valid()
        if op == "in":
            return f.isin(list(lits))
        if op == "not_in":
            return ~f.isin(list(lits)) & f.is_valid()
        if op == "starts_with":
            return pc.starts_with(f, lits[0])
        return {"=": f.__eq__, "!=": f.__ne__, "<": f.__lt__, "<=": f.__le__, ">": f.__gt__,
                ">=": f.__ge__}[op](lits[0])


# Spark orders doubles with NaN above every number and equal to itself; min/max stats leave NaN out
# (pyarrow's) or put it at the max (Java's), so they cannot rule out a NaN row
_ABOVE = (">", ">=", "!=", "not_in")


def _nan_blind(op: str, literals) -> bool:
    """Whether min/max stats can't answer ``op`` against these (double) literals."""
    floats = [v for v in literals if isinstance(v, float)]
    return bool(floats) and (op in _ABOVE or any(math.isnan(v) for v in floats))


def _number(v):
    """A stats bound; a NaN one tells nothing."""
    return None if isinstance(v, float) and math.isnan(v) else v


def _spark_double(f: pc.Expression, op: str, lits) -> Optional[pc.Expression]:
    """Spark's comparison of a double column with double literals where Arrow's differs (NaN literals,
    NaN rows above a number, -0.0 in a list); None where they agree."""
    if op in ("in", "not_in"):
        hit = f.isin(list(lits) + [-v for v in lits if v == 0])  # Arrow's isin: NaN is NaN, -0.0 is not 0.0
        return hit if op == "in" else ~hit & f.is_valid()
    nan = pc.is_nan(f)
    v = lits[0]
    if not math.isnan(v):
        return {">": (f > v) | nan, ">=": (f >= v) | nan}.get(op)
    return {"=": nan, "!=": ~nan, "<": ~nan, "<=": nan | ~nan, ">": nan & ~nan, ">=": nan}[op]


def _fold(fn, items: Iterable):
    items = list(items)
    out = items[0]
    for x in items[1:]:
        out = fn(out, x)
    return out


# -- builders ---------------------------------------------------------------------------------

def equal(c, v): return Predicate("=", c, (v,))
def not_equal(c, v): return Predicate("!=", c, (v,))
def less_than(c, v): return Predicate("<", c, (v,))
def less_or_equal(c, v): return Predicate("<=", c, (v,))
def greater_than(c, v): return Predicate(">", c, (v,))
def greater_or_equal(c, v): return Predicate(">=", c, (v,))
def is_in(c, vs): return Predicate("in", c, tuple(vs))
def not_in(c, vs): return Predicate("not_in", c, tuple(vs))
def is_null(c): return Predicate("is_null", c)
def is_not_null(c): return Predicate("is_not_null", c)
def starts_with(c, prefix): return Predicate("starts_with", c, (prefix,))
def not_(p): return Predicate("not", children=(p,))


def and_(*ps: Optional[Predicate]) -> Optional[Predicate]:
    ps = [p for p in ps if p is not None]
    return None if not ps else ps[0] if len(ps) == 1 else Predicate("and", children=tuple(ps))


def or_(*ps: Predicate) -> Predicate:
    return ps[0] if len(ps) == 1 else Predicate("or", children=tuple(ps))


# -- JSON (predicates travel to Spark's data source as a string option) --------------------------

def _lit_to_json(v):
    import datetime as dt
    from decimal import Decimal
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    if isinstance(v, dt.datetime):
        return {"datetime": v.isoformat()}
    if isinstance(v, dt.date):
        return {"date": v.isoformat()}
    if isinstance(v, Decimal):
        return {"decimal": str(v)}
    if isinstance(v, bytes):
        return {"bytes": v.hex()}
    raise TypeError(f"literal {v!r} cannot be serialized")


def _lit_from_json(v):
    import datetime as dt
    from decimal import Decimal
    if not isinstance(v, dict):
        return v
    kind, text = next(iter(v.items()))
    return {"datetime": dt.datetime.fromisoformat, "date": dt.date.fromisoformat, "decimal": Decimal,
            "bytes": bytes.fromhex}[kind](text)


def to_json(p: Optional[Predicate]) -> str:
    import json

    def enc(x: Predicate) -> dict:
        return {"op": x.op, "column": x.column, "literals": [_lit_to_json(v) for v in x.literals],
                "children": [enc(c) for c in x.children]}
    return json.dumps(None if p is None else enc(p))


def from_json(text: str) -> Optional[Predicate]:
    import json

    def dec(d: dict) -> Predicate:
        return Predicate(d["op"], d["column"], tuple(_lit_from_json(v) for v in d["literals"]),
                         tuple(dec(c) for c in d["children"]))
    data = json.loads(text) if text else None
    return None if data is None else dec(data)
