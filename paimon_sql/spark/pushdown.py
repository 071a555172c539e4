"""Ask Spark which columns and filters each Paimon relation of a query needs.

The front layer does not work this out from the SQL text: Spark's analyzer and optimizer already
know, for every relation, which of its columns the query references (nested field access, ``*``,
``USING`` joins, subqueries) and which filters sit directly on it after predicate pushdown (never
across an outer join's NULL-extended side, never a correlated one). So the query is planned once
over *stand-ins*: zero-row relations with each table's full schema (an RDD Spark cannot see is
empty, so no rule folds the plan away), known by the ids Spark gave their columns. The optimized
plan (walked in the JVM by ``PlanNeeds``, else read as JSON) then tells per stand-in:

- the columns referenced anywhere in the plan, and all of them when no Project or Aggregate
  above it narrows what flows on to the result;
- the conjuncts of the Filter directly above it, turned into Paimon predicates where exact.

Columns are read from the analyzed plan (what the query must find when Spark analyzes it again
over the real scans, even where the optimizer later drops it), filters from the optimized plan. A
stand-in Spark copied under new ids (a CTE used twice) cannot be told apart from the others of
the same columns: those stand-ins then get no predicate.
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Dict, List, Optional, Set, Tuple

from pyspark.sql import DataFrame, SparkSession

from paimon_sql.data import predicate as P
from paimon_sql.read import metadata_columns
from paimon_sql.spark import jvm_classes
from paimon_sql.spark.types import spark_ddl

_EXPR = "org.apache.spark.sql.catalyst.expressions."
_COMPARE = {"EqualTo": "=", "LessThan": "<", "LessThanOrEqual": "<=", "GreaterThan": ">",
            "GreaterThanOrEqual": ">="}
_FLIP = {"=": "=", "<": ">", "<=": ">=", ">": "<", ">=": "<="}
# plan nodes whose output is a new column list: columns below them reach the result only if referenced
_NARROWING = ("logical.Project", "logical.Aggregate", "logical.Expand")


@dataclass
class Needs:
    """What a query needs of one relation: columns (in table order) and a predicate to prune by."""

    columns: List[str] = field(default_factory=list)
    predicate: Optional[P.Predicate] = None


def stand_in(spark: SparkSession, fields) -> DataFrame:
    """A zero-row relation with the columns of ``fields``."""
    jschema = spark._jvm.org.apache.spark.sql.types.StructType.fromDDL(spark_ddl(fields))
    return DataFrame(spark._jsparkSession.createDataFrame(spark._jsc.emptyRDD(), jschema), spark)


def column_ids(df: DataFrame) -> Tuple[int, ...]:
    """The ids Spark gave a relation's columns (how the stand-in is found in a plan)."""
    ids = jvm_classes.output_ids(df)
    if ids is not None:
        return tuple(ids)
    (leaf,) = [n for n in json.loads(df._jdf.queryExecution().analyzed().toJSON()) if "output" in n]
    return tuple(a[0]["exprId"]["id"] for a in leaf["output"])


def needs_of(df: DataFrame, stand_ins: Dict[str, Tuple[Tuple[int, ...], list]],
             filters_possible: bool = True) -> Dict[str, Needs]:
    """Per stand-in (name → its column ids and the table's fields), what the query ``df`` needs:
    the columns its analyzed plan resolves (what the query must find when analyzed again over the
    real scans), and the filters its optimized plan puts on it. ``filters_possible`` False (the
    query has no WHERE, HAVING, QUALIFY or join condition) spares the optimizer's run (~5-10 ms)."""
    referenced, instances = _plan_facts(df, filters_possible)
    by_first_id = {ids[0]: name for name, (ids, _) in stand_ins.items()}
    filters: Dict[str, List[Optional[P.Predicate]]] = {}
    for outputs, conds in instances:
        name = by_first_id.get(next(iter(outputs), None))
        if name is not None:
            comparable = {eid: col for eid, col in outputs.items()
                          if col not in _padded(stand_ins[name][1]) and col not in metadata_columns.NAMES}
            pred = P.and_(*_without_implied(_predicate(c, comparable, exact=False) for c in conds))
            filters.setdefault(name, []).append(pred)
            continue
        columns = list(outputs.values())  # a copy under new ids: its filters can't be told apart
        for other, (_, fields) in stand_ins.items():
            if [f.name for f in fields] == columns:
                filters.setdefault(other, []).append(None)
    out = {}
    for name, (ids, fields) in stand_ins.items():
        preds = filters.get(name, [None])
        predicate = None if None in preds else P.or_(*preds)
        out[name] = Needs([f.name for f, i in zip(fields, ids) if i in referenced], predicate)
    return out


def _plan_facts(df: DataFrame, filters_possible: bool) -> Tuple[Set[int], List[tuple]]:
    """The attribute ids ``df``'s analyzed plan references, and per relation leaf of its optimized
    plan (when ``filters_possible``) its output (exprId → column) and the conjunct trees of the
    Filter right above it: walked in the JVM (``PlanNeeds``), else read from the plans' JSON."""
    facts = jvm_classes.plan_needs(df, filters_possible)
    if facts is not None:
        return set(facts["referenced"]), [({i: name for i, name in outputs}, _conjuncts(cond) if cond else [])
                                          for outputs, cond in facts["relations"]]
    qe = df._jdf.queryExecution()
    referenced: Set[int] = set()
    _walk(_tree(json.loads(qe.analyzed().toJSON())), None, False, referenced, [])
    instances: List[tuple] = []
    if filters_possible:
        _walk(_tree(json.loads(qe.optimizedPlan().toJSON())), None, False, set(), instances)
    return referenced, instances


def _padded(fields) -> Set[str]:
    """CHAR columns: Spark compares them padded with the declared length, which the stand-in's
    plain STRING does not show — filters on them are left to Spark."""
    return {f.name for f in fields if getattr(f.type, "name", None) == "CHAR"}


def _without_implied(preds) -> List[P.Predicate]:
    """Conjuncts less the ``IS NOT NULL`` Spark infers for a column another conjunct compares."""
    preds = [p for p in preds if p is not None]
    compared = {p.column for p in preds if p.op not in ("is_null", "is_not_null") and p.column}
    return [p for p in preds if not (p.op == "is_not_null" and p.column in compared)]


# -- the plan as a tree ------------------------------------------------------------------------------

def _tree(nodes: list) -> dict:
    """Spark's pre-order JSON list (each node says how many children follow) → nested dicts."""
    it = iter(nodes)

    def build():
        node = next(it)
        node["_children"] = [build() for _ in range(node.get("num-children", 0))]
        return node
    return build()


def _walk(node: dict, parent: Optional[dict], narrowed: bool, referenced: Set[int], instances: List[tuple]) -> None:
    if not node["_children"] and "output" in node:
        outputs = {a[0]["exprId"]["id"]: a[0]["name"] for a in node["output"]}
        conds = []
        if parent is not None and parent["class"].endswith("logical.Filter"):
            conds = _conjuncts(_tree(parent["condition"]))
        if not narrowed:  # every column flows on to the query's result
            referenced.update(outputs)
        instances.append((outputs, conds))
        return
    for key, value in node.items():
        if key not in ("_children", "class"):
            _attributes(value, referenced)
    narrowed = narrowed or node["class"].endswith(_NARROWING)
    for child in node["_children"]:
        _walk(child, node, narrowed, referenced, instances)


def _attributes(value, referenced: Set[int]) -> None:
    """Collect the exprIds of every attribute reference inside a node's fields."""
    if isinstance(value, dict):
        if value.get("class") == _EXPR + "AttributeReference":
            referenced.add(value["exprId"]["id"])
        for v in value.values():
            _attributes(v, referenced)
    elif isinstance(value, list):
        for v in value:
            _attributes(v, referenced)


def _conjuncts(e: dict) -> List[dict]:
    if e["class"] == _EXPR + "And":
        return _conjuncts(e["_children"][0]) + _conjuncts(e["_children"][1])
    return [e]


# -- Catalyst expressions → Paimon predicates ---------------------------------------------------------

def _predicate(e: dict, outputs: Dict[int, str], exact: bool) -> Optional[P.Predicate]:
    """``e`` as a predicate on the relation's columns, or None. ``exact``: under NOT or OR a part
    may not be dropped (dropping a conjunct there would widen what is removed)."""
    kind = e["class"][len(_EXPR):] if e["class"].startswith(_EXPR) else ""
    kids = e["_children"]
    if kind == "And":
        parts = [_predicate(k, outputs, exact) for k in kids]
        return None if exact and None in parts else P.and_(*parts)
    if kind == "Or":
        parts = [_predicate(k, outputs, True) for k in kids]
        return None if None in parts else P.or_(*parts)
    if kind == "Not":
        inner = _predicate(kids[0], outputs, True)
        return None if inner is None else P.not_(inner)
    if kind in ("IsNull", "IsNotNull"):
        column = _column(kids[0], outputs)
        return None if column is None else (P.is_null if kind == "IsNull" else P.is_not_null)(column)
    if kind in _COMPARE:
        op, (left, right) = _COMPARE[kind], kids
        column, value = _column(left, outputs), _literal(right)
        if column is None:
            column, value, op = _column(right, outputs), _literal(left), _FLIP[op]
        return None if column is None or value is None else P.Predicate(op, column, (value,))
    if kind == "In":
        column, values = _column(kids[0], outputs), [_literal(k) for k in kids[1:]]
        return None if column is None or not values or None in values else P.is_in(column, values)
    if kind == "StartsWith":
        column, prefix = _column(kids[0], outputs), _literal(kids[1])
        return None if column is None or not isinstance(prefix, str) else P.starts_with(column, prefix)
    return None


def _column(e: dict, outputs: Dict[int, str]) -> Optional[str]:
    if e["class"] == _EXPR + "AttributeReference":
        return outputs.get(e["exprId"]["id"])
    return None


def _literal(e: dict):
    """A Catalyst literal as the Python value Paimon's stats compare with; None when unsure."""
    if e["class"] != _EXPR + "Literal" or e.get("value") is None:
        return None
    value, kind = e["value"], e["dataType"]
    if not isinstance(kind, str):
        return None
    if kind in ("integer", "long", "short", "byte"):
        return int(value)
    if kind in ("float", "double"):
        return float(value)
    if kind == "string":
        return value
    if kind.startswith("decimal"):
        return Decimal(value)
    if kind == "boolean":
        return value == "true"
    if kind == "date":
        return dt.date(1970, 1, 1) + dt.timedelta(days=int(value)) if value.lstrip("-").isdigit() \
            else dt.date.fromisoformat(value)
    return None  # timestamps, binaries, intervals: left to Spark's filter
