"""Queries: Spark runs the user's text as written, each Paimon table reference spliced to a scan.

Each reference that names a Paimon table (a table, a branch ``t$branch_b``, a system table
``t$files``, a table function ``paimon_incremental_query(...)``), with its hint and time travel,
is replaced in the text by the name of a scan relation; no other byte of the statement changes.
Which columns and filters each scan needs is Spark's answer (:mod:`paimon_sql.spark.pushdown`):
the spliced text is planned once over zero-row stand-ins (remembered per session for the same
text and columns), then again over the pruned scans.

Name resolution follows Spark: CTE names and temporary views shadow tables; anything not found
in the warehouse (Spark's own tables, ``range(10)``) is left to Spark.
"""

from __future__ import annotations

import datetime as dt
import itertools
import re
from dataclasses import dataclass

import sqlglot
from sqlglot import exp

from paimon_sql.catalog import Identifier
from paimon_sql.exceptions import PaimonError
from paimon_sql.read import metadata_columns
from paimon_sql.spark import format_table as spark_format_table
from paimon_sql.spark import pushdown
from paimon_sql.spark.session_options import session_options as spark_session_options
from paimon_sql.spark.types import spark_ddl
from paimon_sql.sql import functions, parse, query_shape, star
from paimon_sql.systables import GLOBAL_TABLES, SystemTable, load_global
from paimon_sql.systables import load as load_system_table
from paimon_sql.table import format_table
from paimon_sql.table.format_table import FormatTable

SYS_DATABASE = "sys"  # global system tables: sys.tables, sys.partitions, ...
BRANCH_PREFIX = "branch_"  # t$branch_<name> reads a branch

_VIEW_IDS = itertools.count()


def spliced_dataframe(session, tree: exp.Expression, text: str):
    """The query ``tree`` parsed from ``text`` as Spark's DataFrame: ``text`` handed to Spark as
    written except the spans of the Paimon table references, each replaced by the name of a scan
    relation. The relations are dropped once Spark has analyzed the query, which holds their plans."""
    refs = references(session, tree, text)
    calls = functions.edits(session, tree, text)
    if not refs:
        return session.spark_sql(apply_edits(text, calls))
    hidden = star.wanted(tree)
    spliced = apply_edits(text, _edits(session, tree, refs, hidden) + calls)
    fields = {r.view: _fields(r.ref, hidden) for r in refs}
    planned = [r for r in refs if not _cached(session, r, hidden)]
    try:
        if planned:
            for r, need in zip(planned, _needs(session, tree, text, calls, spliced, refs, planned, fields)):
                columns = need.columns or [fields[r.view][0].name]
                _scan(session, r.ref, columns, need.predicate).createOrReplaceTempView(r.view)
        return session.spark_sql(spliced)
    finally:
        _drop_relations(session, refs)


def pushed_predicate(session, tree: exp.Expression):
    """The predicate Spark's planning pushes to the Paimon table the query ``tree`` reads (its first
    one): how a DELETE that reads files as they lie picks the files it may match. None: none."""
    text = parse.prepare(tree.sql(dialect=parse.DIALECT))
    tree = parse.parse(text)
    refs = references(session, tree, text)
    if not refs:
        return None
    hidden = star.wanted(tree)
    spliced = apply_edits(text, _edits(session, tree, refs, hidden))
    try:
        needs = _needs(session, tree, text, [], spliced, refs, refs, {r.view: _fields(r.ref, hidden) for r in refs})
    finally:
        _drop_relations(session, refs)
    return needs[0].predicate


_PLANNED_QUERIES = 256  # per session: the needs of this many query texts are remembered


def _needs(session, tree, text: str, calls: list, spliced: str, refs: list, planned: list, fields: dict) -> list:
    """What the query needs of each planned reference (:func:`pushdown.needs_of`), learned by
    analyzing it over zero-row stand-ins. That depends only on the query's text outside its
    references (their hints and time travel pick rows, not columns) and on the columns they read,
    so it is remembered per session under both: a BI tool's repeated queries, and a materialized
    table's incremental refreshes (a new ``incremental-between`` each), skip the stand-in planning
    (~30-150 ms). Queries differing only in the literals they filter by share it once Spark has
    shown where those go (:mod:`paimon_sql.sql.query_shape`). The rows are always read from the
    scans planned anew. ``calls``: the edits of Paimon's function calls, part of the shape
    (``sys.max_pt`` may be a pushed filter's value)."""
    marks = [(r.edit[0], f"\0{i}") for i, r in enumerate(refs)] + calls
    masks = query_shape.masks(tree, text, marks)
    shape = query_shape.Shape(apply_edits(text, marks),
                              apply_edits(text, marks + [(m, query_shape.MASK) for m, _ in masks]),
                              tuple(value for _, value in masks))
    columns = tuple((refs.index(r), spark_ddl(fields[r.view])) for r in planned)
    masked_key = ("masked", shape.masked, columns) if shape.values else None
    template = _recalled(session, masked_key)
    if isinstance(template, query_shape.Template) and template.verified:
        _remember(session, masked_key, template)
        return template.filled(shape.values)
    key = (shape.text, columns)
    known = _recalled(session, key)
    if known is None:
        stand_ins = {}
        for k, r in enumerate(planned):
            df, ids = _stand_in(session, fields[r.view], k)
            df.createOrReplaceTempView(r.view)
            stand_ins[r.view] = (ids, fields[r.view])
        filters_possible = tree.find(exp.Where, exp.Having, exp.Qualify) is not None or \
            any(j.args.get("on") is not None for j in tree.find_all(exp.Join))
        needs = pushdown.needs_of(session.spark_sql(spliced), stand_ins, filters_possible)
        known = [needs[r.view] for r in planned]
    _remember(session, key, known)
    if masked_key is not None:
        _remember(session, masked_key, query_shape.learn(template, known, shape, tree))
    return known


def _recalled(session, key):
    return None if key is None else session.planned_needs.pop(key, None)


def _remember(session, key, value) -> None:
    session.planned_needs[key] = value  # the newest last: the oldest goes first
    while len(session.planned_needs) > _PLANNED_QUERIES:
        session.planned_needs.pop(next(iter(session.planned_needs)))


def _drop_relations(session, refs) -> None:
    catalog = session.spark._jsparkSession.sessionState().catalog()
    for r in refs:  # not spark.catalog.dropTempView, which uncaches the plan (CACHE TABLE)
        catalog.dropTempView(r.view)


def spliced_statement(session, tree: exp.Expression, text: str):
    """Any other statement Spark runs (``INSERT INTO <spark table> SELECT ... FROM <paimon table>``,
    ``CREATE TABLE ... USING parquet AS SELECT``): its text as written, the Paimon references
    spliced to full scans, which Spark prunes itself; None when it reads none."""
    refs = references(session, tree, text)
    calls = functions.edits(session, tree, text)
    if not refs:
        return session.spark_sql(apply_edits(text, calls)) if calls else None
    hidden = star.wanted(tree)
    return run_spliced(session, refs, apply_edits(text, _edits(session, tree, refs, hidden) + calls), hidden)


def run_spliced(session, refs: list, spliced: str, hidden: bool):
    """Spark's answer to ``spliced``, a statement naming the scan relations of ``refs`` (full scans,
    with the metadata columns when ``hidden``), which are dropped once Spark has analyzed it."""
    try:
        for r in refs:
            if not _cached(session, r, hidden):
                _scan(session, r.ref, [f.name for f in _fields(r.ref, hidden)], None).createOrReplaceTempView(r.view)
        return session.spark_sql(spliced)
    finally:
        _drop_relations(session, refs)


def _edits(session, tree: exp.Expression, refs, hidden: bool) -> list:
    """The text edits of a statement (beside its calls of Paimon's functions,
    :mod:`paimon_sql.sql.functions`): its references, its ``db.t.c`` columns and, when it names
    metadata columns, the stars over tables read with them (:mod:`paimon_sql.sql.star`)."""
    out = [r.edit for r in refs] + _column_edits(session, tree)
    if hidden:
        out += star.edits(tree, {id(r.node): r.ref.schema.field_names for r in refs
                                 if not isinstance(r.ref, SystemTable)})
    return out


def _fields(ref, hidden: bool) -> list:
    """The columns a reference is read with: a table's own, then its metadata columns when the
    statement names one (Spark prunes those the query does not use)."""
    if isinstance(ref, SystemTable):
        return ref.fields
    return list(ref.schema.fields) + (metadata_columns.fields(ref.schema) if hidden else [])


@dataclass
class Reference:
    """A Paimon table reference of a statement: its scan relation's name, the table or system table
    at the snapshot it reads, the text edit splicing the relation in, and its node."""

    view: str
    ref: object
    edit: tuple
    node: exp.Table


def references(session, tree: exp.Expression, text: str) -> list:
    """The Paimon references of a query (:class:`Reference`)."""
    refs = []
    for node in tree.find_all(exp.Table):
        found = find_reference(session, node)
        if found is None:
            continue
        span, travel = _span(text, node)
        refs.append(reference(session, found, span, travel, bool(node.args.get("alias")), node))
    return refs


def reference(session, found: tuple, span: tuple, travel, aliased: bool, node: exp.Table) -> Reference:
    """The :class:`Reference` of ``found`` (:func:`find_reference`'s answer) at ``span`` of the text,
    read at its time travel ``travel`` ((kind, expression text), evaluated by Spark) if any. A
    table read without time travel or options is kept as the catalog gave it, so a cached table
    (``CACHE TABLE``) is recognised."""
    ref, options, name = found
    if travel is not None:
        options = {**options, **_travel_options(session, travel)}
    if isinstance(ref, SystemTable):
        if not ref.is_global:
            ref.table = ref.table.travel(options)
    elif options:
        ref = ref.travel(options)
    view = f"__paimon_{re.sub(r'[^0-9A-Za-z_]', '_', name)}_{next(_VIEW_IDS)}"
    alias = "" if aliased else " AS `" + name.replace("`", "``") + "`"
    return Reference(view, ref, (span, view + alias), node)


def _column_edits(session, tree: exp.Expression) -> list:
    """Columns written ``db.t.c`` (or ``paimon.db.t.c``) for a Paimon table read without an
    alias: the relation spliced in is known by the table's name only, so the qualifier becomes
    that name (Spark resolves such three-part names against the table it reads)."""
    if not any(c.db for c in tree.find_all(exp.Column)):
        return []
    tables = {((t.db or session.current_database).lower(), t.name.lower())
              for t in plain_references(session, tree) if not t.args.get("alias")}
    edits = []
    for c in tree.find_all(exp.Column):
        if c.db and (not c.catalog or c.catalog.lower() in parse.CATALOG_NAMES) \
                and (c.db.lower(), c.table.lower()) in tables:
            parts = c.parts
            start, end = parts[0].meta["start"], parts[-2].meta["end"] + 1
            edits.append(((start, end), "`" + c.table.replace("`", "``") + "`"))
    return edits


def ctes_in_scope(node: exp.Expression) -> set:
    """The CTE names a table reference may mean, as Spark scopes them: a WITH's CTEs are seen by
    its query and by the CTEs defined after them, never inside their own body (``WITH t AS
    (SELECT * FROM t)`` reads table t)."""
    names, child = set(), node
    for parent in iter(lambda: child.parent, None):
        with_ = parent.args.get("with_") if isinstance(parent, exp.Query) else None
        if with_ is not None and child is not with_:
            names |= {c.alias_or_name.lower() for c in with_.expressions}
        elif isinstance(parent, exp.With):
            before = next((parent.expressions[:i] for i, c in enumerate(parent.expressions) if c is child), [])
            names |= {c.alias_or_name.lower() for c in before}
        child = parent
    return names


def plain_references(session, tree: exp.Expression) -> list:
    """The references of a query that name Paimon tables (not table functions), as nodes."""
    return [node for node in tree.find_all(exp.Table)
            if not isinstance(node.this, exp.Anonymous) and find_reference(session, node) is not None]


def _cached(session, r: Reference, hidden: bool) -> bool:
    """Register the cached rows of a table read at its latest snapshot (``CACHE TABLE``) as the
    relation; False when the table is not cached (then it is scanned), or when the statement names
    metadata columns, which cached rows lack."""
    df = session.cached_rows(r.ref) if not isinstance(r.ref, SystemTable) and not hidden else None
    if df is not None:
        df.createOrReplaceTempView(r.view)
    return df is not None


def _stand_in(session, fields, k: int):
    """The k-th stand-in of a query with these columns (one per reference: distinct column ids),
    built once per session (~25 ms each)."""
    key = (spark_ddl(fields), k)
    if key not in session.stand_ins:
        df = pushdown.stand_in(session.spark, fields)
        session.stand_ins[key] = (df, pushdown.column_ids(df))
    return session.stand_ins[key]


def _scan(session, ref, columns, predicate):
    """The scan of a table or system table (``columns``: at least one, so rows are counted),
    through the row filters and column masks of a server session's user (paimon_sql/access/)."""
    if session.access is not None:
        return session.access.scan(ref, lambda c, p: _read(session, ref, c, p), columns, predicate)
    return _read(session, ref, columns, predicate)


def _read(session, ref, columns, predicate):
    if isinstance(ref, SystemTable):
        return ref.to_dataframe(session, columns, predicate)
    if isinstance(ref, FormatTable):  # Spark's own reader: the query's filters prune its directories
        return spark_format_table.read(session.spark, ref, columns)
    return session.scan_dataframe(ref, columns, predicate, reuse=True)


# after a reference: a hint comment, then time travel (all three replaced with the reference)
_HINT = re.compile(r"\s*/\*\+.*?\*/", re.S)
_AS_OF = re.compile(r"\s+(?:FOR\s+)?(?:SYSTEM_)?(VERSION|TIMESTAMP|TIME)\s+AS\s+OF\s+", re.I)


def _span(text: str, node: exp.Table):
    """((start, end) of a table reference in ``text`` with its hint and time travel, the time
    travel's (kind, expression text) when it is not a literal, else None)."""
    if isinstance(node.this, exp.Anonymous):  # a table function: its name, then its arguments
        start = node.this.meta["start"]
        return (start, parse.closing_paren(text, node.this.meta["end"] + 1)), None
    parts = node.parts
    if not parts or any("start" not in (p.meta or {}) for p in parts):
        raise PaimonError(f"cannot find table reference {node.sql(dialect=parse.DIALECT)} in the statement")
    start, end = parts[0].meta["start"], parts[-1].meta["end"] + 1
    hint = _HINT.match(text, end)
    end = hint.end() if hint else end
    version = node.args.get("version")
    if version is None:
        return (start, end), None
    as_of = _AS_OF.match(text, end)
    if as_of is None:
        raise PaimonError(f"cannot find the time travel of {node.name} in the statement")
    stop = _expression_end(text, as_of.end(), version.expression)
    literal = isinstance(version.expression, exp.Literal)  # read by scan_options
    return (start, stop), None if literal else (version.this.upper(), text[as_of.end():stop])




def _expression_end(text: str, start: int, expression: exp.Expression) -> int:
    """Where the expression parsed as ``expression`` that starts at ``start`` ends: the longest run
    of tokens that reads as that same expression (the AST holds no end offset)."""
    want = expression.sql(dialect=parse.DIALECT, comments=False)  # a comment after it is the parser's
    tokens = sqlglot.Dialect.get_or_raise(parse.DIALECT).tokenize(text[start:])
    best = None
    for t in tokens[:64]:
        fragment = text[start:start + t.end + 1]
        try:
            if sqlglot.parse_one(fragment, dialect=parse.DIALECT).sql(dialect=parse.DIALECT, comments=False) == want:
                best = start + t.end + 1
        except sqlglot.errors.SqlglotError:
            continue
    if best is None:
        raise PaimonError(f"cannot find the time travel expression {want} in the statement")
    return best


def _travel_options(session, travel) -> dict:
    """Time travel by an expression (``TIMESTAMP AS OF current_timestamp() - INTERVAL 1 HOUR``):
    Spark evaluates it, as Spark folds a time travel expression before reading."""
    kind, expression = travel
    value = session.spark_sql(f"SELECT {expression}").collect()[0][0]
    if kind == "VERSION":
        return {"scan.version": str(value)}  # a tag named by digits first, as paimon-spark's loadTable
    if isinstance(value, dt.datetime):
        return {"scan.timestamp-millis": str(int(value.timestamp() * 1000))}
    if isinstance(value, (int, float)):
        return {"scan.timestamp-millis": str(int(value * 1000))}
    return {"scan.timestamp": str(value)}


def apply_edits(text: str, edits) -> str:
    """``text`` with each ((start, end), replacement) of ``edits`` (spans that do not overlap) applied."""
    out, pos = [], 0
    for (start, end), replacement in sorted(edits):
        out += [text[pos:start], replacement]
        pos = end
    return "".join(out + [text[pos:]])


def find_reference(session, node: exp.Table):
    """(table or system table, dynamic options, name) a reference reads; None when it is not ours."""
    if isinstance(node.this, exp.Anonymous) and node.this.name.lower() in TABLE_FUNCTIONS:
        call = node.this
        args = [a.this if isinstance(a, exp.Literal) else a.sql(dialect="spark") for a in call.expressions]
        key = TABLE_FUNCTIONS[call.name.lower()]
        arity = 2 if key == "incremental-to-auto-tag" else 3
        if len(args) != arity:
            raise PaimonError(f"{call.name}({'table, end tag' if arity == 2 else 'table, start, end'}) takes "
                              f"{arity} arguments, got {len(args)}")
        target = parse.table_reference(args[0])
        ref = resolve(session, target)
        if ref is None:
            raise PaimonError(f"{call.name}: table {args[0]} does not exist")
        own = session_options(session, ref) if not isinstance(ref, SystemTable) else {}
        return ref, {**own, key: ",".join(str(a) for a in args[1:])}, target.name
    if isinstance(node.this, exp.Anonymous) or not node.name or node.find_ancestor(exp.Query) is None:
        return None  # not read by a query: a statement's target (INSERT INTO s, DESCRIBE t, ...)
    if not node.db and (node.name.lower() in ctes_in_scope(node) or session.is_temp_view(node.name)):
        return None
    ref = resolve(session, node)
    if ref is None:
        return None
    table = ref.table if isinstance(ref, SystemTable) and not ref.is_global else ref
    options = session_options(session, table) if not isinstance(table, SystemTable) and not _in_view(node) else {}
    return ref, {**options, **scan_options(node)}, node.name


VIEW_BODY = "paimon-sql: a view's query"  # marks a view's query spliced into a statement (sql/views.py)


def _in_view(node: exp.Expression) -> bool:
    """Whether a reference lies in a view's query: Spark resolves a view under the SQL configs it
    captured at creation, which never hold ``spark.paimon.*``, so paimon-spark reads the tables of a
    view without the session's Paimon options."""
    parent = node.parent
    while parent is not None:
        if any(VIEW_BODY in c for c in parent.comments or ()):
            return True
        parent = parent.parent
    return False


def session_options(session, table) -> dict:
    """The options ``SET spark.paimon.*`` gives ``table`` (:mod:`paimon_sql.spark.session_options`)."""
    return spark_session_options(session.spark, table.name, session.current_database)


# table-valued functions of Paimon's Spark integration → the option they set
TABLE_FUNCTIONS = {"paimon_incremental_query": "incremental-between",
                   "paimon_incremental_between_timestamp": "incremental-between-timestamp",
                   "paimon_incremental_to_auto_tag": "incremental-to-auto-tag"}


def resolve(session, node: exp.Table):
    """What a table reference names: a FileStoreTable (``t``, ``t$branch_b``), a SystemTable
    (``t$files``, ``t$branch_b$files``, ``sys.tables``), or None when the warehouse has no such
    table (Spark's own tables and views). Names that could not be a directory of the warehouse
    fail here, before anything is read (the database, table and branch names pass the path guard
    as the :class:`Identifier` and the branch path are built)."""
    name = node.name
    if node.db and node.db.lower() == SYS_DATABASE and name.lower() in GLOBAL_TABLES \
            and not session.catalog.database_exists(node.db):
        return load_global(session.catalog, name)
    if "$" not in name:
        if node.db and session.database_name(node.db) is None:
            return None  # Spark's: a database elsewhere, or a file (parquet.`/data/x.parquet`)
        return session.find_table(node)
    base, *rest = name.split("$")
    db = node.db
    if not db and "." in base:  # `db.t$files` quoted whole
        db, base = base.rsplit(".", 1)
    ident = Identifier(db or session.current_database, base)
    table = session.catalog.get_table(ident)  # names with '$' are ours: a missing table is an error
    if rest and rest[0].lower().startswith(BRANCH_PREFIX):
        table = table.switch_to_branch(rest.pop(0)[len(BRANCH_PREFIX):])
    if len(rest) > 1:
        raise PaimonError(f"cannot resolve '{name}': expected t$<system table> or t$branch_<name>[$<system table>]")
    if rest:
        format_table.refuse(table, f"system table {name}")
    return load_system_table(table, rest[0]) if rest else table


_OPTIONS_HINT = re.compile(r"^\+?\s*OPTIONS\s*\((.*)\)\s*$", re.I | re.S)
_OPTION_PAIR = re.compile(r"'((?:[^'\\]|\\.)*)'\s*=\s*'((?:[^'\\]|\\.)*)'")


def scan_options(node: exp.Table) -> dict:
    """Dynamic options of one reference: ``/*+ OPTIONS('k'='v') */`` after it, and time travel
    (``VERSION AS OF``, ``TIMESTAMP AS OF``) turned into Paimon's ``scan.*`` keys."""
    options = {}
    for comment in node.comments or []:
        m = _OPTIONS_HINT.match(comment.strip())
        if m:
            options.update(_OPTION_PAIR.findall(m.group(1)))
    version = node.args.get("version")
    if version is not None and isinstance(version.expression, exp.Literal):  # else: _travel_options
        value = version.expression
        is_number = not value.is_string
        text = value.this
        if version.this.upper() == "VERSION":  # Spark hands paimon-spark the version as text, number or not
            options["scan.version"] = str(text)
        elif is_number:  # TIMESTAMP AS OF <epoch seconds>
            options["scan.timestamp-millis"] = str(int(float(text) * 1000))
        else:
            options["scan.timestamp"] = str(text)
    return options


def identifier_of(node: exp.Table, current_database: str) -> Identifier:
    return Identifier(node.db or current_database, node.name)
