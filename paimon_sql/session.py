"""The single entry point: ``connect()`` → :class:`Session`; ``Session.sql(text)`` → DataFrame.

A session binds a Spark session to a warehouse (the filesystem catalog) and a current database.
Each statement is parsed once, dispatched by node type (:mod:`paimon_sql.sql.execute`), and
either run against the catalog, rewritten into Spark plans over table scans, or handed to Spark
unchanged. Errors surface as one-line :class:`PaimonError` messages.
"""

from __future__ import annotations

import os
import re
import sys
from typing import Dict, List, Optional

from pyspark.sql import DataFrame, SparkSession
from sqlglot import exp

from paimon_sql.catalog import Identifier, load_catalog
from paimon_sql.catalog.base import DEFAULT_DATABASE
from paimon_sql.exceptions import PaimonError, TableNotFoundError
from paimon_sql.sql import execute, parse, query
from paimon_sql.systables import SystemTable

_OUR_ERRORS = re.compile(r"(?:paimon_sql\.exceptions\.)?((?:\w+Error)): (.+)")


def connect(warehouse: Optional[str] = None, spark: Optional[SparkSession] = None,
            conf: Optional[Dict[str, str]] = None) -> "Session":
    """A session on ``warehouse`` (default ``$PAIMON_SQL_WAREHOUSE`` or ``./warehouse``).

    Without ``spark`` a local Spark session (``local[*]``) is built whose Python workers run
    this interpreter.
    """
    warehouse = warehouse or os.environ.get("PAIMON_SQL_WAREHOUSE") or "./warehouse"
    if "://" not in warehouse:
        warehouse = os.path.abspath(warehouse)
    conf = dict(conf or {})
    if spark is None:
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        builder = SparkSession.builder.master(conf.pop("spark.master", "local[*]")).appName("paimon-sql")
        defaults = {"spark.ui.showConsoleProgress": "true", "spark.sql.shuffle.partitions": "8"}
        for k, v in {**defaults, **conf}.items():
            builder = builder.config(k, v)
        spark = builder.getOrCreate()
    else:
        for k, v in conf.items():
            spark.conf.set(k, v)
    return Session(spark, warehouse, {k: v for k, v in conf.items() if k.startswith("s3.")})


class Session:
    def __init__(self, spark: SparkSession, warehouse: str, catalog_options: Optional[dict] = None):
        from paimon_sql.spark.source import PaimonDataSource
        self.spark = spark
        self.warehouse = warehouse
        self.catalog_options = dict(catalog_options or {})
        self.catalog = load_catalog(warehouse, self.catalog_options)
        self.catalog.create_database(DEFAULT_DATABASE, ignore_if_exists=True)
        self.current_database = DEFAULT_DATABASE
        self._text = ""
        self.scan_reports = None  # a list while EXPLAIN collects what planning did
        spark.dataSource.register(PaimonDataSource)

    # -- the public surface ------------------------------------------------------------------

    def sql(self, text: str) -> DataFrame:
        """Run one statement; statements without rows return an empty DataFrame."""
        result = self.execute(text)
        return result if result is not None else self.spark.createDataFrame([], "result STRING").limit(0)

    def execute(self, text: str) -> Optional[DataFrame]:
        """Run one statement; None when it has no rows to return (DDL, INSERT)."""
        self._text = text
        try:
            return execute.execute(self, parse.parse(text))
        except PaimonError:
            raise
        except Exception as e:  # Spark/Py4J errors: keep the one line that says what went wrong
            raise PaimonError(_one_line(e)) from e

    def sql_script(self, text: str) -> List[DataFrame]:
        return [self.sql(stmt) for stmt in parse.split_statements(text)]

    def close(self) -> None:
        self.spark.stop()

    # -- services for the handlers -----------------------------------------------------------

    def passthrough(self) -> DataFrame:
        return self.spark.sql(self._text)

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
        try:
            return self.catalog.get_table(self.identifier(node))
        except (TableNotFoundError, LookupError):
            return None

    def temp_views(self) -> set:
        return {t.name.lower() for t in self.spark.catalog.listTables() if t.isTemporary}

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

    def query_dataframe(self, node: exp.Expression) -> DataFrame:
        rewritten = query.rewrite_tables(self, node.copy())
        return self.spark.sql(rewritten.sql(dialect=parse.DIALECT))

    def scan_dataframe(self, table, columns, predicate, read_optimized: bool = False) -> DataFrame:
        from paimon_sql.spark.scan import scan_dataframe
        return scan_dataframe(self.spark, table, self.warehouse, columns, predicate, self.catalog_options,
                              self.scan_reports, read_optimized)

    def write(self, df: DataFrame, table, overwrite: bool = False, partition_spec=None, dynamic: bool = False):
        from paimon_sql.spark.write import write_dataframe
        write_dataframe(df, table, self.warehouse, overwrite, partition_spec, dynamic, self.catalog_options)


def _one_line(e: Exception) -> str:
    """Our own error inside a Spark/Py4J trace, else Spark's first line."""
    text = str(e)
    for line in text.splitlines():
        m = _OUR_ERRORS.search(line.strip())
        if m and "paimon_sql" in text and m.group(1) not in ("Py4JJavaError", "PythonException"):
            return m.group(2).strip()
    first = next((ln.strip() for ln in text.splitlines() if ln.strip()), type(e).__name__)
    return first[:500]
