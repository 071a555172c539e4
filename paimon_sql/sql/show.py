"""SHOW and DESCRIBE on Paimon tables and warehouse databases, answered as Spark answers them for
its own: the same columns, Spark's type names (``int``, ``struct<a:int>``, ``decimal(10,2)``,
``char(3)``), the same row shapes (``# Partition Information``, ``k=v/k2=v2`` partitions,
``info_name``/``info_value`` pairs).

A database's listings (SHOW TABLES, SHOW VIEWS, SHOW TABLE EXTENDED) merge the warehouse's tables
and views (SHOW TABLES lists both, as Spark lists its session catalog's) with what Spark lists for
the same name — its own tables there, and the session's temporary views,
which Spark lists with every database — less the front layer's internal views (``__paimon_*``).
A statement about something neither the warehouse nor Spark has goes to Spark for its error.
Options shown have their secret values masked (:func:`redact`).
"""

from __future__ import annotations

import re
import time
from decimal import Decimal, InvalidOperation
from typing import Callable, Dict, List, Optional, Tuple

import pyarrow as pa
from pyspark.sql import types as T

from paimon_sql.data import binary_row
from paimon_sql.exceptions import PaimonError, SchemaError
from paimon_sql.io.paths import partition_value_text, shown_partition
from paimon_sql.maintenance.migrate_table import HIVE_DEFAULT_PARTITION
from paimon_sql.options.core_options import redact
from paimon_sql.read.postpone import real_buckets
from paimon_sql.spark.format_table import partition_values
from paimon_sql.spark.types import spark_fields, type_names
from paimon_sql.sql import parse
from paimon_sql.sql.catalog_views import describe_rows, target
from paimon_sql.sql.parse import CATALOG
from paimon_sql.systables import SystemTable
from paimon_sql.table.format_table import FormatTable
from paimon_sql.table.statistics import read_statistics

INTERNAL_VIEW = "__paimon_"
_IDENT = r"`(?:[^`]|``)+`|[\w$]+"
_TABLE = rf"(?:{_IDENT})(?:\.(?:{_IDENT}))*"
STRING = r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\""
_IN_DB = rf"(?:\s+(?:IN|FROM)\s+(?P<db>{_IDENT}))?"
_LIKE = rf"(?:\s+(?:LIKE\s+)?(?P<pattern>{STRING}))?"
_SPEC = r"(?:\s+PARTITION\s*\((?P<spec>.*)\))?"


# -- Spark's names and shapes ------------------------------------------------------------------

_ARROW = {"STRING": pa.string(), "BOOLEAN": pa.bool_()}


def _frame(session, rows: List[tuple], columns: str):
    """Rows under Spark's column names and types (``columns``: ``name TYPE, ...``), handed to Spark
    as Arrow: a local relation that needs no Python worker to collect."""
    schema = pa.schema([(name, _ARROW[kind]) for name, kind in (c.split() for c in columns.split(","))])
    return session.spark.createDataFrame(pa.Table.from_pylist([dict(zip(schema.names, r)) for r in rows], schema))


def _unquote(name: str) -> str:
    return name[1:-1].replace("``", "`") if name.startswith("`") else name


def string_literal(literal: str) -> str:
    return re.sub(r"\\(.)", r"\1", literal[1:-1])


def matches(pattern: Optional[str], name: str) -> bool:
    """Spark's rule for SHOW ... LIKE: alternatives split at ``|``, ``*`` any characters, the rest a
    regular expression matched whole and ignoring case (an invalid one matches nothing)."""
    if pattern is None:
        return True
    for alternative in pattern.strip().split("|"):
        try:
            if re.fullmatch(alternative.replace("*", ".*"), name, re.I | re.S):
                return True
        except re.error:
            continue
    return False


def _created(table) -> str:
    """When the table was created (its first schema), as Java's ``Date.toString`` prints it."""
    ids = table.schema_manager.list_ids()
    millis = table.schema_manager.schema(ids[0]).time_millis if ids else 0
    return time.strftime("%a %b %d %H:%M:%S %Z %Y", time.localtime(millis / 1000))


def properties(table) -> Dict[str, str]:
    """The table's properties as paimon-spark shows them: its options, and its primary key."""
    shown = dict(redact(table.schema.options))
    if table.schema.primary_keys:
        shown["primary-key"] = ",".join(table.schema.primary_keys)
    return shown


def _detailed(table) -> List[Tuple[str, str]]:
    """Spark's ``# Detailed Table Information`` pairs of a table."""
    db, _, name = table.name.rpartition(".")
    rows = [("Catalog", CATALOG), ("Database", db), ("Table", name), ("Created Time", _created(table)),
            ("Last Access", "UNKNOWN"), ("Type", "MANAGED"), ("Provider", "paimon")]
    if table.schema.comment:
        rows.append(("Comment", table.schema.comment))
    shown = properties(table)
    if shown:
        rows.append(("Table Properties", "[" + ", ".join(f"{k}={v}" for k, v in sorted(shown.items())) + "]"))
    return rows + [("Location", table.path)]


def _tree(fields) -> str:
    """Spark's ``printSchema`` text of the columns."""
    return T.StructType(spark_fields(fields)).treeString()


# -- database listings --------------------------------------------------------------------------

def _database(session, written: Optional[str]) -> Tuple[str, Optional[str], bool]:
    """(the name as listed, the warehouse database it means or None, whether Spark has it)."""
    name = _unquote(written) if written else session.current_database
    return name, session.database_name(name), session.spark.catalog.databaseExists(name)


def _spark_listing(session, what: str, name: str, in_spark: bool, pattern: Optional[str]) -> List[tuple]:
    """What Spark lists (``what``: TABLES, VIEWS, TABLE EXTENDED) in database ``name`` — when Spark
    lacks it, the temporary views only — less the front layer's internal views."""
    like = "" if pattern is None else " LIKE '" + pattern.replace("\\", "\\\\").replace("'", "\\'") + "'"
    db = name if in_spark else "default"
    rows = [tuple(r) for r in session.spark_sql(f"SHOW {what} IN `{db.replace('`', '``')}`{like}").collect()]
    return [r for r in rows if (in_spark or r[2]) and not r[1].startswith(INTERNAL_VIEW)]


def _merged(spark_rows: List[tuple], ours: List[tuple]) -> List[tuple]:
    """The database's own objects (Spark's and the warehouse's) by name, then the temporary views."""
    names = {r[1] for r in ours}
    own = sorted([r for r in spark_rows if not r[2] and r[1] not in names] + ours, key=lambda r: r[1])
    return own + [r for r in spark_rows if r[2]]


def _listing(session, m, what: str, columns: str, extra: Callable = None):
    """A database's listing: the warehouse's tables matching the pattern (each row ``namespace,
    name, False`` and ``extra(table)`` when given) merged with Spark's."""
    name, db, in_spark = _database(session, m.group("db"))
    if db is None and not in_spark:
        return session.passthrough()
    pattern = string_literal(m.group("pattern")) if m.group("pattern") else None
    names = [t for t in _names(session, db, what) if matches(pattern, t)] if db else []
    ours = [(db, t, False) + ((extra(session.catalog.get_table(f"`{db}`.`{t}`")),) if extra else ()) for t in names]
    return _frame(session, _merged(_spark_listing(session, what, name, in_spark, pattern), ours), columns)


def _names(session, db: str, what: str) -> List[str]:
    """The warehouse's names in ``db`` a listing shows: views for VIEWS, tables and views for
    TABLES, tables for TABLE EXTENDED; in a server session under grants, those the user may read."""
    tables = session.catalog.list_tables(db) if what != "VIEWS" else []
    names = sorted(tables + (session.catalog.list_views(db) if what != "TABLE EXTENDED" else []))
    return names if session.access is None else [n for n in names if session.access.may_read(db, n)]


def show_tables(session, m):
    return _listing(session, m, "TABLES", "namespace STRING, tableName STRING, isTemporary BOOLEAN")


def show_views(session, m):
    """The catalog's views of the database, Spark's, and the temporary ones."""
    return _listing(session, m, "VIEWS", "namespace STRING, viewName STRING, isTemporary BOOLEAN")


def _information(table) -> str:
    lines = [f"{k}: {v}" for k, v in _detailed(table)]
    if table.schema.partition_keys:
        lines.append("Partition Columns: [" + ", ".join(f"`{k}`" for k in table.schema.partition_keys) + "]")
    return "\n".join(lines) + "\nSchema: " + _tree(table.schema.fields) + "\n"


_EXTENDED_COLUMNS = "namespace STRING, tableName STRING, isTemporary BOOLEAN, information STRING"


def show_table_extended(session, m):
    """SHOW TABLE EXTENDED [IN db] LIKE 'pattern' [PARTITION (...)]: with a partition, the pattern
    names one table and the row describes that partition."""
    if m.group("spec") is None:
        return _listing(session, m, "TABLE EXTENDED", _EXTENDED_COLUMNS, _information)
    name = string_literal(m.group("pattern"))
    ref = f"`{_unquote(m.group('db'))}`.`{name}`" if m.group("db") else f"`{name}`"
    table = session.find_table(parse.table_reference(ref))
    if table is None:
        return session.passthrough()
    values = _one_partition(table, m.group("spec"))
    shown = ", ".join(f"{k}={table.paths.default_partition_name if v is None else partition_value_text(v)}"
                      for k, v in values)
    info = (f"Partition Values: [{shown}]\n"
            f"Location: {table.path}/{table.paths.partition_dir([v for _, v in values])}\n"
            f"Created Time: {_created(table)}\nLast Access: UNKNOWN\n")
    db, _, t = table.name.rpartition(".")
    return _frame(session, [(db, t, False, info)], _EXTENDED_COLUMNS)


# -- one table ----------------------------------------------------------------------------------

def _table(session, text: str):
    return session.find_table(parse.table_reference(text))


def show_columns(session, m):
    """SHOW COLUMNS IN t [IN db]: a database given twice must be the same one (as Spark's)."""
    target = parse.table_reference(m.group("table"))
    if m.group("db"):
        db = _unquote(m.group("db"))
        if target.db and target.db.lower() != db.lower():
            raise SchemaError(f"[SHOW_COLUMNS_WITH_CONFLICT_NAMESPACE] SHOW COLUMNS with conflicting namespaces: "
                              f"`{db}` != `{target.db}`")
        target.set("db", parse.table_reference(f"`{db}`.x").args["db"])
    table = session.find_table(target)
    view = _view(session, target) if table is None else None
    if table is None and view is None:
        return session.passthrough()
    names = table.schema.field_names if table is not None else view[1].field_names
    return _frame(session, [(n,) for n in names], "col_name STRING")


def _view(session, node):
    """(identifier, view) of a catalog view a statement names (:mod:`catalog_views`), else None."""
    return target(session, node)


def _quoted(table) -> str:
    """The table's name as Spark's errors quote it: `spark_catalog`.`db`.`t`."""
    return ".".join(f"`{p}`" for p in (CATALOG, *table.name.rsplit(".", 1)))


def _spec(table, text: str) -> Dict[str, str]:
    """``k = v, ...`` of a PARTITION clause as text values; a key must be a partition column."""
    spec = {}
    for key, value in re.findall(rf"({_IDENT})\s*=\s*({STRING}|[^,\s]+)", text):
        key = _unquote(key)
        if key not in table.schema.partition_keys:
            raise SchemaError(f"[PARTITIONS_NOT_FOUND] The partition(s) `{key}` cannot be found in table "
                              f"{_quoted(table)}.")
        spec[key] = string_literal(value) if value[0] in "'\"" else value
    return spec


def _partitions(table) -> List[List[Tuple[str, object]]]:
    """The partitions holding live files, each as (key, value) pairs, in key order."""
    keys = table.schema.partition_keys
    if isinstance(table, FormatTable):  # its k=v/ directories, values as their names say
        return [list(zip(keys, values)) for values in partition_values(table)]
    types = [f.type for f in table.schema.fields_of(keys)]
    seen = {e.partition for e in real_buckets(table, table.new_scan().plan_entries())}
    return sorted((list(zip(keys, binary_row.from_bytes(p, types))) for p in seen),
                  key=lambda kv: [partition_value_text(v) if v is not None else "" for _, v in kv])


def _selected(table, text: Optional[str]) -> List[List[Tuple[str, object]]]:
    if not table.schema.partition_keys:
        raise SchemaError(f"[INVALID_PARTITION_OPERATION.PARTITION_SCHEMA_IS_EMPTY] The partition command is "
                          f"invalid. Table {_quoted(table)} is not partitioned.")
    spec = _spec(table, text) if text else {}
    return [kv for kv in _partitions(table) if all(_is(v, spec[k]) for k, v in kv if k in spec)]


def _is(value, text: str) -> bool:
    """Whether a partition value is a spec's literal, compared as Spark compares them: as numbers
    for a numeric column (``h = 01`` is h 1), as text otherwise."""
    if value is None:
        return False
    if isinstance(value, (int, float, Decimal)) and not isinstance(value, bool):
        try:
            return Decimal(text) == Decimal(str(value))
        except InvalidOperation:
            return False
    return partition_value_text(value) == text


def _one_partition(table, text: str) -> List[Tuple[str, object]]:
    found = _selected(table, text)
    if len(found) != 1 or len(_spec(table, text)) != len(table.schema.partition_keys):
        raise PaimonError(f"[PARTITIONS_NOT_FOUND] The partition(s) PARTITION ({text.strip()}) cannot be found "
                          f"in table {CATALOG}.{table.name}")
    return found[0]


def show_partitions(session, m):
    """SHOW PARTITIONS t [PARTITION (k=v)]: ``k=v/k2=v2`` per partition with live files."""
    table = _table(session, m.group("table"))
    if table is None:
        return session.passthrough()
    keys = table.schema.partition_keys
    default = HIVE_DEFAULT_PARTITION if isinstance(table, FormatTable) else table.paths.default_partition_name
    rows = [(shown_partition(keys, [v for _, v in kv], default),) for kv in _selected(table, m.group("spec"))]
    return _frame(session, rows, "partition STRING")


def show_tblproperties(session, m):
    """``SHOW TBLPROPERTIES t [('key')]``: (key, value) rows sorted by key, as Spark prints them."""
    table = _table(session, m.group("table"))
    view = _view(session, parse.table_reference(m.group("table"))) if table is None else None
    if table is None and view is None:
        return session.passthrough()
    shown = properties(table) if table is not None else dict(redact(view[1].options))
    name = table.name if table is not None else str(view[0])
    key = m.group("key")
    if key:
        key = string_literal(key) if key[0] in "'\"" else _unquote(key)
        shown = {key: shown.get(key, f"Table {CATALOG}.{name} does not have property: {key}")}
    return _frame(session, sorted(shown.items()), "key STRING, value STRING")


PATTERNS = [
    (re.compile(rf"TABLES{_IN_DB}{_LIKE}", re.I | re.S), show_tables),
    (re.compile(rf"VIEWS{_IN_DB}{_LIKE}", re.I | re.S), show_views),
    (re.compile(rf"TABLE\s+EXTENDED{_IN_DB}\s+LIKE\s+(?P<pattern>{STRING}){_SPEC}", re.I | re.S),
     show_table_extended),
    (re.compile(rf"COLUMNS\s+(?:IN|FROM)\s+(?P<table>{_TABLE}){_IN_DB}", re.I | re.S), show_columns),
    (re.compile(rf"PARTITIONS\s+(?P<table>{_TABLE}){_SPEC}", re.I | re.S), show_partitions),
    (re.compile(rf"TBLPROPERTIES\s+(?P<table>{_TABLE})(?:\s*\(\s*(?P<key>{STRING}|{_IDENT})\s*\))?", re.I | re.S),
     show_tblproperties),
]


# -- DESCRIBE -----------------------------------------------------------------------------------

_DESCRIBE_COLUMNS = "col_name STRING, data_type STRING, comment STRING"
_INFO_COLUMNS = "info_name STRING, info_value STRING"


def describe(session, node, ref):
    """DESCRIBE [EXTENDED] of a table, branch (``t$branch_b``) or system table (``t$files``); with
    a column (``DESCRIBE t c``), that column."""
    column = next(iter(node.args.get("expressions") or []), None)
    if column is not None:
        return describe_column(session, node, ref, column)
    if isinstance(ref, SystemTable):  # its columns only
        return _frame(session, _column_rows(ref.fields), _DESCRIBE_COLUMNS)
    s = ref.schema
    rows = _column_rows(s.fields)
    if s.partition_keys:
        rows += [("# Partition Information", "", ""), ("# col_name", "data_type", "comment")]
        by_name = {r[0]: r for r in rows}
        rows += [by_name[k] for k in s.partition_keys]
    if (node.args.get("style") or "").upper() in ("EXTENDED", "FORMATTED"):
        rows += [("", "", ""), ("# Detailed Table Information", "", "")] + [(k, v, "") for k, v in _detailed(ref)]
        rows += [("", "", ""), ("# Paimon table", "", ""), ("Primary keys", ", ".join(s.primary_keys), ""),
                 ("Partition keys", ", ".join(s.partition_keys), "")]
        rows += [(f"Option {k}", v, "") for k, v in sorted(redact(s.options).items())]
    return _frame(session, rows, _DESCRIBE_COLUMNS)


def describe_view(session, node, ident, view):
    """DESCRIBE [EXTENDED] of a catalog view (:func:`catalog_views.describe_rows`)."""
    extended = (node.args.get("style") or "").upper() in ("EXTENDED", "FORMATTED")
    return _frame(session, describe_rows(ident, view, extended), _DESCRIBE_COLUMNS)


def _column_rows(fields) -> List[tuple]:
    return [(f.name, t, f.description) for f, t in zip(fields, type_names(fields))]


_STATS = [("min", "min"), ("max", "max"), ("num_nulls", "nullCount"), ("distinct_count", "distinctCount"),
          ("avg_col_len", "avgLen"), ("max_col_len", "maxLen"), ("histogram", None)]


def describe_column(session, node, ref, column):
    """DESCRIBE [EXTENDED] t c: Spark's info rows; EXTENDED adds the column's statistics from the
    latest ANALYZE (``NULL`` where there are none). Nested columns are refused, as Spark refuses."""
    path = [p.name for p in column.parts] if hasattr(column, "parts") else [column.name]
    if len(path) > 1:
        raise SchemaError(f"DESC TABLE COLUMN does not support nested column: {'.'.join(path)}.")
    fields = {f.name.lower(): f for f in ref.fields} if isinstance(ref, SystemTable) else \
        {f.name.lower(): f for f in ref.schema.fields}
    f = fields.get(path[0].lower())
    if f is None:
        raise SchemaError(f"[COLUMN_NOT_FOUND] The column `{path[0]}` cannot be found.")
    rows = [("col_name", f.name), ("data_type", type_names([f])[0]), ("comment", f.description or "NULL")]
    if (node.args.get("style") or "").upper() in ("EXTENDED", "FORMATTED"):
        stats = {} if isinstance(ref, SystemTable) else \
            ((read_statistics(ref, ref.snapshot_manager.latest()) or {}).get("colStats") or {}).get(f.name, {})
        rows += [(name, "NULL" if key is None or stats.get(key) is None else str(stats[key])) for name, key in _STATS]
    return _frame(session, rows, _INFO_COLUMNS)


_RESERVED = ("comment", "location", "owner")


def describe_database(session, node):
    """DESCRIBE DATABASE [EXTENDED] db: Spark's rows; EXTENDED adds the properties ALTER DATABASE set."""
    db = session.database_name(node.this.name)
    if db is None:
        return session.passthrough()
    props = session.catalog.database_properties(db)
    rows = [("Catalog Name", CATALOG), ("Namespace Name", db), ("Comment", props.get("comment", "")),
            ("Location", session.catalog.database_path(db)), ("Owner", props.get("owner", ""))]
    if (node.args.get("style") or "").upper() == "EXTENDED":
        rest = sorted((k, v) for k, v in redact(props).items() if k not in _RESERVED)
        rows.append(("Properties", "(" + ", ".join(f"({k},{v})" for k, v in rest) + ")" if rest else ""))
    return _frame(session, rows, _INFO_COLUMNS)


def reserved_property(key: str) -> Optional[str]:
    """Spark's error for setting a reserved database property by DBPROPERTIES (None for others)."""
    if key.lower() in _RESERVED:
        clause = {"comment": "the COMMENT clause", "location": "the LOCATION clause", "owner": "ALTER ... OWNER"}
        return (f"[UNSUPPORTED_FEATURE.SET_NAMESPACE_PROPERTY] The feature is not supported: {key} is a reserved "
                f"namespace property, please use {clause[key.lower()]} to specify it.")
    return None
