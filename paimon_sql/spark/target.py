"""Where a DataFrame API write goes, and the table it creates when there is none.

A write names ``db.t`` of the connected session's warehouse (or of option ``warehouse``), or a
table location (:func:`paimon_sql.spark.source.is_location`). A missing table is created from the
DataFrame's schema as paimon-spark creates one: options ``primary-key`` and ``partition``
(comma-separated) or Spark's ``partitionBy``, ``bucket`` and any other table option; columns are
nullable but the primary key's, as Spark's CREATE TABLE AS SELECT makes them. The options that
locate a table or steer one write (``warehouse``, ``checkpointLocation``, ``write.merge-schema``,
``s3.*``...) are never stored as table options.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, List, Optional

from pyspark.sql import DataFrame

from paimon_sql.catalog import Identifier, load_catalog
from paimon_sql.data.types import DataField, paimon_type_from_sql
from paimon_sql.exceptions import PaimonError, SchemaError, TableNotFoundError
from paimon_sql.schema.table_schema import TableSchema
from paimon_sql.spark.session_options import session_options
from paimon_sql.spark.source import catalog_options, is_location, store_options
from paimon_sql.spark.write import EXPLICIT_CAST, MERGE_SCHEMA, by_name, merge_schema, write_dataframe
from paimon_sql.table import format_table
from paimon_sql.table import materialized_table as mt
from paimon_sql.table.table import create_table_at, table_at

LAYOUT_KEYS = ("primary-key", "partition")  # describe a table's layout: given when creating it, never per write
_WRITE_KEYS = {"warehouse", "path", "table", "branch", "checkpointlocation", "partitionoverwritemode", "queryname",
               MERGE_SCHEMA, EXPLICIT_CAST}


def table_options(options: dict) -> dict:
    """The options a new table stores (every one but the source's own and the write's)."""
    return {k: v for k, v in options.items()
            if k.lower() not in _WRITE_KEYS and not k.lower().startswith(("paimon.", "s3."))}


def write_options(options: dict) -> dict:
    """The options a write to an existing table applies for itself (dynamic options, Paimon's
    ``write.merge-schema``...), without the layout keys, which it may only repeat."""
    return {k: v for k, v in options.items() if k.lower() not in _WRITE_KEYS - {MERGE_SCHEMA, EXPLICIT_CAST}
            and k.lower() not in LAYOUT_KEYS and not k.lower().startswith(("paimon.", "s3."))}


def _keys(text: Optional[str]) -> List[str]:
    return [k.strip() for k in (text or "").split(",") if k.strip()]


def _option(options: dict, key: str) -> Optional[str]:
    return next((v for k, v in options.items() if k.lower() == key), None)


def partition_keys(options: dict, partition_by: Optional[List[str]]) -> List[str]:
    """Option ``partition`` or Spark's ``partitionBy``/``partitionedBy`` (the two must agree)."""
    from_option = _keys(_option(options, "partition"))
    if partition_by and from_option and list(partition_by) != from_option:
        raise SchemaError(f"partitionBy({', '.join(partition_by)}) and option 'partition' = "
                          f"'{','.join(from_option)}' disagree")
    return list(partition_by or from_option)


def new_schema(df: DataFrame, options: dict, partition_by: Optional[List[str]] = None) -> TableSchema:
    """The schema a new table gets from ``df``'s columns and the write's options."""
    fields = [DataField(i, f.name, paimon_type_from_sql(f.dataType.simpleString()))
              for i, f in enumerate(df.schema.fields)]
    stored = {k: v for k, v in table_options(options).items() if k.lower() != "partition"}
    return TableSchema.create(fields, partition_keys(options, partition_by), [], stored)


def check_layout(table, options: dict, partition_by: Optional[List[str]] = None) -> None:
    """A write to an existing table may repeat its layout options, never change them."""
    s = table.schema
    given = {"primary-key": _option(options, "primary-key"), "bucket": _option(options, "bucket")}
    if given["primary-key"] is not None and _keys(given["primary-key"]) != s.primary_keys:
        raise SchemaError(f"table {table.name} has primary key ({', '.join(s.primary_keys)}): option 'primary-key' "
                          f"= '{given['primary-key']}' cannot change it")
    if given["bucket"] is not None and given["bucket"].strip() != str(table.options.bucket):
        raise SchemaError(f"table {table.name} has bucket {table.options.bucket}: option 'bucket' = "
                          f"'{given['bucket']}' cannot change it (ALTER TABLE, then rewrite the data)")
    parts = partition_keys(options, partition_by)
    if parts and parts != s.partition_keys:
        raise SchemaError(f"table {table.name} is partitioned by ({', '.join(s.partition_keys)}), not "
                          f"({', '.join(parts)})")


@dataclass
class Target:
    """A table a write names: ``db.t`` in ``warehouse``, or (``warehouse`` None) a location."""

    warehouse: Optional[str]
    name: str
    store: dict = field(default_factory=dict)  # s3.* options
    catalog: object = None

    def ident(self) -> Identifier:
        return Identifier.parse(self.name)

    def find(self):
        """The table, or None when there is none yet."""
        try:
            return self.catalog.get_table(self.ident()) if self.warehouse else table_at(self.name, self.store)
        except TableNotFoundError:
            return None

    def create(self, schema: TableSchema):
        if self.warehouse:
            return self.catalog.create_table(self.ident(), schema)
        return create_table_at(self.name, schema, self.store)

    def drop(self, table) -> None:
        """Remove a table this write created (its write failed: no half-made table stays)."""
        if self.warehouse:
            self.catalog.drop_table(self.ident(), ignore_if_not_exists=True)
        else:
            table.io.delete(table.path)

    def created_and_written(self, schema: TableSchema, write: Callable) -> None:
        """Create the table and ``write(table)`` into it; a failed write drops the table again."""
        table = self.create(schema)
        try:
            write(table)
        except BaseException:
            self.drop(table)
            raise


def target_of(session, options: dict, name: Optional[str]) -> Target:
    """The table ``name`` (or option ``path``) means for a write of ``session``'s DataFrame API."""
    name = name or _option(options, "path") or _option(options, "table")
    if not name:
        raise PaimonError("a paimon write needs a table: save('db.t') or save('<table location>')")
    store = {**session.catalog_options, **store_options(options)}
    warehouse = _option(options, "warehouse")
    if warehouse:  # the catalog the write's options name, as a read's (a catalog option refused alike)
        store = {**session.catalog_options, **catalog_options(options)}
        return Target(warehouse, str(Identifier.parse(name)), store, load_catalog(warehouse, store))
    if is_location(name):
        return Target(None, name, store)
    ident = resolve_name(session, Identifier.parse(name, session.current_database))
    return Target(session.warehouse, str(ident), store, session.catalog)


def resolve_name(session, ident: Identifier) -> Identifier:
    """``ident`` as a table of the session's warehouse: matched ignoring case (unless
    ``spark.sql.caseSensitive``) when exactly one table matches, as Spark resolves names."""
    catalog = session.catalog
    database = session.database_name(ident.database) or ident.database
    if catalog.table_exists(Identifier(database, ident.table)) or not catalog.database_exists(database):
        return Identifier(database, ident.table)
    if case_sensitive(session):
        return Identifier(database, ident.table)
    found = [t for t in catalog.list_tables(database) if t.lower() == ident.table.lower()]
    return Identifier(database, found[0] if len(found) == 1 else ident.table)


def case_sensitive(session) -> bool:
    return session.spark.conf.get("spark.sql.caseSensitive", "false").lower() == "true"


def write_into(session, df: DataFrame, table, target: Target, options: dict, overwrite: bool = False,
               partition_spec: Optional[dict] = None, dynamic: bool = False) -> None:
    """Write ``df`` by column name into ``table`` as one snapshot, with the write's options over
    the session's (``SET spark.paimon.*``); ``write.merge-schema`` first adds the data's new
    columns to the table."""
    mt.refuse_write(table, "a DataFrame write")
    named = table.name if target.warehouse else None  # a location: only the session's options for every table
    given = {**session_options(session.spark, named, session.current_database), **write_options(options)}
    if isinstance(table, format_table.FormatTable):  # plain files, written as INSERT writes them
        if given.get(MERGE_SCHEMA, "false").lower() == "true":
            raise SchemaError(f"option '{MERGE_SCHEMA}' is not supported by format table {table.name} (add its "
                              "columns with ALTER TABLE ... ADD COLUMNS first)")
        table = table.copy(given)
        return session.write(by_name(df, table, case_sensitive(session)), table, overwrite, partition_spec, dynamic)
    table = merge_schema(table.copy(given), df.schema)
    aligned = by_name(df, table, case_sensitive(session))
    write_dataframe(aligned, table, target.warehouse, overwrite, partition_spec, dynamic, {**target.store, **given})
