"""INSERT, UPDATE, DELETE and TRUNCATE on Paimon tables.

INSERT INTO / OVERWRITE [PARTITION (...)] [BY NAME]: the source (VALUES or any query, its own Paimon
references rewritten to scans) becomes a Spark DataFrame; its columns are matched to the table's by
position (or by name with BY NAME, or by an explicit column list), static partition values are
added, every column is cast to the table's Spark type, and the distributed write commits one
snapshot. A failing write commits nothing.

UPDATE and DELETE on primary-key tables write the changed rows with their row kind (+U, -D): the
LSM tree's merge applies them, no file is rewritten. The rows are selected by a query over the
table itself (so the WHERE prunes partitions and files like any query). On append tables the
matching rows' positions are deleted by deletion vectors (or copy-on-write of the touched files)
and UPDATE writes their new values, in one snapshot. TRUNCATE, and DELETE without WHERE, commit an
OVERWRITE that removes every file.
"""

from __future__ import annotations

import itertools
from contextlib import contextmanager
from typing import Dict, List, Optional, Set

import pyarrow as pa
from pyspark.sql import functions as F
from sqlglot import exp

from paimon_sql.exceptions import PaimonError, SchemaError
from paimon_sql.format import row_kind
from paimon_sql.spark.source import ROWKIND_COLUMN
from paimon_sql.spark.types import spark_type
from paimon_sql.table.read import FILE_COLUMN, POSITION_COLUMN
from paimon_sql.table.row_delete import delete_messages, positions_of


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
    table = session.find_table(target)
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


# -- row-level changes --------------------------------------------------------------------------

# the row-level changes each merge engine can apply (Paimon's Spark rules); INSERT works on all
_CHANGES = {"deduplicate": {"UPDATE", "DELETE"}, "partial-update": {"UPDATE"}, "aggregation": set(), "first-row": set()}


def check_row_changes(table, verbs: Set[str]) -> None:
    """Raise when a primary-key table's merge engine cannot apply these row-level changes
    (``verbs``: UPDATE, DELETE)."""
    engine = table.options.merge_engine
    allowed = set(_CHANGES[engine])
    remove_on_delete = f"{engine}.remove-record-on-delete"
    if table.options.raw.get(remove_on_delete, "false").lower() == "true":
        allowed.add("DELETE")
    for verb in sorted(verbs - allowed):
        hint = f" (set '{remove_on_delete}' = 'true')" if verb == "DELETE" and engine != "first-row" else ""
        raise PaimonError(f"table {table.name}: {verb} is not supported by merge-engine '{engine}'{hint}")


def check_assignments(table, columns: List[str]) -> None:
    fields = set(table.schema.field_names)
    unknown = [c for c in columns if c not in fields]
    if unknown:
        raise SchemaError(f"table {table.name} has no column(s) {', '.join(unknown)}")
    keys = [c for c in columns if c in table.schema.primary_keys or c in table.schema.partition_keys]
    if keys:
        raise SchemaError(f"cannot update primary-key or partition column(s) {', '.join(keys)} of {table.name}")


def write_changes(session, table, df) -> None:
    """Write a DataFrame of the table's columns plus a row-kind column (one snapshot)."""
    session.write(with_table_types(table, df, F.col(ROWKIND_COLUMN).cast("tinyint").alias(ROWKIND_COLUMN)), table)


def _rows_of(target: exp.Table, table, where, values: Dict[str, exp.Expression], kind: int) -> exp.Select:
    qualifier = target.alias_or_name
    select = [(values[f].copy() if f in values else exp.column(f, table=qualifier)).as_(f)
              for f in table.schema.field_names]
    query = exp.select(*select, exp.Literal.number(kind).as_(ROWKIND_COLUMN)).from_(target.copy())
    return query.where(where.this.copy()) if where is not None else query


def update(session, node: exp.Update):
    sets = {eq.this.name: eq.expression for eq in node.expressions}
    table = session.find_table(node.this)
    check_assignments(table, list(sets))
    if not table.schema.is_primary_key_table:
        return change_append_rows(session, node.this, table, node.args.get("where"), sets)
    check_row_changes(table, {"UPDATE"})
    query = _rows_of(node.this, table, node.args.get("where"), sets, row_kind.UPDATE_AFTER)
    write_changes(session, table, session.query_dataframe(query))
    return None


def delete(session, node: exp.Delete):
    where = node.args.get("where")
    if where is None:
        return truncate(session, node.this)
    table = session.find_table(node.this)
    if not table.schema.is_primary_key_table:
        return change_append_rows(session, node.this, table, where, None)
    check_row_changes(table, {"DELETE"})
    query = _rows_of(node.this, table, where, {}, row_kind.DELETE)
    write_changes(session, table, session.query_dataframe(query))
    return None


def truncate(session, target: exp.Table):
    table = session.find_table(target)
    table.new_commit().overwrite([])
    return None


_VIEW_IDS = itertools.count()


@contextmanager
def located_rows(session, table):
    """A temporary view of an append table's live rows plus each row's data file and position."""
    view = f"__paimon_rows_{next(_VIEW_IDS)}"
    from paimon_sql.spark.scan import source_reader
    (source_reader(session.spark, table, session.warehouse, session.catalog_options, None)
     .option("paimon.positions", "true").load(table.name).createOrReplaceTempView(view))
    try:
        yield view
    finally:
        session.spark.catalog.dropTempView(view)


def with_table_types(table, df, *extra: str):
    """The table's columns cast to its Spark types, plus ``extra`` columns as they are."""
    return df.select(*[F.col(f"`{f.name}`").cast(spark_type(f.type)).alias(f.name) for f in table.schema.fields],
                     *extra)


def commit_append_changes(table, gone: pa.Table, new_rows: Optional[pa.Table]) -> None:
    """One snapshot that deletes the rows ``gone`` names (data file, position) — by deletion vectors
    or copy-on-write — and writes ``new_rows``."""
    messages = delete_messages(table, positions_of(table, gone))
    if new_rows is not None and new_rows.num_rows:
        write = table.new_write()
        try:
            write.write_arrow(new_rows.select(table.schema.field_names))
            messages += write.prepare_commit()
        except BaseException:
            write.abort(messages)
            raise
    table.new_commit().commit_or_abort(messages)


def change_append_rows(session, target: exp.Table, table, where, sets: Optional[Dict[str, exp.Expression]]):
    """UPDATE (``sets``) or DELETE on an append table: Spark finds the matching rows' data files and
    positions; they are deleted and, for UPDATE, their new values written, in one snapshot."""
    qualifier = target.alias_or_name
    with located_rows(session, table) as view:
        source = exp.Table(this=exp.to_identifier(view), alias=exp.TableAlias(this=exp.to_identifier(qualifier)))
        located = [exp.column(FILE_COLUMN, table=qualifier), exp.column(POSITION_COLUMN, table=qualifier)]
        values = [] if sets is None else [(sets[f].copy() if f in sets else exp.column(f, table=qualifier)).as_(f)
                                          for f in table.schema.field_names]
        query = exp.select(*values, *located).from_(source)
        if where is not None:
            query = query.where(where.this.copy())
        df = session.query_dataframe(query)
        if sets is not None:
            df = with_table_types(table, df, FILE_COLUMN, POSITION_COLUMN)
        rows = df.toArrow()
    commit_append_changes(table, rows, rows if sets is not None else None)
    return None
