"""ANALYZE TABLE t COMPUTE STATISTICS [FOR COLUMNS a, b | FOR ALL COLUMNS] on Paimon tables.

One Spark aggregation over the merged rows gives the record count and, per column, the distinct
count (HyperLogLog, as Spark's own ANALYZE), min, max, null count and, for strings and bytes, the
average and maximum length; the result is committed as an ANALYZE snapshot (docs/system-tables.md).
"""

from __future__ import annotations

from pyspark.sql import functions as F
from sqlglot import exp

from paimon_sql.data.types import AtomicType
from paimon_sql.exceptions import SchemaError
from paimon_sql.table import format_table
from paimon_sql.table.statistics import write_statistics

_LENGTHS = ("CHAR", "VARCHAR", "BINARY", "VARBINARY")


def analyze(session, node: exp.Analyze):
    target = (node.args.get("tables") or [node.this])[0]
    table = session.find_table(target) if isinstance(target, exp.Table) else None
    if table is None:
        return session.passthrough()
    format_table.refuse(table, "ANALYZE TABLE")  # statistics are kept in a snapshot
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
    fields = [f for f in fields if isinstance(f.type, AtomicType)]
    df = session.scan_dataframe(table, None, None)
    aggs = [F.count(F.lit(1)).alias("__count")]
    for i, f in enumerate(fields):
        c = F.col(f"`{f.name}`")
        aggs += [F.approx_count_distinct(c).alias(f"d{i}"), F.min(c).cast("string").alias(f"lo{i}"),
                 F.max(c).cast("string").alias(f"hi{i}"), F.sum(F.when(c.isNull(), 1).otherwise(0)).alias(f"n{i}")]
        if f.type.name in _LENGTHS:
            aggs += [F.avg(F.length(c)).alias(f"al{i}"), F.max(F.length(c)).alias(f"ml{i}")]
    row = df.agg(*aggs).collect()[0].asDict()
    count = int(row["__count"])
    col_stats = {f.name: {"colId": f.id, "distinctCount": row[f"d{i}"], "min": row[f"lo{i}"], "max": row[f"hi{i}"],
                          "nullCount": int(row[f"n{i}"] or 0),
                          "avgLen": None if row.get(f"al{i}") is None else round(row[f"al{i}"]),
                          "maxLen": row.get(f"ml{i}")}
                 for i, f in enumerate(fields)}
    entries = table.new_scan().plan_entries()
    stored = sum(e.file.row_count for e in entries)
    size = sum(e.file.file_size for e in entries)
    write_statistics(table, count, size * count // stored if stored else 0, col_stats)
    return None
