"""DESCRIBE, SHOW CREATE TABLE and the table properties of Paimon tables, answered as paimon-spark
answers them: a Paimon table is a Spark catalog (v2) table there, so its answers have Spark's v2
shapes, not those of Spark's own (v1) tables.

A table's properties are paimon-spark's (``SparkTable.properties``): its options, ``primary-key``,
``path``, and the reserved ones Spark keeps apart (``provider``, ``comment``, ``location``,
``owner``). DESCRIBE EXTENDED shows the reserved ones as rows of their own and the others as
``Table Properties``; SHOW TBLPROPERTIES lists the others; SHOW CREATE TABLE writes each in its
clause. Secret option values are masked wherever options are shown (:func:`redact`).
"""

from __future__ import annotations

from typing import Dict, List, Optional, Tuple

import pyarrow as pa
from pyspark.sql import types as T

from paimon_sql.data.types import MAX_LENGTH, ArrayType, AtomicType, DataType, MapType, MultisetType, VectorType
from paimon_sql.exceptions import SchemaError
from paimon_sql.options.core_options import redact
from paimon_sql.read import metadata_columns
from paimon_sql.spark.types import catalog_fields, column_sql, quote_if_needed, type_names
from paimon_sql.sql.catalog_views import describe_rows
from paimon_sql.sql.parse import CATALOG
from paimon_sql.systables import SystemTable
from paimon_sql.table.object_table import ObjectTable
from paimon_sql.table.statistics import read_statistics
from paimon_sql.table.table import FileStoreTable

# Spark's CatalogV2Util.TABLE_RESERVED_PROPERTIES, in its order (DESCRIBE shows them in it)
RESERVED = ("comment", "collation", "location", "provider", "owner", "external", "is_managed_location",
            "table_type")
# what Spark's parser says of each it refuses in TBLPROPERTIES (AstBuilder.cleanTableProperties)
_REFUSED = {"provider": "please use the USING clause to specify it",
            "location": "please use the LOCATION clause to specify it",
            "owner": "it will be set to the current user", "external": "please use CREATE EXTERNAL TABLE",
            "collation": "please use the DEFAULT COLLATION clause to specify it",
            "is_managed_location": "please remove it from the TBLPROPERTIES list."}


def refused_property(key: str) -> Optional[str]:
    """Spark's error for a reserved table property given in TBLPROPERTIES or WITH (at CREATE, ALTER
    ... SET or UNSET), None for any other key."""
    if key not in _REFUSED:
        return None
    return (f"[UNSUPPORTED_FEATURE.SET_TABLE_PROPERTY] The feature is not supported: {key} is a reserved table "
            f"property, {_REFUSED[key]}. SQLSTATE: 0A000")


def table_properties(table) -> Dict[str, str]:
    """paimon-spark's properties of a table: its options, ``primary-key``, ``path`` and the reserved
    ``provider``, ``comment`` and ``location``."""
    props = dict(redact(table.schema.options))
    if table.schema.primary_keys:
        props["primary-key"] = ",".join(table.schema.primary_keys)
    props["path"] = props["location"] = table.path
    props["provider"] = "paimon"
    if table.schema.comment is not None:
        props["comment"] = table.schema.comment
    return props


def shown_properties(table) -> Dict[str, str]:
    """The properties SHOW TBLPROPERTIES lists: all but the reserved ones."""
    return {k: v for k, v in table_properties(table).items() if k not in RESERVED}


def _quoted_name(*parts: str) -> str:
    return ".".join(quote_if_needed(p) for p in parts)


# -- DESCRIBE -----------------------------------------------------------------------------------

_DESCRIBE_COLUMNS = "col_name STRING, data_type STRING, comment STRING"
_INFO_COLUMNS = "info_name STRING, info_value STRING"
_ARROW = {"STRING": pa.string(), "BOOLEAN": pa.bool_()}


def frame(session, rows: List[tuple], columns: str):
    """Rows under Spark's column names and types (``columns``: ``name TYPE, ...``), handed to Spark
    as Arrow: a local relation that needs no Python worker to collect."""
    schema = pa.schema([(name, _ARROW[kind]) for name, kind in (c.split() for c in columns.split(","))])
    return session.spark.createDataFrame(pa.Table.from_pylist([dict(zip(schema.names, r)) for r in rows], schema))


def _extended(node) -> bool:
    return (node.args.get("style") or "").upper() in ("EXTENDED", "FORMATTED")


def describe(session, node, ref):
    """DESCRIBE [EXTENDED] of a table, branch (``t$branch_b``) or system table (``t$files``), as
    paimon-spark's PaimonDescribeTableExec: the columns, the partitioning, and with EXTENDED the
    metadata columns, the table's details, its statistics and its NOT NULL columns. With a column
    (``DESCRIBE t c``), that column."""
    column = next(iter(node.args.get("expressions") or []), None)
    if column is not None:
        return describe_column(session, ref, column)
    if isinstance(ref, SystemTable):  # its columns only
        return frame(session, _column_rows(ref.fields), _DESCRIBE_COLUMNS)
    s = ref.schema
    rows = _column_rows(s.fields)
    if s.partition_keys:
        rows += [("# Partition Information", "", ""), ("# col_name", "data_type", "comment")]
        by_name = {r[0]: r for r in rows}
        rows += [by_name[k] for k in s.partition_keys]
    if _extended(node):
        rows += _details(ref)
    return frame(session, rows, _DESCRIBE_COLUMNS)


def _details(table) -> List[tuple]:
    data = isinstance(table, FileStoreTable) and not isinstance(table, ObjectTable)
    rows = []
    if data:
        fields = metadata_columns.fields(table.schema)
        fields = [f for f in fields if f.name in metadata_columns.TRACKED] + \
                 [f for f in fields if f.name not in metadata_columns.TRACKED]  # paimon-spark's order
        rows += [("", "", ""), ("# Metadata Columns", "", "")]
        rows += [(f.name, t, "") for f, t in zip(fields, type_names(fields))]
    props = table_properties(table)
    rows += [("", "", ""), ("# Detailed Table Information", "", ""), ("Name", table.name, ""), ("Type", "MANAGED", "")]
    rows += [(k[0].upper() + k[1:], props[k], "") for k in RESERVED if k in props and k != "external"]
    shown = sorted((k, v) for k, v in props.items() if k not in RESERVED)
    rows.append(("Table Properties", "[" + ",".join(f"{k}={v}" for k, v in shown) + "]", ""))
    if data:
        size, count = statistics(table)
        rows.append(("Statistics", f"{size} bytes, {count} rows", None))
    required = [f for f in table.schema.fields if not f.type.nullable]
    if required:
        rows += [("# Column Not Null", "", "")] + [(f.name, t, "NOT NULL") for f, t in
                                                      zip(required, type_names(required))]
    return rows


def statistics(table) -> Tuple[int, int]:
    """(size in bytes, rows) as paimon-spark estimates a full scan of the table (PaimonStatistics):
    the rows of its live data files, as stored (before merging), times a row's estimated size —
    each column's average length from the latest ANALYZE, else the default size of its type."""
    rows = sum(e.file.row_count for e in table.new_scan().plan_entries())
    stats = read_statistics(table, table.snapshot_manager.latest()) or {}
    lengths = stats.get("colStats") or {}
    size = sum(lengths.get(f.name, {}).get("avgLen") or _default_size(f.type) for f in table.schema.fields)
    return max(rows * size, rows), rows


def _default_size(t: DataType) -> int:
    """Paimon's ``DataType.defaultSize`` of the type paimon-spark reads a column as (a Spark type
    mapped back to Paimon's: BINARY(n) and TIME become VARBINARY and INT, a VECTOR an ARRAY)."""
    if isinstance(t, (ArrayType, VectorType)):
        return _default_size(t.element)
    if isinstance(t, MultisetType):
        return _default_size(t.element) + 4
    if isinstance(t, MapType):
        return _default_size(t.key) + _default_size(t.value)
    if not isinstance(t, AtomicType):
        return sum(_default_size(f.type) for f in t.fields)
    if t.name in ("CHAR", "VARCHAR"):
        return 20 if t.args == (MAX_LENGTH,) or t.name == "VARCHAR" and not t.args else t.args[0]
    if t.name == "DECIMAL":
        return 8 if t.precision <= 18 else 16
    return _SIZES.get(t.name, 20)  # BINARY, VARBINARY, BLOB, VARIANT: Spark's BINARY, Paimon's VARBINARY


_SIZES = {"BOOLEAN": 1, "TINYINT": 1, "SMALLINT": 2, "INT": 4, "BIGINT": 8, "FLOAT": 4, "DOUBLE": 8, "DATE": 4,
          "TIME": 4, "TIMESTAMP": 8, "TIMESTAMP_LTZ": 8}


def describe_view(session, node, ident, view):
    """DESCRIBE [EXTENDED] of a catalog view (:func:`catalog_views.describe_rows`)."""
    return frame(session, describe_rows(ident, view, _extended(node)), _DESCRIBE_COLUMNS)


def _column_rows(fields) -> List[tuple]:
    return [(f.name, t, f.description) for f, t in zip(fields, type_names(fields))]


def describe_column(session, ref, column):
    """DESCRIBE [EXTENDED] t c: Spark's three info rows (its v2 DescribeColumnExec, which shows no
    statistics, EXTENDED or not). Nested columns are refused, as Spark refuses them."""
    path = [p.name for p in column.parts] if hasattr(column, "parts") else [column.name]
    if len(path) > 1:
        raise SchemaError(f"DESC TABLE COLUMN does not support nested column: {'.'.join(path)}.")
    fields = ref.fields if isinstance(ref, SystemTable) else ref.schema.fields
    f = {f.name.lower(): f for f in fields}.get(path[0].lower())
    if f is None:
        raise SchemaError(f"[COLUMN_NOT_FOUND] The column `{path[0]}` cannot be found.")
    rows = [("col_name", f.name), ("data_type", type_names([f])[0]), ("comment", f.description or "NULL")]
    return frame(session, rows, _INFO_COLUMNS)


# Spark's CatalogV2Util.NAMESPACE_RESERVED_PROPERTIES
_NAMESPACE_RESERVED = ("comment", "collation", "location", "owner")


def describe_database(session, node):
    """DESCRIBE DATABASE [EXTENDED] db, as Spark's v2 DescribeNamespaceExec: the catalog and the
    name, the reserved properties the database keeps (its comment), and with EXTENDED the others
    ALTER DATABASE set."""
    db = session.database_name(node.this.name)
    if db is None:
        return session.passthrough()
    props = session.catalog.database_properties(db)
    rows = [("Catalog Name", CATALOG), ("Namespace Name", quote_if_needed(db))]
    rows += [(k.capitalize(), props[k]) for k in _NAMESPACE_RESERVED if k in props]
    if _extended(node):
        rest = sorted((k, v) for k, v in redact(props).items() if k not in _NAMESPACE_RESERVED)
        rows.append(("Properties", "(" + ", ".join(f"({k},{v})" for k, v in rest) + ")" if rest else ""))
    return frame(session, rows, _INFO_COLUMNS)


def reserved_property(key: str) -> Optional[str]:
    """Spark's error for setting a reserved database property by DBPROPERTIES (None for others)."""
    if key.lower() in ("comment", "location", "owner"):
        clause = {"comment": "the COMMENT clause", "location": "the LOCATION clause", "owner": "ALTER ... OWNER"}
        return (f"[UNSUPPORTED_FEATURE.SET_NAMESPACE_PROPERTY] The feature is not supported: {key} is a reserved "
                f"namespace property, please use {clause[key.lower()]} to specify it.")
    return None


# -- SHOW CREATE TABLE, SHOW TABLE EXTENDED -------------------------------------------------------

def show_create_table(table) -> str:
    """Spark's v2 SHOW CREATE TABLE of a Paimon table (ShowCreateTableExec), as paimon-spark answers."""
    s = table.schema
    db, _, name = table.name.rpartition(".")
    text = f"CREATE TABLE {_quoted_name(CATALOG, db, name)} "
    if not isinstance(table, ObjectTable):  # an object table is created without its columns
        text += _lines(f"{quote_if_needed(f.name)} {column_sql(f)}" for f in s.fields)
    text += "USING paimon\n"
    if s.partition_keys:
        text += "PARTITIONED BY (" + ", ".join(quote_if_needed(k) for k in s.partition_keys) + ")\n"
    if s.comment is not None:
        text += f"COMMENT '{_escaped(s.comment)}'\n"
    text += f"LOCATION '{_escaped(table.path)}'\n"
    shown = sorted(shown_properties(table).items())
    if shown:
        text += "TBLPROPERTIES " + _lines(f"'{_escaped(k)}' = '{_escaped(v)}'" for k, v in shown)
    return text


def _lines(items) -> str:
    return "(\n  " + ",\n  ".join(items) + ")\n"


def _escaped(text: str) -> str:
    """Spark's ``escapeSingleQuotedString``: quotes escaped, nothing else."""
    return text.replace("'", "\\'")


def information(table) -> str:
    """SHOW TABLE EXTENDED's text of a table (Spark's v2 ShowTablesExtendedExec)."""
    db, _, name = table.name.rpartition(".")
    props = table_properties(table)
    lines = [f"Catalog: {CATALOG}", f"Namespace: {quote_if_needed(db)}", f"Table: {name}", "Type: MANAGED"]
    lines += [f"{k[0].upper() + k[1:]}: {props[k]}" for k in RESERVED if k in props and k != "external"]
    shown = sorted((k, v) for k, v in props.items() if k not in RESERVED)
    lines.append("Table Properties: [" + ", ".join(f"{k}={v}" for k, v in shown) + "]")
    if table.schema.partition_keys:
        lines += ["Partition Provider: Catalog",
                  "Partition Columns: [" + ", ".join(f"`{k}`" for k in table.schema.partition_keys) + "]"]
    if table.schema.fields:
        lines.append("Schema: " + T.StructType(catalog_fields(table.schema.fields)).treeString())
    return "\n".join(lines) + "\n"
