"""``migrate_table``, ``migrate_database``: paimon-spark's MigrateTableProcedure / MigrateDatabaseProcedure.

The source is a table of Spark's own session catalog (Parquet or ORC, a data-source table as
``df.write.saveAsTable`` makes or a Hive-format one), or, for ``source_type`` ``parquet``/``orc``, a
directory of such files in the Hive layout (``k=v`` partition directories) named by its path. Its
files become a Paimon append table (``bucket = -1``) as they are, moved, not copied
(:mod:`paimon_sql.maintenance.migrate_table`). Spark tells the schema: the catalog's columns (partition columns
as the catalog marks them), or for a directory what ``spark.read.format(source_type).load(path)``
infers. The Paimon table is ``target_table``, by default the source's own name (Paimon on Spark
migrates into a temporary table and renames it over the source); ``delete_origin`` (default true)
then drops the source from Spark's catalog. Everything is checked before a file moves; a failure
moves every file back and drops the table the call created.

``copy`` (CopyFilesProcedure) copies a Paimon table's latest files into another Paimon table.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Optional

from paimon_sql.catalog.base import Identifier
from paimon_sql.data import binary_row
from paimon_sql.data.types import DataField, paimon_type_from_sql
from paimon_sql.exceptions import PaimonError
from paimon_sql.maintenance import migrate_table as core
from paimon_sql.procedures.base import Procedure, optional, register, required
from paimon_sql.schema.table_schema import TableSchema

SOURCE_TYPES = ("hive",) + core.FORMATS


@dataclass
class Source:
    """What one migration reads: where, in which format, with which columns, and the Spark table (if any)."""

    spark_table: Optional[str]
    location: str
    fmt: str
    fields: List[DataField]
    partition_keys: List[str]
    partitions: List[core.SourcePartition]


class _Migration(Procedure):
    """The checks and steps ``migrate_table`` and ``migrate_database`` share."""

    def source_type(self, text: str) -> str:
        kind = text.strip().lower()
        if kind not in SOURCE_TYPES:
            raise self.fail(f"source_type must be one of {', '.join(SOURCE_TYPES)}, got '{text}'")
        return kind

    def table_options(self, args) -> Dict[str, str]:
        options = {**self.dynamic_options(args["options"]), **(args["options_map"] or {})}
        if args["parallelism"] is not None and args["parallelism"] <= 0:
            raise self.fail(f"parallelism must be a positive number of threads, got {args['parallelism']}")
        if options.setdefault("bucket", "-1").strip() != "-1":
            raise self.fail(f"bucket = {options['bucket']}: migrated files are adopted as they are, which "
                            "only an append table with bucket = -1 can do")
        if options.get("primary-key"):
            raise self.fail("a migrated table is an append table: primary-key cannot be set")
        return options

    def spark_source(self, session, name: str, kind: str) -> Source:
        """A table of Spark's session catalog, its location and columns as Spark's catalog has them."""
        spark = session.spark
        if not spark.catalog.tableExists(name):
            raise self.fail(f"'{name}' is not a table of Spark's session catalog")
        info = {r[0].strip(): (r[1] or "").strip() for r in session.spark_sql(f"DESCRIBE TABLE EXTENDED {name}")
                .collect() if r[0]}
        if info.get("Type") == "VIEW":
            raise self.fail(f"'{name}' is a view, not a table")
        provider = info.get("Provider", "").lower()
        serde = (info.get("Serde Library", "") + info.get("InputFormat", "")).lower()
        fmt = provider if provider in core.FORMATS else next((f for f in core.FORMATS if f in serde), None)
        if fmt is None or (provider not in core.FORMATS and provider != "hive"):
            raise self.fail(f"table '{name}' is stored as {provider or 'unknown'}: only parquet and orc files "
                            "can be migrated")
        if kind != "hive" and kind != fmt:
            raise self.fail(f"table '{name}' is stored as {fmt}, not {kind}")
        columns = spark.catalog.listColumns(name)
        keys = [c.name for c in columns if c.isPartition]
        location = _local(info.get("Location", ""))
        fields = self.fields(name, [(c.name, c.dataType) for c in columns])
        partitions = self.listed(session, location, keys)
        if keys:  # a partition the catalog keeps elsewhere would be lost
            for row in session.spark_sql(f"SHOW PARTITIONS {name}").collect():
                if not session.catalog.io.is_dir(f"{location}/{row[0]}"):
                    raise self.fail(f"partition {row[0]} of '{name}' is not under the table's location "
                                    f"{location}: only the default partition layout can be migrated")
        return Source(name, location, fmt, fields, keys, partitions)

    def path_source(self, session, path: str, kind: str) -> Source:
        """A directory of ``kind`` files in the Hive layout; its schema as Spark infers it."""
        if kind == "hive":
            raise self.fail(f"source_type 'hive' names a table of Spark's catalog, not a path ('{path}'): "
                            "use source_type 'parquet' or 'orc' for a directory")
        location = _local(path)
        io = session.catalog.io
        keys = core.partition_keys_of(io, location) if io.is_dir(location) else []
        partitions = self.listed(session, location, keys)
        if not partitions:
            raise self.fail(f"no {kind} files under '{path}'")
        try:
            schema = session.spark.read.format(kind).load(location).schema
        except Exception as e:  # Spark's own: files it cannot read as ``kind``
            raise self.fail(f"'{path}' cannot be read as {kind}: {str(e).strip().splitlines()[0]}") from None
        return Source(None, location, kind, self.fields(path, [(f.name, f.dataType.simpleString()) for f in schema]),
                      keys, partitions)

    def listed(self, session, location: str, keys: List[str]) -> List[core.SourcePartition]:
        try:
            return core.list_source(session.catalog.io, location, keys)
        except PaimonError as e:
            raise self.fail(str(e)) from None

    def fields(self, source: str, columns) -> List[DataField]:
        out = []
        for i, (name, type_text) in enumerate(columns):
            try:
                out.append(DataField(i, name, paimon_type_from_sql(type_text)))
            except (PaimonError, ValueError) as e:
                raise self.fail(f"column '{name}' of '{source}' has type {type_text} Paimon cannot hold: {e}") from None
        return out

    def target(self, session, source: Source, ident: Identifier, options: Dict[str, str]):
        """The Paimon table to adopt the files into, and whether this call created it."""
        catalog = session.catalog
        if catalog.table_exists(ident):
            table = catalog.get_table(ident)
            given = sorted(k for k in options if k != "bucket")
            if given:
                raise self.fail(f"table '{ident}' exists: options ({', '.join(given)}) apply only to a table "
                                "the migration creates")
            if list(table.schema.partition_keys) != source.partition_keys:
                raise self.fail(f"table '{ident}' is partitioned by ({', '.join(table.schema.partition_keys)}), "
                                f"the source by ({', '.join(source.partition_keys)})")
            return table, False
        options = {"file.format": source.fmt, **options}
        try:
            schema = TableSchema.create(source.fields, source.partition_keys, (), options)
            catalog.create_database(ident.database, ignore_if_exists=True)
            return catalog.create_table(ident, schema), True
        except PaimonError as e:
            raise self.fail(f"table '{ident}' cannot be created: {e}") from None

    def run(self, session, source: Source, ident: Identifier, options, delete_origin: bool, parallelism) -> None:
        table, created = self.target(session, source, ident, options)
        try:
            core.migrate(table, source.fmt, source.partitions, parallelism or 1)
        except BaseException as e:
            if created:
                session.catalog.drop_table(ident)
            if isinstance(e, PaimonError):
                raise self.fail(f"'{source.spark_table or source.location}' was not migrated: {e}") from None
            raise
        if delete_origin and source.spark_table:
            session.spark_sql(f"DROP TABLE {source.spark_table}")


@register
class MigrateTableProcedure(_Migration):
    name = "migrate_table"
    parameters = (required("source_type", "STRING"), required("table", "STRING"), optional("options", "STRING"),
                  optional("delete_origin", "BOOLEAN", True), optional("target_table", "STRING"),
                  optional("options_map", "MAP<STRING,STRING>"), optional("parallelism", "INT"))
    description = ("Turn a Spark Parquet/ORC table (or a Hive-layout directory) into a Paimon append table, "
                   "moving its files.")

    def call(self, session, args):
        kind = self.source_type(args["source_type"])
        name = args["table"].strip()
        options = self.table_options(args)
        is_path = "/" in name
        if is_path and not args["target_table"]:
            raise self.fail(f"a path source ('{name}') needs target_table: the Paimon table to create")
        if not args["delete_origin"] and not args["target_table"]:
            raise self.fail("delete_origin => false keeps the source under its name: give target_table")
        source = self.path_source(session, name, kind) if is_path else self.spark_source(session, name, kind)
        ident = session.identifier_text(args["target_table"] or name)
        target = args["target_table"]
        if target and (is_path or ident != session.identifier_text(name)) and session.spark.catalog.tableExists(target):
            raise self.fail(f"target_table '{args['target_table']}' is a table of Spark's catalog already")
        self.run(session, source, ident, options, args["delete_origin"], args["parallelism"])
        return [(True,)]


@register
class MigrateDatabaseProcedure(_Migration):
    name = "migrate_database"
    parameters = (required("source_type", "STRING"), required("database", "STRING"), optional("options", "STRING"),
                  optional("options_map", "MAP<STRING,STRING>"), optional("parallelism", "INT"))
    description = "Migrate every table of a Spark database (migrate_table of each under its own name)."

    def call(self, session, args):
        kind = self.source_type(args["source_type"])
        db = args["database"].strip()
        options = self.table_options(args)
        if not session.spark.catalog.databaseExists(db):
            raise self.fail(f"database '{db}' is not in Spark's session catalog")
        names = [f"{db}.{t.name}" for t in session.spark.catalog.listTables(db)
                 if not t.isTemporary and t.tableType != "VIEW"]  # views have no files to migrate
        sources = [self.spark_source(session, n, kind) for n in names]  # every table checked first
        for source in sources:
            self.run(session, source, session.identifier_text(source.spark_table), options, True, args["parallelism"])
        return [(True,)]


def _local(location: str) -> str:
    """A location as FileIO takes it (Spark writes ``file:/x``; FileIO wants ``/x``)."""
    for prefix in ("file://", "file:"):
        if location.startswith(prefix):
            return location[len(prefix):].rstrip("/")
    return location.rstrip("/")


@register
class CopyProcedure(Procedure):
    name = "copy"
    parameters = (required("source_table", "STRING"), required("target_table", "STRING"), optional("where", "STRING"))
    description = ("Copy a Paimon table's latest data files (those of the partitions where selects) into a new "
                   "table, or over an existing compatible one.")

    def call(self, session, args):
        source = self.table(session, args["source_table"])
        ident = session.identifier_text(args["target_table"])
        target = self.table(session, args["target_table"]) if session.catalog.table_exists(ident) else None
        specs = self.partition_selection(session, source, None, args["where"])
        partitions = None
        if specs is not None:
            keys = source.schema.partition_keys
            types = [f.type for f in source.schema.fields_of(keys)]
            partitions = [binary_row.to_bytes([s[k] for k in keys], types) for s in specs]
        session.catalog.create_database(ident.database, ignore_if_exists=True)
        try:
            if target is not None:
                core.copy_into(source, target, partitions)
            else:
                core.copy_table(source, session.catalog.table_path(ident), partitions)
        except PaimonError as e:
            raise self.fail(str(e)) from None
        return [(True,)]
