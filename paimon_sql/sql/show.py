"""SHOW on Paimon tables and warehouse databases, answered as paimon-spark answers them (its v2
shapes; :mod:`describe` has the table's properties and details they share): the same columns,
Spark's type names, the same row shapes (``k=v/k2=v2`` partitions, SHOW TABLE EXTENDED's text).

A database's listings (SHOW TABLES, SHOW VIEWS, SHOW TABLE EXTENDED) merge the warehouse's tables
and views (SHOW TABLES lists both, as Spark lists its session catalog's) with what Spark lists for
the same name — its own tables there, and (SHOW TABLE EXTENDED only, as paimon-spark) the
session's temporary views — less the front layer's internal views (``__paimon_*``).
A statement about something neither the warehouse nor Spark has goes to Spark for its error.
Options shown have their secret values masked (:func:`redact`).
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation
from typing import Callable, Dict, List, Optional, Tuple

from paimon_sql.data import binary_row
from paimon_sql.exceptions import PaimonError, SchemaError
from paimon_sql.io.paths import partition_value_text, shown_partition
from paimon_sql.maintenance.migrate_table import HIVE_DEFAULT_PARTITION
from paimon_sql.options.core_options import redact
from paimon_sql.read.postpone import real_buckets
from paimon_sql.spark.format_table import partition_values
from paimon_sql.sql import describe, parse
from paimon_sql.sql.catalog_views import target
from paimon_sql.sql.describe import frame
from paimon_sql.sql.parse import CATALOG
from paimon_sql.table.format_table import FormatTable

INTERNAL_VIEW = "__paimon_"
_IDENT = r"`(?:[^`]|``)+`|[\w$]+"
_TABLE = rf"(?:{_IDENT})(?:\.(?:{_IDENT}))*"
STRING = r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\""
_IN_DB = rf"(?:\s+(?:IN|FROM)\s+(?P<db>{_IDENT}))?"
_LIKE = rf"(?:\s+(?:LIKE\s+)?(?P<pattern>{STRING}))?"
_SPEC = r"(?:\s+PARTITION\s*\((?P<spec>.*)\))?"


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


# -- database listings --------------------------------------------------------------------------

def _database(session, written: Optional[str]) -> Tuple[str, Optional[str], bool]:
    """(the name as listed, the warehouse database it means or None, whether Spark has it)."""
    name = _unquote(written) if written else session.current_database
    return name, session.database_name(name), session.spark.catalog.databaseExists(name)


def _spark_listing(session, what: str, name: str, in_spark: bool, pattern: Optional[str]) -> List[tuple]:
    """What Spark lists (``what``: TABLES, VIEWS, TABLE EXTENDED) in database ``name`` — when Spark
    lacks it, the temporary views only — less the front layer's internal views. SHOW TABLES and
    SHOW VIEWS of a warehouse database list no temporary views, as paimon-spark's catalog lists
    none (SHOW TABLE EXTENDED does, as there)."""
    temporary = what == "TABLE EXTENDED" or session.database_name(name) is None
    if not in_spark and not temporary:
        return []
    like = "" if pattern is None else " LIKE '" + pattern.replace("\\", "\\\\").replace("'", "\\'") + "'"
    db = name if in_spark else "default"
    rows = [tuple(r) for r in session.spark_sql(f"SHOW {what} IN `{db.replace('`', '``')}`{like}").collect()]
    return [r for r in rows if (in_spark or r[2]) and (temporary or not r[2]) and not r[1].startswith(INTERNAL_VIEW)]


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
    return frame(session, _merged(_spark_listing(session, what, name, in_spark, pattern), ours), columns)


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


_EXTENDED_COLUMNS = "namespace STRING, tableName STRING, isTemporary BOOLEAN, information STRING"


def show_table_extended(session, m):
    """SHOW TABLE EXTENDED [IN db] LIKE 'pattern' [PARTITION (...)]: with a partition, the pattern
    names one table and the row describes that partition."""
    if m.group("spec") is None:
        return _listing(session, m, "TABLE EXTENDED", _EXTENDED_COLUMNS, describe.information)
    name = string_literal(m.group("pattern"))
    ref = f"`{_unquote(m.group('db'))}`.`{name}`" if m.group("db") else f"`{name}`"
    table = session.find_table(parse.table_reference(ref))
    if table is None:
        return session.passthrough()
    values = _one_partition(table, m.group("spec"))
    shown = ", ".join(f"{k}={table.paths.default_partition_name if v is None else partition_value_text(v)}"
                      for k, v in values)
    info = f"Partition Values: [{shown}]\n" + _partition_parameters(table, dict(values))
    db, _, t = table.name.rpartition(".")
    return frame(session, [(db, t, False, info)], _EXTENDED_COLUMNS)


def _partition_parameters(table, values: Dict[str, object]) -> str:
    """A partition's live files as paimon-spark's loadPartitionMetadata counts them, in SHOW TABLE
    EXTENDED's lines (a format table's directories have none)."""
    if isinstance(table, FormatTable):
        return ""
    keys = table.schema.partition_keys
    types = [f.type for f in table.schema.fields_of(keys)]
    files = [e.file for e in table.new_scan().plan_entries()
             if dict(zip(keys, binary_row.from_bytes(e.partition, types))) == values]
    records, size = sum(f.row_count for f in files), sum(f.file_size for f in files)
    last = max(int(f.creation_time.timestamp() * 1000) for f in files)
    return (f"Partition Parameters: {{recordCount={records}, fileSizeInBytes={size}, fileCount={len(files)}, "
            f"lastFileCreationTime={last}}}\nPartition Statistics: {records} rows, {size} bytes\n")


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
    if table is None:  # a view: Spark's column name
        return frame(session, [(n,) for n in view[1].field_names], "col_name STRING")
    return frame(session, [(n,) for n in table.schema.field_names], "column STRING")  # paimon-spark's


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
    return frame(session, rows, "partition STRING")


def show_tblproperties(session, m):
    """``SHOW TBLPROPERTIES t [('key')]``: (key, value) rows sorted by key, as Spark prints them."""
    table = _table(session, m.group("table"))
    view = _view(session, parse.table_reference(m.group("table"))) if table is None else None
    if table is None and view is None:
        return session.passthrough()
    shown = describe.shown_properties(table) if table is not None else dict(redact(view[1].options))
    name = table.name if table is not None else str(view[0])
    key = m.group("key")
    if key:
        key = string_literal(key) if key[0] in "'\"" else _unquote(key)
        shown = {key: shown.get(key, f"Table {CATALOG}.{name} does not have property: {key}")}
    return frame(session, sorted(shown.items()), "key STRING, value STRING")


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
