"""MERGE INTO a Paimon table: one query over source ⟕ target, one write of the changed rows.

    MERGE INTO t USING s ON <cond>
      WHEN MATCHED [AND c] THEN UPDATE SET a = ..., ... | UPDATE SET * | DELETE
      WHEN NOT MATCHED [AND c] THEN INSERT (cols) VALUES (...) | INSERT *
      WHEN NOT MATCHED BY SOURCE [AND c] THEN UPDATE SET ... | DELETE

The statement becomes a SELECT over ``source LEFT JOIN target`` (FULL JOIN when a NOT MATCHED BY
SOURCE clause exists), each side marked by a flag column. For every row the first clause whose
condition holds decides its values and row kind (+U update, +I insert, -D delete); rows no clause
takes are dropped. On a primary-key table the rows are written as one snapshot, like UPDATE and
DELETE: the LSM merge applies them without rewriting files. On an append table the target side
also carries each row's data file and position: matched rows that are updated or deleted are
deleted by position (deletion vectors or copy-on-write), updated and inserted rows are written.
The AST is built with sqlglot's builders (never by pasting user text), so the query's own Paimon
references are resolved like any other query's.
"""

from __future__ import annotations

from typing import List, Tuple

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.errors import PySparkException
from sqlglot import exp

from paimon_sql.data import row_kind
from paimon_sql.exceptions import PaimonError
from paimon_sql.read import data_evolution
from paimon_sql.read.split_read import FILE_COLUMN, POSITION_COLUMN
from paimon_sql.spark.columns import ROWKIND_COLUMN
from paimon_sql.spark.write import MERGE_SCHEMA, add_columns, option_enabled
from paimon_sql.sql import parse, row_rules
from paimon_sql.sql.dml import (commit_append_changes, group_tasks, located_columns, located_rows, recording,
                                with_table_types, write_changes)
from paimon_sql.sql.query import session_options
from paimon_sql.table import fallback_read
from paimon_sql.write import data_evolution_write
from paimon_sql.write.row_delete import delete_messages, positions_of

_T, _S = "__paimon_target_row", "__paimon_source_row"
_ROW = "__paimon_target_row_number"


def merge_into(session, node: exp.Merge):
    target = node.this
    table = recording(session.find_table(target), "MERGE")
    fallback_read.check_own_rows(table, "MERGE INTO")
    row_rules.check_engine(table, "MERGE INTO")
    row_rules.check_merge(table, node)
    table, source = _merge_schema(session, node, table)
    if table.schema.is_primary_key_table:
        _check_single_match(session, node, target)
        write_changes(session, table, session.query_dataframe(_query(node, table, target, source, located=False)))
        return None
    # an append table: matched rows are deleted by position, updated and inserted rows written
    evolving = data_evolution.enabled(table)
    snapshot = table.snapshot_manager.latest() if evolving else None
    with located_rows(session, table, snapshot) as view:
        relation = exp.Table(this=exp.to_identifier(view), alias=exp.TableAlias(
            this=exp.to_identifier(target.alias_or_name)))
        _check_single_match(session, node, relation)
        df = session.query_dataframe(_query(node, table, relation, source, located=True))
        rows = with_table_types(table, df, *located_columns(table), ROWKIND_COLUMN).toArrow()
    kinds = rows.column(ROWKIND_COLUMN)
    if evolving:
        return _merge_columns(session, node, table, rows, snapshot)
    gone = rows.filter(pc.is_in(kinds, pa.array([row_kind.UPDATE_AFTER, row_kind.DELETE], kinds.type)))
    if table.options.get("deletion-vectors.enabled"):  # paimon-spark writes updated rows as new ones (new row ids)
        inserted = rows.filter(pc.is_in(kinds, pa.array([row_kind.UPDATE_AFTER, row_kind.INSERT], kinds.type)))
        commit_append_changes(table, gone, None, inserted)
    else:
        updated = rows.filter(pc.equal(kinds, pa.scalar(row_kind.UPDATE_AFTER, kinds.type)))
        commit_append_changes(table, gone, updated, rows.filter(pc.equal(kinds, pa.scalar(row_kind.INSERT, kinds.type))))
    return None


def _check_single_match(session, node: exp.Merge, target_relation: exp.Expression) -> None:
    """paimon-spark's rule for a MERGE INTO with WHEN MATCHED clauses: no target row may match more
    than one source row (which of them would decide it?)."""
    if not any(w.args.get("matched") for w in node.args["whens"].expressions) or _one_row(session, node.args["using"]):
        return
    t_alias, s_alias = node.this.alias_or_name, node.args["using"].alias_or_name
    node = _requalify(node.copy(), node.this, t_alias)
    pairs = (exp.select(exp.column(_ROW, table=t_alias).as_(_ROW))
             .from_(_marked(node.args["using"], s_alias, _S))
             .join(_marked(target_relation, t_alias, _T, numbered=True), on=node.args["on"].copy(), join_type="INNER"))
    repeated = (exp.select(exp.column(_ROW)).from_(pairs.subquery("__paimon_pairs")).group_by(exp.column(_ROW))
                .having(exp.GT(this=exp.Count(this=exp.Star()), expression=exp.Literal.number(1))).limit(1))
    if session.query_dataframe(repeated).count():
        raise PaimonError("Can't execute this MergeInto when there are some target rows that each of them match more "
                          "than one source rows. It may lead to an unexpected result.")


def _one_row(session, source: exp.Expression) -> bool:
    """Whether the MERGE's source is at most one row, which cannot match a target row twice: VALUES
    of one row, or a SELECT with no FROM whose plan Spark bounds to one row (``explode`` makes more).
    An application's upsert of one record so skips the check's join, a Spark job of its own (a third
    of a served one-row MERGE's time)."""
    inner = source.this if isinstance(source, exp.Subquery) else source
    if isinstance(inner, exp.Values):
        return len(inner.expressions) <= 1
    if not isinstance(inner, exp.Select) or any(inner.args.get(k) for k in ("from_", "joins", "laterals")) \
            or inner.find(exp.Table) is not None:  # a subquery reading a table: Spark alone cannot plan it
        return False
    try:
        bound = session.spark_sql(inner.sql(dialect=parse.DIALECT))._jdf.queryExecution().optimizedPlan().maxRows()
    except PySparkException:  # whatever Spark cannot plan alone is checked as any source
        return False
    return bool(bound.isDefined()) and bound.get() <= 1


def _merge_columns(session, node: exp.Merge, table, rows: pa.Table, snapshot) -> None:
    """MERGE INTO a data-evolution table, as paimon-spark's MergeIntoPaimonDataEvolutionTable: the
    columns the UPDATE clauses assign are written beside the rows they update (rows keep their ids),
    deleted rows go by deletion vectors, inserted rows are appended — one snapshot."""
    kinds = rows.column(ROWKIND_COLUMN)
    def of(kind):
        return rows.filter(pc.equal(kinds, pa.scalar(kind, kinds.type)))
    updated, deleted, inserted = of(row_kind.UPDATE_AFTER), of(row_kind.DELETE), of(row_kind.INSERT)
    if deleted.num_rows and not table.options.get("deletion-vectors.enabled"):
        raise PaimonError(f"table {table.name}: MERGE INTO DELETE on DataEvolution table requires "
                          "deletion-vectors.enabled=true.")
    messages = delete_messages(table, positions_of(table, deleted)) if deleted.num_rows else []
    try:
        if updated.num_rows:
            columns = _assigned_columns(node, table)
            messages += data_evolution_write.update_columns(
                table, updated.select(columns + [FILE_COLUMN, POSITION_COLUMN]), columns, snapshot.id,
                run=group_tasks(session, table, "MERGE INTO"))
        if inserted.num_rows:
            write = table.new_write()
            write.write_arrow(inserted.select(table.schema.field_names))
            messages += write.prepare_commit()
    except BaseException:
        table.new_commit().abort(messages)
        raise
    table.new_commit().commit_or_abort(messages)


def _assigned_columns(node: exp.Merge, table) -> List[str]:
    """The columns the WHEN MATCHED UPDATE clauses change (``SET *``: every column), in table order,
    as paimon-spark's MergeIntoPaimonDataEvolutionTable picks them (``SET a = a`` changes nothing)."""
    names = set()
    qualifiers = [node.this.alias_or_name.lower(), table.name.lower()]
    for when in node.args["whens"].expressions:
        then = when.args["then"]
        if isinstance(then, exp.Update):
            if any(isinstance(e, exp.Star) for e in then.expressions):
                names.update(table.schema.field_names)
            names.update(row_rules.modified({eq.this.name: eq.expression for eq in then.expressions
                                             if isinstance(eq, exp.EQ)}, qualifiers))
    return [n for n in table.schema.field_names if n in names]


def _merge_schema(session, node: exp.Merge, table):
    """(table, the source's column names in lower case, or None): with ``write.merge-schema`` (a
    table or session option) and an ``UPDATE SET *`` / ``INSERT *``, the source's columns the table
    lacks are added to it first, as paimon-spark's MergeSchemaEvolutionHelper does, and a ``*``
    fills a table column the source lacks with the row's value (UPDATE) or NULL (INSERT)."""
    stars = [w for w in node.args["whens"].expressions if _star(w.args["then"])]
    if not stars or not option_enabled(table.copy(session_options(session, table)), MERGE_SCHEMA):
        return table, None
    source = session.query_dataframe(exp.select("*").from_(node.args["using"].copy())).schema.fields
    known = {n.lower() for n in table.schema.field_names}
    return add_columns(table, [f for f in source if f.name.lower() not in known]), {f.name.lower() for f in source}


def _star(action: exp.Expression) -> bool:
    return (isinstance(action, exp.Update) and any(isinstance(e, exp.Star) for e in action.expressions)) or \
        (isinstance(action, exp.Insert) and isinstance(action.this, exp.Star))


def _query(node: exp.Merge, table, target_relation: exp.Expression, source, located: bool) -> exp.Select:
    """The rows the statement changes: the table's columns and a row kind (``located``: also the
    target row's data file and position). ``source``: :func:`_merge_schema`'s column names."""
    target = node.this
    t_alias, s_alias = target.alias_or_name, node.args["using"].alias_or_name
    node = _requalify(node.copy(), target, t_alias)
    whens = node.args["whens"].expressions
    by_source = any(w.args.get("source") for w in whens)
    clauses = [_clause(w, table, t_alias, s_alias, source) for w in whens]
    columns = []
    for i, name in enumerate(table.schema.field_names):
        case = exp.Case()
        for cond, values, _ in clauses:
            case = case.when(cond.copy(), values[i].copy())
        columns.append(case.as_(name))
    kind = exp.Case()
    for cond, _, k in clauses:
        kind = kind.when(cond.copy(), exp.Literal.number(k))
    location = [exp.column(c, table=t_alias).as_(c) for c in located_columns(table)] if located else []
    joined = (exp.select(*columns, kind.as_(ROWKIND_COLUMN), *location)
              .from_(_marked(node.args["using"], s_alias, _S))
              .join(_marked(target_relation, t_alias, _T), on=node.args["on"].copy(),
                    join_type="FULL OUTER" if by_source else "LEFT OUTER"))
    return exp.select("*").from_(joined.subquery("__paimon_merge")).where(
        exp.column(ROWKIND_COLUMN).is_(exp.null()).not_())


def _requalify(node: exp.Merge, target: exp.Table, alias: str) -> exp.Merge:
    """``db.t.col`` (the target named with its database) → ``alias.col``, as Spark resolves it."""
    def fix(e):
        if isinstance(e, exp.Column) and e.args.get("db") is not None and e.db == target.db \
                and e.table == target.name:
            return exp.column(e.name, table=alias)
        return e
    return node.transform(fix)


def _marked(relation: exp.Expression, alias: str, flag: str, numbered: bool = False) -> exp.Subquery:
    """``(SELECT *, TRUE AS flag FROM relation) AS alias``: the flag tells which side a joined row has
    (``numbered``: each row its own number too)."""
    inner = relation.copy()
    alias_of = relation.args.get("alias")
    columns = alias_of.columns if isinstance(alias_of, exp.TableAlias) else []
    # the alias moves outward; its column names (``(VALUES ...) AS s(id, v)``) stay on the relation
    inner.set("alias", exp.TableAlias(this=exp.to_identifier("__paimon_relation"), columns=[c.copy() for c in columns])
              if columns else None)
    extra = [exp.Anonymous(this="monotonically_increasing_id").as_(_ROW)] if numbered else []
    return exp.select(exp.Star(), exp.true().as_(flag), *extra).from_(inner).subquery(alias)


def _clause(when: exp.When, table, t: str, s: str, source) -> Tuple[exp.Expression, List[exp.Expression], int]:
    """(condition, one value per table column, row kind) of a WHEN clause (``source``: see
    :func:`_merge_schema`)."""
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
    def star(name: str, otherwise: exp.Expression) -> exp.Expression:
        return exp.column(name, table=s) if source is None or name.lower() in source else otherwise

    if isinstance(then, exp.Update):
        if any(isinstance(e, exp.Star) for e in then.expressions):
            return cond, [star(n, v) for n, v in zip(names, target_values)], row_kind.UPDATE_AFTER
        sets = {eq.this.name: eq.expression for eq in then.expressions}
        row_rules.check_columns(table, list(sets))
        return cond, [sets[n] if n in sets else v for n, v in zip(names, target_values)], row_kind.UPDATE_AFTER
    if isinstance(then, exp.Insert):
        if when.args.get("matched") or when.args.get("source"):
            raise PaimonError("MERGE INTO: INSERT is only allowed in WHEN NOT MATCHED")
        if isinstance(then.this, exp.Star):
            return cond, [star(n, exp.null()) for n in names], row_kind.INSERT
        cols = [c.name for c in then.this.expressions]
        vals = then.expression.expressions
        unknown = [c for c in cols if c not in names]
        if unknown or len(cols) != len(vals):
            raise PaimonError(f"MERGE INTO: bad INSERT column list ({', '.join(unknown) or 'count mismatch'})")
        by_name = dict(zip(cols, vals))
        return cond, [by_name.get(n, exp.null()) for n in names], row_kind.INSERT
    raise PaimonError(f"MERGE INTO: unsupported action {then.sql(dialect='spark')}")
