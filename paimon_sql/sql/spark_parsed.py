"""Statements sqlglot cannot read but Spark can: Spark's own parser finds their table references.

Spark's grammar is wider than sqlglot's Spark dialect: ``DESCRIBE QUERY <query>``, table options
(``FROM t WITH ('k' = 'v')``), ``FOR SYSTEM_VERSION AS OF``, a keyword as a table alias
(``FROM t WHERE``: ``WHERE`` is the alias). Such a statement goes to Spark as written, as the
front layer hands on every statement: Spark's parser gives each table reference's place in the
text (its origin), its options and its time travel, and each reference naming a Paimon table is
spliced to a full scan (:func:`paimon_sql.sql.query.run_spliced`; Spark prunes it), read with the
session's options, the reference's own options and its time travel, as a query sqlglot reads is.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import List, Optional, Tuple

import sqlglot

from paimon_sql.exceptions import PaimonError
from paimon_sql.spark import jvm
from paimon_sql.sql import parse, query


@dataclass
class Relation:
    """A table reference Spark's parser found: ``[start, end)`` of its name (or table function
    call) in the text, ``clause_end`` where its options and time travel end, its options
    (``WITH (...)``), its time travel (kind, expression text), and whether it has an alias."""

    start: int
    end: int
    clause_end: int
    options: dict
    travel: Optional[Tuple[str, str]]
    aliased: bool


_AS_OF = re.compile(r"FOR\s+(?:SYSTEM_)?(VERSION|TIMESTAMP|TIME)\s+AS\s+OF\s+|(VERSION|TIMESTAMP)\s+AS\s+OF\s+", re.I)
_RELATIONS = ("UnresolvedRelation", "UnresolvedTableValuedFunction")


def run(session, text: str):
    """Spark's answer to ``text``, its Paimon references spliced to scans. Raises Spark's
    ParseException when Spark cannot read it either."""
    prepared = parse.prepare(text)
    plan = session.spark._jsparkSession.sessionState().sqlParser().parsePlan(prepared)
    relations, ctes = [], set()
    _walk(session.spark._jvm, plan, prepared, relations, ctes, None, False)
    refs = []
    for r in relations:
        node = parse.table_reference(prepared[r.start:r.end])
        if not node.db and node.name.lower() in ctes:
            continue
        found = query.find_reference(session, node)
        if found is None:
            continue
        ref, options, name = found
        refs.append(query.reference(session, (ref, {**options, **r.options}, name), (r.start, r.clause_end),
                                    r.travel, r.aliased, node))
    if not refs:
        return session.spark_sql(text)
    return query.run_spliced(session, refs, query.apply_edits(prepared, [r.edit for r in refs]), False)


def _walk(jvm_, node, text: str, out: List[Relation], ctes: set, travel, aliased: bool) -> None:
    """Collect the table references of a parsed plan: its children, the plans of its subqueries
    and CTEs (``innerChildren``) and the query of ``DESCRIBE QUERY``."""
    name = node.nodeName()
    if name == "RelationTimeTravel":
        start, end = _origin(node)
        as_of = _AS_OF.match(text, start)
        if as_of is None:
            raise PaimonError(f"cannot find the time travel in the statement at {text[start:end]!r}")
        kind = (as_of.group(1) or as_of.group(2)).upper()
        travel = ("VERSION" if kind == "VERSION" else "TIMESTAMP", text[as_of.end():end])
        _walk(jvm_, node.relation(), text, out, ctes, (end, travel), aliased)
        return
    if name in _RELATIONS:
        start, end = _origin(node)
        options = jvm.java_map(jvm_, node.options().asCaseSensitiveMap()) \
            if name == "UnresolvedRelation" else {}
        clause_end = _options_end(text, end) if options else end
        if travel is not None:
            clause_end = max(clause_end, travel[0])
        out.append(Relation(start, end, clause_end, options, travel and travel[1], aliased))
        return
    if name == "UnresolvedWith":
        ctes.update(str(c._1()).lower() for c in jvm.scala_objects(node.cteRelations()))
    children = [*jvm.scala_objects(node.children()), *jvm.scala_objects(node.innerChildren())]
    if name == "DescribeQueryCommand":
        children.append(node.plan())
    for child in children:
        _walk(jvm_, child, text, out, ctes, None, name == "SubqueryAlias")


def _origin(node) -> Tuple[int, int]:
    origin = node.origin()
    if origin.startIndex().isEmpty() or origin.stopIndex().isEmpty():
        raise PaimonError(f"cannot find table reference {node.simpleString(100)} in the statement")
    return origin.startIndex().get(), origin.stopIndex().get() + 1


def _options_end(text: str, i: int) -> int:
    """Where the ``WITH (...)`` options after a table name ending at ``i`` end."""
    tokens = sqlglot.Dialect.get_or_raise(parse.DIALECT).tokenize(text[i:])
    if not tokens or tokens[0].text.upper() != "WITH":
        raise PaimonError(f"cannot find the options of the table reference before {text[i:i + 30]!r}")
    return parse.closing_paren(text, i + tokens[0].end + 1)
