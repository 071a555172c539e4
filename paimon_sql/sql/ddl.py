"""DDL and catalog statements on Paimon tables: CREATE/DROP DATABASE|TABLE, USE, DESCRIBE, SHOW.

CREATE TABLE takes both forms: Flink's ``(..., PRIMARY KEY (a) NOT ENFORCED) PARTITIONED BY (dt)
WITH ('k'='v')`` and Spark's ``... PARTITIONED BY (dt) TBLPROPERTIES ('primary-key'='a')``, plus
CREATE TABLE AS SELECT and CREATE TABLE LIKE. ``USING <other format>`` is Spark's business and
passes through unchanged. Options shown (DESCRIBE, SHOW CREATE TABLE, SHOW TBLPROPERTIES) have
their secret values masked (:func:`redact`).
"""

from __future__ import annotations

import re
from typing import Dict, List, Optional, Tuple

from sqlglot import exp

from paimon_sql.catalog import Identifier
from paimon_sql.exceptions import PaimonError, SchemaError
from paimon_sql.format.options import redact
from paimon_sql.format.schema import TableSchema
from paimon_sql.format.types import DataField
from paimon_sql.spark.types import paimon_type_from_sql, spark_type
from paimon_sql.sql import parse
from paimon_sql.systables import SystemTable


def _literal_text(e: exp.Expression) -> str:
    return e.this if isinstance(e, exp.Literal) else e.name if isinstance(e, (exp.Identifier, exp.Var)) else e.sql()


def _properties(node: exp.Create) -> Tuple[Dict[str, str], List[str], Optional[str], Optional[str],
                                           Optional[exp.Table]]:
    """(options, partition keys, USING format, comment, LIKE source) of a CREATE."""
    options, partitions, using, comment, like = {}, [], None, None, None
    props = node.args.get("properties")
    for p in (props.expressions if props else []):
        if isinstance(p, exp.PartitionedByProperty):
            cols = p.this.expressions if isinstance(p.this, exp.Schema) else [p.this]
            partitions = [c.name for c in cols]
        elif isinstance(p, exp.FileFormatProperty):
            using = _literal_text(p.this).lower()
        elif isinstance(p, exp.SchemaCommentProperty):
            comment = _literal_text(p.this)
        elif isinstance(p, exp.LikeProperty):
            like = p.this
        elif isinstance(p, exp.Property) and p.args.get("value") is not None:  # LOCATION etc.: Spark's
            options[_literal_text(p.this)] = _literal_text(p.args["value"])
    return options, partitions, using, comment, like


def is_paimon_create(node: exp.Create) -> bool:
    if (node.args.get("kind") or "").upper() != "TABLE":
        return (node.args.get("kind") or "").upper() in ("DATABASE", "SCHEMA")
    using = _properties(node)[2]
    return using in (None, "paimon")


def _columns(schema: exp.Schema) -> Tuple[List[DataField], List[str]]:
    fields, primary = [], []
    for col in schema.expressions:
        if isinstance(col, exp.PrimaryKey):
            primary += [c.name for c in col.expressions]
            continue
        if not isinstance(col, exp.ColumnDef):
            continue
        ftype = paimon_type_from_sql(col.args["kind"].sql("spark"))
        description = None
        for c in col.args.get("constraints") or []:
            kind = c.args.get("kind")
            if isinstance(kind, exp.NotNullColumnConstraint) and not kind.args.get("allow_null"):
                ftype = ftype.copy(nullable=False)
            elif isinstance(kind, exp.CommentColumnConstraint):
                description = _literal_text(kind.this)
            elif isinstance(kind, exp.PrimaryKeyColumnConstraint):
                primary.append(col.name)
        fields.append(DataField(len(fields), col.name, ftype, description))
    return fields, primary


def create(session, node: exp.Create):
    kind = (node.args.get("kind") or "").upper()
    if kind in ("DATABASE", "SCHEMA"):
        session.catalog.create_database(node.this.name, ignore_if_exists=bool(node.args.get("exists")))
        return None
    options, partitions, _, comment, like = _properties(node)
    target = node.this.this if isinstance(node.this, exp.Schema) else node.this
    ident = Identifier.parse(f"`{target.db or session.current_database}`.`{target.name}`")
    exists = bool(node.args.get("exists"))
    if like is not None:
        source = session.catalog.get_table(session.identifier(like))
        s = source.schema
        schema = TableSchema.create(s.fields, s.partition_keys, s.primary_keys, {**s.options, **options}, s.comment)
        session.catalog.create_table(ident, schema, ignore_if_exists=exists)
        return None
    query = node.args.get("expression")
    if query is not None:  # CREATE TABLE AS SELECT
        if session.catalog.table_exists(ident):
            if exists:
                return None
            raise PaimonError(f"table {ident} already exists")
        df = session.query_dataframe(query, parse.query_text(parse.prepare(session.text), query))
        fields = [DataField(i, f.name, paimon_type_from_sql(f.dataType.simpleString()))
                  for i, f in enumerate(df.schema.fields)]
        table = session.catalog.create_table(ident, TableSchema.create(fields, partitions, [], options, comment))
        try:
            session.write(df, table)
        except BaseException:
            session.catalog.drop_table(ident, ignore_if_not_exists=True)
            raise
        return None
    if not isinstance(node.this, exp.Schema):
        raise SchemaError(f"CREATE TABLE {ident} needs a column list, AS SELECT or LIKE")
    fields, primary = _columns(node.this)
    schema = TableSchema.create(fields, partitions, primary, options, comment)
    session.catalog.create_table(ident, schema, ignore_if_exists=exists)
    return None


def drop(session, node: exp.Drop):
    kind = (node.args.get("kind") or "").upper()
    exists = bool(node.args.get("exists"))
    if kind in ("DATABASE", "SCHEMA"):
        target = node.this or node.args["tables"][0]  # sqlglot keeps DROP DATABASE's name in tables
        session.catalog.drop_database(target.name or target.db, ignore_if_not_exists=exists,
                                      cascade=bool(node.args.get("cascade")))
        return None
    for t in node.args.get("tables") or [node.this]:
        session.catalog.drop_table(session.identifier(t), ignore_if_not_exists=exists)
    return None


def use(session, node: exp.Use):
    """``USE db`` sets Spark's current database (made in Spark's catalog for a warehouse database)."""
    name = node.this.name
    if not session.catalog.database_exists(name) and not session.spark.catalog.databaseExists(name):
        from paimon_sql.exceptions import DatabaseNotFoundError
        raise DatabaseNotFoundError(f"database {name} does not exist")
    session.current_database = name
    return None


def describe(session, node: exp.Describe, ref):
    """Columns of a table, branch (``t$branch_b``) or system table (``t$files``)."""
    if isinstance(ref, SystemTable):  # its columns only
        return session.rows([(f.name, spark_type(f.type) + ("" if f.type.nullable else " NOT NULL"), "")
                             for f in ref.fields], ["col_name", "data_type", "comment"])
    table = ref
    s = table.schema
    rows = [(f.name, spark_type(f.type) + ("" if f.type.nullable else " NOT NULL"), f.description or "")
            for f in s.fields]
    if (node.args.get("style") or "").upper() in ("EXTENDED", "FORMATTED"):
        rows += [("", "", ""), ("# Paimon table", "", ""), ("Name", table.name, ""), ("Location", table.path, ""),
                 ("Primary keys", ", ".join(s.primary_keys), ""), ("Partition keys", ", ".join(s.partition_keys), ""),
                 ("Comment", s.comment or "", "")]
        rows += [(f"Option {k}", v, "") for k, v in sorted(redact(s.options).items())]
    return session.rows(rows, ["col_name", "data_type", "comment"])


def show_create_table(session, table) -> str:
    s = table.schema
    cols = [f"  `{f.name}` {spark_type(f.type)}{'' if f.type.nullable else ' NOT NULL'}"
            + (f" COMMENT '{f.description}'" if f.description else "") for f in s.fields]
    if s.primary_keys:
        cols.append(f"  PRIMARY KEY ({', '.join(s.primary_keys)}) NOT ENFORCED")
    text = f"CREATE TABLE {table.name} (\n" + ",\n".join(cols) + "\n)"
    if s.comment:
        text += f"\nCOMMENT '{s.comment}'"
    if s.partition_keys:
        text += f"\nPARTITIONED BY ({', '.join(s.partition_keys)})"
    if s.options:
        text += "\nWITH (\n" + ",\n".join(f"  '{k}' = '{v}'" for k, v in sorted(redact(s.options).items())) + "\n)"
    return text


def show_tblproperties(session, text: str):
    """``SHOW TBLPROPERTIES t [('key')]``: the table's options as (key, value) rows, as Spark prints
    them; a table the warehouse does not have is Spark's."""
    m = re.fullmatch(r"(?P<table>[^(]+?)\s*(?:\(\s*(?P<key>[^)]*?)\s*\))?\s*", text, re.S)
    table = session.find_table(parse.table_reference(m.group("table"))) if m else None
    if table is None:
        return session.passthrough()
    options = redact(table.schema.options)
    key = (m.group("key") or "").strip("'\"`")
    if key:
        options = {key: options.get(key, f"Table {table.name} does not have property: {key}")}
    return session.rows(sorted(options.items()), ["key", "value"])
