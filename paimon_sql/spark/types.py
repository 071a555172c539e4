"""Paimon types ↔ Spark SQL types, and the Arrow form Spark's Python data sources exchange.

Spark's TIMESTAMP is local-time-zone (Paimon TIMESTAMP WITH LOCAL TIME ZONE) and TIMESTAMP_NTZ is
Paimon's TIMESTAMP, as in Paimon's own Spark integration. Spark has no TIME type: TIME columns
surface as STRING. MULTISET<e> surfaces as MAP<e, INT>.
"""

from __future__ import annotations

from typing import List

import pyarrow as pa

from paimon_sql.format.types import (
    MAX_LENGTH,
    ArrayType,
    AtomicType,
    DataField,
    DataType,
    MapType,
    MultisetType,
    parse_type,
)

_SIMPLE = {"BOOLEAN": "BOOLEAN", "TINYINT": "TINYINT", "SMALLINT": "SMALLINT", "INT": "INT", "BIGINT": "BIGINT",
           "FLOAT": "FLOAT", "DOUBLE": "DOUBLE", "DATE": "DATE", "CHAR": "STRING", "VARCHAR": "STRING",
           "BINARY": "BINARY", "VARBINARY": "BINARY", "TIMESTAMP": "TIMESTAMP_NTZ", "TIMESTAMP_LTZ": "TIMESTAMP",
           "TIME": "STRING", "VARIANT": "BINARY"}


def spark_type(t: DataType) -> str:
    if isinstance(t, AtomicType):
        return f"DECIMAL({t.precision},{t.scale})" if t.name == "DECIMAL" else _SIMPLE[t.name]
    if isinstance(t, ArrayType):
        return f"ARRAY<{spark_type(t.element)}>"
    if isinstance(t, MultisetType):
        return f"MAP<{spark_type(t.element)},INT>"
    if isinstance(t, MapType):
        return f"MAP<{spark_type(t.key)},{spark_type(t.value)}>"
    return "STRUCT<" + ",".join(f"`{f.name}`:{spark_type(f.type)}" for f in t.fields) + ">"


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
    if isinstance(t, ArrayType):
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


def paimon_type_from_sql(text: str) -> DataType:
    """A column type written in DDL: Spark's spellings first, Flink/Paimon ones otherwise."""
    upper = " ".join(text.upper().split())
    base = upper.split(" NOT NULL")[0]
    if base == "TIMESTAMP" or base == "TIMESTAMP_LTZ":
        return parse_type(upper.replace(base, "TIMESTAMP_LTZ(6)", 1))
    if base == "TIMESTAMP_NTZ":
        return parse_type(upper.replace(base, "TIMESTAMP(6)", 1))
    if base == "BINARY":
        return parse_type(upper.replace(base, f"VARBINARY({MAX_LENGTH})", 1))
    return parse_type(text)

