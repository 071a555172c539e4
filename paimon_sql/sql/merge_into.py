"""MERGE INTO a primary-key table: one query over source ⟕ target, one write of the changed rows.

    MERGE INTO t USING s ON <cond>
      WHEN MATCHED [AND c] THEN UPDATE SET a = ..., ... | UPDATE SET * | DELETE
      WHEN NOT MATCHED [AND c] THEN INSERT (cols) VALUES (...) | INSERT *
      WHEN NOT MATCHED BY SOURCE [AND c] THEN UPDATE SET ... | DELETE

The statement becomes a SELECT over ``source LEFT JOIN target`` (FULL JOIN when a NOT MATCHED BY
SOURCE clause exists), each side marked by a flag column. For every row the first clause whose
condition holds decides its values and row kind (+U update, +I insert, -D delete); rows no clause
takes are dropped. The rows are written as one snapshot, like UPDATE and DELETE: the LSM merge
applies them without rewriting files. The AST is built with sqlglot's builders (never by pasting
user text), so the query's own Paimon references are resolved like any other query's.
"""

from __future__ import annotations

from typing import List, Tuple

from sqlglot import exp

from paimon_sql.exceptions import PaimonError
from paimon_sql.format import row_kind
from paimon_sql.spark.source import ROWKIND_COLUMN
from paimon_sql.sql.dml import changing_table, check_assignments, write_changes

_T, _S = "__paimon_target_row", "__paimon_source_row"


def merge_into(session, node: exp.Merge):
    target = node.this
    whens = node.args["whens"].expressions
    table = changing_table(session, target, {_verb(w.args["then"]) for w in whens} - {"INSERT"})
    t_alias, s_alias = target.alias_or_name, node.args["using"].alias_or_name
    node = _requalify(node.copy(), target, t_alias)
    whens = node.args["whens"].expressions
    by_source = any(w.args.get("source") for w in whens)
    clauses = [_clause(w, table, t_alias, s_alias) for w in whens]
    columns = []
    for i, name in enumerate(table.schema.field_names):
        case = exp.Case()
        for cond, values, _ in clauses:
            case = case.when(cond.copy(), values[i].copy())
        columns.append(case.as_(name))
    kind = exp.Case()
    for cond, _, k in clauses:
        kind = kind.when(cond.copy(), exp.Literal.number(k))
    joined = (exp.select(*columns, kind.as_(ROWKIND_COLUMN))
              .from_(_marked(node.args["using"], s_alias, _S))
              .join(_marked(target, t_alias, _T), on=node.args["on"].copy(),
                    join_type="FULL OUTER" if by_source else "LEFT OUTER"))
    query = exp.select("*").from_(joined.subquery("__paimon_merge")).where(
        exp.column(ROWKIND_COLUMN).is_(exp.null()).not_())
    write_changes(session, table, session.query_dataframe(query))
    return None


def _verb(action: exp.Expression) -> str:
    return {exp.Update: "UPDATE", exp.Insert: "INSERT"}.get(type(action), "DELETE")


def _requalify(node: exp.Merge, target: exp.Table, alias: str) -> exp.Merge:
    """``db.t.col`` (the target named with its database) → ``alias.col``, as Spark resolves it."""
    def fix(e):
        if isinstance(e, exp.Column) and e.args.get("db") is not None and e.db == target.db \
                and e.table == target.name:
            return exp.column(e.name, table=alias)
        return e
    return node.transform(fix)


def _marked(relation: exp.Expression, alias: str, flag: str) -> exp.Subquery:
    """``(SELECT *, TRUE AS flag FROM relation) AS alias``: the flag tells which side a joined row has."""
    inner = relation.copy()
    inner.set("alias", None)
    return exp.select(exp.Star(), exp.true().as_(flag)).from_(inner).subquery(alias)


def _clause(when: exp.When, table, t: str, s: str) -> Tuple[exp.Expression, List[exp.Expression], int]:
    """(condition, one value per table column, row kind) of a WHEN clause."""
    has_t = exp.column(_T, table=t).is_(exp.null()).not_()
    has_s = exp.column(_S, table=s).is_(exp.null()).not_()
    if when.args.get("matched"):
        cond = exp.and_(has_t, has_s)
    elif when.args.get("source"):
        cond = exp.and_(has_t, exp.not_(has_s))
    else:
        cond = exp.not_(has_t)
    if when.args.get("condition") is not None:
        cond = exp.and_(cond, exp.paren(when.args["condition"].copy()))
    names = table.schema.field_names
    target_values = [exp.column(n, table=t) for n in names]
    then = when.args["then"]
    if isinstance(then, exp.Var) and then.name.upper() == "DELETE":
        return cond, target_values, row_kind.DELETE
    if isinstance(then, exp.Update):
        if any(isinstance(e, exp.Star) for e in then.expressions):
            return cond, [exp.column(n, table=s) for n in names], row_kind.UPDATE_AFTER
        sets = {eq.this.name: eq.expression for eq in then.expressions}
        check_assignments(table, list(sets))
        return cond, [sets[n] if n in sets else v for n, v in zip(names, target_values)], row_kind.UPDATE_AFTER
    if isinstance(then, exp.Insert):
        if when.args.get("matched") or when.args.get("source"):
            raise PaimonError("MERGE INTO: INSERT is only allowed in WHEN NOT MATCHED")
        if isinstance(then.this, exp.Star):
            return cond, [exp.column(n, table=s) for n in names], row_kind.INSERT
        cols = [c.name for c in then.this.expressions]
        vals = then.expression.expressions
        unknown = [c for c in cols if c not in names]
        if unknown or len(cols) != len(vals):
            raise PaimonError(f"MERGE INTO: bad INSERT column list ({', '.join(unknown) or 'count mismatch'})")
        by_name = dict(zip(cols, vals))
        return cond, [by_name.get(n, exp.null()) for n in names], row_kind.INSERT
    raise PaimonError(f"MERGE INTO: unsupported action {then.sql(dialect='spark')}")
