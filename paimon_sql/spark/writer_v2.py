"""``df.writeTo(name)`` for Paimon tables: PySpark's DataFrameWriterV2 API over our writes.

PySpark's writer looks ``name`` up in a Spark catalog, which a Python data source cannot provide;
after ``connect()`` (:mod:`paimon_sql.spark.hooks`) ``writeTo`` returns a :class:`PaimonWriterV2`
when ``name`` is a table of the session's warehouse, or a table to create in one of its databases,
and PySpark's own writer otherwise (and once ``using()`` names another provider).

Semantics are Spark's for v2 tables, as paimon-spark implements them: columns are matched by
name; ``append`` adds rows; ``overwritePartitions`` replaces the partitions the data has rows in
(the whole table when unpartitioned); ``overwrite(condition)`` replaces the rows matching a
condition on partition columns (equalities joined by AND, or ``lit(True)``) — as paimon-spark,
other conditions are refused; ``create`` makes the table from the data's schema with
``partitionedBy`` columns and ``tableProperty`` options; ``replace``/``createOrReplace`` replace it
as SQL's CREATE OR REPLACE TABLE does. Each write is one snapshot; a created table whose write
fails is dropped again.
"""

from __future__ import annotations

from typing import Dict, Optional

import pyarrow as pa
from pyspark.sql import Column, DataFrame

from paimon_sql.catalog import Identifier
from paimon_sql.exceptions import InvalidIdentifierError, PaimonError, TableAlreadyExistsError, TableNotFoundError
from paimon_sql.spark.target import Target, new_schema, resolve_name, write_into


def resolve(session, name: str) -> Optional[Target]:
    """The warehouse table ``name`` means for ``writeTo``, or None when it is Spark's to resolve: an
    existing Paimon table, else — unless Spark has a table of that name — a table to create in a
    database of the warehouse."""
    try:
        ident = resolve_name(session, Identifier.parse(name, session.current_database))
    except InvalidIdentifierError:
        return None  # catalog.db.t and other names only Spark knows
    target = Target(session.warehouse, str(ident), dict(session.catalog_options), session.catalog)
    if session.catalog.table_exists(ident):
        return target
    if session.spark.catalog.tableExists(name) or not session.catalog.database_exists(ident.database):
        return None
    return target


def _column_name(col) -> str:
    """The column a ``partitionedBy`` argument names; Paimon has no partition transforms."""
    if isinstance(col, str):
        return col
    node = col._jc.node()
    if node.getClass().getSimpleName() != "UnresolvedAttribute":
        raise PaimonError(f"partitionedBy({node.toString()}): a Paimon table is partitioned by columns, "
                          "not transforms (use option 'bucket' to hash rows into buckets)")
    return node.nameParts().mkString(".")


def _conjuncts(node) -> list:
    """The terms of an AND tree of Column expression nodes."""
    if node.getClass().getSimpleName() == "UnresolvedFunction" and node.functionName().lower() == "and":
        args = node.arguments()
        return [t for i in range(args.size()) for t in _conjuncts(args.apply(i))]
    return [node]


def _equality(term, table) -> tuple:
    """(partition column, value or None) of ``col = v``, ``col <=> v`` or ``col IS NULL``."""
    kind = term.getClass().getSimpleName()
    name = term.functionName().lower() if kind == "UnresolvedFunction" else ""
    args = [term.arguments().apply(i) for i in range(term.arguments().size())] if name else []
    kinds = [a.getClass().getSimpleName() for a in args]
    if name == "isnull" and kinds == ["UnresolvedAttribute"]:
        return args[0].nameParts().mkString("."), None
    if name in ("=", "==", "<=>") and sorted(kinds) == ["Literal", "UnresolvedAttribute"]:
        attr, lit = (args[0], args[1]) if kinds[0] == "UnresolvedAttribute" else (args[1], args[0])
        return attr.nameParts().mkString("."), lit.value()
    keys = ", ".join(table.schema.partition_keys) or "none"
    raise PaimonError(f"overwrite({term.toString()}) on {table.name}: a condition must be equalities on partition "
                      f"columns ({keys}) joined by AND; use overwritePartitions() or SQL INSERT OVERWRITE / DELETE")


def _typed(value, f):
    """A condition's literal as the partition column's value (text and Java dates via Arrow casts)."""
    if value is None:
        return None
    if not isinstance(value, (bool, int, float, str)):
        value = str(value)  # a py4j java.time.LocalDate, Timestamp...: its text
    return pa.scalar(value).cast(f.type.to_arrow()).as_py()


def partition_spec(condition: Column, table) -> Dict[str, object]:
    """The partition spec a condition of ``overwrite`` selects ({}: the whole table)."""
    node = condition._jc.node()
    if node.getClass().getSimpleName() == "Literal" and node.value() is True:
        return {}
    fields = {f.name.lower(): f for f in table.schema.fields_of(table.schema.partition_keys)}
    spec = {}
    for term in _conjuncts(node):
        name, value = _equality(term, table)
        if name.lower() not in fields:
            raise PaimonError(f"overwrite condition on {table.name} names `{name}`, which is not a partition column "
                              f"({', '.join(table.schema.partition_keys) or 'the table has none'})")
        f = fields[name.lower()]
        spec[f.name] = _typed(value, f)
    return spec


class PaimonWriterV2:
    """DataFrameWriterV2 for a Paimon table (PySpark's methods, each returning the writer)."""

    def __init__(self, session, df: DataFrame, name: str, target: Target, spark_writer):
        self._session, self._df, self._name, self._target = session, df, name, target
        self._spark_writer = spark_writer  # PySpark's writeTo, for another provider
        self._options: Dict[str, str] = {}
        self._properties: Dict[str, str] = {}
        self._partitions: list = []
        self._calls: list = []  # what was set, to hand to PySpark's writer if using() says so
        self._cluster = False

    def _record(self, method: str, *args):
        self._calls.append((method, args))
        return self

    def using(self, provider: str):
        if provider.lower() == "paimon":
            return self
        writer = self._spark_writer(self._df, self._name).using(provider)
        for method, args in self._calls:
            writer = getattr(writer, method)(*args)
        return writer

    def option(self, key: str, value) -> "PaimonWriterV2":
        self._options[key] = str(value)
        return self._record("option", key, value)

    def options(self, **options) -> "PaimonWriterV2":
        for k, v in options.items():
            self.option(k, v)
        return self

    def tableProperty(self, property: str, value: str) -> "PaimonWriterV2":  # noqa: N802 - PySpark's name
        self._properties[property] = str(value)
        return self._record("tableProperty", property, value)

    def partitionedBy(self, col, *cols) -> "PaimonWriterV2":  # noqa: N802 - PySpark's name
        self._partitions = [col, *cols]  # named when the table is made (PySpark's writer may take them)
        return self._record("partitionedBy", col, *cols)

    def clusterBy(self, col, *cols) -> "PaimonWriterV2":  # noqa: N802 - PySpark's name
        self._cluster = True
        return self._record("clusterBy", col, *cols)

    # -- the writes ---------------------------------------------------------------------------

    def append(self) -> None:
        self._write(self._existing())

    def overwritePartitions(self) -> None:  # noqa: N802 - PySpark's name
        self._write(self._existing(), overwrite=True, dynamic=True)

    def overwrite(self, condition: Column) -> None:
        table = self._existing()
        self._write(table, overwrite=True, partition_spec=partition_spec(condition, table))

    def create(self) -> None:
        if self._target.find() is not None:
            raise TableAlreadyExistsError(f"[TABLE_OR_VIEW_ALREADY_EXISTS] table {self._target.name} already exists")
        self._target.created_and_written(self._schema(), self._write)

    def replace(self) -> None:
        if self._target.find() is None:
            raise TableNotFoundError(f"[TABLE_OR_VIEW_NOT_FOUND] table {self._target.name} does not exist")
        self._replace()

    def createOrReplace(self) -> None:  # noqa: N802 - PySpark's name
        if self._target.find() is None:
            self.create()
        else:
            self._replace()

    def _replace(self) -> None:
        """CREATE OR REPLACE of an existing table (the catalog's ``replace_table``, as SQL's): the data
        is computed before the table is emptied, in case it reads the table."""
        replace_table = getattr(self._target.catalog, "replace_table", None)
        if replace_table is None:
            raise PaimonError(f"replacing table {self._target.name} is not supported by its catalog")
        self._df = self._df.localCheckpoint()
        self._write(replace_table(self._target.ident(), self._schema()))

    def _schema(self):
        self._refuse_unsupported()
        return new_schema(self._df, {**self._options, **self._properties}, [_column_name(c) for c in self._partitions])

    def _existing(self):
        table = self._target.find()
        if table is None:
            raise TableNotFoundError(f"[TABLE_OR_VIEW_NOT_FOUND] table {self._target.name} does not exist")
        if self._partitions or self._properties:
            raise PaimonError(f"partitionedBy/tableProperty apply to create() and replace(), not to a write into "
                              f"the existing table {table.name}")
        return table

    def _refuse_unsupported(self) -> None:
        if self._cluster:
            raise PaimonError("clusterBy cannot be honoured by a Paimon table (see its 'clustering.*' options)")

    def _write(self, table, overwrite: bool = False, partition_spec: Optional[dict] = None,
               dynamic: bool = False) -> None:
        self._refuse_unsupported()
        write_into(self._session, self._df, table, self._target, self._options, overwrite, partition_spec, dynamic)
