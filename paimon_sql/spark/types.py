"""Paimon types ↔ Spark SQL types, and the Arrow form Spark's Python data sources exchange.

Spark's TIMESTAMP is local-time-zone (Paimon TIMESTAMP WITH LOCAL TIME ZONE) and TIMESTAMP_NTZ is
Paimon's TIMESTAMP, as in Paimon's own Spark integration. Spark has no TIME type: TIME columns
surface as STRING. MULTISET<e> surfaces as MAP<e, INT>.
"""

from __future__ import annotations

import functools
import re
from typing import List

import pyarrow as pa
from pyspark.sql import types as T
from pyspark.sql.pandas.types import to_arrow_schema

from paimon_sql.data.types import (MAX_LENGTH, ArrayType, AtomicType, DataField, DataType, MapType, MultisetType,
                                   VectorType)

_SIMPLE = {"BOOLEAN": "BOOLEAN", "TINYINT": "TINYINT", "SMALLINT": "SMALLINT", "INT": "INT", "BIGINT": "BIGINT",
           "FLOAT": "FLOAT", "DOUBLE": "DOUBLE", "DATE": "DATE", "CHAR": "STRING", "VARCHAR": "STRING",
           "BINARY": "BINARY", "VARBINARY": "BINARY", "TIMESTAMP": "TIMESTAMP_NTZ", "TIMESTAMP_LTZ": "TIMESTAMP",
           "TIME": "STRING", "VARIANT": "BINARY", "BLOB": "BINARY"}


def spark_type(t: DataType, sized: bool = False) -> str:
    """The Spark type (DDL) a Paimon type is read as; ``sized``: CHAR(n) and VARCHAR(n) keep their
    length, as paimon-spark's catalog shows them (Spark reads and writes them as STRING)."""
    if isinstance(t, AtomicType):
        if sized and _sized_text(t):
            return f"{t.name}({t.args[0]})"
        return f"DECIMAL({t.precision},{t.scale})" if t.name == "DECIMAL" else _SIMPLE[t.name]
    if isinstance(t, (ArrayType, VectorType)):  # a VECTOR shows as an array (paimon-spark's type for it)
        return f"ARRAY<{spark_type(t.element, sized)}>"
    if isinstance(t, MultisetType):
        return f"MAP<{spark_type(t.element, sized)},INT>"
    if isinstance(t, MapType):
        return f"MAP<{spark_type(t.key, sized)},{spark_type(t.value, sized)}>"
    return "STRUCT<" + ",".join(f"`{f.name}`:{spark_type(f.type, sized)}" for f in t.fields) + ">"


def spark_datatype(t: DataType) -> T.DataType:
    """The Spark type object of a Paimon type (parsed by Spark, so equal to what its analyzer sees)."""
    return _parsed(spark_type(t))


@functools.lru_cache(maxsize=1024)
def _parsed(ddl: str) -> T.DataType:
    """Spark's parse of a type, once per process: each parse is a JVM call (~2-8 ms), and every
    write casts each column to its table type."""
    return T.DataType.fromDDL(ddl)


_DATETIME = (T.DateType, T.TimestampType, T.TimestampNTZType)


def can_store_assign(source: T.DataType, target: T.DataType) -> bool:
    """Spark's ANSI store-assignment rule (``spark.sql.storeAssignmentPolicy`` = ANSI, its default):
    whether INSERT may cast a value of ``source`` into a column of ``target``. Numbers to numbers,
    any atomic value to STRING, dates and timestamps among themselves, containers element-wise;
    not STRING to a number or date, nor BOOLEAN to a number."""
    if source == target or isinstance(source, T.NullType):
        return True
    if isinstance(source, T.NumericType) and isinstance(target, T.NumericType):
        return True
    if isinstance(target, T.StringType):
        return isinstance(source, (T.AtomicType, T.CalendarIntervalType))
    if isinstance(source, _DATETIME) and isinstance(target, _DATETIME):
        return True
    if isinstance(source, T.ArrayType) and isinstance(target, T.ArrayType):
        return can_store_assign(source.elementType, target.elementType)
    if isinstance(source, T.MapType) and isinstance(target, T.MapType):
        return can_store_assign(source.keyType, target.keyType) and can_store_assign(source.valueType, target.valueType)
    if isinstance(source, T.StructType) and isinstance(target, T.StructType):
        return len(source.fields) == len(target.fields) and all(
            can_store_assign(s.dataType, t.dataType) for s, t in zip(source.fields, target.fields))
    return False


def spark_ddl(fields: List[DataField]) -> str:
    """A Spark schema DDL string (every column nullable: Spark checks the data, we check NOT NULL)."""
    return ", ".join(f"`{f.name}` {spark_type(f.type)}" for f in fields)


def spark_arrow_type(t: DataType) -> pa.DataType:
    """The Arrow type Spark expects for a Paimon column (microsecond timestamps, TIME as text)."""
    if isinstance(t, AtomicType):
        if t.name == "TIMESTAMP":
            return pa.timestamp("us")
        if t.name == "TIMESTAMP_LTZ":
            return pa.timestamp("us", tz="UTC")
        if t.name == "TIME":
            return pa.string()
        return t.to_arrow()
    if isinstance(t, (ArrayType, VectorType)):
        return pa.list_(spark_arrow_type(t.element))
    if isinstance(t, (MapType, MultisetType)):
        key = t.key if isinstance(t, MapType) else t.element
        value = spark_arrow_type(t.value) if isinstance(t, MapType) else pa.int32()
        return pa.map_(spark_arrow_type(key), value)
    return pa.struct([pa.field(f.name, spark_arrow_type(f.type)) for f in t.fields])


def spark_arrow_schema(fields: List[DataField]) -> pa.Schema:
    return pa.schema([pa.field(f.name, spark_arrow_type(f.type), True) for f in fields])


def to_spark_arrow(table: pa.Table, fields: List[DataField]) -> pa.Table:
    """Cast rows read from Paimon to what Spark expects."""
    schema = spark_arrow_schema(fields)
    return pa.Table.from_arrays([table.column(f.name).cast(schema.field(f.name).type) for f in fields], schema=schema)


# -- Spark's names of types, as DESCRIBE and SHOW CREATE TABLE print them ------------------------

def jvm_arrow_schema(schema: T.StructType, time_zone: str) -> pa.Schema:
    """The Arrow schema Spark's JVM writes rows of ``schema`` in for Python (small string types, as
    ``toArrowBatchRdd`` writes them), timestamps labelled ``time_zone`` where this PySpark's
    ``to_arrow_schema`` takes one (4.1 labels them UTC: the same instants)."""
    try:
        return to_arrow_schema(schema, timezone=time_zone)
    except TypeError:
        return to_arrow_schema(schema)


def spark_fields(fields) -> List[T.StructField]:
    """The columns as Spark reads them (one parse of their DDL by Spark), with their nullability."""
    parsed = T.DataType.fromDDL(spark_ddl(fields)).fields
    return [T.StructField(f.name, p.dataType, f.type.nullable) for f, p in zip(fields, parsed)]


def catalog_fields(fields) -> List[T.StructField]:
    """The columns as paimon-spark's catalog shows them: :func:`spark_fields`, CHAR(n) and
    VARCHAR(n) keeping their length."""
    if not fields:
        return []
    parsed = T.DataType.fromDDL(", ".join(f"`{f.name}` {spark_type(f.type, sized=True)}" for f in fields)).fields
    return [T.StructField(f.name, p.dataType, f.type.nullable) for f, p in zip(fields, parsed)]


def type_names(fields) -> List[str]:
    """The columns' types as Spark's DESCRIBE prints them (Spark's own ``simpleString``)."""
    return [p.dataType.simpleString() for p in catalog_fields(fields)]


def type_sql(t: DataType) -> str:
    """Spark's SQL spelling (``DataType.sql``) of the type paimon-spark shows a Paimon type as:
    ``STRUCT<a: INT NOT NULL COMMENT 'c', `b c`: MAP<STRING, CHAR(3)>>``."""
    if isinstance(t, AtomicType):
        return spark_type(t, sized=True)
    if isinstance(t, (ArrayType, VectorType)):
        return f"ARRAY<{type_sql(t.element)}>"
    if isinstance(t, MultisetType):
        return f"MAP<{type_sql(t.element)}, INT>"
    if isinstance(t, MapType):
        return f"MAP<{type_sql(t.key)}, {type_sql(t.value)}>"
    return "STRUCT<" + ", ".join(f"{quote_if_needed(f.name)}: {column_sql(f)}" for f in t.fields) + ">"


def column_sql(f: DataField) -> str:
    """A column's type, NOT NULL and comment as Spark's ``StructField.sql`` writes them."""
    comment = "" if f.description is None else " COMMENT '" + f.description.replace("'", "\\'") + "'"
    return type_sql(f.type) + ("" if f.type.nullable else " NOT NULL") + comment


def quote_if_needed(name: str) -> str:
    """A name as Spark writes it: backquoted unless a plain identifier (``QuotingUtils.quoteIfNeeded``)."""
    return name if re.fullmatch(r"[a-zA-Z_][a-zA-Z0-9_]*", name) else "`" + name.replace("`", "``") + "`"


def _sized_text(t: DataType) -> bool:
    return isinstance(t, AtomicType) and (t.name == "CHAR" or t.name == "VARCHAR" and t.args != (MAX_LENGTH,))
