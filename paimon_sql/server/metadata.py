"""HiveServer2's metadata calls (GetTables, GetColumns, ...) for JDBC/ODBC drivers and BI tools.

Each call is one function ``(session, req) -> pyarrow.Table`` whose columns are the result set
HiveServer2 defines for it, names and order as in Hive's ``Get*Operation`` (the service serves the
table as any query's rows). What they list is what the client's SQL sees: the warehouse's
databases and Paimon tables (read from the catalog: names, schemas, comments, primary keys; never
data), and Spark's own tables, views and temporary views, as Spark's Thrift Server lists them.

Table types: ``TABLE`` for Paimon tables and Spark's tables, ``VIEW`` for the catalog's views
(their columns and comment as stored), Spark's views and temporary views (a local temporary view has no schema, as in Spark's Thrift Server), and ``SYSTEM TABLE``
for Paimon's system tables (``t$snapshots``, ``sys.all_table_options``), which are listed only
when a client asks for that type (there are ~20 per table: a BI tool's table list would drown).
GetColumns answers for system tables when the table pattern holds a ``$`` or the schema is ``sys``.

Patterns are read as Spark's Thrift Server reads them: JDBC's ``%`` any characters and ``_`` one
(``\\%``, ``\\_`` themselves), ``*`` any characters too, and the rest a regular expression (``|``
alternatives; impyla sends ``.*``), except ``$``, which stands for itself (``t$snapshots``). Names
match whole, ignoring case; an empty or null schema pattern means every schema, a null table or
column pattern every table or column, an invalid pattern nothing.
"""

from __future__ import annotations

import re
from typing import Callable, Iterator, List, NamedTuple, Optional, Sequence

import pyarrow as pa
from pyspark.sql import DataFrame
from pyspark.sql import types as T

from paimon_sql.catalog.base import SYSTEM_TABLE_SPLITTER, Identifier
from paimon_sql.data.types import MAX_LENGTH, AtomicType
from paimon_sql.spark.types import spark_ddl
from paimon_sql.sql.show import INTERNAL_VIEW
from paimon_sql.sql.views import GLOBAL_TEMP
from paimon_sql.systables import GLOBAL_TABLES, SYSTEM_TABLES

SYSTEM_DATABASE = "sys"  # Paimon's database of catalog-wide system tables
TABLE, VIEW, SYSTEM_TABLE = "TABLE", "VIEW", "SYSTEM TABLE"
TABLE_TYPES = (TABLE, VIEW, SYSTEM_TABLE)

_ARROW = {"string": pa.string(), "int": pa.int32(), "smallint": pa.int16(), "tinyint": pa.int8(),
          "boolean": pa.bool_()}


def _schema(spec: str) -> pa.Schema:
    """``"NAME type, ..."`` (types as Hive's result-set schema declares them) as an Arrow schema."""
    return pa.schema([(name, _ARROW[kind]) for name, kind in (c.split() for c in spec.split(","))])


CATALOGS = _schema("TABLE_CAT string")
SCHEMAS = _schema("TABLE_SCHEM string, TABLE_CATALOG string")
TABLES = _schema("TABLE_CAT string, TABLE_SCHEM string, TABLE_NAME string, TABLE_TYPE string, REMARKS string, "
                 "TYPE_CAT string, TYPE_SCHEM string, TYPE_NAME string, SELF_REFERENCING_COL_NAME string, "
                 "REF_GENERATION string")
TABLE_TYPE = _schema("TABLE_TYPE string")
COLUMNS = _schema("TABLE_CAT string, TABLE_SCHEM string, TABLE_NAME string, COLUMN_NAME string, DATA_TYPE int, "
                  "TYPE_NAME string, COLUMN_SIZE int, BUFFER_LENGTH tinyint, DECIMAL_DIGITS int, NUM_PREC_RADIX int, "
                  "NULLABLE int, REMARKS string, COLUMN_DEF string, SQL_DATA_TYPE int, SQL_DATETIME_SUB int, "
                  "CHAR_OCTET_LENGTH int, ORDINAL_POSITION int, IS_NULLABLE string, SCOPE_CATALOG string, "
                  "SCOPE_SCHEMA string, SCOPE_TABLE string, SOURCE_DATA_TYPE smallint, IS_AUTO_INCREMENT string")
TYPE_INFO = _schema("TYPE_NAME string, DATA_TYPE int, PRECISION int, LITERAL_PREFIX string, LITERAL_SUFFIX string, "
                    "CREATE_PARAMS string, NULLABLE smallint, CASE_SENSITIVE boolean, SEARCHABLE smallint, "
                    "UNSIGNED_ATTRIBUTE boolean, FIXED_PREC_SCALE boolean, AUTO_INCREMENT boolean, "
                    "LOCAL_TYPE_NAME string, MINIMUM_SCALE smallint, MAXIMUM_SCALE smallint, SQL_DATA_TYPE int, "
                    "SQL_DATETIME_SUB int, NUM_PREC_RADIX int")
FUNCTIONS = _schema("FUNCTION_CAT string, FUNCTION_SCHEM string, FUNCTION_NAME string, REMARKS string, "
                    "FUNCTION_TYPE int, SPECIFIC_NAME string")
PRIMARY_KEYS = _schema("TABLE_CAT string, TABLE_SCHEM string, TABLE_NAME string, COLUMN_NAME string, KEY_SEQ int, "
                       "PK_NAME string")
# KEQ_SEQ (sic): HiveServer2's (and Spark's Thrift Server's) name for the column JDBC calls KEY_SEQ
CROSS_REFERENCE = _schema("PKTABLE_CAT string, PKTABLE_SCHEM string, PKTABLE_NAME string, PKCOLUMN_NAME string, "
                          "FKTABLE_CAT string, FKTABLE_SCHEM string, FKTABLE_NAME string, FKCOLUMN_NAME string, "
                          "KEQ_SEQ int, UPDATE_RULE int, DELETE_RULE int, FK_NAME string, PK_NAME string, "
                          "DEFERRABILITY int")

CATALOG = ""  # HiveServer2's catalog name in TABLE_CAT (it has no catalogs: GetCatalogs lists none)


def _rows(schema: pa.Schema, rows: Sequence[tuple]) -> pa.Table:
    columns = list(zip(*rows)) if rows else [()] * len(schema)
    return pa.table([pa.array(c, f.type) for c, f in zip(columns, schema)], schema=schema)


# -- JDBC search patterns ----------------------------------------------------------------------

def _translate(text: str, any_chars: str, literal: Callable[[str], str]) -> str:
    """A HiveServer2 search pattern in a regular-expression dialect: ``%`` and ``*`` any characters,
    ``_`` one, ``\\%`` and ``\\_`` themselves, ``$`` itself (it joins a table and its system
    table); the rest is a regular expression, as in Spark's Thrift Server."""
    def token(escaped: str, char: str) -> str:
        if escaped:
            return literal(escaped[1]) if escaped[1] in "%_" else escaped
        return any_chars if char in "%*" else "." if char == "_" else literal(char) if char == "$" else char
    return "".join(token(*t) for t in re.findall(r"(\\.)|(.)", text, re.S))


_NOTHING = re.compile(r"(?!)")


def search_pattern(text: Optional[str], empty_is_all: bool = False) -> re.Pattern:
    """A search pattern as a regular expression matched whole, ignoring case; None (and for schemas,
    as HiveServer2 reads them, the empty pattern) matches everything, an invalid one nothing."""
    if text is None or empty_is_all and text == "":
        return re.compile(".*", re.S)
    try:
        return re.compile(f"(?:{_translate(text, '.*', re.escape)})", re.S | re.I)
    except re.error:
        return _NOTHING


def _matching(pattern: re.Pattern, names) -> List[str]:
    return [n for n in names if pattern.fullmatch(n)]


# -- what the session sees ---------------------------------------------------------------------

class Column(NamedTuple):
    name: str
    type: T.DataType
    nullable: bool
    comment: Optional[str]


class Relation(NamedTuple):
    """One row of GetTables; ``columns()`` loads its schema (GetColumns) only when asked."""
    schema: Optional[str]
    name: str
    type: str
    remarks: str
    columns: Callable[[], List[Column]]


def _warehouse_databases(session, pattern: re.Pattern) -> List[str]:
    return _matching(pattern, session.catalog.list_databases())


def _spark_databases(session, pattern: re.Pattern) -> List[str]:
    return _matching(pattern, [d.name() for d in _listed(session, "listDatabases")])


def _listed(session, method: str, *args) -> list:
    """A listing of Spark's catalog collected in the JVM: PySpark's ``spark.catalog.list*`` read
    it with ``toLocalIterator``, a Spark job per listing, which waits for a free core while other
    clients' queries hold them all."""
    return list(getattr(session.spark._jsparkSession.catalog(), method)(*args).collectAsList())


def _paimon_columns(fields) -> List[Column]:
    """The columns as Spark reads them (one parse of their DDL by Spark); CHAR(n) and VARCHAR(n)
    keep their length, as DESCRIBE shows them."""
    parsed = T.DataType.fromDDL(spark_ddl(fields)).fields if fields else []
    return [Column(f.name, _sized_text(f.type) or p.dataType, f.type.nullable, f.description)
            for f, p in zip(fields, parsed)]


def _sized_text(t) -> Optional[T.DataType]:
    if isinstance(t, AtomicType) and t.name == "CHAR":
        return T.CharType(t.args[0])
    if isinstance(t, AtomicType) and t.name == "VARCHAR" and t.args != (MAX_LENGTH,):
        return T.VarcharType(t.args[0])
    return None


def _tables_of(session, db: str) -> List[str]:
    """The Paimon tables of ``db``; none when another client dropped it since it was listed."""
    try:
        return session.catalog.list_tables(db)
    except LookupError:
        return []


def _loaded(session, db: str, names: List[str]) -> Iterator[tuple]:
    """(name, table) of the tables named, each loaded (its latest schema), less those dropped since
    they were listed."""
    for name in names:
        try:
            yield name, session.catalog.get_table(Identifier(db, name))
        except LookupError:
            continue


def _paimon_tables(session, db: str, pattern: re.Pattern) -> Iterator[Relation]:
    for name, table in _loaded(session, db, _matching(pattern, _tables_of(session, db))):
        yield Relation(db, name, TABLE, table.schema.comment or "",
                       lambda fields=table.schema.fields: _paimon_columns(fields))


def _views_of(session, db: str) -> List[str]:
    """The catalog's views of ``db``; none when another client dropped it since it was listed."""
    try:
        return session.catalog.list_views(db)
    except LookupError:
        return []


def _paimon_views(session, db: str, names: List[str], pattern: re.Pattern) -> Iterator[Relation]:
    for name in _matching(pattern, names):
        try:
            view = session.catalog.get_view(Identifier(db, name))
        except LookupError:
            continue
        yield Relation(db, name, VIEW, view.comment or "", lambda fields=view.fields: _paimon_columns(fields))


def _system_tables(session, db: str, pattern: re.Pattern) -> Iterator[Relation]:
    """``t$name`` of every Paimon table of ``db`` matching ``pattern``, less those the table has not
    (``$row_tracking`` of a table without row tracking)."""
    names = _tables_of(session, db)
    wanted = [t for t in names if any(pattern.fullmatch(f"{t}{SYSTEM_TABLE_SPLITTER}{n}") for n in SYSTEM_TABLES)]
    for name, table in _loaded(session, db, wanted):
        for kind in sorted(SYSTEM_TABLES):
            full = f"{name}{SYSTEM_TABLE_SPLITTER}{kind}"
            if pattern.fullmatch(full) and SYSTEM_TABLES[kind].supports(table):
                system = SYSTEM_TABLES[kind](table)
                yield Relation(db, full, SYSTEM_TABLE, "", lambda s=system: _paimon_columns(s.fields))


def _global_system_tables(session, pattern: re.Pattern) -> Iterator[Relation]:
    for name in _matching(pattern, sorted(n for n, cls in GLOBAL_TABLES.items() if cls.supports(session.catalog))):
        system = GLOBAL_TABLES[name](session.catalog)
        yield Relation(SYSTEM_DATABASE, name, SYSTEM_TABLE, "", lambda s=system: _paimon_columns(s.fields))


def _quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def _spark_columns(session, name: str, db: Optional[str]) -> List[Column]:
    """A Spark table's or view's columns (a qualified name: Spark 4 finds ``global_temp``'s views
    only that way)."""
    cols = [(c.name(), c.dataType(), c.nullable(), c.description())
            for c in _listed(session, "listColumns", f"{_quote(db)}.{_quote(name)}" if db else _quote(name))]
    if not cols:
        return []
    parsed = T.DataType.fromDDL(", ".join(f"{_quote(n)} {t}" for n, t, _, _ in cols)).fields
    return [Column(n, p.dataType, nullable, remarks) for (n, _, nullable, remarks), p in zip(cols, parsed)]


def _spark_tables(session, db: str, pattern: re.Pattern, shadowed: set) -> Iterator[Relation]:
    """Spark's own tables and views of database ``db`` (not its temporary views), less those a
    warehouse table of the same name hides and the front layer's internal views."""
    for t in _listed(session, "listTables", db):
        name = t.name()
        if t.isTemporary() or name in shadowed or name.startswith(INTERNAL_VIEW) or not pattern.fullmatch(name):
            continue
        yield Relation(db, name, VIEW if t.tableType() == "VIEW" else TABLE, t.description() or "",
                       lambda name=name: _spark_columns(session, name, db))


def _temporary_views(session, schema_pattern: re.Pattern, pattern: re.Pattern) -> Iterator[Relation]:
    """Global temporary views (in ``global_temp``, when the schema pattern matches it) and the
    session's local ones (no schema), as Spark's Thrift Server lists them."""
    rows = session.spark_sql(f"SHOW VIEWS IN `{GLOBAL_TEMP}`").collect()
    for namespace, name, _ in rows:
        if name.startswith(INTERNAL_VIEW) or not pattern.fullmatch(name):
            continue
        if namespace and not schema_pattern.fullmatch(namespace):
            continue
        schema = namespace or None
        yield Relation(schema, name, VIEW, "", lambda n=name, s=schema: _spark_columns(session, n, s))


def relations(session, schema_text: Optional[str], table_text: Optional[str],
              types: Sequence[str] = (TABLE, VIEW)) -> Iterator[Relation]:
    """Everything GetTables lists for these patterns and types, database by database: the
    warehouse's (each with Spark's tables and views of the same name, when Spark has it), then
    ``sys`` and the temporary views; under a policy file, only those the user may read."""
    found = _relations(session, schema_text, table_text, types)
    return found if session.access is None else (r for r in found if session.access.may_read(r.schema, r.name))


def _relations(session, schema_text: Optional[str], table_text: Optional[str],
               types: Sequence[str]) -> Iterator[Relation]:
    schemas, tables = search_pattern(schema_text, empty_is_all=True), search_pattern(table_text)
    spark_dbs = {d.lower() for d in _spark_databases(session, schemas)}  # Spark lower-cases its names
    for db in _warehouse_databases(session, schemas):
        ours, views = _tables_of(session, db), _views_of(session, db)
        if TABLE in types:
            yield from _paimon_tables(session, db, tables)
        if db.lower() in spark_dbs:
            yield from (r for r in _spark_tables(session, db, tables, set(ours) | set(views)) if r.type in types)
        if VIEW in types:
            yield from _paimon_views(session, db, views, tables)
        if SYSTEM_TABLE in types:
            yield from _system_tables(session, db, tables)
    if SYSTEM_TABLE in types and schemas.fullmatch(SYSTEM_DATABASE):
        yield from _global_system_tables(session, tables)
    if VIEW in types:
        yield from _temporary_views(session, schemas, tables)


# -- JDBC's view of Spark types (as Spark's Thrift Server answers GetColumns) ------------------

_JDBC = [  # (Spark type, java.sql.Types code); the first match wins
    (T.NullType, 0), (T.BooleanType, 16), (T.ByteType, -6), (T.ShortType, 5), (T.IntegerType, 4),
    (T.LongType, -5), (T.FloatType, 6), (T.DoubleType, 8), (T.DecimalType, 3), (T.CharType, 1),
    (T.VarcharType, 12), (T.StringType, 12), (T.BinaryType, -2), (T.DateType, 91), (T.TimestampType, 93),
    (T.TimestampNTZType, 93), (T.ArrayType, 2003), (T.MapType, 2000), (T.StructType, 2002),
]
_OTHER = 1111
_SIZE = {T.BooleanType: 1, T.ByteType: 1, T.ShortType: 2, T.IntegerType: 4, T.LongType: 8, T.FloatType: 4,
         T.DoubleType: 8, T.DateType: 4, T.TimestampType: 8, T.TimestampNTZType: 8, T.NullType: 1,
         T.CalendarIntervalType: 16, T.DayTimeIntervalType: 8, T.YearMonthIntervalType: 4}
_DIGITS = {T.BooleanType: 0, T.ByteType: 0, T.ShortType: 0, T.IntegerType: 0, T.LongType: 0, T.FloatType: 7,
           T.DoubleType: 15, T.TimestampType: 6, T.TimestampNTZType: 6}


def jdbc_type(t: T.DataType) -> int:
    return next((code for cls, code in _JDBC if isinstance(t, cls)), _OTHER)


def column_size(t: T.DataType) -> Optional[int]:
    """Spark's Thrift Server's COLUMN_SIZE (the type's default size for numbers and datetimes),
    except a DECIMAL's, which is its precision as JDBC defines it; CHAR/VARCHAR their length."""
    if isinstance(t, T.DecimalType):
        return t.precision
    if isinstance(t, (T.CharType, T.VarcharType)):
        return t.length
    if isinstance(t, T.StructType):
        sizes = [column_size(f.dataType) for f in t.fields]
        return None if None in sizes else sum(sizes)
    return _SIZE.get(type(t))


def decimal_digits(t: T.DataType) -> Optional[int]:
    return t.scale if isinstance(t, T.DecimalType) else _DIGITS.get(type(t))


def _radix(t: T.DataType) -> Optional[int]:
    return 10 if isinstance(t, T.NumericType) else None


_PLAIN_NAME = re.compile(r"[A-Za-z0-9_]+")


def type_name(t: T.DataType) -> str:
    """Spark's ``DataType.sql``: ``INT``, ``DECIMAL(10,2)``, ``ARRAY<INT>``, ``STRUCT<a: INT>``."""
    if isinstance(t, T.ArrayType):
        return f"ARRAY<{type_name(t.elementType)}>"
    if isinstance(t, T.MapType):
        return f"MAP<{type_name(t.keyType)}, {type_name(t.valueType)}>"
    if isinstance(t, T.StructType):
        return "STRUCT<" + ", ".join(f"{_quote_if_needed(f.name)}: {type_name(f.dataType)}" for f in t.fields) + ">"
    if isinstance(t, T.DecimalType):
        return f"DECIMAL({t.precision},{t.scale})"
    return t.simpleString().upper()


def _quote_if_needed(name: str) -> str:
    return name if _PLAIN_NAME.fullmatch(name) and not name.isdigit() else _quote(name)


def _column_rows(relation: Relation, pattern: re.Pattern) -> List[tuple]:
    return [(None, relation.schema, relation.name, c.name, jdbc_type(c.type), type_name(c.type), column_size(c.type),
             None, decimal_digits(c.type), _radix(c.type), int(c.nullable), c.comment or "", None, None, None, None,
             position, "YES" if c.nullable else "NO", None, None, None, None, "NO")
            for position, c in enumerate(relation.columns(), 1) if pattern.fullmatch(c.name)]


# -- the calls ---------------------------------------------------------------------------------

def get_catalogs(session, req) -> pa.Table:
    """HiveServer2 (and Spark's Thrift Server) have no catalogs: no rows."""
    return _rows(CATALOGS, [])


def get_schemas(session, req) -> pa.Table:
    """The warehouse's databases (as SHOW DATABASES), then ``global_temp`` when the pattern matches it."""
    pattern = search_pattern(req.schemaName, empty_is_all=True)
    names = _warehouse_databases(session, pattern) + ([GLOBAL_TEMP] if pattern.fullmatch(GLOBAL_TEMP) else [])
    return _rows(SCHEMAS, [(n, CATALOG) for n in names])


def get_tables(session, req) -> pa.Table:
    """``tableTypes`` null or empty: tables and views (system tables only when asked for)."""
    types = [t.strip().upper() for t in req.tableTypes] if req.tableTypes else [TABLE, VIEW]
    return _rows(TABLES, [(CATALOG, r.schema, r.name, r.type, r.remarks, None, None, None, None, None)
                          for r in relations(session, req.schemaName, req.tableName, types)])


def get_table_types(session, req) -> pa.Table:
    return _rows(TABLE_TYPE, [(t,) for t in TABLE_TYPES])


def get_columns(session, req) -> pa.Table:
    """The columns of every table and view matching (partition columns in their place), with
    ORDINAL_POSITION from 1 as JDBC defines it; system tables' when the table pattern names one
    (``t$snapshots``) or the schema is ``sys``."""
    system = SYSTEM_TABLE_SPLITTER in (req.tableName or "") or (req.schemaName or "").lower() == SYSTEM_DATABASE
    types = (TABLE, VIEW, SYSTEM_TABLE) if system else (TABLE, VIEW)
    pattern = search_pattern(req.columnName)
    return _rows(COLUMNS, [row for r in relations(session, req.schemaName, req.tableName, types)
                           for row in _column_rows(r, pattern)])


# Spark's Thrift Server's type list (SparkGetTypeInfoUtil.supportedType) with HiveServer2's
# properties of each: (name, java.sql.Types code, maximum precision).
_TYPES = [("VOID", 0, None), ("BOOLEAN", 16, None), ("STRING", 12, None), ("BINARY", -2, None),
          ("TINYINT", -6, 3), ("SMALLINT", 5, 5), ("INT", 4, 10), ("BIGINT", -5, 19), ("FLOAT", 6, 7),
          ("DOUBLE", 8, 15), ("DECIMAL", 3, 38), ("DATE", 91, None), ("TIMESTAMP", 93, None),
          ("ARRAY", 2003, None), ("MAP", 2000, None), ("STRUCT", 2002, None), ("CHAR", 1, None),
          ("VARCHAR", 12, None), ("INTERVAL_YEAR_MONTH", _OTHER, None), ("INTERVAL_DAY_TIME", _OTHER, None)]
_COMPLEX = {"ARRAY", "MAP", "STRUCT"}
_TYPE_NULLABLE, _SEARCHABLE, _PRED_NONE = 1, 3, 0  # DatabaseMetaData.typeNullable, typeSearchable, typePredNone


def get_type_info(session, req) -> pa.Table:
    return _rows(TYPE_INFO, [
        (name, code, precision, None, None, None, _TYPE_NULLABLE, name == "STRING",
         _PRED_NONE if name in _COMPLEX else _SEARCHABLE, precision is None, False, False, None, 0, 0, None, None,
         10 if precision is not None else None)
        for name, code, precision in _TYPES])


_FUNCTION_RESULT_UNKNOWN = 0  # DatabaseMetaData.functionResultUnknown, as Spark's Thrift Server answers


def get_functions(session, req) -> pa.Table:
    """Spark's functions matching the pattern, once per matching database as Spark's Thrift Server
    lists them: built-in and temporary ones, and the database's own when Spark has the database.
    Spark filters them, so that only the matching ones have their descriptions looked up."""
    jvm_pattern = _spark_filter_pattern(req.functionName)
    spark_dbs = {d.lower() for d in _spark_databases(session, search_pattern(None))}
    rows = []
    for db in _warehouse_databases(session, search_pattern(req.schemaName, empty_is_all=True)):
        known = db.lower() in spark_dbs
        listed = session.spark._jsparkSession.catalog().listFunctions(db if known else "default", jvm_pattern)
        found = DataFrame(listed.toDF(), session.spark).collect()
        rows += [(CATALOG, db, f.name, f.description or "", _FUNCTION_RESULT_UNKNOWN, f.className)
                 for f in sorted(found, key=lambda f: f.name) if known or f.isTemporary]
    return _rows(FUNCTIONS, rows)


def _spark_filter_pattern(text: Optional[str]) -> str:
    """A search pattern as Spark's catalog filters names with it (alternatives at ``|``, ``*`` for
    ``.*``, each a Java regular expression matched whole, ignoring case)."""
    return "*" if text is None else _translate(text, ".{0,}", lambda c: f"\\x{{{ord(c):x}}}")


def get_primary_keys(session, req) -> pa.Table:
    """The primary key of the Paimon table named (names, not patterns; no schema: any database),
    one row per key column in key order. Paimon keys have no name: PK_NAME is null."""
    table_name = req.tableName or ""
    rows = []
    for db in session.catalog.list_databases():
        if req.schemaName and db.lower() != req.schemaName.lower():
            continue
        for name in session.catalog.list_tables(db):
            if name.lower() == table_name.lower() and (session.access is None or session.access.may_read(db, name)):
                keys = session.catalog.get_table(Identifier(db, name)).schema.primary_keys
                rows += [(req.catalogName, db, name, k, i, None) for i, k in enumerate(keys, 1)]
    return _rows(PRIMARY_KEYS, rows)


def get_cross_reference(session, req) -> pa.Table:
    """Paimon tables have no foreign keys: no rows."""
    return _rows(CROSS_REFERENCE, [])
