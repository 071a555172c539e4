"""INSERT INTO / INSERT OVERWRITE [PARTITION (...)] [BY NAME] into Paimon tables.

The source (VALUES or any query, its own Paimon references rewritten to scans) becomes a Spark
DataFrame; its columns are matched to the table's by position (or by name with BY NAME, or by an
explicit column list), static partition values are added, every column is cast to the table's
Spark type, and the distributed write commits one snapshot. A failing write commits nothing.
"""

from __future__ import annotations

from typing import Dict, List

from pyspark.sql import functions as F
from sqlglot import exp

from paimon_sql.exceptions import SchemaError
from paimon_sql.spark.types import spark_type


def _partition_spec(node: exp.Table) -> Dict[str, object]:
    """Static partition values of ``PARTITION (dt='x', h)`` (dynamic columns are left out)."""
    part = node.args.get("partition")
    spec = {}
    for e in (part.expressions if part else []):
        if isinstance(e, exp.EQ):
            value = e.expression
            spec[e.this.name] = None if isinstance(value, exp.Null) else (
                value.this if value.is_string else value.to_py())
    return spec


def insert(session, node: exp.Insert):
    target = node.this
    columns: List[str] = []
    if isinstance(target, exp.Schema):
        columns = [c.name for c in target.expressions]
        target = target.this
    table = session.catalog.get_table(session.identifier(target))
    schema = table.schema
    spec = _partition_spec(target)
    unknown = [k for k in spec if k not in schema.partition_keys]
    if unknown:
        raise SchemaError(f"PARTITION names non-partition column(s) of {table.name}: {', '.join(unknown)}")
    source = session.query_dataframe(node.expression)
    fields = {f.name: f for f in schema.fields}
    target_cols = columns or [n for n in schema.field_names if n not in spec]
    missing = [c for c in target_cols if c not in fields]
    if missing:
        raise SchemaError(f"table {table.name} has no column(s) {', '.join(missing)}")
    if node.args.get("by_name"):
        source_names = {c.lower(): c for c in source.columns}
        absent = [c for c in target_cols if c.lower() not in source_names]
        if absent:
            raise SchemaError(f"INSERT BY NAME: the query has no column(s) {', '.join(absent)}")
        picked = {c: F.col(f"`{source_names[c.lower()]}`") for c in target_cols}
    else:
        if len(source.columns) != len(target_cols):
            raise SchemaError(f"INSERT into {table.name}: the query has {len(source.columns)} column(s), "
                              f"the table expects {len(target_cols)} ({', '.join(target_cols)})")
        picked = {c: F.col(f"`{s}`") for c, s in zip(target_cols, source.columns)}
    out = []
    for f in schema.fields:
        if f.name in picked:
            col = picked[f.name]
        elif f.name in spec:
            col = F.lit(spec[f.name])
        else:
            col = F.lit(None)
        out.append(col.cast(spark_type(f.type)).alias(f.name))
    df = source.select(*out)
    overwrite = bool(node.args.get("overwrite"))
    dynamic = session.spark.conf.get("spark.sql.sources.partitionOverwriteMode", "static").lower() == "dynamic"
    session.write(df, table, overwrite=overwrite, partition_spec=spec if overwrite else None,
                  dynamic=dynamic and overwrite)
    return None
