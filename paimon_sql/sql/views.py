"""Temporary views over Paimon tables, read as of each query.

Spark keeps a temporary view made from a DataFrame as that DataFrame's plan, which holds the scan
of the snapshot read when the view was made. A view over a Paimon table must read the table's
latest rows each time it is queried, as paimon-spark's views do (their relation is planned anew
per query). So for each ``CREATE [OR REPLACE] [GLOBAL] TEMPORARY VIEW ... AS <query>`` that reads
Paimon tables the session keeps the query's text as the user wrote it, its table names qualified
with the database they resolved in (``session.views``); a statement naming such a view reads it as
that query, spliced in as a subquery, so its scans are pruned like any other. Spark holds the view
too (made from the query's DataFrame), so SHOW VIEWS, DESCRIBE, DROP VIEW and Spark's own API see
it as Spark's; a view Spark has cached (``CACHE TABLE v``) is read from Spark's cache.

Persistent views live in the catalog (:mod:`paimon_sql.sql.catalog_views`) and are expanded here
the same way, each read through its stored query.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import List, Optional

from sqlglot import exp

from paimon_sql.exceptions import PaimonError
from paimon_sql.sql import catalog_views, parse, query

GLOBAL_TEMP = "global_temp"  # Spark's database of global temporary views
_MAX_DEPTH = 32  # views over views: Spark refuses cycles, this bounds them anyway


@dataclass
class View:
    name: str
    is_global: bool
    text: str  # the query, names qualified
    columns: Optional[List[str]]  # the view's column list, when it has one
    relation: object = None  # Spark's view relation as registered: a view replaced behind our back is not ours
    snapshots: dict = field(default_factory=dict)  # the snapshots it read, for a view Spark caches


def _key(node: exp.Table) -> Optional[str]:
    """The session's key of a temporary view's name (None for names that cannot be one)."""
    if node.db and node.db.lower() != GLOBAL_TEMP or not node.name:
        return None
    return f"{GLOBAL_TEMP}.{node.name.lower()}" if node.db else node.name.lower()


def _read_key(node: exp.Table) -> Optional[str]:
    """:func:`_key` of a name a query reads (statement targets such as ``DESCRIBE v`` are Spark's)."""
    return _key(node) if node.find_ancestor(exp.Query) is not None else None


def _spark_view(session, key: str):
    """Spark's relation of a temporary view (None when Spark has none of that name)."""
    catalog = session.spark._jsparkSession.sessionState().catalog()
    db, _, name = key.rpartition(".")
    found = catalog.getGlobalTempView(name) if db else catalog.getTempView(name)
    return found.get() if found.isDefined() else None


def _is_temporary(node: exp.Create) -> bool:
    props = node.args.get("properties")
    return any(isinstance(p, exp.TemporaryProperty) for p in (props.expressions if props else []))


def _is_global(node: exp.Create) -> bool:
    props = node.args.get("properties")
    return any(isinstance(p, exp.GlobalProperty) for p in (props.expressions if props else []))


def qualified(session, tree: exp.Expression, text: str) -> str:
    """``text`` with every Paimon table name qualified by the database it resolves in now, so the
    view reads the same tables after ``USE`` moves the current database, as Spark's views do."""
    edits = []
    for node in query.plain_references(session, tree):
        parts = node.parts
        start, end = parts[0].meta["start"], parts[-1].meta["end"] + 1
        db = node.db or session.current_database
        edits.append(((start, end), f"`{db.replace('`', '``')}`.`{node.name.replace('`', '``')}`"))
    return query.apply_edits(text, edits)


def create(session, node: exp.Create, text: str):
    """A temporary view over a query that reads Paimon tables (other temporary views are Spark's);
    a persistent one in a warehouse database goes to the catalog."""
    if not _is_temporary(node):
        return catalog_views.create(session, node, text)
    target = node.this.this if isinstance(node.this, exp.Schema) else node.this
    body = parse.query_text(text, node.args["expression"])
    if not reads_paimon(session, body):
        return session.passthrough()
    view = View(target.name, _is_global(node), body,
                [c.name for c in node.this.expressions] if isinstance(node.this, exp.Schema) else None)
    if _spark_view(session, _view_key(view)) is not None and not node.args.get("replace"):
        if node.args.get("exists"):
            return None
        raise PaimonError(f"[TEMP_TABLE_OR_VIEW_ALREADY_EXISTS] Cannot create the temporary view `{target.name}` "
                          f"because it already exists")
    prepared = parse.prepare(body)
    view.text = qualified(session, parse.parse(prepared), prepared)
    register(session, view)
    return None


def _view_key(view: View) -> str:
    return f"{GLOBAL_TEMP}.{view.name.lower()}" if view.is_global else view.name.lower()


def spark_name(view: View) -> str:
    return f"{GLOBAL_TEMP}.{view.name}" if view.is_global else view.name


def register(session, view: View) -> None:
    """Make ``view`` Spark's (from its query's DataFrame) and the session's."""
    df = session.query_dataframe(None, view.text)
    if view.columns is not None:
        if len(view.columns) != len(df.columns):
            raise PaimonError(f"[CREATE_VIEW_COLUMN_ARITY_MISMATCH] Cannot create view `{view.name}`: the query has "
                              f"{len(df.columns)} column(s), the view lists {len(view.columns)}")
        df = df.toDF(*view.columns)
    (df.createOrReplaceGlobalTempView if view.is_global else df.createOrReplaceTempView)(view.name)
    view.relation = _spark_view(session, _view_key(view))
    view.snapshots = _snapshots(session, view.text)
    session.views[_view_key(view)] = view


def _snapshots(session, text: str) -> dict:
    """The latest snapshot of each Paimon table a view's query names."""
    prepared = parse.prepare(text)
    out = {}
    for node in query.plain_references(session, parse.parse(prepared)):
        ref = query.resolve(session, node)
        table = getattr(ref, "table", ref)
        snap = table.snapshot_manager.latest() if hasattr(table, "snapshot_manager") else None
        out[node.sql(dialect=parse.DIALECT)] = snap.id if snap else None
    return out


def forget(session, node: exp.Drop) -> None:
    """DROP VIEW: the view is Spark's to drop; the session forgets its query."""
    for t in node.args.get("tables") or [node.this]:
        key = _key(t)
        if key:
            session.views.pop(key, None)


def _live(session, key: str) -> Optional[View]:
    """The session's view of that name while Spark still holds the one it registered; None when
    Spark is to read it from its cache (cached anew, as Spark recaches, when a table it reads has
    a newer snapshot than the one cached)."""
    view = session.views.get(key)
    if view is None:
        return None
    current = _spark_view(session, key)
    if current is None or not current.equals(view.relation):
        del session.views[key]
        return None
    if not session.spark.catalog.isCached(spark_name(view)):
        return view
    if _snapshots(session, view.text) != view.snapshots:
        register(session, view)
        session.spark.catalog.cacheTable(spark_name(view))
    return None


def _view_of(session, node: exp.Table) -> Optional[View]:
    """The view a query's table name reads: a temporary view of the session, else a view of the
    catalog (as the query it stores, its names qualified with its database); None for others."""
    key = _read_key(node) if session.views else None
    if key and key not in query.ctes_in_scope(node):
        view = _live(session, key)
        if view is not None:
            return view
    found = catalog_views.stored(session, node) if catalog_views.is_read(session, node) else None
    if found is None:
        return None
    ident, schema = found
    return View(ident.table, False, catalog_views.body(ident, schema), schema.field_names)


def expand(session, tree: exp.Expression, text: str) -> str:
    """``text`` with each reference to a view (the session's, the catalog's) replaced by its query."""
    for _ in range(_MAX_DEPTH):
        edits = []
        for node in tree.find_all(exp.Table):
            view = _view_of(session, node)
            if view is not None:
                edits.append(_replacement(node, view))
        if not edits:
            return text
        text = query.apply_edits(text, edits)
        tree = parse.parse(text)
    raise PaimonError("views nested too deeply (a view that reads itself?)")


def _replacement(node: exp.Table, view: View):
    """The view's query as a subquery in place of the name (its alias kept, else the view's name)."""
    parts = node.parts
    span = parts[0].meta["start"], parts[-1].meta["end"] + 1
    name = "`" + node.name.replace("`", "``") + "`"
    body = f"(/* {query.VIEW_BODY} */ {view.text}\n)"  # a line comment ending the query ends before the parenthesis
    if view.columns:
        columns = ", ".join("`" + c.replace("`", "``") + "`" for c in view.columns)
        body = f"(SELECT * FROM {body} AS {name}({columns}))"
    return span, body + ("" if node.args.get("alias") else f" AS {name}")


def reads_paimon(session, text: str) -> bool:
    """Whether a query reads a Paimon table, directly or through a view of the session."""
    prepared = parse.prepare(text)
    tree = parse.parse(prepared)
    if any(_view_of(session, t) for t in tree.find_all(exp.Table)):
        return True
    return bool(query.plain_references(session, tree)) or any(
        isinstance(t.this, exp.Anonymous) and t.this.name.lower() in query.TABLE_FUNCTIONS
        for t in tree.find_all(exp.Table))
