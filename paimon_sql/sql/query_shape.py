"""A query's shape: its text with the literals that only pick rows masked, so that what the query
needs of its tables (:func:`paimon_sql.sql.query._needs`) is planned once per shape, not once per
literal — a BI tool's point lookups (``WHERE id = 756589``, then ``= 12``, ...) differ in nothing else.

What Spark's planning gives per table is the columns the query reads and a predicate to prune files
by. The columns come from the analyzed plan, which no literal changes. The predicate comes from the
optimized plan, and a literal can change it: folding (``1 = 2 OR id = 5`` becomes ``id = 5``),
constants from elsewhere (``id = length('abcde')``), a view's own filter. So a shape's predicate is a
*template* only when Spark's answer shows where each masked literal went, and only once a second
query of the shape, with every masked literal different, got from Spark exactly the template filled
with its values. Until then, and for good once that check fails, each text is planned as before.

Caveats, kept on purpose to make a wrong template impossible rather than unlikely:

- masked are only integers and plain quoted strings (no backslash, no quote inside) compared
  directly with a column (``=``, ``<>``, ``<``, ``IN``, ``BETWEEN``, ...) inside a WHERE, HAVING,
  QUALIFY or join condition; a ``-5``, ``5L``, ``1.5``, date or LIKE pattern stays part of the
  shape;
- a template needs every value of the predicate to be one masked literal's, of the same Python
  type, each masked literal used exactly once, and no other literal of the text with that value.

Example::

    SELECT * FROM t WHERE id = 756589      planned; template: id = <0>, unverified
    SELECT * FROM t WHERE id = 12          planned; Spark says id = 12 = the template filled: verified
    SELECT * FROM t WHERE id = 99          not planned: id = 99
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import List, Optional, Tuple

from sqlglot import exp

from paimon_sql.data import predicate as P
from paimon_sql.spark.pushdown import Needs

_COMPARISONS = (exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE, exp.NullSafeEQ, exp.NullSafeNEQ, exp.In,
                exp.Between)
_FILTER_CLAUSES = (exp.Where, exp.Having, exp.Qualify)
_PLAIN_STRING = re.compile(r"'[^'\\]*'|\"[^\"\\]*\"")
_INTEGER = re.compile(r"[0-9]+")
MASK = "\1"


@dataclass(frozen=True)
class Shape:
    """A query's text with its reference marks applied (``text``), the same with its :func:`masks`
    masked too (``masked``), and those literals' values in text order (``values``)."""

    text: str
    masked: str
    values: Tuple[object, ...]


def masks(tree: exp.Expression, text: str, edits: list) -> List[Tuple[Tuple[int, int], object]]:
    """((start, end), value) of each literal of the query ``tree`` parsed from ``text`` its shape
    masks, in text order; ``edits`` ((start, end), replacement): the text's other edits (reference
    marks, function calls), whose spans keep their literals."""
    if MASK in text:  # a shape must not be mistaken for another text's
        return []
    taken = [span for span, _ in edits]
    return sorted((span, value) for span, value in _maskable(tree, text)
                  if not any(span[0] < end and start < span[1] for start, end in taken))


def _maskable(tree: exp.Expression, text: str):
    """((start, end) span, value) of each literal the shape may mask (see the module's caveats)."""
    for node in tree.find_all(exp.Literal):
        meta, parent = node.meta or {}, node.parent
        if "start" not in meta or not isinstance(parent, _COMPARISONS) or not _in_filter(parent):
            continue
        if isinstance(parent, exp.In) and node is parent.this or \
                not any(isinstance(side, exp.Column) for side in _operands(parent)):
            continue
        source = text[meta["start"]:meta["end"] + 1]
        if node.is_string and _PLAIN_STRING.fullmatch(source) and source[1:-1] == node.this:
            yield (meta["start"], meta["end"] + 1), node.this
        elif node.is_int and _INTEGER.fullmatch(source):
            yield (meta["start"], meta["end"] + 1), int(source)


def _operands(node: exp.Expression) -> list:
    """The operands a column may be: the tested value of IN and BETWEEN, either side of the rest."""
    return [node.this] if isinstance(node, (exp.In, exp.Between)) else [node.this, node.expression]


def _in_filter(node: exp.Expression) -> bool:
    for parent in iter(lambda: node.parent, None):
        if isinstance(parent, _FILTER_CLAUSES) or isinstance(parent, exp.Join) and node is parent.args.get("on"):
            return True
        node = parent
    return False


# -- templates -----------------------------------------------------------------------------------------

@dataclass(frozen=True)
class _Slot:
    """The place of the i-th masked literal in a template's predicate."""

    index: int


@dataclass(frozen=True)
class Template:
    """A shape's needs with its masked literals' places (:class:`_Slot`) for values; ``values``: the
    literals it was learned from; ``verified`` once a query with all other values matched it."""

    needs: Tuple[Needs, ...]
    values: Tuple[object, ...]
    verified: bool = False

    def filled(self, values: Tuple[object, ...]) -> List[Needs]:
        return [replace(n, predicate=_fill(n.predicate, values)) for n in self.needs]


REFUSED = "refused"  # a shape planned per text for good


def learn(before, needs: List[Needs], shape: Shape, tree: exp.Expression):
    """What the shape's cache entry becomes once Spark planned ``needs`` for a query of it: a new
    (unverified) template, a verified one, :data:`REFUSED`, or ``before`` unchanged (a query sharing
    a value with the one the template was learned from proves nothing)."""
    if before == REFUSED:
        return REFUSED
    if before is None:
        return _template(needs, shape, tree) or REFUSED
    if any(a == b for a, b in zip(before.values, shape.values)):
        return before
    return replace(before, verified=True) if before.filled(shape.values) == list(needs) else REFUSED


def _template(needs: List[Needs], shape: Shape, tree: exp.Expression) -> Optional[Template]:
    """``needs`` with each predicate value replaced by the place of the one masked literal it is;
    None where a value is not exactly one (the module's caveats) or a masked literal went nowhere."""
    values = shape.values
    texts = [str(node.this) for node in tree.find_all(exp.Literal)]  # the masked ones among them
    used = [0] * len(values)

    def hollow(p: Optional[P.Predicate]) -> Optional[P.Predicate]:
        if p is None:
            return None
        literals = []
        for v in p.literals:
            places = [i for i, m in enumerate(values) if type(m) is type(v) and m == v]
            if len(places) != 1 or texts.count(str(v)) != 1:
                raise _NoTemplate
            used[places[0]] += 1
            literals.append(_Slot(places[0]))
        return replace(p, literals=tuple(literals), children=tuple(hollow(c) for c in p.children))
    try:
        hollowed = tuple(replace(n, predicate=hollow(n.predicate)) for n in needs)
    except _NoTemplate:
        return None
    return Template(hollowed, values) if values and all(n == 1 for n in used) else None


class _NoTemplate(Exception):
    pass


def _fill(p: Optional[P.Predicate], values: Tuple[object, ...]) -> Optional[P.Predicate]:
    if p is None:
        return None
    return replace(p, literals=tuple(values[v.index] if isinstance(v, _Slot) else v for v in p.literals),
                   children=tuple(_fill(c, values) for c in p.children))
