"""The single entry point: ``connect()`` → :class:`Session`; ``Session.sql(text)`` → DataFrame.

A session binds a Spark session to a warehouse (the filesystem catalog) and a current database.
Each statement is parsed once, dispatched by node type (:mod:`paimon_sql.sql.execute`), and
either run against the catalog, rewritten into Spark plans over table scans, or handed to Spark
unchanged. Errors surface as one-line :class:`PaimonError` messages.
"""

from __future__ import annotations

import functools
import os
import re
import sys
from collections import OrderedDict
from typing import Dict, List, Optional

import sqlglot
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.types import StructType
from sqlglot import exp
from sqlglot.errors import SqlglotError

from paimon_sql import exceptions
from paimon_sql.catalog import Identifier, load_catalog
from paimon_sql.catalog.base import DEFAULT_DATABASE
from paimon_sql.exceptions import PaimonError, SparkSqlError, TableNotFoundError, UnsupportedStatementError
from paimon_sql.options.core_options import scrub
from paimon_sql.spark import format_table, hooks, jvm_classes
from paimon_sql.spark.scan import scan_dataframe
from paimon_sql.spark.source import PaimonDataSource
from paimon_sql.spark.write import write_dataframe
from paimon_sql.sql import cache, execute, parse, query, spark_parsed, views
from paimon_sql.systables import SystemTable
from paimon_sql.table.format_table import FormatTable

_VIEW_NAME = re.compile(r"__paimon_(\w+)_\d+\b")  # a scan view of sql/query.py: its name's letters, digits, _
_POSITION = re.compile(r";? line \d+ pos \d+;?$")
_SPARK_POSITION = re.compile(r"\(line (\d+), pos (\d+)\)")
_TRACEBACK = "Traceback (most recent call last):"
_PY4J_CALL = "An error occurred while calling"  # a Java exception PySpark did not convert: its line follows


def connect(warehouse: Optional[str] = None, spark: Optional[SparkSession] = None,
            conf: Optional[Dict[str, str]] = None, catalog_options: Optional[Dict[str, str]] = None) -> "Session":
    """A session on ``warehouse`` (default: the catalog option ``warehouse``, ``$PAIMON_SQL_WAREHOUSE``,
    ``./warehouse``).

    Without ``spark`` a local Spark session (``local[*]``) is built whose Python workers run
    this interpreter (PySpark's DataFrame call-site capture off: ``conf`` may turn it on).
    ``catalog_options``: Paimon's catalog options (``metastore``, ``s3.*``, ...); ``s3.*`` keys
    given in ``conf`` count as catalog options too.
    """
    warehouse = warehouse or (catalog_options or {}).get("warehouse") or os.environ.get("PAIMON_SQL_WAREHOUSE") \
        or "./warehouse"
    if "://" not in warehouse and (catalog_options or {}).get("metastore") != "rest":  # REST: the server's name
        warehouse = os.path.abspath(warehouse)
    conf = dict(conf or {})
    if spark is None:
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        builder = SparkSession.builder.master(conf.pop("spark.master", "local[*]")).appName("paimon-sql")
        progress = "true" if sys.stderr.isatty() else "false"  # bars only where a user watches them
        defaults = {"spark.ui.showConsoleProgress": progress, "spark.sql.shuffle.partitions": "8",
                    # PySpark's call-site capture for DataFrame errors: two JVM round trips, a config
                    # read and a Python stack walk around each DataFrame call, for a call site in
                    # paimon-sql's own code a SQL user has no use for (docs/performance.md)
                    "spark.python.sql.dataFrameDebugging.enabled": "false"}
        for k, v in jvm_classes.with_jar({**defaults, **conf}).items():
            builder = builder.config(k, v)
        spark = builder.getOrCreate()
    else:
        for k, v in conf.items():
            spark.conf.set(k, v)
    session = Session(spark, warehouse, {**{k: v for k, v in conf.items() if k.startswith("s3.")},
                                         **(catalog_options or {})})
    route(spark, session)
    hooks.install(session)  # df.writeTo / save modes of the paimon source for this warehouse
    return session


_SPARK_SQL, _SPARK_TABLE = SparkSession.sql, SparkSession.table


def _scrubbed(error: PaimonError, text: str) -> PaimonError:
    """``error`` without the credentials ``text`` writes (docs/security.md): an error may quote any
    part of the statement, and its message reaches logs and the server's clients."""
    message = str(error)
    clean = scrub(message, text)
    if clean != message:
        error.args = (clean,)
    return error


def route(spark: SparkSession, session: Optional["Session"]) -> None:
    """After ``connect()``, ``spark.sql(text)`` and ``spark.table(name)`` of that SparkSession read
    and write Paimon tables as :meth:`Session.sql` does (there is no Spark catalog plugin written in
    Python to do it); ``session`` None gives Spark its own methods back. Spark's errors stay Spark's
    exceptions there, and a statement sqlglot cannot read goes to Spark as written."""
    if session is None:
        for name in ("sql", "table"):
            spark.__dict__.pop(name, None)
        return

    def sql(sqlQuery: str, args=None, **kwargs) -> DataFrame:
        if args or kwargs:  # parameter markers are Spark's to bind
            return _SPARK_SQL(spark, sqlQuery, args, **kwargs)
        try:
            return session.sql(sqlQuery)
        except exceptions.SqlSyntaxError:
            return _SPARK_SQL(spark, sqlQuery)
        except SparkSqlError as e:
            raise (e.__cause__ or e) from None

    def table(tableName: str) -> DataFrame:
        text = f"SELECT * FROM {tableName}"
        return session.sql(text) if views.reads_paimon(session, text) else _SPARK_TABLE(spark, tableName)

    spark.sql, spark.table = sql, table


def _register(spark: SparkSession) -> None:
    """The ``paimon`` data source in this Spark session. Spark checks the name against the active
    session's sources, which may be another session of the same Spark that has it already (it
    then refuses the name, DATA_SOURCE_ALREADY_EXISTS): this session is made the active one first,
    as PySpark does before it builds a DataFrame."""
    SparkSession._activeSession = spark
    SparkSession._get_j_spark_session_class(spark._jvm).setActiveSession(spark._jsparkSession)
    spark.dataSource.register(PaimonDataSource)


_PAIMON_CREATE = re.compile(r"\s*CREATE\s+(?:OR\s+REPLACE\s+)?TABLE\b", re.I)
_OTHER_FORMAT = re.compile(r"\bUSING\s+(?!paimon\b)\w+|\bSTORED\s+AS\b|\bROW\s+FORMAT\b", re.I)


class Session:
    def __init__(self, spark: SparkSession, warehouse: str, catalog_options: Optional[dict] = None):
        self.spark = spark
        self.warehouse = warehouse
        self.catalog_options = dict(catalog_options or {})
        self.catalog = load_catalog(warehouse, self.catalog_options)
        if not self.catalog.database_exists(DEFAULT_DATABASE):  # a reader may not create one (a REST catalog's)
            self.catalog.create_database(DEFAULT_DATABASE, ignore_if_exists=True)
        self.current_database = DEFAULT_DATABASE
        self._text = ""
        self.scan_reports = None  # a list while EXPLAIN collects what planning did
        self.stand_ins: dict = {}  # zero-row relations queries are first planned over (sql/query.py)
        self.planned_needs: dict = {}  # what recent queries needed of their tables (sql/query.py)
        self.scans: OrderedDict = OrderedDict()  # recent scans' DataFrames, for reuse (spark/scan.py)
        self.views: dict = {}  # temporary views over Paimon tables, by name (sql/views.py)
        self.cached_tables: dict = {}  # CACHE TABLE of Paimon tables (sql/cache.py)
        self.functions_registered = False  # Paimon's per-row Spark functions, registered at first use (sql/functions.py)
        self.access = None  # a server session's AccessControl (paimon_sql/access/): checked before each statement
        self.last_access = None  # what the last statement needed (its tables read and written), when checked
        _register(spark)

    # -- the public surface ------------------------------------------------------------------

    def sql(self, text: str) -> DataFrame:
        """Run one statement; statements without rows return an empty DataFrame."""
        result = self.execute(text)
        return result if result is not None else self._no_rows

    @functools.cached_property
    def _no_rows(self) -> DataFrame:
        """The empty DataFrame of statements without rows, made once: building one costs a
        round of py4j calls (~50-250 ms), and a DataFrame is immutable, so one serves them all.
        It has no columns, as Spark's own commands (CREATE TABLE, INSERT) and paimon-spark's answer."""
        return self.spark.createDataFrame([], StructType([])).limit(0)

    def execute(self, text: str) -> Optional[DataFrame]:
        """Run one statement; None when it has no rows to return (DDL, INSERT)."""
        self._text = text
        self.last_access = None
        try:
            try:
                node = parse.parse(text)
            except exceptions.SqlSyntaxError as error:
                self._check(None)
                return self._spark_only(text, error)
            self._check(node)
            return execute.execute(self, node)
        except PaimonError as e:
            raise _scrubbed(e, text)
        except Exception as e:  # Spark's: analysis, and the jobs of statements that run one (INSERT)
            raise _scrubbed(_unsupported(self, e, text) or spark_error(e, text), text) from e

    def _check(self, node: Optional[exp.Expression]) -> None:
        """A server session's grants against what the statement needs, before anything runs."""
        if self.access is not None:
            self.last_access = self.access.needs_of(self, node, self._text)
            self.access.require(self.last_access)

    def _spark_only(self, text: str, error: PaimonError) -> DataFrame:
        """A statement sqlglot cannot read (``DESCRIBE QUERY ...``, ``FROM t WITH ('k' = 'v')``) is
        Spark's when Spark reads it (:mod:`paimon_sql.sql.spark_parsed`); when Spark cannot either,
        the syntax error is sqlglot's, which names the user's token. A
        CREATE TABLE of a Paimon table (no other ``USING`` or ``STORED AS``) is never Spark's: Spark
        would make a table of its own, silently not a Paimon one."""
        from pyspark.errors import ParseException
        if _PAIMON_CREATE.match(text) and not _OTHER_FORMAT.search(text):
            raise error
        try:
            return spark_parsed.run(self, text)
        except ParseException:
            raise error from None

    def sql_script(self, text: str) -> List[DataFrame]:
        return [self.sql(stmt) for stmt in parse.split_statements(text)]

    def close(self) -> None:
        self.release()
        self.spark.stop()

    def release(self) -> None:
        """Let go of the SparkSession without stopping Spark (a server's client session over
        ``spark.newSession()``): its SQL and DataFrame API are Spark's again, its cached tables dropped."""
        for entry in self.cached_tables.values():
            entry.df.unpersist()
        self.cached_tables.clear()
        route(self.spark, None)
        hooks.uninstall(self.spark)

    # -- services for the handlers -----------------------------------------------------------

    @property
    def current_database(self) -> str:
        """Spark's current database: there is one catalog state, ``USE`` moves Spark's."""
        return self.spark.catalog.currentDatabase()

    @current_database.setter
    def current_database(self, name: str) -> None:
        if not self.spark.catalog.databaseExists(name):  # a warehouse database Spark has not seen yet
            self.spark_sql(f"CREATE DATABASE IF NOT EXISTS `{name.replace('`', '``')}`")
        self.spark.catalog.setCurrentDatabase(name)

    @property
    def text(self) -> str:
        """The statement being run, as the user wrote it."""
        return self._text

    def passthrough(self) -> DataFrame:
        """The statement is Spark's: it runs as written, any Paimon table it reads spliced in."""
        text = parse.prepare(self._text)
        try:
            tree = parse.parse(text)
        except PaimonError:  # Spark reads more than sqlglot: Spark's answer, or its syntax error
            return self.spark_sql(self._text)
        expanded = views.expand(self, tree, text)
        df = query.spliced_statement(self, parse.parse(expanded) if expanded != text else tree, expanded)
        return self.spark_sql(self._text) if df is None else df

    def identifier(self, node: exp.Table) -> Identifier:
        return query.identifier_of(node, self.current_database)

    def identifier_text(self, text: str) -> Identifier:
        return Identifier.parse(text.strip(), self.current_database)

    def find_table(self, node: exp.Table):
        """The Paimon table (or ``t$branch_b`` branch) a reference names, or None when it is not in
        the warehouse. System tables are read-only: a statement writing one fails here."""
        if not node.name:
            return None
        if "$" in node.name:
            ref = query.resolve(self, node)
            if isinstance(ref, SystemTable):
                raise PaimonError(f"system table '{node.name}' is read-only")
            return ref
        ident = self.identifier(node)
        try:
            return self.catalog.get_table(ident)
        except (TableNotFoundError, LookupError):
            return self._table_ignoring_case(ident)

    def find_table_named(self, name: str):
        """:meth:`find_table` of a name given as text (``db.t``, ``t$branch_b``): a procedure's
        argument, parsed as a statement would name the table."""
        return self.find_table(parse.table_reference(name))

    def parse_expression(self, text: str) -> Optional[exp.Expression]:
        """``text`` (a procedure's ``where``) parsed in Spark's dialect; None when it does not parse
        (Spark's parser then judges it)."""
        try:
            return sqlglot.parse_one(text, dialect=parse.DIALECT)
        except SqlglotError:
            return None

    def _table_ignoring_case(self, ident: Identifier):
        """Spark's rule: names are case-insensitive unless ``spark.sql.caseSensitive`` — so
        ``ORDERS`` finds table ``orders`` (when exactly one table matches)."""
        db = self.database_name(ident.database)
        if db is None or self._case_sensitive():
            return None
        tables = [t for t in self.catalog.list_tables(db) if t.lower() == ident.table.lower()]
        return self.catalog.get_table(Identifier(db, tables[0])) if len(tables) == 1 else None

    def database_name(self, name: str) -> Optional[str]:
        """The warehouse database ``name`` means (matched ignoring case, as Spark does, unless
        ``spark.sql.caseSensitive``); None when there is none."""
        if self.catalog.database_exists(name):
            return name
        if self._case_sensitive():
            return None
        found = [d for d in self.catalog.list_databases() if d.lower() == name.lower()]
        return found[0] if len(found) == 1 else None

    def _case_sensitive(self) -> bool:
        return self.spark.conf.get("spark.sql.caseSensitive", "false").lower() == "true"

    def temp_views(self) -> set:
        """The session's local temporary views, from Spark's session catalog: the public
        ``catalog.listTables()`` also lists the current database and costs 0.15-0.5 s."""
        try:
            names = self.spark._jsparkSession.sessionState().catalog().listLocalTempViews("*").iterator()
        except Exception:  # a Spark without that internal call: the public listing
            return {t.name.lower() for t in self.spark.catalog.listTables() if t.isTemporary}
        out = set()
        while names.hasNext():
            out.add(names.next().table().lower())
        return out

    def is_temp_view(self, name: str) -> bool:
        """One lookup in Spark's session catalog (listing all tables costs ~0.3 s per query)."""
        try:
            return bool(self.spark._jsparkSession.sessionState().catalog().getTempView(name).isDefined())
        except Exception:  # a Spark without that internal call: fall back to the public listing
            return name.lower() in self.temp_views()

    def rows(self, rows: list, columns: List[str]) -> DataFrame:
        schema = ", ".join(f"`{c}` {'BOOLEAN' if rows and isinstance(rows[0][i], bool) else 'STRING'}"
                           for i, c in enumerate(columns))
        return self.spark.createDataFrame(rows, schema)

    def query_dataframe(self, node: exp.Expression, text: Optional[str] = None) -> DataFrame:
        """A query as a DataFrame. ``text``: the query as the user wrote it, which then goes to
        Spark as written but for the Paimon references (:func:`query.spliced_dataframe`); without
        it (a query the front layer built, as for UPDATE) sqlglot writes it from ``node``."""
        text = parse.prepare(text if text is not None else node.sql(dialect=parse.DIALECT))
        tree = parse.parse(text)
        expanded = views.expand(self, tree, text)
        return query.spliced_dataframe(self, tree if expanded == text else parse.parse(expanded), expanded)

    def spark_sql(self, text: str) -> DataFrame:
        """Spark's own ``spark.sql`` (``connect()`` routes the SparkSession's through :meth:`sql`)."""
        return _SPARK_SQL(self.spark, text)

    def cached_rows(self, table) -> Optional[DataFrame]:
        """The rows of a table ``CACHE TABLE`` cached, when it is read at its latest snapshot."""
        return cache.lookup(self, table) if self.cached_tables else None

    def scan_dataframe(self, table, columns, predicate, read_optimized: bool = False,
                       reuse: bool = False) -> DataFrame:
        """The rows of a table (:func:`paimon_sql.spark.scan.scan_dataframe`). ``reuse``: the
        DataFrame may be one built before for the same read, shared with other queries (a query's
        references; not a DataFrame the caller persists)."""
        return scan_dataframe(self.spark, table, self.warehouse, columns, predicate, self.catalog_options,
                              self.scan_reports, read_optimized, self.scans if reuse else None)

    def write(self, df: DataFrame, table, overwrite: bool = False, partition_spec=None, dynamic: bool = False):
        """Write ``df`` to ``table`` in one snapshot, with the Paimon options ``SET spark.paimon.*``
        gives (:func:`query.session_options`) under the statement's own."""
        table = table.copy({**query.session_options(self, table), **table.dynamic_options})
        if isinstance(table, FormatTable):  # plain files: Spark's own writer, no snapshot
            format_table.write(self.spark, df, table, overwrite, partition_spec, dynamic)
            return cache.refresh(self, table)
        write_dataframe(df, table, self.warehouse, overwrite, partition_spec, dynamic,
                        {**self.catalog_options, **table.dynamic_options}, local=True)


def spark_error(e: BaseException, text: str = "") -> PaimonError:
    """Spark's exception for the statement ``text`` as our one-line error. Spark raises it while it
    analyses the statement, or later, in a task, while the rows of the DataFrame ``Session.sql``
    returned are computed (``collect()``): the shell converts those with this function too. A class
    of ours that a Python task raised is raised as itself."""
    if isinstance(e, PaimonError):
        return e
    if _condition(e) == "PARSE_SYNTAX_ERROR":
        near = user_names(e.getMessageParameters().get("error", "end of input"), text)
        m = _SPARK_POSITION.search(str(e))
        return parse.spark_syntax_error(near, text, int(m.group(1)), int(m.group(2))) if m \
            else parse.syntax_error(near)
    line = _one_line(e, text)
    if isinstance(e, RecursionError) or line.startswith("java.lang.StackOverflowError"):
        return SparkSqlError(f"statement nested too deeply to run (parentheses, subqueries or expressions inside "
                             f"one another): {line}")
    name, _, message = line.partition(": ")
    if name.startswith("paimon_sql.exceptions."):
        return getattr(exceptions, name.rsplit(".", 1)[1], PaimonError)(message)
    return SparkSqlError(line)


def user_names(message: str, text: str) -> str:
    """``message`` with each scan view of the front layer (``__paimon_<name>_<n>``) named as the user
    wrote that table in ``text``: errors quote the user's SQL, not the one Spark was given."""
    written = {re.sub(r"[^0-9A-Za-z_]", "_", w): w for w in re.findall(r"[\w$]+", text.replace("`", ""))}
    return _VIEW_NAME.sub(lambda m: written.get(m.group(1), m.group(1)), message)


def _condition(e: BaseException):
    """Spark's error class (``DIVIDE_BY_ZERO``), None for other exceptions."""
    return e.getCondition() if hasattr(e, "getCondition") else None


def _unsupported(session, e: BaseException, text: str) -> Optional[UnsupportedStatementError]:
    """When Spark cannot find a table the warehouse has, the statement went to Spark as written:
    one paimon-sql does not run on Paimon tables (SHOW PARTITIONS, CACHE TABLE, CREATE VIEW ...)."""
    if _condition(e) != "TABLE_OR_VIEW_NOT_FOUND":
        return None
    try:
        node = parse.table_reference(e.getMessageParameters().get("relationName", ""))
        if query.resolve(session, node) is None:
            return None
    except PaimonError:
        return None
    statement = " ".join(text.split())
    statement = statement if len(statement) <= 100 else statement[:100] + "..."
    return UnsupportedStatementError(f"unsupported statement on Paimon table "
                                     f"{node.db or session.current_database}.{node.name}: {statement}")


def _one_line(e: BaseException, text: str = "") -> str:
    """The line of Spark's message that says what went wrong (of a failed Python task: its
    traceback's last line), without Spark's position in the text it was given, which is the
    front layer's rewrite, not the user's statement."""
    lines = [ln for ln in str(e).splitlines() if ln.strip() and not ln.startswith(_PY4J_CALL)]
    tracebacks = [i for i, ln in enumerate(lines) if _TRACEBACK in ln]
    if tracebacks:
        lines = [ln for ln in lines[tracebacks[-1] + 1:] if not ln[0].isspace()]
    line = lines[0].strip().lstrip(": ") if lines else type(e).__name__
    return user_names(_POSITION.sub("", line), text)[:500]
