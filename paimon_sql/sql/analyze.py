"""ANALYZE TABLE t COMPUTE STATISTICS [FOR COLUMNS a, b | FOR ALL COLUMNS] on Paimon tables.

One Spark aggregation over the merged rows gives the record count and, per column, what Spark's own
ANALYZE computes and paimon-spark stores: the distinct count (HyperLogLog), the null count, min and
max (not for strings and bytes) and the average and maximum length (Spark's default size for
fixed-width types); the result is committed as an ANALYZE snapshot (docs/system-tables.md). Min and
max are stored as Paimon's serializers print them (a DATE as its epoch day), the merged record size
as paimon-spark computes it.
"""

from __future__ import annotations

import datetime as dt

from pyspark.sql import functions as F
from sqlglot import exp

from paimon_sql.data.partition_names import cast_text
from paimon_sql.data.types import AtomicType
from paimon_sql.exceptions import SchemaError
from paimon_sql.table import format_table
from paimon_sql.table.statistics import write_statistics

_EPOCH = dt.date(1970, 1, 1)
_LENGTHS = {"CHAR": 20, "VARCHAR": 20, "BINARY": 100, "VARBINARY": 100}  # Spark's default sizes: no min/max
_FIXED = {"BOOLEAN": 1, "TINYINT": 1, "SMALLINT": 2, "INT": 4, "BIGINT": 8, "FLOAT": 4, "DOUBLE": 8, "DATE": 4,
          "TIMESTAMP": 8, "TIMESTAMP_LTZ": 8}  # Spark's default size of each (a DECIMAL's: 8 or 16)


def _default_size(t) -> int:
    return (8 if t.precision <= 18 else 16) if t.name == "DECIMAL" else _FIXED[t.name]


def _bound(value, t):
    """A min or max as Paimon's serializer prints it (None when unknown)."""
    if value is None:
        return None
    return str((value - _EPOCH).days) if t.name == "DATE" else cast_text(value, t)


def analyze(session, node: exp.Analyze):
    target = (node.args.get("tables") or [node.this])[0]
    table = session.find_table(target) if isinstance(target, exp.Table) else None
    if table is None:
        return session.passthrough()
    format_table.refuse(table, "ANALYZE TABLE")  # statistics are kept in a snapshot
    if table.snapshot_manager.latest() is None:
        return None  # nothing to analyze: no statistics, as paimon-spark
    spec = node.args.get("expression")
    which = str(spec.this or "").upper() if spec is not None else ""
    if which == "FOR ALL COLUMNS":
        fields = table.schema.fields
    elif which == "FOR COLUMNS":
        names = [c.name for c in spec.expressions]
        unknown = [n for n in names if n not in table.schema.field_names]
        if unknown:
            raise SchemaError(f"ANALYZE: table {table.name} has no column(s) {', '.join(unknown)}")
        fields = table.schema.fields_of(names)
    else:
        fields = []
    for f in fields:  # as paimon-spark refuses them
        if not isinstance(f.type, AtomicType) or f.type.name not in {**_LENGTHS, **_FIXED, "DECIMAL": 0}:
            raise SchemaError(f"Analyzing on col: {f.name}, data type: {f.type} is not supported.")
    df = session.scan_dataframe(table, None, None)
    aggs = [F.count(F.lit(1)).alias("__count")]
    for i, f in enumerate(fields):
        c = F.col(f"`{f.name}`")
        aggs += [F.approx_count_distinct(c).alias(f"d{i}"), F.sum(F.when(c.isNull(), 1).otherwise(0)).alias(f"n{i}")]
        if f.type.name in _LENGTHS:
            aggs += [F.ceil(F.avg(F.length(c))).alias(f"al{i}"), F.max(F.length(c)).alias(f"ml{i}")]
        else:
            aggs += [F.min(c).alias(f"lo{i}"), F.max(c).alias(f"hi{i}")]
    row = df.agg(*aggs).collect()[0].asDict()
    count = int(row["__count"])
    col_stats = {}
    for i, f in enumerate(fields):
        default = _LENGTHS.get(f.type.name) or _default_size(f.type)
        col_stats[f.name] = {"colId": f.id, "distinctCount": row[f"d{i}"], "min": _bound(row.get(f"lo{i}"), f.type),
                             "max": _bound(row.get(f"hi{i}"), f.type), "nullCount": int(row[f"n{i}"] or 0),
                             "avgLen": default if row.get(f"al{i}") is None else int(row[f"al{i}"]),
                             "maxLen": default if row.get(f"ml{i}") is None else int(row[f"ml{i}"])}
    entries = table.new_scan().plan_entries()
    stored = sum(e.file.row_count for e in entries)
    size = sum(e.file.file_size for e in entries)
    # paimon-spark's: the live files' size times (merged / stored records) truncated to a whole number
    write_statistics(table, count, size * (count // stored) if stored else 0, col_stats)
    return None
