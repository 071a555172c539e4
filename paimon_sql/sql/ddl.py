"""DDL on Paimon tables: CREATE/DROP DATABASE|TABLE, USE, SHOW CREATE TABLE.

CREATE TABLE takes both forms: Flink's ``(..., PRIMARY KEY (a) NOT ENFORCED) PARTITIONED BY (dt)
WITH ('k'='v')`` and Spark's ``... PARTITIONED BY (dt) TBLPROPERTIES ('primary-key'='a')``, plus
CREATE TABLE AS SELECT and CREATE TABLE LIKE. ``USING <other format>`` is Spark's business and
passes through unchanged. CREATE OR REPLACE TABLE replaces a Paimon table as paimon-spark does
(:meth:`FileSystemCatalog.replace_table`). The properties Spark reserves (``owner``, ``location``,
``provider``, ...) are refused in TBLPROPERTIES and WITH as Spark's parser refuses them, and
``comment`` there is the table's comment, as in Spark. SHOW and DESCRIBE are :mod:`show`'s and
:mod:`describe`'s.
"""

from __future__ import annotations

import re
from typing import Dict, List, Optional, Tuple

from sqlglot import exp

from paimon_sql.catalog import Identifier
from paimon_sql.catalog.base import DEFAULT_DATABASE
from paimon_sql.commit.table_commit import OPERATION
from paimon_sql.data.types import DataField, paimon_type_from_sql
from paimon_sql.exceptions import (DatabaseAlreadyExistsError, DatabaseNotEmptyError, DatabaseNotFoundError,
                                   InvalidOptionError, PaimonError, SchemaError, TableAlreadyExistsError,
                                   TableNotFoundError)
from paimon_sql.schema.table_schema import TableSchema
from paimon_sql.sql import describe, parse
from paimon_sql.table import object_table


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
    text = options.pop("comment", None)  # Spark's table comment, the COMMENT clause winning
    return options, partitions, using, comment if comment is not None else text, like


_DATABASE_KINDS = ("DATABASE", "SCHEMA", "NAMESPACE")


def is_paimon_create(node: exp.Create) -> bool:
    if (node.args.get("kind") or "").upper() != "TABLE":
        return (node.args.get("kind") or "").upper() in _DATABASE_KINDS
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


# Spark gives every table its v2 catalogs create the creating user as the property ``owner``
# (CatalogV2Util.withDefaultOwnership), which paimon-spark keeps as a table option (Catalog.OWNER_PROP)
OWNER = "owner"


def create(session, node: exp.Create):
    if (node.args.get("kind") or "").upper() in _DATABASE_KINDS:
        return _create_database(session, node)
    options, partitions, _, comment, like = _properties(node)
    for key in options:
        error = describe.refused_property(key)
        if error:
            raise InvalidOptionError(error)
    target = node.this.this if isinstance(node.this, exp.Schema) else node.this
    ident = Identifier.parse(f"`{target.db or session.current_database}`.`{target.name}`")
    props = node.args.get("properties")
    _own_location(session, ident, options, [_literal_text(p.this) for p in (props.expressions if props else [])
                                            if isinstance(p, exp.LocationProperty)])
    exists, replace = bool(node.args.get("exists")), bool(node.args.get("replace"))
    if not session.catalog.database_exists(ident.database):
        raise DatabaseNotFoundError(f"[SCHEMA_NOT_FOUND] The schema `{ident.database}` cannot be found. Verify the "
                                    "spelling and correctness of the schema and catalog.")
    if not exists and not replace and session.catalog.table_exists(ident):
        raise TableAlreadyExistsError(f"[TABLE_OR_VIEW_ALREADY_EXISTS] Cannot create table or view "
                                      f"`{ident.database}`.`{ident.table}` because it already exists.")
    if like is not None:
        source = session.find_table(like)
        if source is None:
            raise TableNotFoundError(f"[TABLE_OR_VIEW_NOT_FOUND] The table or view {session.identifier(like)} cannot "
                                     "be found. Verify the spelling and correctness of the schema and catalog.")
        s = source.schema  # its options but its owner, as paimon-spark's CREATE TABLE LIKE copies them
        copied = {k: v for k, v in s.options.items() if k != OWNER}
        schema = TableSchema.create(s.fields, s.partition_keys, s.primary_keys, {**copied, **options}, s.comment)
        session.catalog.create_table(ident, schema, ignore_if_exists=exists)
        return None
    options = {**options, OWNER: session.spark.sparkContext.sparkUser()}
    query = node.args.get("expression")
    if query is not None:
        return _create_as_select(session, ident, query, (partitions, options, comment), exists, replace)
    fields, primary = _columns(node.this) if isinstance(node.this, exp.Schema) else ([], [])
    _refuse_repeated([f.name for f in fields], session)
    if options.get("type", "").strip().lower() == "object-table":  # its columns are Paimon's
        fields = fields or object_table.FIELDS
    elif not fields:
        raise SchemaError(f"CREATE TABLE {ident} needs a column list, AS SELECT or LIKE")
    schema = TableSchema.create(fields, partitions, primary, options, comment)
    if replace and session.catalog.table_exists(ident):
        session.catalog.replace_table(ident, schema)
    else:
        session.catalog.create_table(ident, schema, ignore_if_exists=exists)
    return None


def _own_location(session, ident: Identifier, options: Dict[str, str], locations: List[str]) -> None:
    """A LOCATION clause, or a ``path`` option, naming where the catalog puts the table anyway (as
    SHOW CREATE TABLE writes them) is dropped; another LOCATION is refused (another ``path`` is
    left to the option checks, which refuse it)."""
    own = (session.catalog.table_path(ident) or "").rstrip("/")  # none yet: a REST server picks it
    if own and _bare(options.get("path", "")) == _bare(own):
        del options["path"]
    if any(not own or _bare(where) != _bare(own) for where in locations):
        raise InvalidOptionError(f"CREATE TABLE {ident}: a LOCATION is not supported (a table lives where its "
                                 "catalog puts it, <warehouse>/<db>.db/<table>)")


def _bare(path: str) -> str:
    return re.sub(r"^file:(//)?(?=/)", "", path).rstrip("/")


def _refuse_repeated(names: List[str], session) -> None:
    """Spark's error for a column named twice (ignoring case, unless ``spark.sql.caseSensitive``)."""
    seen = set()
    for name in names:
        key = name if session._case_sensitive() else name.lower()
        if key in seen:
            raise SchemaError(f"[COLUMN_ALREADY_EXISTS] The column `{name}` already exists. Choose another name or "
                              "rename the existing column. SQLSTATE: 42711")
        seen.add(key)


def _create_database(session, node: exp.Create):
    """CREATE DATABASE [IF NOT EXISTS] db [COMMENT 'c']: a warehouse database, its comment kept
    with it (DESCRIBE DATABASE shows it). LOCATION is refused, as Paimon's filesystem catalog
    refuses it: a database is always ``<warehouse>/<db>.db``."""
    props = node.args.get("properties")
    props = props.expressions if props else []
    if any(isinstance(p, exp.LocationProperty) for p in props):
        raise PaimonError(f"CREATE DATABASE {node.this.name}: a database of the filesystem catalog cannot have "
                          "a LOCATION (it is <warehouse>/<db>.db)")
    name = node.this.name or node.this.db  # sqlglot names a SCHEMA as a table's database
    exists = session.catalog.database_exists(name)
    if exists and not node.args.get("exists"):
        raise DatabaseAlreadyExistsError(f"[SCHEMA_ALREADY_EXISTS] Cannot create schema `{name}` because it "
                                         "already exists.")
    session.catalog.create_database(name, ignore_if_exists=True)
    comments = [_literal_text(p.this) for p in props if isinstance(p, exp.SchemaCommentProperty)]
    if comments and not exists:
        session.catalog.alter_database(name, {"comment": comments[0]})
    return None


def _create_as_select(session, ident: Identifier, query: exp.Expression, layout, exists: bool, replace: bool):
    """CREATE [OR REPLACE] TABLE ... AS SELECT: the query is analysed before the table is touched
    (a query reading the table it replaces is read first), its rows written in one snapshot. A new
    table whose write fails is dropped; a replaced one is left empty with its new schema, as
    paimon-spark leaves it (its old rows stay readable by time travel)."""
    partitions, options, comment = layout
    existing = session.catalog.table_exists(ident)
    if existing and not replace:
        if exists:
            return None
        raise TableAlreadyExistsError(f"table {ident} already exists")
    df = session.query_dataframe(query, parse.query_text(parse.prepare(session.text), query))
    fields = [DataField(i, f.name, paimon_type_from_sql(f.dataType.simpleString()))
              for i, f in enumerate(df.schema.fields)]
    schema = TableSchema.create(fields, partitions, [], options, comment)
    named = {((t.db or session.current_database).lower(), t.name.lower()) for t in query.find_all(exp.Table)}
    if existing and (ident.database.lower(), ident.table.lower()) in named:
        df = df.localCheckpoint()  # its rows before the table is emptied
    table = session.catalog.replace_table(ident, schema) if existing else session.catalog.create_table(ident, schema)
    operation = "CREATE_OR_REPLACE_TABLE_AS_SELECT" if replace else "CREATE_TABLE_AS_SELECT"
    try:  # a replacing write overwrites (an OVERWRITE snapshot), as paimon-spark's, the table new or not
        session.write(df, table.copy({OPERATION: operation}), overwrite=replace)
    except BaseException:
        if not existing:
            session.catalog.drop_table(ident, ignore_if_not_exists=True)
        raise
    return None


def drop(session, node: exp.Drop):
    exists = bool(node.args.get("exists"))
    for t in node.args.get("tables") or [node.this]:
        session.catalog.drop_table(session.identifier(t), ignore_if_not_exists=exists)
    return None


def drop_database(session, node: exp.Drop):
    """DROP DATABASE [IF EXISTS] db [RESTRICT | CASCADE] of a warehouse database. Its objects are
    the warehouse's tables and Spark's own in a database of the same name: CASCADE drops both, and
    without it any object fails the drop as Spark's SCHEMA_NOT_EMPTY. Databases only Spark has, and
    ``default`` (which Spark refuses to drop), are Spark's."""
    target = node.this or node.args["tables"][0]  # sqlglot keeps DROP DATABASE's name in tables
    name = target.name or target.db
    db = session.database_name(name)
    if db is None or db.lower() == DEFAULT_DATABASE:
        return session.passthrough()
    in_spark = session.spark.catalog.databaseExists(db)
    spark_tables = [t.name for t in session.spark.catalog.listTables(db) if not t.isTemporary] if in_spark else []
    cascade = bool(node.args.get("cascade"))
    if not cascade and (spark_tables or session.catalog.list_tables(db) or session.catalog.list_views(db)):
        raise DatabaseNotEmptyError(f"[SCHEMA_NOT_EMPTY] Cannot drop a schema `{db}` because it contains objects. "
                                    "Use DROP SCHEMA ... CASCADE to drop the schema and all its objects.")
    session.catalog.drop_database(db, cascade=True)
    if in_spark:
        session.spark_sql(f"DROP DATABASE `{db.replace('`', '``')}`" + (" CASCADE" if cascade else ""))
    return None


def use(session, node: exp.Use):
    """``USE db`` sets Spark's current database (made in Spark's catalog for a warehouse database)."""
    name = node.this.name
    if not session.catalog.database_exists(name) and not session.spark.catalog.databaseExists(name):
        raise DatabaseNotFoundError(f"[SCHEMA_NOT_FOUND] The schema `{name}` cannot be found. Verify the spelling and "
                                    "correctness of the schema and catalog.")
    session.current_database = name
    return None
