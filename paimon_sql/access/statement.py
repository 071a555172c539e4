"""What a statement needs: which privilege on which table or database, read off its parsed tree.

Every table a statement names is resolved as the front layer resolves it before anything is
read (:func:`paimon_sql.sql.query.ctes_in_scope` for CTEs, the session's temporary views, the
current database), then classified by where it stands: the target of a write, of DDL or CALL,
or something read. A view is checked as itself (its reader needs READ on the view, not on what it
reads: an administrator who made the view chose to share its rows). A system table (``t$files``)
or branch (``t$branch_b``) needs what its table needs; the catalog-wide ``sys.*`` tables need
READ on everything.

What cannot be checked table by table needs ADMIN on everything (``*``): statements Spark runs
about files, jars, functions and catalogs (``ADD JAR``, ``LOAD DATA``, ``INSERT OVERWRITE
DIRECTORY``, ``CREATE TEMPORARY VIEW ... USING``, SQL on files ``parquet.`/p```), other
catalogs' tables, Spark tables of their own files, ``reflect``/``java_method``, Spark settings
that reach code or files, and whatever this module does not know. Unknown means refused.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Protocol

from sqlglot import exp

from paimon_sql.access.policy import ADMIN, ANY, READ, WRITE
from paimon_sql.exceptions import AccessDeniedError
from paimon_sql.sql import call, ddl, parse, query, show
from paimon_sql.systables import GLOBAL_TABLES


class Session(Protocol):
    """What the analysis reads of a session (paimon_sql.session.Session, a layer above, is one): the
    statement's text, the current database, the names that are the session's own, and which
    names are databases."""

    views: Dict[str, object]  # the temporary views over Paimon tables, by name

    @property
    def text(self) -> str: ...

    @property
    def current_database(self) -> str: ...

    def database_name(self, name: str) -> Optional[str]: ...

    def is_temp_view(self, name: str) -> bool: ...

# Spark's data sources that read a path named as a table (``parquet.`/data/x```)
_FILE_SOURCES = {"parquet", "orc", "json", "csv", "text", "avro", "binaryfile", "xml", "delta", "paimon", "hive",
                 "jdbc", "org.apache.spark.sql.parquet"}
# functions that call into the JVM: a user of SQL must not reach the server's process
_JVM_FUNCTIONS = {"reflect", "java_method", "try_reflect"}
# Spark's table-valued functions that make rows from their arguments, reading no table
_GENERATORS = {"range", "explode", "explode_outer", "inline", "inline_outer", "json_tuple", "posexplode",
               "posexplode_outer", "stack", "sql_keywords", "collations", "variant_explode", "variant_explode_outer"}
# Spark's IDENTIFIER('db.t') names a table by a string, which sqlglot does not read as one
_IDENTIFIER_CLAUSE = re.compile(r"\bIDENTIFIER\s*\(", re.I)
# Spark settings a non-administrator may not change: they register code or catalogs, or read files
_GUARDED_SETTINGS = re.compile(r"spark\.sql\.(catalog\b|catalogImplementation|extensions|runSQLOnFiles|warehouse|"
                               r"hive\.|sources\.)|spark\.(?!sql\.|paimon\.)", re.I)


@dataclass(frozen=True)
class Need:
    """``privilege`` on table ``database.table``, or on the database when ``table`` is None;
    ``reason`` says what needs it when the table alone does not tell (SQL on files, ADD JAR)."""

    privilege: str
    database: str
    table: Optional[str] = None
    reason: str = ""
    raw: bool = False  # reads the table past its row filters and column masks (UPDATE, CACHE TABLE)

    def __str__(self) -> str:
        if self.database == ANY:
            return "everything"
        return f"table {self.database}.{self.table}" if self.table is not None else f"database {self.database}"


@dataclass
class StatementAccess:
    """What one statement needs; ``reads`` and ``writes``: the tables it reads and changes, as
    ``db.table`` (for the audit log)."""

    needs: List[Need] = field(default_factory=list)

    def add(self, privilege: str, database: str, table: Optional[str] = None, reason: str = "",
            raw: bool = False) -> None:
        need = Need(privilege, database, table, reason, raw)
        if need not in self.needs:
            self.needs.append(need)

    def unchecked(self, reason: str) -> None:
        self.add(ADMIN, ANY, None, reason)

    @property
    def reads(self) -> List[str]:
        return self._tables(lambda privilege: privilege == READ)

    @property
    def writes(self) -> List[str]:
        return self._tables(lambda privilege: privilege != READ)

    def _tables(self, which: Callable[[str], bool]) -> List[str]:
        return list(dict.fromkeys(f"{n.database}.{n.table}" for n in self.needs
                                  if which(n.privilege) and n.table and n.database != ANY))


def analyze(session: "Session", node: exp.Expression) -> StatementAccess:
    """What the parsed statement ``node`` needs, in the session's current database."""
    access = StatementAccess()
    handler = _HANDLERS.get(type(node))
    if handler is None:
        access.unchecked(f"{type(node).__name__.upper()} statements")
    else:
        handler(session, node, access)
    for f in node.find_all(exp.Anonymous):
        if f.name.lower() in _JVM_FUNCTIONS:
            access.unchecked(f"function {f.name.lower()}")
    if _IDENTIFIER_CLAUSE.search(session.text):
        access.unchecked("IDENTIFIER(...) clauses")
    return access


def unparsed(text: str) -> StatementAccess:
    """A statement only Spark reads (sqlglot could not): it cannot be checked table by table."""
    access = StatementAccess()
    access.unchecked(f"statements the server cannot check ({' '.join(text.split()[:2]).upper()} ...)")
    return access


def setting(key: str, access: StatementAccess) -> None:
    """``SET key=...`` (or a session's opening configuration): guarded keys are for administrators."""
    if _GUARDED_SETTINGS.match(key.strip().strip("`")):
        access.unchecked(f"setting {key.strip()}")


# -- references -----------------------------------------------------------------------------------

def _reads(session: "Session", node: exp.Expression, access: StatementAccess, skip=()) -> None:
    """READ on every table ``node`` reads, but the references in ``skip`` (a statement's targets)."""
    for table in node.find_all(exp.Table):
        if any(table is s for s in skip):
            continue
        if isinstance(table.this, exp.Func):
            _table_function(session, table.this, access)
        elif table.name and not _own_relation(session, table):
            _need(session, table, READ, access)


def _own_relation(session: "Session", table: exp.Table) -> bool:
    """A CTE in scope or one of the session's temporary views: the session's own, no grant needed."""
    if table.db or table.catalog:
        return False
    name = table.name.lower()
    return name in query.ctes_in_scope(table) or name in session.views or session.is_temp_view(table.name)


def _table_function(session: "Session", function: exp.Func, access: StatementAccess) -> None:
    """Spark's generators read no table; Paimon's name theirs in a string; any other is unknown."""
    name = (function.name if isinstance(function, exp.Anonymous) else function.sql_name()).lower()
    if name not in query.TABLE_FUNCTIONS:
        if name not in _GENERATORS:
            access.unchecked(f"table function {name}")
        return
    first = function.expressions[0] if function.expressions else None
    if not isinstance(first, exp.Literal) or not first.is_string:
        access.unchecked(f"{name} without a table name")
        return
    _need(session, parse.table_reference(first.this), READ, access)


def _need(session: "Session", table: exp.Table, privilege: str, access: StatementAccess, raw: str = "") -> None:
    """``privilege`` on the table ``table`` names (its base table for ``t$files`` / ``t$branch_b``)."""
    if table.catalog and table.catalog.lower() not in parse.CATALOG_NAMES:
        access.unchecked(f"tables of catalog {table.catalog}")
        return
    db, name = table.db, table.name
    if "$" in name:
        name = name.split("$")[0]
        if not db and "." in name:  # `db.t$files` quoted whole
            db, name = name.rsplit(".", 1)
    elif db and db.lower() == query.SYS_DATABASE and name.lower() in GLOBAL_TABLES \
            and session.database_name(db) is None:
        access.add(READ, ANY, None, f"system table sys.{name.lower()}")
        return
    if db and db.lower() in _FILE_SOURCES and session.database_name(db) is None:
        access.unchecked(f"SQL on files ({db}.`{name}`)")
        return
    access.add(privilege, (db or session.current_database).lower(), name.lower(), raw, bool(raw))


def _database(session: "Session", table: Optional[exp.Table]) -> str:
    return ((table.db if table is not None else "") or session.current_database).lower()


# -- statements -----------------------------------------------------------------------------------

def _query(session, node, access):
    _reads(session, node, access)


def _insert(session, node, access):
    target = node.this.this if isinstance(node.this, exp.Schema) else node.this
    if not isinstance(target, exp.Table):
        access.unchecked("INSERT OVERWRITE DIRECTORY")
        return
    _need(session, target, WRITE, access)
    _reads(session, node, access, skip=(target,))


def _change(session, node, access):
    """UPDATE, DELETE, MERGE: their rows are chosen by reading the target, so they need both."""
    target = node.this
    _need(session, target, READ, access, raw=type(node).__name__.upper())
    _need(session, target, WRITE, access)
    _reads(session, node, access, skip=(target,))


def _truncate(session, node, access):
    for table in node.expressions:
        _need(session, table, WRITE, access)


def _create(session, node, access):
    kind = (node.args.get("kind") or "").upper()
    target = node.this.this if isinstance(node.this, exp.Schema) else node.this
    props = {type(p) for p in (node.args["properties"].expressions if node.args.get("properties") else [])}
    body = node.expression
    if kind in ("DATABASE", "SCHEMA", "NAMESPACE"):
        access.add(ADMIN, ANY, None, f"CREATE {kind}")
    elif kind == "VIEW" and exp.TemporaryProperty in props and exp.GlobalProperty not in props \
            and isinstance(body, exp.Query):
        pass  # the session's own view: what its query reads is checked below
    elif (kind == "VIEW" and exp.TemporaryProperty not in props and isinstance(body, exp.Query)) or \
            (kind == "TABLE" and ddl.is_paimon_create(node) and exp.LocationProperty not in props):
        access.add(ADMIN, _database(session, target), None)
        _need(session, target, ADMIN, access)  # covered by the database's grant; names what is written
    else:
        access.unchecked(f"CREATE {kind} of this kind (temporary or global views over files, Spark tables "
                         "of their own files, functions)")
    if body is not None:
        _reads(session, body, access)


def _drop(session, node, access):
    kind = (node.args.get("kind") or "").upper()
    if kind in ("DATABASE", "SCHEMA", "NAMESPACE"):
        access.add(ADMIN, ANY, None, f"DROP {kind}")
        return
    if kind not in ("TABLE", "VIEW", "MATERIALIZED VIEW"):
        access.unchecked(f"DROP {kind}")
        return
    for table in node.args.get("tables") or [node.this]:
        if not _own_relation(session, table):
            _need(session, table, ADMIN, access)


def _alter(session, node, access):
    target = node.this
    _need(session, target, ADMIN, access)
    for table in node.find_all(exp.Table):
        if table is target:
            continue
        if table.find_ancestor(exp.Query) is not None:
            _need(session, table, READ, access)
        else:  # RENAME TO db2.t2: a table made in that database
            access.add(ADMIN, _database(session, table), None)


def _describe(session, node, access):
    kind = (node.args.get("kind") or "").upper()
    if kind in ("DATABASE", "SCHEMA", "NAMESPACE") or \
            (node.this.name.upper() == "PROCEDURE" and not node.this.this.quoted and len(node.expressions) == 1):
        return
    _reads(session, node, access)


def _cache(session, node, access):
    if node.expression is not None:  # CACHE TABLE c AS SELECT ...: c is the session's own view
        _reads(session, node.expression, access)
    elif not _own_relation(session, node.this):
        _need(session, node.this, READ, access, raw="CACHE TABLE")


def _analyze(session, node, access):
    tables = node.args.get("tables") or []
    if not tables:  # ANALYZE TABLES IN db: every table of a database
        access.unchecked("ANALYZE TABLES")
    for table in tables:
        _need(session, table, WRITE, access)


def _set(session, node, access):
    m = re.match(r"\s*SET\b(.*)", session.text, re.I | re.S)
    _setting_text(m.group(1) if m else "", access)


def _setting_text(text: str, access: StatementAccess) -> None:
    """What follows SET: ``k=v`` / ``k`` checks key ``k``; ``-v``, ``TIME ZONE``, ``VAR`` and a
    bare SET reach no code or files."""
    if not re.match(r"\s*(-v\b|TIME\s+ZONE\b|VAR(IABLE)?\b|;?\s*$)", text, re.I):
        setting(text.split("=", 1)[0], access)


def _grant(session, node, access):
    raise AccessDeniedError("permission denied: GRANT and REVOKE are not statements of paimon-sql-server: grants live in its "
                            "--policy-file (docs/server.md), which the server reads again when it changes")


# -- raw commands (sqlglot keeps them as text) --------------------------------------------------------

_FREE_SHOW = re.compile(r"(TABLES|VIEWS|DATABASES|SCHEMAS|NAMESPACES|CATALOGS|PROCEDURES|CURRENT\s+(NAMESPACE|"
                        r"SCHEMA|DATABASE|CATALOG)|(USER\s+|SYSTEM\s+|ALL\s+)?FUNCTIONS)\b", re.I)
_SHOW_TABLE = re.compile(rf"(?:CREATE\s+TABLE|TAGS|COLUMNS\s+(?:IN|FROM)|PARTITIONS|TBLPROPERTIES)\s+"
                         rf"(?P<table>{show._TABLE})(?:\s+(?:IN|FROM)\s+(?P<db>{show._IDENT}))?", re.I | re.S)
_SHOW_EXTENDED = re.compile(rf"TABLE\s+EXTENDED(?:\s+(?:IN|FROM)\s+(?P<db>{show._IDENT}))?", re.I)
_ALTER_TARGET = re.compile(rf"\s*(?:TABLE|VIEW|MATERIALIZED\s+TABLE)\s+(?P<table>{show._TABLE})", re.I)
_DATABASE_WORD = re.compile(r"\s*(DATABASE|SCHEMA|NAMESPACE)\b", re.I)
_EXPLAIN = re.compile(r"\s*(?:(?:EXTENDED|FORMATTED|CODEGEN|COST)\s+)?(.*)", re.I | re.S)


def _command(session, node, access):
    verb = node.this.upper()
    arg = node.expression
    text = arg.this if isinstance(arg, exp.Literal) else arg if isinstance(arg, str) else ""
    if verb == "SHOW":
        _show(session, text, access)
    elif verb == "CALL":
        _call(session, text, access)
    elif verb == "EXPLAIN":
        inner = _EXPLAIN.fullmatch(text).group(1)
        try:
            inner_node = parse.parse(inner)
        except Exception:
            access.needs.extend(unparsed(inner).needs)
            return
        access.needs.extend(n for n in analyze(session, inner_node).needs if n not in access.needs)
    elif verb == "ALTER" and _ALTER_TARGET.match(text):
        _need(session, parse.table_reference(_ALTER_TARGET.match(text).group("table")), ADMIN, access)
    elif verb in ("ALTER", "CREATE") and _DATABASE_WORD.match(text):
        access.add(ADMIN, ANY, None, f"{verb} DATABASE")
    elif verb == "SET":
        _setting_text(text, access)
    elif verb == "RESET":
        return
    else:
        access.unchecked(f"{verb} statements")


def _show(session, text: str, access: StatementAccess) -> None:
    if _FREE_SHOW.match(text.strip()):
        return
    m = _SHOW_TABLE.match(text.strip())
    if m:
        table = parse.table_reference(m.group("table"))
        if m.group("db") and not table.db:
            table.set("db", exp.to_identifier(m.group("db").strip("`")))
        _need(session, table, READ, access)
        return
    m = _SHOW_EXTENDED.match(text.strip())
    if m:  # every table of the database, with its schema
        access.add(READ, (m.group("db") or session.current_database).strip("`").lower(), None)
        return
    access.unchecked(f"SHOW {text.strip().split()[0] if text.strip() else ''}")


# a procedure's arguments that name tables, by what the procedure does to them
_CALL_READS = ("source_table",)
_CALL_ADMINISTERS = ("table", "target_table", "view", "database_or_table")


def _call(session, text: str, access: StatementAccess) -> None:
    """CALL: ADMIN on the tables it changes, READ on those it only reads; a procedure over many
    tables (a database, a pattern, ``compact_database``, functions) needs ADMIN on everything."""
    cls, args = call.bound_arguments(text)
    named = [(p, args.get(p)) for p in _CALL_READS + _CALL_ADMINISTERS if args.get(p)]
    if not named or set(args) & {"database", "including_databases", "function"}:
        access.unchecked(f"CALL sys.{cls.name}")
        return
    for param, value in named:
        if any(c in str(value) for c in "*,|"):
            access.unchecked(f"CALL sys.{cls.name} over several tables ({param} => '{value}')")
        elif param == "database_or_table" and "." not in str(value):
            access.add(ADMIN, str(value).strip("`").lower(), None)
        else:
            _need(session, parse.table_reference(str(value)), READ if param in _CALL_READS else ADMIN, access)


_HANDLERS: Dict[type, Callable] = {
    exp.Select: _query, exp.Union: _query, exp.Intersect: _query, exp.Except: _query, exp.Values: _query,
    exp.Insert: _insert, exp.Update: _change, exp.Delete: _change, exp.Merge: _change,
    exp.TruncateTable: _truncate, exp.Create: _create, exp.Drop: _drop, exp.Alter: _alter,
    exp.Use: lambda s, n, a: None, exp.Describe: _describe, exp.Cache: _cache, exp.Uncache: _query,
    exp.Refresh: _query, exp.Analyze: _analyze, exp.Set: _set, exp.Command: _command,
    exp.Grant: _grant, exp.Revoke: _grant,
}
