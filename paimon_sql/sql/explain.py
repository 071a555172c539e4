"""EXPLAIN [EXTENDED|FORMATTED|CODEGEN|COST] of any statement that reads or writes Paimon tables.

A query: Spark's plan of the spliced query, preceded by what planning pruned for each Paimon scan.
A statement that writes a Paimon table (INSERT, CREATE TABLE AS SELECT, UPDATE, DELETE, MERGE INTO):
the plan of the query whose rows it would write, preceded by the write it would make; nothing is
written. Statements that touch no Paimon table are Spark's to explain, as written.
"""

from __future__ import annotations

import re
from typing import Optional

from sqlglot import exp

from paimon_sql.sql import ddl, merge_into, parse, views

_MODE = re.compile(r"\s*(EXTENDED|FORMATTED|CODEGEN|COST)?\s+(.*)", re.I | re.S)


def _insert(session, node: exp.Insert, text: str):
    target = node.this.this if isinstance(node.this, exp.Schema) else node.this
    table = session.find_table(target)
    if table is None:
        return None
    verb = "overwrite" if node.args.get("overwrite") else "append"
    body = parse.query_text(text, node.expression)
    return f"write {verb} to paimon table {table.name}", session.query_dataframe(node.expression, body)


def _create(session, node: exp.Create, text: str):
    query = node.args.get("expression")
    kind = (node.args.get("kind") or "").upper()
    if query is None or kind == "VIEW":
        return None
    if kind != "TABLE" or not ddl.is_paimon_create(node):
        return None
    name = node.this.this if isinstance(node.this, exp.Schema) else node.this
    return f"create paimon table {name.sql(dialect=parse.DIALECT)} and write", \
        session.query_dataframe(query, parse.query_text(text, query))


def _where_rows(verb: str):
    """UPDATE / DELETE: the plan of the query selecting the rows they change."""
    def explain(session, node, text):
        table = session.find_table(node.this)
        if table is None:
            return None
        rows = exp.select("*").from_(node.this.copy())
        if node.args.get("where") is not None:
            rows = rows.where(node.args["where"].this.copy())
        return f"{verb} rows of paimon table {table.name}", session.query_dataframe(rows)
    return explain


def _merge(session, node: exp.Merge, text: str):
    table = session.find_table(node.this)
    if table is None:
        return None
    return f"merge into paimon table {table.name} (rows with their row kind)", \
        session.query_dataframe(merge_into._query(node, table, node.this, None, located=False))


def _query(session, node, text: str):
    return ("query", session.query_dataframe(node, text)) if views.reads_paimon(session, text) else None


_EXPLAINED = {exp.Insert: _insert, exp.Create: _create, exp.Update: _where_rows("update"),
              exp.Delete: _where_rows("delete"), exp.Merge: _merge,
              exp.Select: _query, exp.Union: _query, exp.Intersect: _query, exp.Except: _query}


def explain(session, text: str):
    """``text``: what follows EXPLAIN (a mode, then the statement)."""
    m = _MODE.match(" " + text)
    mode, inner = (m.group(1) or "").upper(), parse.prepare(m.group(2))
    node = parse.parse(inner)
    explained = _EXPLAINED.get(type(node))
    session.scan_reports = []
    try:
        found: Optional[tuple] = explained(session, node, inner) if explained else None
        reports = session.scan_reports
    finally:
        session.scan_reports = None
    if found is None:
        return session.passthrough()
    what, df = found
    lines = [] if what == "query" else ["== Paimon write ==", what, ""]
    lines += ["== Paimon scans =="] + [ln for r in reports for ln in r.lines()] + [""]
    plan = df._jdf.queryExecution().toString() if mode == "EXTENDED" else \
        df._jdf.queryExecution().executedPlan().toString()
    return session.rows([(ln,) for ln in lines + plan.splitlines()], ["plan"])
