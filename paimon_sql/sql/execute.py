"""Classify a parsed statement by its AST node type and run it — a dispatch table, not an if-chain.

Handlers return a DataFrame, or None for statements without rows. Statements that are not about
Paimon tables (Spark's own tables and views, SET, CACHE, ...) go to ``spark.sql`` unchanged.
"""

from __future__ import annotations

import re

from sqlglot import exp

from paimon_sql.exceptions import PaimonError
from paimon_sql.sql import (alter, analyze, cache, call, catalog_views, ddl, describe, dml, explain,
                            materialized_table, merge_into, parse, query, show, views)
from paimon_sql.table import materialized_table as mt
from paimon_sql.table import object_table, unserved_features


def _query(session, node):
    return session.query_dataframe(node, session.text)


def _view_or(handler, kind: str, view_handler):
    """Views (CREATE/DROP VIEW) go to :mod:`views`, other kinds to ``handler``."""
    return lambda session, node: view_handler(session, node) if (node.args.get("kind") or "").upper() == kind \
        else handler(session, node)


def _create_view(session, node):
    return views.create(session, node, parse.prepare(session.text))


def _drop_view(session, node):
    names = node.args.get("tables") or [node.this]
    if catalog_views.drop(session, node, names):
        return None
    for name in names:  # a temporary view shadows a table of its unqualified name
        table = None if not name.db and session.is_temp_view(name.name) else session.find_table(name)
        if table is not None:
            raise PaimonError(f"[WRONG_COMMAND_FOR_OBJECT_TYPE] The operation DROP VIEW requires a VIEW. But "
                              f"{table.name} is a Paimon table. Use DROP TABLE instead.")
    views.forget(session, node)
    return session.passthrough()


def _create(session, node):
    return ddl.create(session, node) if ddl.is_paimon_create(node) else session.passthrough()


def _drop(session, node):
    """Databases are the warehouse's; a table is ours when the warehouse has it, else Spark's."""
    kind = (node.args.get("kind") or "").upper()
    if kind in ("DATABASE", "SCHEMA", "NAMESPACE"):
        return ddl.drop_database(session, node)
    tables = [session.find_table(t) for t in node.args.get("tables") or [node.this]] if kind == "TABLE" else []
    for table in tables:
        mt.refuse_write(table, "DROP TABLE", "DROP MATERIALIZED TABLE")
    if any(tables):
        return ddl.drop(session, node)
    if kind == "TABLE" and catalog_views.drop(session, node, node.args.get("tables") or [node.this]):
        return None  # Spark drops a view by DROP TABLE too
    return session.passthrough()


def _describe(session, node):
    if (node.args.get("kind") or "").upper() in ("DATABASE", "SCHEMA", "NAMESPACE"):
        return describe.describe_database(session, node)
    if node.this.name.upper() == "PROCEDURE" and not node.this.this.quoted and len(node.expressions) == 1:
        return call.describe_procedure(session, node.expressions[0].sql(dialect=parse.DIALECT))
    ref = query.resolve(session, node.this) if node.this.name else None
    if ref is not None:
        return describe.describe(session, node, ref)
    view = catalog_views.target(session, node.this) if node.this.name else None
    return describe.describe_view(session, node, *view) if view else session.passthrough()


def _insert(session, node):
    target = node.this.this if isinstance(node.this, exp.Schema) else node.this
    table = session.find_table(target)
    mt.refuse_write(table, "INSERT")
    object_table.refuse_write(table)
    unserved_features.refuse_write(table)
    if table is None and catalog_views.target(session, target):
        raise PaimonError(f"[EXPECT_TABLE_NOT_VIEW.NO_ALTERNATIVE] 'INSERT' expects a table, but "
                          f"{target.sql(dialect=parse.DIALECT)} is a view.")
    return dml.insert(session, node) if table else session.passthrough()


def _ours(handler, target_of=lambda node: node.this):
    """A handler for statements writing one table: ours when the warehouse has the table, else Spark's."""
    def run(session, node):
        table = session.find_table(target_of(node))
        mt.refuse_write(table, type(node).__name__.upper().replace("TABLE", ""))
        object_table.refuse_write(table)
        unserved_features.refuse_write(table)
        return handler(session, node) if table else session.passthrough()
    return run


_SHOW = [
    (re.compile(r"DATABASES|SCHEMAS", re.I), lambda s, m: s.rows([(d,) for d in s.catalog.list_databases()],
                                                                  ["namespace"])),
    *show.PATTERNS,
    (re.compile(r"PROCEDURES", re.I), lambda s, m: call.show_procedures(s)),
    (re.compile(r"TAGS\s+(.+)", re.I | re.S), lambda s, m: alter.show_tags(s, m.group(1))),
    (re.compile(r"CREATE\s+TABLE\s+(.+)", re.I), lambda s, m: _show_create_table(s, m.group(1))),
]


def _show_create_table(session, name: str):
    ref = parse.table_reference(name)
    view = catalog_views.target(session, ref)
    if view:
        text = catalog_views.show_create(*view)
    else:
        table = session.find_table(ref)
        if table is None:
            return session.passthrough()
        text = materialized_table.show_create(table) if mt.is_materialized(table) else \
            describe.show_create_table(table)
    return session.rows([(text,)], ["createtab_stmt"])


def _alter(session, node):
    """ALTER VIEW of a catalog view is :mod:`catalog_views`'; other ALTERs :mod:`alter`'s."""
    if (node.args.get("kind") or "").upper() == "VIEW" and catalog_views.alter(session, node):
        return None
    return alter.alter(session, node)


def _command(session, node):
    verb = node.this.upper()
    expr = node.expression
    text = expr.this if isinstance(expr, exp.Literal) else expr if isinstance(expr, str) else ""
    if verb == "SHOW":
        for pattern, handler in _SHOW:
            m = pattern.fullmatch(text.strip())
            if m:
                return handler(session, m)
    if materialized_table.STATEMENT.match(text):
        return materialized_table.run(session, verb, text)
    if verb == "ALTER":
        return alter.alter_command(session, text)
    if verb == "EXPLAIN":
        return explain.explain(session, text)
    if verb == "CREATE" and _DATABASE_PROPERTIES.search(text) and re.match(r"\s*(DATABASE|SCHEMA|NAMESPACE)\b",
                                                                              text, re.I):
        return _create_database_with_properties(session, text)
    if verb == "CALL":
        return call.call(session, text)
    return session.passthrough()


_DATABASE_PROPERTIES = re.compile(r"\s+WITH\s+(?:DB)?PROPERTIES\s*(\((?:'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"|[^)'\"])*\))",
                                  re.I | re.S)


def _create_database_with_properties(session, text: str):
    """CREATE DATABASE ... WITH DBPROPERTIES (...), which sqlglot keeps as a raw command: the
    database as CREATE DATABASE without them makes it, then the properties as ALTER DATABASE sets
    them (on a database it made, not on one IF NOT EXISTS found)."""
    m = _DATABASE_PROPERTIES.search(text)
    create = parse.parse("CREATE " + text[:m.start()] + text[m.end():])
    existed = session.catalog.database_exists(create.this.name)
    execute(session, create)
    if not existed and session.catalog.database_exists(create.this.name):
        alter.alter_command(session, f"DATABASE `{create.this.name}` SET DBPROPERTIES {m.group(1)}")
    return None


HANDLERS = {
    exp.Select: _query, exp.Union: _query, exp.Intersect: _query, exp.Except: _query, exp.Values: _query,
    exp.Create: _view_or(_create, "VIEW", _create_view), exp.Drop: _view_or(_drop, "VIEW", _drop_view),
    exp.Use: lambda s, n: ddl.use(s, n), exp.Describe: _describe,
    exp.Insert: _insert, exp.Command: _command, exp.Alter: _alter,
    exp.Analyze: lambda s, n: analyze.analyze(s, n),
    exp.Update: _ours(dml.update), exp.Delete: _ours(dml.delete), exp.Merge: _ours(merge_into.merge_into),
    exp.TruncateTable: _ours(dml.truncate, lambda n: n.expressions[0]),
    exp.Cache: lambda s, n: cache.cache_table(s, n, parse.prepare(s.text)),
    exp.Uncache: lambda s, n: cache.uncache_table(s, n), exp.Refresh: lambda s, n: cache.refresh_table(s, n),
}


def execute(session, node: exp.Expression):
    handler = HANDLERS.get(type(node))
    return handler(session, node) if handler else session.passthrough()
