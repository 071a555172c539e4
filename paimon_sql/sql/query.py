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
import re
from decimal import Decimal
from typing import List, Optional

from sqlglot import exp

from paimon_sql import systables
from paimon_sql.catalog import Identifier
from paimon_sql.exceptions import PaimonError
from paimon_sql.format import predicate as P
from paimon_sql.format.types import AtomicType
from paimon_sql.sql import parse
from paimon_sql.systables import SystemTable

SYS_DATABASE = "sys"  # global system tables: sys.tables, sys.partitions, ...
BRANCH_PREFIX = "branch_"  # t$branch_<name> reads a branch

_VIEW_IDS = itertools.count()
_COMPARE = {exp.EQ: "=", exp.NEQ: "!=", exp.LT: "<", exp.LTE: "<=", exp.GT: ">", exp.GTE: ">="}
_FLIP = {"=": "=", "!=": "!=", "<": ">", "<=": ">=", ">": "<", ">=": "<="}


def spliced_dataframe(session, tree: exp.Expression, text: str):
    """The query as Spark's DataFrame, its text handed to Spark as written except the spans of the
    Paimon table references, each replaced by the name of a scan relation; None when a reference
    cannot be spliced (a table function, a time travel by expression): then :func:`rewrite_tables`.

    Which columns and filters each scan needs is Spark's answer (:mod:`paimon_sql.spark.pushdown`):
    the spliced text is planned once over stand-ins, then again over the pruned scans. The scan
    relations are dropped once Spark has analyzed the query, which holds their plans."""
    from paimon_sql.spark import pushdown
    ctes = {cte.alias_or_name.lower() for cte in tree.find_all(exp.CTE)}
    refs, edits = [], []
    for node in tree.find_all(exp.Table):
        found = _reference(session, node, ctes)
        if found is None:
            continue
        span = _span(text, node)
        if span is None or isinstance(node.this, exp.Anonymous):
            return None
        ref, options, name = found
        if isinstance(ref, SystemTable):
            if not ref.is_global:
                ref.table = ref.table.travel(options)
        else:
            ref = ref.travel(options)
        view = f"__paimon_{re.sub(r'[^0-9A-Za-z_]', '_', name)}_{next(_VIEW_IDS)}"
        alias = "" if node.args.get("alias") else " AS `" + name.replace("`", "``") + "`"
        refs.append((view, ref))
        edits.append((span, view + alias))
    if not refs:
        return session.spark.sql(text)
    spliced = _apply(text, edits)
    spark = session.spark
    fields = {view: ref.fields if isinstance(ref, SystemTable) else ref.schema.fields for view, ref in refs}
    try:
        stand_ins = {}
        for k, (view, _) in enumerate(refs):
            df, ids = _stand_in(session, fields[view], k)
            df.createOrReplaceTempView(view)
            stand_ins[view] = (ids, fields[view])
        filters_possible = tree.find(exp.Where, exp.Having, exp.Qualify) is not None or \
            any(j.args.get("on") is not None for j in tree.find_all(exp.Join))
        needs = pushdown.needs_of(spark.sql(spliced), stand_ins, filters_possible)
        for view, ref in refs:
            _scan(session, ref, needs[view].columns or [fields[view][0].name], needs[view].predicate) \
                .createOrReplaceTempView(view)
        return spark.sql(spliced)
    finally:
        for view, _ in refs:
            spark.catalog.dropTempView(view)


def _stand_in(session, fields, k: int):
    """The k-th stand-in of a query with these columns (one per reference: distinct column ids),
    built once per session (~25 ms each)."""
    from paimon_sql.spark import pushdown
    from paimon_sql.spark.types import spark_ddl
    key = (spark_ddl(fields), k)
    if key not in session.stand_ins:
        df = pushdown.stand_in(session.spark, fields)
        session.stand_ins[key] = (df, pushdown.column_ids(df))
    return session.stand_ins[key]


def _scan(session, ref, columns, predicate):
    """The scan of a table or system table (``columns``: at least one, so rows are counted)."""
    if isinstance(ref, SystemTable):
        return ref.to_dataframe(session, columns, predicate)
    return session.scan_dataframe(ref, columns, predicate)


# after a reference: a hint comment, then time travel by a literal (both replaced with it)
_TRAILER = re.compile(r"(\s*/\*\+.*?\*/)?(\s+(?:FOR\s+)?(?:SYSTEM_)?(?:VERSION|TIMESTAMP|TIME)\s+AS\s+OF\s+"
                      r"(?:'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"|[0-9.]+))?", re.I | re.S)


def _span(text: str, node: exp.Table):
    """(start, end) of a table reference in ``text``, with its hint and time travel; None if unknown."""
    parts = node.parts
    if not parts or any("start" not in (p.meta or {}) for p in parts):
        return None
    start, end = parts[0].meta["start"], parts[-1].meta["end"] + 1
    m = _TRAILER.match(text, end)
    if node.args.get("version") is None:
        return start, m.end(1) if m and m.group(1) else end
    return (start, m.end(2)) if m and m.group(2) else None


def _apply(text: str, edits) -> str:
    out, pos = [], 0
    for (start, end), replacement in sorted(edits):
        out += [text[pos:start], replacement]
        pos = end
    return "".join(out + [text[pos:]])


def rewrite_tables(session, tree: exp.Expression) -> exp.Expression:
    """Replace Paimon table references in ``tree`` (in place) by pruned scan views."""
    ctes = {cte.alias_or_name.lower() for cte in tree.find_all(exp.CTE)}
    for node in list(tree.find_all(exp.Table)):
        found = _reference(session, node, ctes)
        if found is None:
            continue
        ref, options, name = found
        if isinstance(ref, SystemTable):
            if not ref.is_global:
                ref.table = ref.table.travel(options)
            fields = ref.fields
            df = ref.to_dataframe(session, _needed_columns(tree, node, fields), _pushed_filter(node, fields))
        else:
            table = ref.travel(options)
            fields = table.schema.fields
            df = session.scan_dataframe(table, _needed_columns(tree, node, fields), _pushed_filter(node, fields))
        view = f"__paimon_{re.sub(r'[^0-9A-Za-z_]', '_', name)}_{next(_VIEW_IDS)}"
        df.createOrReplaceTempView(view)
        alias = node.args.get("alias") or exp.TableAlias(this=exp.to_identifier(name))
        node.replace(exp.Table(this=exp.to_identifier(view), alias=alias))
    return tree


def _reference(session, node: exp.Table, ctes: set):
    """(table or system table, dynamic options, name) a reference reads; None when it is not ours."""
    if isinstance(node.this, exp.Anonymous) and node.this.name.lower() in TABLE_FUNCTIONS:
        call = node.this
        args = [a.this if isinstance(a, exp.Literal) else a.sql(dialect="spark") for a in call.expressions]
        key = TABLE_FUNCTIONS[call.name.lower()]
        if len(args) != 3:
            raise PaimonError(f"{call.name}(table, start, end) takes 3 arguments, got {len(args)}")
        target = parse.table_reference(args[0])
        ref = resolve(session, target)
        if ref is None:
            raise PaimonError(f"{call.name}: table {args[0]} does not exist")
        return ref, {key: f"{args[1]},{args[2]}"}, target.name
    if not node.name or isinstance(node.parent, (exp.Create, exp.Insert, exp.Drop, exp.Describe)):
        return None
    if not node.db and (node.name.lower() in ctes or session.is_temp_view(node.name)):
        return None
    ref = resolve(session, node)
    if ref is None:
        return None
    table = ref.table if isinstance(ref, SystemTable) and not ref.is_global else ref
    options = session_options(session, table) if not isinstance(table, SystemTable) else {}
    return ref, {**options, **scan_options(node)}, node.name


SESSION_PREFIX = "spark.paimon."


def session_options(session, table) -> dict:
    """Paimon options set in Spark's session, as paimon-spark reads them: ``SET spark.paimon.<key>``
    for every table (``<key>`` a Paimon option), ``SET spark.paimon.<db>.<table>.<key>`` for one;
    the per-table form wins, a reference's own hint or ``AS OF`` wins over both."""
    from paimon_sql.format.options import registry
    settings = {k[len(SESSION_PREFIX):]: v for k, v in session.spark.conf.getAll.items()
                if k.startswith(SESSION_PREFIX)}
    if not settings:
        return {}
    db, name = table.name.split(".", 1) if "." in table.name else (session.current_database, table.name)
    own = f"{db}.{name}.".lower()
    known = registry()
    return {**{k: v for k, v in settings.items() if k in known},
            **{k[len(own):]: v for k, v in settings.items() if k.lower().startswith(own)}}


# table-valued functions of Paimon's Spark integration → the option they set
TABLE_FUNCTIONS = {"paimon_incremental_query": "incremental-between",
                   "paimon_incremental_between_timestamp": "incremental-between-timestamp"}


def resolve(session, node: exp.Table):
    """What a table reference names: a FileStoreTable (``t``, ``t$branch_b``), a SystemTable
    (``t$files``, ``t$branch_b$files``, ``sys.tables``), or None when the warehouse has no such
    table (Spark's own tables and views). Names that could not be a directory of the warehouse
    fail here, before anything is read (the database, table and branch names pass the path guard
    as the :class:`Identifier` and the branch path are built)."""
    name = node.name
    if node.db and node.db.lower() == SYS_DATABASE and name.lower() in systables.GLOBAL_TABLES \
            and not session.catalog.database_exists(node.db):
        return systables.load_global(session.catalog, name)
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
    return systables.load(table, rest[0]) if rest else table


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
    if version is not None:
        value = version.expression
        is_number = isinstance(value, exp.Literal) and not value.is_string
        text = value.this if isinstance(value, exp.Literal) else value.sql(dialect="spark")
        if version.this.upper() == "VERSION":
            options["scan.snapshot-id" if is_number else "scan.version"] = str(text)
        elif is_number:  # TIMESTAMP AS OF <epoch seconds>
            options["scan.timestamp-millis"] = str(int(float(text) * 1000))
        else:
            options["scan.timestamp"] = str(text)
    return options


def _refers_to(column: exp.Column, node: exp.Table) -> bool:
    qualifier = column.table
    return not qualifier or qualifier.lower() in {node.alias_or_name.lower(), node.name.lower()}


def _needed_columns(tree: exp.Expression, node: exp.Table, fields) -> Optional[List[str]]:
    """Columns of ``fields`` the query mentions; None (all) when it selects ``*`` of this table."""
    for star in tree.find_all(exp.Star):
        parent = star.parent
        if not isinstance(parent, exp.Column) or _refers_to(parent, node):
            return None
    names = [f.name for f in fields]
    by_lower = {n.lower(): n for n in names}
    wanted = {by_lower[c.name.lower()] for c in tree.find_all(exp.Column)
              if c.name.lower() in by_lower and _refers_to(c, node)}
    return [n for n in names if n in wanted] or names[:1]


def _pushed_filter(node: exp.Table, fields) -> Optional[P.Predicate]:
    """WHERE conjuncts on this table. None under an outer join: there a WHERE such as ``b.v IS NULL``
    must see the NULL-extended rows that pruning ``b`` would create, so nothing is pushed."""
    select = node.find_ancestor(exp.Select)
    if select is None or select.args.get("where") is None:
        return None
    if any((j.side or "").upper() in ("LEFT", "RIGHT", "FULL") for j in select.args.get("joins") or []):
        return None
    single = len(list(select.find_all(exp.Table))) == 1
    fields = {f.name.lower(): f for f in fields}
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
