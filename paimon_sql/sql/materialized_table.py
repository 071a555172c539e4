"""Materialized tables on Spark SQL: Flink's statements, refreshed by batch runs.

    CREATE MATERIALIZED TABLE [IF NOT EXISTS] t [(PRIMARY KEY (k) NOT ENFORCED)] [COMMENT 'c']
        [PARTITIONED BY (p)] [WITH ('k'='v')] FRESHNESS = INTERVAL 'n' SECOND|MINUTE|HOUR|DAY
        [REFRESH_MODE = FULL] AS <query>
    ALTER MATERIALIZED TABLE t REFRESH [PARTITION (p=v, ...)] | SUSPEND | RESUME
    ALTER MATERIALIZED TABLE t AS <query>
    DROP MATERIALIZED TABLE [IF EXISTS] t

The columns are Spark's analysis of the query; the query is stored (Paimon's option
``materialized-table.definition-query``) as written, its table names qualified with the database
they meant at CREATE (Flink stores its query expanded likewise). A refresh is incremental where
the query allows (:func:`analyse`), full otherwise:

- a projection/filter of one append-only table: the rows its snapshots since the last refresh
  added (Paimon's ``incremental-between``, delta mode) are appended;
- a GROUP BY of one append-only table whose outputs are its (NOT NULL) keys and sum/count/min/max:
  the table is a primary-key table on the keys with the aggregation merge engine, and the partial
  aggregates of the new rows are appended, merged into the old ones by Paimon;
- anything else, a source that did more than append since (:func:`appends_only`), or a refresh of
  one partition: INSERT OVERWRITE of the query's result (the whole table or the partition).
"""

from __future__ import annotations

import re
import threading
import time
from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple

from sqlglot import exp

from paimon_sql.catalog import Identifier
from paimon_sql.commit.table_commit import BASE_SNAPSHOT
from paimon_sql.data.types import DataField, paimon_type_from_sql
from paimon_sql.exceptions import PaimonError, SchemaError, SqlSyntaxError, TableAlreadyExistsError, TableNotFoundError
from paimon_sql.options.core_options import redact
from paimon_sql.schema.schema_change import AddColumn, SetOption
from paimon_sql.schema.table_schema import TableSchema
from paimon_sql.spark.write import by_name
from paimon_sql.sql import ddl, parse
from paimon_sql.sql.dml import _partition_spec
from paimon_sql.table import materialized_table as mt
from paimon_sql.table.format_table import FormatTable

STATEMENT = re.compile(r"\s*MATERIALIZED\s+TABLE\b", re.I)
_CREATE = re.compile(r"\s*MATERIALIZED\s+TABLE\s+(?P<exists>IF\s+NOT\s+EXISTS\s+)?(?P<head>.*?)\s*"
                     r"\bFRESHNESS\s*=\s*INTERVAL\s*'(?P<n>\d+)'\s*(?P<unit>\w+)\s+"
                     r"(?:REFRESH_MODE\s*=\s*(?P<mode>\w+)\s+)?AS\s+(?P<query>.+)", re.I | re.S)
_ALTER = re.compile(r"\s*MATERIALIZED\s+TABLE\s+(?P<name>[\w.`$]+)\s+(?:(?P<action>SUSPEND|RESUME)|REFRESH"
                    r"(?:\s+PARTITION\s*(?P<spec>\(.*\)))?)\s*", re.I | re.S)
_ALTER_QUERY = re.compile(r"\s*MATERIALIZED\s+TABLE\s+(?P<name>[\w.`$]+)\s+AS\s+(?P<query>.+)", re.I | re.S)
_DROP = re.compile(r"\s*MATERIALIZED\s+TABLE\s+(?P<exists>IF\s+EXISTS\s+)?(?P<name>[\w.`$]+)\s*", re.I)
_AGGREGATES = {exp.Sum: "sum", exp.Count: "sum", exp.Min: "min", exp.Max: "max"}


def run(session, verb: str, text: str):
    """CREATE / ALTER / DROP MATERIALIZED TABLE (``text``: from MATERIALIZED on)."""
    forms = {"CREATE": (_CREATE, create), "ALTER": (_ALTER, alter), "DROP": (_DROP, drop)}
    pattern, handler = forms.get(verb, (None, None))
    m = pattern.fullmatch(text) if pattern else None
    if m is None and verb == "ALTER":
        pattern, handler = _ALTER_QUERY, alter_query
        m = pattern.fullmatch(text)
    if m is None:
        raise SqlSyntaxError(f"cannot read {verb} MATERIALIZED TABLE statement: expected " + {
            "CREATE": "CREATE MATERIALIZED TABLE t [...] FRESHNESS = INTERVAL 'n' SECOND|MINUTE|HOUR|DAY AS <query>",
            "ALTER": "ALTER MATERIALIZED TABLE t REFRESH [PARTITION (...)] | SUSPEND | RESUME | AS <query>",
            "DROP": "DROP MATERIALIZED TABLE [IF EXISTS] t"}.get(verb, "CREATE, ALTER or DROP"))
    return handler(session, m)


# -- CREATE ---------------------------------------------------------------------------------------

def create(session, m: re.Match):
    unit, mode = m["unit"].upper(), (m["mode"] or "AUTOMATIC").upper()
    if unit not in mt.TIME_UNITS:
        raise PaimonError(f"FRESHNESS unit must be one of {', '.join(mt.TIME_UNITS)}, got {m['unit']}")
    if mode == "CONTINUOUS":
        raise PaimonError("REFRESH_MODE = CONTINUOUS needs a streaming job (Flink); paimon-sql refreshes "
                          "materialized tables by batch runs: use REFRESH_MODE = FULL or leave it out")
    if mode not in ("FULL", "AUTOMATIC"):
        raise PaimonError(f"REFRESH_MODE must be FULL or CONTINUOUS, got {m['mode']}")
    if int(m["n"]) <= 0:
        raise PaimonError("FRESHNESS must be a positive interval")
    head = parse.parse(f"CREATE TABLE {m['head']} AS SELECT 1")
    target = head.this.this if isinstance(head.this, exp.Schema) else head.this
    ident = Identifier(target.db or session.current_database, target.name)
    if session.catalog.table_exists(ident):
        if m["exists"]:
            return None
        raise TableAlreadyExistsError(f"table {ident} already exists")
    options, partitions, using, comment, _ = ddl._properties(head)
    given = [k for k in options if mt.is_definition(k)]
    if given:
        raise PaimonError(f"CREATE MATERIALIZED TABLE {ident}: option '{given[0]}' is the statement's own "
                          "(FRESHNESS, REFRESH_MODE and the query set the definition)")
    if using not in (None, "paimon"):
        raise PaimonError(f"a materialized table is a Paimon table, not USING {using}")
    primary = [c.name for pk in head.this.find_all(exp.PrimaryKey) for c in pk.expressions] \
        if isinstance(head.this, exp.Schema) else []
    query, tree, schema = _definition(session, ident, m["query"])
    fields = [DataField(i, f.name, paimon_type_from_sql(f.dataType.simpleString())) for i, f in enumerate(schema)]
    plan = analyse(tree)
    if plan.kind == "aggregate" and _aggregation_fits(session, plan, tree, schema, (primary, partitions, options)):
        primary = [schema[i].name for i in plan.keys]
        options = {**options, "merge-engine": "aggregation",
                   **{f"fields.{schema[i].name}.aggregate-function": f for i, f in plan.functions.items()}}
    options = {**options, **mt.options(query, int(m["n"]), unit, mode)}
    table = session.catalog.create_table(ident, TableSchema.create(fields, partitions, primary, options, comment))
    try:
        refresh(session, table)
    except BaseException:
        session.catalog.drop_table(ident, ignore_if_not_exists=True)
        raise
    return None


def _definition(session, ident, text: str):
    """(the query as stored, its tree, Spark's schema of its result) of a query given for ``ident``."""
    written = parse.prepare(text)
    temporary = [t.name for t in parse.parse(written).find_all(exp.Table)
                 if not t.db and t.name and session.is_temp_view(t.name)]
    if temporary:
        raise PaimonError(f"the query of materialized table {ident} reads temporary view {temporary[0]}: it is "
                          "refreshed from any session, where that view is not")
    query = qualified(written, session.current_database)
    tree = parse.parse(query)
    return query, tree, session.query_dataframe(tree, query).schema


def _aggregation_fits(session, plan, tree, schema, layout) -> bool:
    """Whether the table can hold the aggregates merged by Paimon: an append-only source whose
    keys are NOT NULL (they become the primary key; the user's, if given, is the same),
    partitioned by keys, no merge engine given."""
    primary, partitions, options = layout
    source = session.find_table(plan.source)
    nullable = {f.name.lower(): f.type.nullable for f in source.schema.fields} \
        if source is not None and not source.schema.primary_keys else {}
    keys = [schema[i].name for i in plan.keys]
    return (all(nullable.get(tree.expressions[i].unalias().name.lower()) is False for i in plan.keys)
            and (not primary or set(primary) == set(keys)) and set(partitions) <= set(keys)
            and "merge-engine" not in options)


def qualified(query: str, database: str) -> str:
    """``query`` with its table names that name no database qualified by ``database`` (a CTE's
    name is left alone), the rest of the text as written."""
    tree = parse.parse(query)
    ctes = {c.alias_or_name.lower() for c in tree.find_all(exp.CTE)}
    starts = sorted({t.this.meta["start"] for t in tree.find_all(exp.Table)
                     if not t.db and t.name and t.name.lower() not in ctes and "start" in t.this.meta}, reverse=True)
    prefix = f"`{database.replace('`', '``')}`."
    for start in starts:
        query = query[:start] + prefix + query[start:]
    return query


# -- the query's shape ----------------------------------------------------------------------------

@dataclass(frozen=True)
class Plan:
    kind: str  # "append" (projection/filter), "aggregate" or "full"
    source: Optional[exp.Table] = None  # the one table read (append, aggregate)
    keys: Tuple[int, ...] = ()  # aggregate: output positions of the group keys
    functions: Optional[Dict[int, str]] = None  # aggregate: output position -> Paimon aggregate function


FULL = Plan("full")


def analyse(tree: exp.Expression) -> Plan:
    """How the query can be refreshed: a SELECT of one table (no joins, subqueries, CTEs, set
    operations, DISTINCT, LIMIT, windows, time travel or hints), either without aggregates or a
    GROUP BY of columns with only its keys and sum/count/min/max (not DISTINCT) as outputs."""
    if not isinstance(tree, exp.Select) or any(tree.args.get(a) for a in ("with", "joins", "distinct", "limit",
                                                                          "offset", "having", "qualify")):
        return FULL
    source = tree.args.get("from_")
    source = source.this if source is not None else None
    if (not isinstance(source, exp.Table) or "$" in source.name or source.args.get("version") or source.comments
            or any(s is not tree for s in tree.find_all(exp.Select)) or tree.find(exp.Window)
            or tree.find(exp.Lateral)):
        return FULL
    group = tree.args.get("group")
    if group is None:
        return FULL if tree.find(exp.AggFunc) else Plan("append", source)
    keys = [e for e in group.expressions]
    if not keys or not all(isinstance(k, exp.Column) for k in keys):
        return FULL
    key_names = {k.name.lower() for k in keys}
    positions, functions = [], {}
    for i, e in enumerate(tree.expressions):
        inner = e.this if isinstance(e, exp.Alias) else e
        if isinstance(inner, exp.Column) and inner.name.lower() in key_names:
            positions.append(i)
        elif type(inner) in _AGGREGATES and not inner.find(exp.Distinct) and not inner.this.find(exp.AggFunc):
            functions[i] = _AGGREGATES[type(inner)]
        else:
            return FULL
    if {tree.expressions[i].this.name.lower() if isinstance(tree.expressions[i], exp.Alias)
            else tree.expressions[i].name.lower() for i in positions} != key_names:
        return FULL  # a group key not among the outputs: its groups would collapse on the others
    return Plan("aggregate", source, tuple(positions), functions)


def _fits(table, plan: Plan) -> bool:
    """Whether ``table`` was made for ``plan``'s incremental refresh (aggregates: merged by Paimon)."""
    if plan.kind == "append":
        return True
    names = table.schema.field_names
    o = table.schema.options
    return (plan.kind == "aggregate" and o.get("merge-engine") == "aggregation"
            and table.schema.primary_keys == [names[i] for i in plan.keys]
            and all(o.get(f"fields.{names[i]}.aggregate-function") == f for i, f in plan.functions.items()))


# -- REFRESH --------------------------------------------------------------------------------------

_LOCKS: Dict[str, threading.Lock] = {}
_LOCKS_GUARD = threading.Lock()


def _lock(table) -> threading.Lock:
    """One refresh of a table at a time in this process (the server's refresher and its clients):
    two incremental refreshes from the same point would both append the same rows."""
    with _LOCKS_GUARD:
        return _LOCKS.setdefault(table.path, threading.Lock())


def refresh(session, table, spec_text: Optional[str] = None, full: bool = False):
    """Bring ``table`` up to its query: incrementally when it can (module doc) unless ``full``,
    else fully; one snapshot, whose properties say up to which snapshot of each source it got
    (each source is read at that snapshot). Returns one row: (refresh kind, the snapshot
    committed or NULL, its delta record count: rows added less removed)."""
    with _lock(table):
        query = parse.prepare(mt.definition(table).query)  # the text the parser's positions refer to
        tree = parse.parse(query)
        refs = _sources(session, tree)
        ids = {t.name: (t.snapshot_manager.latest_id() or 0) for _, t in refs}
        if spec_text is None and not full:
            done = _incremental(session, table, query, tree, refs, ids)
            if done is not None:
                return done
        pins = [(node, f"'scan.snapshot-id'='{ids[t.name]}'") for node, t in refs
                if ids[t.name] and not node.comments and not node.args.get("version")]
        df = session.query_dataframe(None, _hinted(query, pins))
        if spec_text is None:
            return _write(session, table, df, "full", ids, overwrite=True)
        spec, condition = _partition(table, spec_text)
        return _write(session, table, df.where(condition), "partition", None, overwrite=True, spec=spec)


def _incremental(session, table, query: str, tree, refs: list, ids: Dict[str, int]):
    """The incremental refresh, when the query's shape, the table and the source's snapshots since
    the last refresh allow one; None when they do not."""
    plan = analyse(tree)
    source = next((t for node, t in refs if node is plan.source), None)
    last = mt.last_refresh(table)
    if source is None or source.schema.primary_keys or not _fits(table, plan) or last is None \
            or _redefined_since(table, last.snapshot.schema_id):
        return None
    start, end = (last.sources or {}).get(source.name), ids[source.name]
    if start is None or not mt.appends_only(source, start, end):
        return None
    if start == end:
        return _result(session, "unchanged", None, 0)
    base = table.snapshot_manager.latest_id() or 0  # another refresh committing first fails this one
    hint = f"'incremental-between'='{start},{end}','incremental-between-scan-mode'='delta'"
    df = session.query_dataframe(None, _hinted(query, [(plan.source, hint)]))
    return _write(session, table, df, "incremental", ids, base=base)


def _redefined_since(table, schema_id: int) -> bool:
    """Whether the table's query or columns changed since the schema a refresh was made under
    (ALTER ... AS whose refresh failed): its rows are the old query's."""
    then = table.schema_manager.schema(schema_id)
    return then.fields != table.schema.fields or \
        then.options.get(mt.DEFINITION_QUERY) != table.schema.options.get(mt.DEFINITION_QUERY)


def _sources(session, tree) -> List[Tuple[exp.Table, object]]:
    """The query's references to Paimon tables with snapshots, each with the table it names (a
    view, a format table or a Spark table is not one: the refresh of a query over one is always full)."""
    ctes = {c.alias_or_name.lower() for c in tree.find_all(exp.CTE)}
    out = []
    for node in tree.find_all(exp.Table):
        if node.name and "$" not in node.name and node.name.lower() not in ctes:
            found = session.find_table(node)
            if found is not None and not isinstance(found, FormatTable):
                out.append((node, found))
    return out


def _hinted(query: str, hints: List[Tuple[exp.Table, str]]) -> str:
    """``query`` with ``/*+ OPTIONS(<options>) */`` after the name of each table reference given."""
    for node, options in sorted(hints, key=lambda h: -h[0].this.meta["end"]):
        at = node.this.meta["end"] + 1
        query = f"{query[:at]} /*+ OPTIONS({options}) */{query[at:]}"
    return query


def _partition(table, spec_text: str) -> Tuple[dict, str]:
    """PARTITION (k=v, ...) of a refresh: the overwrite's spec and the Spark condition picking its rows."""
    node = parse.parse(f"INSERT OVERWRITE t PARTITION {spec_text} SELECT 1").this
    spec = _partition_spec(node)
    keys = table.schema.partition_keys
    given = [e for e in node.args["partition"].expressions if isinstance(e, exp.EQ)]
    if not given or len(given) != len(node.args["partition"].expressions) or any(k not in keys for k in spec):
        raise SchemaError(f"REFRESH PARTITION of {table.name} needs values of its partition columns "
                          f"({', '.join(keys) or 'none'}), got {spec_text}")
    condition = " AND ".join(exp.NullSafeEQ(this=exp.column(e.this.name, quoted=True), expression=e.expression)
                             .sql(dialect=parse.DIALECT) for e in given)
    return spec, condition


def _write(session, table, df, kind: str, sources: Optional[Dict[str, int]], overwrite: bool = False,
           spec: Optional[dict] = None, base: Optional[int] = None):
    """Commit a refresh; ``base``: the table's snapshot an incremental refresh was planned on (its
    commit fails if another process's refresh committed since: both would append the same rows)."""
    target = table.copy({**mt.refresh_properties(kind, sources), **({BASE_SNAPSHOT: str(base)} if base is not None
                                                                      else {})})
    before = table.snapshot_manager.latest()
    session.write(by_name(df, target), target, overwrite=overwrite, partition_spec=spec)
    last = mt.last_refresh(table)
    if last is None or (before is not None and last.snapshot.id <= before.id):
        return _result(session, kind, None, 0)  # nothing to write
    return _result(session, kind, last.snapshot.id, last.snapshot.delta_record_count or 0)


def _result(session, kind: str, snapshot_id: Optional[int], rows: int):
    """The refresh's row, as a local relation (no job to run for it)."""
    return session.spark_sql(f"SELECT '{kind}' AS refresh, CAST({snapshot_id or 'NULL'} AS BIGINT) AS snapshot_id, "
                             f"CAST({rows} AS BIGINT) AS delta_record_count")


# -- ALTER / DROP ---------------------------------------------------------------------------------

def _materialized(session, name: str, missing_ok: bool = False):
    table = session.find_table(parse.table_reference(name))
    if table is None:
        if missing_ok:
            return None
        raise TableNotFoundError(f"materialized table {name} does not exist")
    if not mt.is_materialized(table):
        raise PaimonError(f"table {table.name} is not a materialized table")
    return table


def alter(session, m: re.Match):
    table = _materialized(session, m["name"])
    action = (m["action"] or "REFRESH").upper()
    if action == "REFRESH":
        return refresh(session, table, m["spec"])
    status = mt.SUSPENDED if action == "SUSPEND" else mt.ACTIVATED
    table.schema_manager.commit_changes([SetOption(mt.REFRESH_STATUS, status)])
    return None


def alter_query(session, m: re.Match):
    """ALTER MATERIALIZED TABLE t AS <query>: a new definition whose result keeps the table's
    columns, in order and of their types, and may add columns at the end (Flink's rule); the
    table is refreshed fully at once, so that it equals its new query."""
    table = _materialized(session, m["name"])
    query, tree, schema = _definition(session, table.name, m["query"])
    old = table.schema.fields
    given = [(f.name, paimon_type_from_sql(f.dataType.simpleString())) for f in schema]
    shown = ", ".join(f"{f.name} {f.type.copy(True)}" for f in old)
    for i, f in enumerate(old):
        if i >= len(given) or given[i][0] != f.name or given[i][1].copy(True) != f.type.copy(True):
            got = f"{given[i][0]} {given[i][1]}" if i < len(given) else "no column"
            raise SchemaError(f"the new query of materialized table {table.name} must keep its columns ({shown}) "
                              f"in order and may only add columns after them: column {i + 1} is {got}")
    changes = [AddColumn(name, t) for name, t in given[len(old):]] + [SetOption(mt.DEFINITION_QUERY, query)]
    plan = analyse(tree)
    if table.schema.options.get("merge-engine") == "aggregation" and plan.kind == "aggregate":
        changes += [SetOption(f"fields.{given[i][0]}.aggregate-function", f) for i, f in plan.functions.items()
                    if i >= len(old)]  # new aggregates merge as the old ones do
    table.schema_manager.commit_changes(changes)
    refresh(session, session.find_table(parse.table_reference(table.name)), full=True)
    return None


def drop(session, m: re.Match):
    table = _materialized(session, m["name"], missing_ok=bool(m["exists"]))
    if table is not None:
        session.catalog.drop_table(Identifier.parse(table.name))
    return None


def show_create(table) -> str:
    """The CREATE MATERIALIZED TABLE statement that makes ``table`` again (SHOW CREATE TABLE): its
    definition, and the options given at CREATE. Those the statement itself derives are left out
    (``type``, ``materialized-table.*``, and the aggregation layout, which a CREATE given them
    would take for the user's own merge engine)."""
    s, o = table.schema, table.schema.options
    plan = analyse(parse.parse(parse.prepare(mt.definition(table).query)))
    derived = {"type", "merge-engine", *(f"fields.{s.field_names[i]}.aggregate-function" for i in plan.functions)} \
        if plan.kind == "aggregate" and _fits(table, plan) else {"type"}
    given = {k: v for k, v in o.items() if k not in derived and not k.startswith("materialized-table.")}
    text = f"CREATE MATERIALIZED TABLE {table.name}"
    if s.primary_keys and "merge-engine" not in derived:
        text += f" (PRIMARY KEY ({', '.join(s.primary_keys)}) NOT ENFORCED)"
    if s.comment:
        text += f"\nCOMMENT {_literal(s.comment)}"
    if s.partition_keys:
        text += f"\nPARTITIONED BY ({', '.join(s.partition_keys)})"
    if given:
        text += "\nWITH (\n" + ",\n".join(f"  {_literal(k)} = {_literal(v)}" for k, v in sorted(redact(given).items()))
        text += "\n)"
    text += f"\nFRESHNESS = INTERVAL '{o[mt.INTERVAL_FRESHNESS]}' {o[mt.FRESHNESS_TIME_UNIT]}"
    if o.get(mt.LOGICAL_REFRESH_MODE) == "FULL":
        text += "\nREFRESH_MODE = FULL"
    return f"{text}\nAS {o[mt.DEFINITION_QUERY]}"


def _literal(text: str) -> str:
    return exp.Literal.string(text).sql(dialect=parse.DIALECT)


# -- the freshness runner -------------------------------------------------------------------------

def refresh_lapsed(session, now_millis: Optional[int] = None) -> List[Tuple[str, str, str]]:
    """Refresh, once, every ACTIVATED materialized table of the catalog whose freshness lapsed;
    returns (table, what happened, detail) for each materialized table (a failure is reported,
    and does not stop the others)."""
    now = int(time.time() * 1000) if now_millis is None else now_millis
    out = []
    for db in session.catalog.list_databases():
        for name in session.catalog.list_tables(db):
            try:
                table = session.catalog.get_table(Identifier(db, name))
            except Exception:  # a table this catalog cannot load is not ours to refresh
                continue
            if not mt.is_materialized(table):
                continue
            try:
                if mt.definition(table).status != mt.ACTIVATED:
                    out.append((table.name, "skipped", "suspended"))
                elif not mt.is_lapsed(table, now):
                    out.append((table.name, "skipped", "fresh"))
                else:
                    row = refresh(session, table).first()
                    out.append((table.name, "refreshed", f"{row['refresh']}, {row['delta_record_count']} row(s) added"))
            except Exception as e:
                out.append((table.name, "failed", " ".join(str(e).split())))
    return out
