"""Persistent views: ``CREATE VIEW`` in a warehouse database keeps the view in the catalog.

A view is stored as Paimon stores one (:class:`paimon_sql.schema.view_schema.ViewSchema`): its output
columns, its query as the user wrote it (also under the ``spark`` dialect, as paimon-spark writes
it), its comment and its TBLPROPERTIES as options. Spark never holds it: a query naming the view
reads it through :func:`paimon_sql.sql.views.expand`, which splices the view's query in as a
subquery, so every read plans anew over the tables' latest snapshots (time travel and system
tables inside the view work as in any query). As in Spark, the view's unqualified table names
mean tables of the view's own database, a temporary view shadows it for an unqualified name, its
column list renames the query's columns by position, and a persistent view may not read a
temporary view.

Names are matched as Spark matches its session catalog's: ignoring case (a view is stored under
its lower-case name) unless ``spark.sql.caseSensitive``.
"""

from __future__ import annotations

from typing import List, Optional, Tuple

from sqlglot import exp

from paimon_sql.catalog import Identifier
from paimon_sql.data.types import DataField, paimon_type_from_sql
from paimon_sql.exceptions import PaimonError, SchemaError, ViewAlreadyExistsError
from paimon_sql.options.core_options import redact
from paimon_sql.schema.view_schema import ViewSchema
from paimon_sql.spark.types import type_names
from paimon_sql.sql import parse, query
from paimon_sql.sql.parse import CATALOG, CATALOG_NAMES

# -- names --------------------------------------------------------------------------------------

def identifier(session, node: exp.Table) -> Optional[Identifier]:
    """The catalog identifier a view name means, or None when its database is not the warehouse's
    (Spark's own, ``global_temp``) or it cannot name a view (``t$files``)."""
    if not node.name or "$" in node.name or isinstance(node.this, exp.Anonymous) or node.catalog \
            and node.catalog.lower() not in CATALOG_NAMES:
        return None
    db = session.database_name(node.db or session.current_database)
    if db is None:
        return None
    return Identifier(db, node.name if session._case_sensitive() else node.name.lower())


def stored(session, node: exp.Table) -> Optional[Tuple[Identifier, ViewSchema]]:
    """(identifier, view) of the catalog view a table name means; None when it names none."""
    ident = identifier(session, node)
    if ident is None:
        return None
    try:
        return ident, session.catalog.get_view(ident)
    except LookupError:
        return None


def target(session, node: exp.Table) -> Optional[Tuple[Identifier, ViewSchema]]:
    """:func:`stored` for a statement's target (DROP, DESCRIBE, ALTER), unless a temporary view of
    that unqualified name shadows it."""
    if node.name and not node.db and session.is_temp_view(node.name):
        return None
    return stored(session, node)


def is_read(session, node: exp.Table) -> bool:
    """Whether a query's table name may mean a stored view: read by a query, not a CTE in scope,
    and, unqualified, not a temporary view (which shadows the catalog's, as in Spark)."""
    if node.find_ancestor(exp.Query) is None:
        return False
    if not node.db and (node.name.lower() in query.ctes_in_scope(node) or session.is_temp_view(node.name)):
        return False
    return True


def body(ident: Identifier, view: ViewSchema) -> str:
    """The view's Spark query, each unqualified table name qualified with the view's database
    (as Spark resolves a view's names in the database it was created in)."""
    text = parse.prepare(view.query_of())
    tree = parse.parse(text)
    edits = []
    for node in tree.find_all(exp.Table):
        if node.db or not node.name or isinstance(node.this, exp.Anonymous) \
                or node.name.lower() in query.ctes_in_scope(node):
            continue
        parts = node.parts
        edits.append(((parts[0].meta["start"], parts[-1].meta["end"] + 1),
                      f"{_quote(ident.database)}.{_quote(node.name)}"))
    return query.apply_edits(text, edits)


def _quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


# -- CREATE / ALTER / DROP ------------------------------------------------------------------------

def create(session, node: exp.Create, text: str):
    """CREATE [OR REPLACE] VIEW [IF NOT EXISTS] v [(cols)] [COMMENT c] [TBLPROPERTIES (...)] AS query."""
    name = node.this.this if isinstance(node.this, exp.Schema) else node.this
    ident = identifier(session, name)
    if ident is None:
        return session.passthrough()
    replace, if_not_exists = bool(node.args.get("replace")), bool(node.args.get("exists"))
    if replace and if_not_exists:
        raise PaimonError(f"[CREATE_VIEW_WITH_IF_NOT_EXISTS_AND_REPLACE] CREATE VIEW {name.name} with both "
                          "IF NOT EXISTS and REPLACE is not allowed.")
    exists = session.catalog.view_exists(ident)
    if exists and if_not_exists:
        return None
    if exists and not replace or session.catalog.table_exists(ident):
        raise ViewAlreadyExistsError(f"[TABLE_OR_VIEW_ALREADY_EXISTS] Cannot create table or view "
                                     f"`{CATALOG}`.`{ident.database}`.`{ident.table}` because it already exists.")
    query_text = parse.query_text(text, node.args["expression"])
    comment, options = _properties(node)
    view = _analysed(session, ident, query_text, _columns(node), comment, options)
    if exists:
        session.catalog.alter_view(ident, view)
    else:
        session.catalog.create_view(ident, view)
    return None


def _columns(node: exp.Create) -> Optional[List[Tuple[str, Optional[str]]]]:
    """The view's column list as (name, comment) pairs, None without one."""
    if not isinstance(node.this, exp.Schema):
        return None
    out = []
    for c in node.this.expressions:
        comments = [k.kind.this.this for k in c.args.get("constraints") or []
                    if isinstance(k.kind, exp.CommentColumnConstraint)] if isinstance(c, exp.ColumnDef) else []
        out.append((c.name, comments[0] if comments else None))
    return out


def _properties(node: exp.Create) -> Tuple[Optional[str], dict]:
    props = node.args.get("properties")
    comment, options = None, {}
    for p in props.expressions if props else []:
        if isinstance(p, exp.SchemaCommentProperty):
            comment = p.this.this
        elif isinstance(p, exp.Property):
            options[p.name] = p.args["value"].this if isinstance(p.args["value"], exp.Literal) \
                else p.args["value"].sql(dialect=parse.DIALECT)
        elif not isinstance(p, exp.TemporaryProperty):
            raise PaimonError(f"CREATE VIEW: clause {p.sql(dialect=parse.DIALECT)} is not supported")
    return comment, options


def _analysed(session, ident: Identifier, text: str, columns, comment, options) -> ViewSchema:
    """The view of ``text`` with the columns Spark gives its query (read in the view's database);
    a query reading a temporary view is refused, as Spark refuses it for a persistent view."""
    for node in parse.parse(parse.prepare(text)).find_all(exp.Table):
        if node.db and node.db.lower() == "global_temp" or not node.db and node.name \
                and node.name.lower() not in query.ctes_in_scope(node) and session.is_temp_view(node.name):
            raise PaimonError(f"[INVALID_TEMP_OBJ_REFERENCE] Cannot create the persistent object "
                              f"`{CATALOG}`.`{ident.database}`.`{ident.table}` of the type VIEW because it references "
                              f"to the temporary object `{node.name}` of the type VIEW.")
    qualified = body(ident, ViewSchema.of_spark([], text))
    _refuse_cycle(session, ident, qualified, [ident])
    schema = session.query_dataframe(None, qualified).schema
    if columns is not None and len(columns) != len(schema.fields):
        reason = "too many data columns" if len(schema.fields) > len(columns) else "not enough data columns"
        raise SchemaError(f"[CREATE_VIEW_COLUMN_ARITY_MISMATCH] Cannot create view `{CATALOG}`.`{ident.database}`."
                          f"`{ident.table}`, the reason is {reason}: view columns: {len(columns)}, data columns: "
                          f"{len(schema.fields)}")
    names = columns or [(f.name, None) for f in schema.fields]
    fields = [DataField(i, name, paimon_type_from_sql(f.dataType.simpleString()), description)
              for i, ((name, description), f) in enumerate(zip(names, schema.fields))]
    if len({f.name.lower() for f in fields}) != len(fields):
        raise SchemaError(f"[COLUMN_ALREADY_EXISTS] view {ident}: its columns {[f.name for f in fields]} repeat a name")
    return ViewSchema.of_spark(fields, text, comment, options)


def _refuse_cycle(session, ident: Identifier, text: str, path: List[Identifier]) -> None:
    """Refuse a view ``ident`` whose query (``text``, names qualified) reads it again through the
    views it reads, as Spark refuses a recursive view when it is created or altered (it would
    fail only when queried)."""
    for node in parse.parse(text).find_all(exp.Table):
        if node.name.lower() in query.ctes_in_scope(node):
            continue
        found = stored(session, node)
        if found is None:
            continue
        if found[0] == ident:
            cycle = " -> ".join(f"`{CATALOG}`.`{i.database}`.`{i.table}`" for i in path + [ident])
            raise PaimonError(f"[RECURSIVE_VIEW] Recursive view `{CATALOG}`.`{ident.database}`.`{ident.table}` "
                              f"detected (cycle: {cycle}).")
        if found[0] not in path:
            _refuse_cycle(session, ident, body(*found), path + [found[0]])


def drop(session, node: exp.Drop, tables: List[exp.Table]) -> bool:
    """DROP VIEW / DROP TABLE of stored views (Spark drops a view by either): True when every name
    was a stored view and is dropped; False leaves the statement to the caller (none of them is)."""
    found = [target(session, t) for t in tables]
    if not any(found):
        return False
    for f in found:
        if f is None:
            raise PaimonError("DROP of stored views and other objects in one statement is not supported")
        session.catalog.drop_view(f[0], ignore_if_not_exists=bool(node.args.get("exists")))
    return True


def alter(session, node: exp.Alter):
    """ALTER VIEW v AS query | RENAME TO w | SET/UNSET TBLPROPERTIES; None when v is not a stored view."""
    found = target(session, node.this)
    if found is None:
        return None
    ident, view = found
    action = node.args["actions"][0]
    if isinstance(action, exp.AlterRename):
        to = action.this
        new = identifier(session, to if to.db else exp.Table(this=to.this, db=exp.to_identifier(ident.database)))
        if new is None:
            raise PaimonError(f"ALTER VIEW {ident} RENAME TO {to.sql(dialect=parse.DIALECT)}: no such database")
        session.catalog.rename_view(ident, new)
    elif isinstance(action, exp.Query):
        text = parse.query_text(parse.prepare(session.text), action)
        new_view = _analysed(session, ident, text, None, view.comment, view.options)
        session.catalog.alter_view(ident, new_view)
    elif isinstance(action, exp.AlterSet):
        props = action.find(exp.Properties)
        added = {p.name: p.args["value"].this for p in props.expressions} if props else {}
        session.catalog.alter_view(ident, _with_options(view, {**view.options, **added}))
    else:
        raise PaimonError(f"ALTER VIEW {ident}: {action.sql(dialect=parse.DIALECT)} is not supported "
                          "(AS query, RENAME TO, SET TBLPROPERTIES are)")
    return True


def _with_options(view: ViewSchema, options: dict) -> ViewSchema:
    return ViewSchema(view.fields, view.query, view.dialects, view.comment, options)


# -- SHOW CREATE TABLE, DESCRIBE ----------------------------------------------------------------

def show_create(ident: Identifier, view: ViewSchema) -> str:
    """Spark's SHOW CREATE TABLE of a view."""
    cols = ",\n".join(f"  {f.name}" + (f" COMMENT '{_escaped(f.description)}'" if f.description else "")
                      for f in view.fields)
    text = f"CREATE VIEW {ident.database}.{ident.table} (\n{cols})\n"
    if view.comment is not None:
        text += f"COMMENT '{_escaped(view.comment)}'\n"
    shown = redact(view.options)
    if shown:
        text += "TBLPROPERTIES (\n" + ",\n".join(f"  '{_escaped(k)}' = '{_escaped(v)}'"
                                                 for k, v in sorted(shown.items())) + ")\n"
    return text + f"AS {view.query_of()}\n"


def _escaped(text: str) -> str:
    return text.replace("\\", "\\\\").replace("'", "\\'")


def describe_rows(ident: Identifier, view: ViewSchema, extended: bool) -> List[tuple]:
    """Spark's DESCRIBE [EXTENDED] rows of a view."""
    rows = [(f.name, t, f.description) for f, t in zip(view.fields, type_names(view.fields))]
    if not extended:
        return rows
    rows += [("", "", ""), ("# Detailed Table Information", "", ""), ("Catalog", CATALOG, ""),
             ("Database", ident.database, ""), ("Table", ident.table, ""), ("Type", "VIEW", "")]
    if view.comment is not None:
        rows.append(("Comment", view.comment, ""))
    rows += [("View Text", view.query_of(), ""), ("View Original Text", view.query_of(), ""),
             ("View Catalog and Namespace", f"{CATALOG}.{ident.database}", ""),
             ("View Query Output Columns", "[" + ", ".join(f"`{f.name}`" for f in view.fields) + "]", "")]
    shown = redact(view.options)
    if shown:
        rows.append(("Table Properties", "[" + ", ".join(f"{k}={v}" for k, v in sorted(shown.items())) + "]", ""))
    return rows
