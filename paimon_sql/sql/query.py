"""Queries: every table reference that names a Paimon table becomes a scan, then Spark runs the rest.

For each reference the front layer works out, from the AST, the columns the query needs and the
simple conjuncts of its WHERE on that table (``col <op> literal``, ``IN``, ``IS [NOT] NULL``),
builds a pruned scan DataFrame, registers it under a unique temporary view name and rewrites the
reference to that view (keeping the table's name as alias, so qualified columns still resolve).
A pushed conjunct drops only rows the WHERE would drop (never under an outer join, see
:func:`_pushed_filter`); Spark applies the full WHERE again.

Name resolution follows Spark: CTE names and temporary views shadow tables; anything not found
in the warehouse (Spark's own tables, ``range(10)``) is left to Spark.
"""

from __future__ import annotations

import datetime as dt
import itertools
from decimal import Decimal
from typing import List, Optional

from sqlglot import exp

from paimon_sql.catalog import Identifier
from paimon_sql.exceptions import PaimonError, SnapshotNotFoundError
from paimon_sql.format import predicate as P
from paimon_sql.format.types import AtomicType

_VIEW_IDS = itertools.count()
_COMPARE = {exp.EQ: "=", exp.NEQ: "!=", exp.LT: "<", exp.LTE: "<=", exp.GT: ">", exp.GTE: ">="}
_FLIP = {"=": "=", "!=": "!=", "<": ">", "<=": ">=", ">": "<", ">=": "<="}


def rewrite_tables(session, tree: exp.Expression) -> exp.Expression:
    """Replace Paimon table references in ``tree`` (in place) by pruned scan views."""
    ctes = {cte.alias_or_name.lower() for cte in tree.find_all(exp.CTE)}
    for node in list(tree.find_all(exp.Table)):
        if not node.name or isinstance(node.parent, (exp.Create, exp.Insert, exp.Drop, exp.Describe)):
            continue
        if not node.db and node.name.lower() in ctes:
            continue
        if not node.db and session.is_temp_view(node.name):
            continue
        table = session.find_table(node)
        if table is None:
            continue
        snapshot_id, tag = _time_travel(table, node)
        columns = _needed_columns(tree, node, table)
        predicate = _pushed_filter(node, table)
        df = session.scan_dataframe(table, columns, predicate, snapshot_id, tag)
        view = f"__paimon_{table.name.replace('.', '_')}_{next(_VIEW_IDS)}"
        df.createOrReplaceTempView(view)
        alias = node.args.get("alias") or exp.TableAlias(this=exp.to_identifier(node.name))
        node.replace(exp.Table(this=exp.to_identifier(view), alias=alias))
    return tree


def _time_travel(table, node: exp.Table):
    version = node.args.get("version")
    if version is None:
        return None, None
    value = version.expression
    literal = value.this if isinstance(value, exp.Literal) else value.sql()
    if version.this.upper() == "VERSION":
        if isinstance(value, exp.Literal) and not value.is_string:
            return int(literal), None
        if str(literal).isdigit():
            return int(literal), None
        return None, str(literal)
    # TIMESTAMP AS OF '<ts>' | <epoch seconds>
    if isinstance(value, exp.Literal) and not value.is_string:
        millis = int(float(literal) * 1000)
    else:
        try:
            millis = int(dt.datetime.fromisoformat(str(literal)).replace(tzinfo=dt.timezone.utc).timestamp() * 1000)
        except ValueError:
            raise PaimonError(f"TIMESTAMP AS OF expects 'yyyy-MM-dd HH:mm:ss' or epoch seconds, "
                              f"got {literal}") from None
    snap = table.snapshot_manager.earlier_or_equal_time(millis)
    if snap is None:
        raise SnapshotNotFoundError(f"table {table.name} has no snapshot at or before {literal}")
    return snap.id, None


def _refers_to(column: exp.Column, node: exp.Table) -> bool:
    qualifier = column.table
    return not qualifier or qualifier.lower() in {node.alias_or_name.lower(), node.name.lower()}


def _needed_columns(tree: exp.Expression, node: exp.Table, table) -> Optional[List[str]]:
    """Table columns the query mentions; None (all) when it selects ``*`` of this table."""
    for star in tree.find_all(exp.Star):
        parent = star.parent
        if not isinstance(parent, exp.Column) or _refers_to(parent, node):
            return None
    by_lower = {n.lower(): n for n in table.schema.field_names}
    wanted = {by_lower[c.name.lower()] for c in tree.find_all(exp.Column)
              if c.name.lower() in by_lower and _refers_to(c, node)}
    return [n for n in table.schema.field_names if n in wanted] or table.schema.field_names[:1]


def _pushed_filter(node: exp.Table, table) -> Optional[P.Predicate]:
    """WHERE conjuncts on this table. None under an outer join: there a WHERE such as ``b.v IS NULL``
    must see the NULL-extended rows that pruning ``b`` would create, so nothing is pushed."""
    select = node.find_ancestor(exp.Select)
    if select is None or select.args.get("where") is None:
        return None
    if any((j.side or "").upper() in ("LEFT", "RIGHT", "FULL") for j in select.args.get("joins") or []):
        return None
    single = len(list(select.find_all(exp.Table))) == 1
    fields = {f.name.lower(): f for f in table.schema.fields}
    preds = [_to_predicate(c, node, fields, single) for c in _conjuncts(select.args["where"].this)]
    return P.and_(*[p for p in preds if p is not None])


def _conjuncts(e: exp.Expression) -> List[exp.Expression]:
    if isinstance(e, exp.And):
        return _conjuncts(e.left) + _conjuncts(e.right)
    if isinstance(e, exp.Paren):
        return _conjuncts(e.this)
    return [e]


def _column(e, node, fields, single):
    if isinstance(e, exp.Column) and e.name.lower() in fields and (e.table and _refers_to(e, node) or
                                                                    not e.table and single):
        return fields[e.name.lower()]
    return None


def _literal(e: exp.Expression, field):
    """The literal as a value comparable with the column's stats; None when unsure."""
    t = field.type
    if not isinstance(e, exp.Literal) or not isinstance(t, AtomicType):
        return None
    text = e.this
    try:
        if t.name in ("TINYINT", "SMALLINT", "INT", "BIGINT"):
            return None if e.is_string else int(text)
        if t.name in ("FLOAT", "DOUBLE"):
            return None if e.is_string else float(text)
        if t.name == "DECIMAL":
            return None if e.is_string else Decimal(text)
        if t.name in ("CHAR", "VARCHAR"):
            return text if e.is_string else None
        if t.name == "DATE" and e.is_string:
            return dt.date.fromisoformat(text)
    except ValueError:
        return None
    return None


def _to_predicate(e: exp.Expression, node, fields, single) -> Optional[P.Predicate]:
    if type(e) in _COMPARE:
        op = _COMPARE[type(e)]
        left, right = e.left, e.right
        field = _column(left, node, fields, single)
        if field is None:
            field, left, right, op = _column(right, node, fields, single), right, left, _FLIP[op]
        if field is None:
            return None
        value = _literal(right, field)
        return None if value is None else P.Predicate(op, field.name, (value,))
    if isinstance(e, exp.In) and not e.args.get("query"):
        field = _column(e.this, node, fields, single)
        values = [_literal(v, field) for v in e.expressions] if field else [None]
        return None if any(v is None for v in values) else P.is_in(field.name, values)
    if isinstance(e, exp.Is) and isinstance(e.expression, exp.Null):
        field = _column(e.this, node, fields, single)
        return None if field is None else P.is_null(field.name)
    if isinstance(e, exp.Not):
        inner = _to_predicate(e.this, node, fields, single)
        return None if inner is None else P.not_(inner)
    return None


def identifier_of(node: exp.Table, current_database: str) -> Identifier:
    return Identifier(node.db or current_database, node.name)
