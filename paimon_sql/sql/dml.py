"""INSERT, UPDATE, DELETE and TRUNCATE on Paimon tables.

INSERT INTO / OVERWRITE [PARTITION (...)] [BY NAME]: the source (VALUES or any query, its own Paimon
references rewritten to scans) becomes a Spark DataFrame; its columns are matched to the table's as
Spark matches them for its own tables — by position, by an explicit column list or BY NAME, the
columns left out NULL — static partition values are added, and every value is stored as Spark
stores it (ANSI store assignment, CHAR/VARCHAR lengths: :func:`paimon_sql.spark.write.assign`), so
the same statement on a Paimon table and on a Spark table gives the same rows or the same error.
BY NAME with ``write.merge-schema`` adds the query's new columns to the table first. The
distributed write commits one snapshot; a failing write commits nothing.

UPDATE and DELETE run as paimon-spark runs them (which merge engine takes which, which columns may
be assigned: :mod:`paimon_sql.sql.row_rules`). On primary-key tables they write the changed rows
with their row kind (+U, -D): the LSM tree's merge applies them, no file is rewritten. The rows are
selected by a query over the table itself (so the WHERE prunes partitions and files like any
query). A DELETE the merge engine cannot apply as -D rows rewrites the files holding the rows. On
append tables the matching rows' positions are deleted by deletion vectors (or copy-on-write of
the touched files) and UPDATE writes their new values, in one snapshot. TRUNCATE, DELETE without
WHERE and DELETE with a WHERE on partition columns only commit an OVERWRITE that drops the files.
Each statement's snapshots record it as their ``operation``, with paimon-spark's names.
"""

from __future__ import annotations

import itertools
import json
from contextlib import contextmanager
from functools import partial
from typing import Callable, Dict, List, Optional, Tuple

import pyarrow as pa
from pyspark.sql import functions as F
from pyspark.sql import types as T
from sqlglot import exp

from paimon_sql.commit.table_commit import OPERATION
from paimon_sql.data import binary_row, row_kind
from paimon_sql.data.types import RowType
from paimon_sql.exceptions import PaimonError, SchemaError
from paimon_sql.read import data_evolution
from paimon_sql.read.metadata_columns import row_tracking
from paimon_sql.read.split_read import FILE_COLUMN, POSITION_COLUMN
from paimon_sql.schema.table_schema import ROW_ID
from paimon_sql.spark import format_table as spark_format_table
from paimon_sql.spark.columns import ROWKIND_COLUMN
from paimon_sql.spark.scan import source_reader
from paimon_sql.spark.tasks import guarded, run_tasks
from paimon_sql.spark.types import spark_type
from paimon_sql.spark.write import EXPLICIT_CAST, MERGE_SCHEMA, add_columns, assign, assign_sql, option_enabled
from paimon_sql.sql import cache, parse, row_rules
from paimon_sql.sql.alter import column_path
from paimon_sql.sql.query import pushed_predicate, scan_options, session_options
from paimon_sql.table import fallback_read
from paimon_sql.table import format_table
from paimon_sql.write import data_evolution_write
from paimon_sql.write.row_delete import delete_messages, positions_of, rows_in_files
from paimon_sql.write.row_tracking_write import write_tracked


def _partition_spec(node: exp.Expression) -> Dict[str, object]:
    """Static partition values of ``PARTITION (dt='x', h)`` (dynamic columns are left out)."""
    part = node.args.get("partition")
    spec = {}
    for e in (part.expressions if part else []):
        if isinstance(e, exp.EQ):
            value = e.expression
            spec[e.this.name] = None if isinstance(value, exp.Null) else (
                value.this if value.is_string else value.to_py())
    return spec


def _target(node: exp.Insert) -> Tuple[exp.Table, List[str]]:
    """The table an INSERT names and its explicit column list (empty when it has none)."""
    if isinstance(node.this, exp.Schema):
        return node.this.this, [c.name for c in node.this.expressions]
    return node.this, []


def _folder(session) -> Callable[[str], str]:
    """How column names compare: Spark's ``spark.sql.caseSensitive`` (off by default)."""
    sensitive = session.spark.conf.get("spark.sql.caseSensitive", "false").lower() == "true"
    return (lambda n: n) if sensitive else str.lower


def _arity(table, columns: List[str], data: List[str]) -> None:
    """Spark's INSERT_COLUMN_ARITY_MISMATCH: the query must give one value per column it fills."""
    if len(data) != len(columns):
        reason = "TOO_MANY" if len(data) > len(columns) else "NOT_ENOUGH"
        raise SchemaError(f"[INSERT_COLUMN_ARITY_MISMATCH.{reason}_DATA_COLUMNS] INSERT into {table.name}: the query "
                          f"has {len(data)} column(s), the table expects {len(columns)} ({', '.join(columns)})")


def _listed(table, expected: List[str], columns: List[str], fold) -> List[str]:
    """The table columns an explicit column list names (as Spark resolves it)."""
    by_key = {fold(n): n for n in expected}
    out = []
    for c in columns:
        if fold(c) not in by_key:
            raise SchemaError(f"[UNRESOLVED_COLUMN.WITH_SUGGESTION] table {table.name} has no column `{c}` "
                              f"(columns: {', '.join(expected)})")
        if by_key[fold(c)] in out:
            raise SchemaError(f"[COLUMN_ALREADY_EXISTS] The column `{c}` is listed twice")
        out.append(by_key[fold(c)])
    return out


def _by_name(table, expected: List[str], data: List[str], fold) -> Tuple[Dict[str, int], List[int]]:
    """BY NAME: each table column → the index of the query column of its name (columns the query
    lacks are left out: they get NULL), and the indexes of query columns the table lacks."""
    index: Dict[str, int] = {}
    for i, name in enumerate(data):
        if fold(name) in index:
            raise SchemaError(f"[INCOMPATIBLE_DATA_FOR_TABLE.AMBIGUOUS_COLUMN_NAME] Cannot write to {table.name}: "
                              f"the query has column `{name}` more than once")
        index[fold(name)] = i
    picked = {c: index.pop(fold(c)) for c in expected if fold(c) in index}
    return picked, sorted(index.values())


def _extra_columns(table, source, extra: List[int], expected: List[str]):
    """BY NAME with query columns the table lacks: with ``write.merge-schema`` they are added to the
    table (returned at its new schema), as paimon-spark does; otherwise Spark's error naming them."""
    names = [source.columns[i] for i in extra]
    if not option_enabled(table, MERGE_SCHEMA):
        condition = ("INSERT_COLUMN_ARITY_MISMATCH.TOO_MANY_DATA_COLUMNS" if len(source.columns) > len(expected)
                     else "INCOMPATIBLE_DATA_FOR_TABLE.EXTRA_COLUMNS")
        raise SchemaError(f"[{condition}] Cannot write to {table.name}: column(s) {', '.join(names)} of the query "
                          f"are not in the table (set '{MERGE_SCHEMA}' = 'true' to add them)")
    return add_columns(table, [source.schema.fields[i] for i in extra])


def _stored(table, source, picked: Dict[str, int], spec: Dict[str, object]):
    """The table's columns from the query's (picked by index, so names may repeat or be missing),
    static partition values and NULL for the rest, each stored as Spark stores it."""
    data = source.toDF(*[f"_{i}" for i in range(len(source.columns))])
    types = [f.dataType for f in source.schema.fields]
    any_cast = option_enabled(table, MERGE_SCHEMA) and option_enabled(table, EXPLICIT_CAST)
    texts = [assign_sql(f"_{picked[f.name]}", types[picked[f.name]], f, table.name, any_cast) if f.name in picked
             else assign_sql(None, T.NullType(), f, table.name) if spec.get(f.name) is None else None
             for f in table.schema.fields]
    if None not in texts:
        return data.selectExpr(*texts)
    out = []
    for f in table.schema.fields:
        if f.name in picked:
            i = picked[f.name]
            out.append(assign(F.col(f"_{i}"), types[i], f, table.name, any_cast))
        else:
            out.append(F.lit(spec.get(f.name)).cast(spark_type(f.type)).alias(f.name))
    return data.select(*out)


def insert(session, node: exp.Insert):
    """INSERT as Spark inserts into its own tables: by position, by an explicit column list (the
    table's other columns get NULL) or BY NAME (likewise); arity, names and casts are checked by
    Spark's rules and fail with its condition names."""
    target, columns = _target(node)
    table = session.find_table(target)  # SET spark.paimon.*, then /*+ OPTIONS(...) */ after the name
    table = table.copy({**session_options(session, table), **scan_options(target)})
    if node.args.get("where") is not None:  # as Spark for its own file tables, not taken as a plain INSERT
        raise PaimonError(f"[UNSUPPORTED_FEATURE.TABLE_OPERATION] The feature is not supported: Table {table.name} "
                          "does not support INSERT INTO ... REPLACE WHERE (use INSERT OVERWRITE ... PARTITION (...), "
                          "or DELETE and INSERT)")
    spec = _partition_spec(target)
    unknown = [k for k in spec if k not in table.schema.partition_keys]
    if unknown:
        raise SchemaError(f"PARTITION names non-partition column(s) of {table.name}: {', '.join(unknown)}")
    source = session.query_dataframe(node.expression, parse.query_text(parse.prepare(session.text), node.expression))
    expected = [n for n in table.schema.field_names if n not in spec]
    fold = _folder(session)
    if node.args.get("by_name"):
        picked, extra = _by_name(table, expected, source.columns, fold)
        if extra:
            table = _extra_columns(table, source, extra, expected)
            picked.update({source.columns[i]: i for i in extra})
    else:
        filled = _listed(table, expected, columns, fold) if columns else expected
        _arity(table, filled, source.columns)
        picked = {c: i for i, c in enumerate(filled)}
    overwrite = bool(node.args.get("overwrite"))
    dynamic = session.spark.conf.get("spark.sql.sources.partitionOverwriteMode", "static").lower() == "dynamic"
    table = recording(table, "OVERWRITE" if overwrite else "WRITE")
    session.write(_stored(table, source, picked, spec), table, overwrite=overwrite,
                  partition_spec=spec if overwrite else None, dynamic=dynamic and overwrite)
    return None


# -- row-level changes --------------------------------------------------------------------------

def write_changes(session, table, df) -> None:
    """Write a DataFrame of the table's columns plus a row-kind column (one snapshot)."""
    session.write(with_table_types(table, df, F.col(ROWKIND_COLUMN).cast("tinyint").alias(ROWKIND_COLUMN)), table)


def _rows_of(target: exp.Table, table, where, values: Dict[str, exp.Expression], kind: int) -> exp.Select:
    qualifier = target.alias_or_name
    select = [(values[f].copy() if f in values else exp.column(f, table=qualifier)).as_(f)
              for f in table.schema.field_names]
    query = exp.select(*select, exp.Literal.number(kind).as_(ROWKIND_COLUMN)).from_(target.copy())
    return query.where(where.this.copy()) if where is not None else query


def _file_assignment(tree: dict, path: Tuple[str, ...], value: exp.Expression) -> None:
    """Put ``value`` at ``path`` of the assignment tree; one column assigned whole and by field, or
    twice, fails as paimon-spark fails it."""
    here = tree
    for depth, name in enumerate(path):
        so_far = ".".join(path[:depth + 1])
        last = depth == len(path) - 1
        if name in here and (last or isinstance(here[name], exp.Expression)):
            kind = "Multiple" if last and isinstance(here[name], exp.Expression) else "Conflicting"
            raise SchemaError(f"{kind} assignments for '{so_far}'")
        if last:
            here[name] = value
        else:
            here = here.setdefault(name, {})


def _assigned_value(assigned, ref: exp.Expression, ftype, name: str) -> exp.Expression:
    """A column's new value: as assigned, or — fields assigned — a ``named_struct`` of its fields,
    the unassigned ones read from the row (as Spark aligns nested assignments)."""
    if isinstance(assigned, exp.Expression):
        return assigned.copy()
    if not isinstance(ftype, RowType):
        raise SchemaError(f"Updating nested fields is only supported for StructType but '{name}' is of type "
                          f"{spark_type(ftype).lower()}")
    unknown = [k for k in assigned if k not in {f.name for f in ftype.fields}]
    if unknown:
        raise SchemaError(f"[FIELD_NOT_FOUND] No such struct field `{unknown[0]}` in `{name}`")
    args = []
    for f in ftype.fields:
        field_ref = exp.Dot(this=ref.copy(), expression=exp.to_identifier(f.name))
        args += [exp.Literal.string(f.name),
                 _assigned_value(assigned[f.name], field_ref, f.type, f"{name}.{f.name}") if f.name in assigned
                 else field_ref]
    return exp.Anonymous(this="named_struct", expressions=args)


def assignments(table, target: exp.Table, node) -> Dict[str, exp.Expression]:
    """UPDATE's SET as each changed top-level column's new value. ``SET s.f = v`` assigns field f of
    struct column s (``t.s.f``, qualified by the table's name or alias, too)."""
    qualifier = target.alias_or_name
    tree: dict = {}
    for eq in node.expressions:
        path = column_path(eq.this)
        if len(path) > 1 and path[0].lower() == qualifier.lower() and path[1] in table.schema.field_names:
            path = path[1:]
        _file_assignment(tree, path, eq.expression)
    row_rules.check_columns(table, list(tree))
    return {name: _assigned_value(v, exp.column(name, table=qualifier), table.schema.field(name).type, name)
            for name, v in tree.items()}


def recording(table, operation: str):
    """``table`` whose commits record ``operation`` in their snapshots, as paimon-spark's do (a
    format table has no snapshots)."""
    return table if isinstance(table, format_table.FormatTable) else table.copy({OPERATION: operation})


def update(session, node: exp.Update):
    table = session.find_table(node.this)
    format_table.refuse(table, "UPDATE")
    table = recording(table, "MERGE" if data_evolution.enabled(table) else "UPDATE")  # paimon-spark's names
    fallback_read.check_own_rows(table, "UPDATE")
    row_rules.check_engine(table, "UPDATE")
    sets = assignments(table, node.this, node)
    row_rules.check_update(table, row_rules.modified(sets, [node.this.alias_or_name.lower(), table.name.lower()]))
    if not table.schema.is_primary_key_table:
        return change_append_rows(session, node.this, table, node.args.get("where"), sets)
    query = _rows_of(node.this, table, node.args.get("where"), sets, row_kind.UPDATE_AFTER)
    write_changes(session, table, session.query_dataframe(query))
    return None


def delete(session, node: exp.Delete):
    """DELETE as paimon-spark runs it: without WHERE, or with one on partition columns only, an
    OVERWRITE that drops the files (of the matching partitions); else ``-D`` rows on a primary-key
    table whose merge engine applies them, the touched files rewritten on the other primary-key
    tables (:mod:`paimon_sql.sql.row_rules`), deletion vectors or copy-on-write on append tables."""
    where = node.args.get("where")
    table = session.find_table(node.this)
    format_table.refuse(table, "DELETE")
    fallback_read.check_own_rows(table, "DELETE")
    if data_evolution.enabled(table) and not table.options.get("deletion-vectors.enabled"):
        raise PaimonError(f"table {table.name}: Can only perform deletion operation on data evolution tables with "
                          "DeletionVector enabled.")
    if where is None:
        recording(table, "TRUNCATE").new_commit().overwrite([])
        return None
    partitions = _partitions_where(session, node.this, table, where)
    if partitions is not None:
        if partitions:
            recording(table, "TRUNCATE").new_commit().drop_partitions(partitions)
        return None
    table = recording(table, "DELETE")
    if row_rules.deletes_by_row(table):
        write_changes(session, table, session.query_dataframe(_rows_of(node.this, table, where, {}, row_kind.DELETE)))
        return None
    if table.schema.is_primary_key_table:
        return _delete_from_files(session, node.this, table, where)
    return change_append_rows(session, node.this, table, where, None)


def _partitions_where(session, target: exp.Table, table, where) -> Optional[List[Dict[str, object]]]:
    """The live partitions a WHERE on partition columns only selects (Spark evaluates it over their
    values), as specs; None when it names another column (or the table has no partitions), or the
    table asks for a changelog of deletes (``delete.force-produce-changelog``)."""
    keys = table.schema.partition_keys
    named = {c.name.lower() for c in where.find_all(exp.Column) if c.find_ancestor(exp.Select) is None}
    if not keys or not named <= {k.lower() for k in keys} or \
            table.options.raw.get("delete.force-produce-changelog", "false").lower() == "true":
        return None
    fields = table.schema.fields_of(keys)
    types = [f.type for f in fields]
    values = [binary_row.from_bytes(p, types) for p in {e.partition for e in table.new_scan().plan_entries()}]
    rows = pa.Table.from_pylist([dict(zip(keys, v)) for v in values],
                                pa.schema([(f.name, f.type.to_arrow()) for f in fields]))
    return _matching(session, target, rows, where, keys).to_pylist() if values else []


def _matching(session, target: exp.Table, rows: pa.Table, where, columns: List[str]) -> pa.Table:
    """``columns`` of the ``rows`` (read by us, named as the target's) that ``where`` selects, as
    Spark evaluates it (the target's alias or name qualifies them)."""
    view = f"__paimon_rows_{next(_VIEW_IDS)}"
    session.spark.createDataFrame(rows).createOrReplaceTempView(view)
    try:
        alias = target.alias_or_name
        relation = exp.Table(this=exp.to_identifier(view), alias=exp.TableAlias(this=exp.to_identifier(alias)))
        query = exp.select(*[exp.column(c, table=alias) for c in columns]).from_(relation).where(where.this.copy())
        return session.query_dataframe(query).toArrow()
    finally:
        session.spark.catalog.dropTempView(view)


def _delete_from_files(session, target: exp.Table, table, where):
    """DELETE on a primary-key table whose merge engine applies no ``-D`` row, as paimon-spark runs
    it: the rows of the files its filter may match are read as they lie (:func:`rows_in_files`);
    the matching ones are deleted by deletion vectors, or their files rewritten without them."""
    predicate = pushed_predicate(session, exp.select("*").from_(target.copy()).where(where.this.copy()))
    gone = _matching(session, target, rows_in_files(table, predicate), where, [FILE_COLUMN, POSITION_COLUMN])
    table.new_commit().commit_or_abort(delete_messages(table, positions_of(table, gone)))
    return None


def truncate(session, node: exp.TruncateTable):
    """TRUNCATE TABLE t [PARTITION (k = v, ...)]: one OVERWRITE snapshot removing the table's (or
    the partitions') files. A PARTITION clause on a table without those partition keys fails, and
    so does one naming some of them that matches no partition."""
    table = session.find_table(node.expressions[0])
    spec = _partition_spec(node)
    unknown = [k for k in spec if k not in table.schema.partition_keys]
    if unknown or (node.args.get("partition") and not spec):
        raise SchemaError(f"TRUNCATE TABLE {table.name} PARTITION: {', '.join(unknown) or 'the spec'} "
                          f"is not a partition column of the table")
    if isinstance(table, format_table.FormatTable):  # its files, or its partitions' directories, go
        spark_format_table.truncate(session.spark, table, spec)
        return cache.refresh(session, table)
    if spec and len(spec) < len(table.schema.partition_keys) and not table.has_partition(spec):
        # as paimon-spark: the partitions a partial spec names are listed, and none is an error
        shown = ", ".join(f"{k} = {v}" for k, v in spec.items())
        raise SchemaError(f"[PARTITIONS_NOT_FOUND] The partition(s) PARTITION ({shown}) cannot be found in table "
                          f"{table.name}")
    recording(table, "TRUNCATE").new_commit().overwrite([], partition=spec or None)
    return None


_VIEW_IDS = itertools.count()


@contextmanager
def located_rows(session, table, snapshot=None, columns: Optional[List[str]] = None):
    """A temporary view of an append table's live rows plus each row's data file and position (as
    of ``snapshot``, default the latest when read; only ``columns`` of the table's, if given)."""
    view = f"__paimon_rows_{next(_VIEW_IDS)}"
    reader = source_reader(session.spark, table, session.warehouse, session.catalog_options, snapshot)
    if columns is not None:
        reader = reader.option("paimon.columns", json.dumps(columns))
    reader.option("paimon.positions", "true").load(table.name).createOrReplaceTempView(view)
    try:
        yield view
    finally:
        session.spark.catalog.dropTempView(view)


def with_table_types(table, df, *extra: str):
    """The table's columns stored as an INSERT stores them (:func:`assign`), plus ``extra`` columns
    as they are."""
    types = {f.name: f.dataType for f in df.schema.fields}
    return df.select(*[assign(F.col(f"`{f.name}`"), types[f.name], f, table.name) for f in table.schema.fields],
                     *extra)


def located_columns(table) -> List[str]:
    """What locates a row of an append table: its data file and position, and on a row-tracking
    table its ``_ROW_ID`` (kept when the row is written anew)."""
    return [FILE_COLUMN, POSITION_COLUMN] + ([ROW_ID] if row_tracking(table.schema) else [])


def commit_append_changes(table, gone: pa.Table, changed: Optional[pa.Table],
                          inserted: Optional[pa.Table] = None) -> None:
    """One snapshot that deletes the rows ``gone`` names (data file, position) — by deletion vectors
    or copy-on-write — and writes the ``changed`` rows (on a row-tracking table with the ``_ROW_ID``
    they carry) and the ``inserted`` ones (new rows: new ids)."""
    messages = delete_messages(table, positions_of(table, gone))
    tracked = row_tracking(table.schema)
    plain = [t for t in ([inserted] if tracked else [changed, inserted]) if t is not None and t.num_rows]
    if tracked and changed is not None and changed.num_rows:
        try:
            messages += write_tracked(table, changed.select(table.schema.field_names + [ROW_ID]))
        except BaseException:
            table.new_commit().abort(messages)
            raise
    if plain:
        write = table.new_write()
        try:
            for rows in plain:
                write.write_arrow(rows.select(table.schema.field_names))
            messages += write.prepare_commit()
        except BaseException:
            write.abort(messages)
            raise
    table.new_commit().commit_or_abort(messages)


def update_columns(session, target: exp.Table, table, where, sets: Dict[str, exp.Expression]):
    """UPDATE on a data-evolution table: the assigned columns of the groups holding matching rows
    are written anew, nothing else (:mod:`paimon_sql.write.data_evolution_write`)."""
    columns = [f for f in table.schema.field_names if f in sets]
    snapshot = table.snapshot_manager.latest()
    if snapshot is None:
        return None
    qualifier = target.alias_or_name
    with located_rows(session, table, snapshot, _referenced(table, [*sets.values(), where])) as view:
        source = exp.Table(this=exp.to_identifier(view), alias=exp.TableAlias(this=exp.to_identifier(qualifier)))
        located = [exp.column(FILE_COLUMN, table=qualifier), exp.column(POSITION_COLUMN, table=qualifier)]
        query = exp.select(*[sets[c].copy().as_(c) for c in columns], *located).from_(source)
        if where is not None:
            query = query.where(where.this.copy())
        df = session.query_dataframe(query)
        types = {f.name: f.dataType for f in df.schema.fields}
        df = df.select(*[assign(F.col(f"`{c}`"), types[c], table.schema.field(c), table.name) for c in columns],
                       FILE_COLUMN, POSITION_COLUMN)
        rows = df.toArrow()
    if rows.num_rows:
        table.new_commit().commit_or_abort(data_evolution_write.update_columns(
            table, rows, columns, snapshot.id, run=group_tasks(session, table, "UPDATE")))
    return None


def group_tasks(session, table, verb: str):
    """``run(fn, items)``: one guarded Spark task per item (a data-evolution update's row id groups)."""
    def run(fn, items):
        return run_tasks(session.spark, f"paimon {verb} {table.name}", partial(guarded, fn), items)
    return run


def _referenced(table, nodes) -> Optional[List[str]]:
    """The table's columns the expressions ``nodes`` may name (Spark matches names without case),
    at least one; None (every column) when one holds a ``*``."""
    nodes = [n for n in nodes if n is not None]
    if any(n.find(exp.Star) is not None for n in nodes):
        return None
    named = {c.name.lower() for n in nodes for c in n.find_all(exp.Column)}
    return [f for f in table.schema.field_names if f.lower() in named] or table.schema.field_names[:1]


def change_append_rows(session, target: exp.Table, table, where, sets: Optional[Dict[str, exp.Expression]]):
    """UPDATE (``sets``) or DELETE on an append table: Spark finds the matching rows' data files and
    positions; they are deleted and, for UPDATE, their new values written, in one snapshot."""
    if sets is not None and data_evolution.enabled(table):
        return update_columns(session, target, table, where, sets)
    qualifier = target.alias_or_name
    with located_rows(session, table) as view:
        source = exp.Table(this=exp.to_identifier(view), alias=exp.TableAlias(this=exp.to_identifier(qualifier)))
        located = [exp.column(c, table=qualifier) for c in located_columns(table)]
        values = [] if sets is None else [(sets[f].copy() if f in sets else exp.column(f, table=qualifier)).as_(f)
                                          for f in table.schema.field_names]
        query = exp.select(*values, *located).from_(source)
        if where is not None:
            query = query.where(where.this.copy())
        df = session.query_dataframe(query)
        if sets is not None:
            df = with_table_types(table, df, *located_columns(table))
        rows = df.toArrow()
    commit_append_changes(table, rows, rows if sets is not None else None)
    return None
