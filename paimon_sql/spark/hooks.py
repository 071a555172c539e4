"""The DataFrame API over Paimon tables, installed by ``connect()``: :func:`install`.

Spark answers parts of its DataFrame API itself, before any data source code runs: it refuses
save modes other than append/overwrite for Python data sources, looks ``writeTo``/``toTable``
names up in its own catalog, and hands a streaming sink its rows as they come. So, for the
SparkSession a paimon-sql session is connected to, these PySpark methods are wrapped:

- ``df.write.format("paimon")...save(name)``: creates a missing table from the DataFrame
  (:mod:`.target`), honours every save mode as Spark defines it (``errorifexists``: fail if the
  table exists, ``ignore``: then do nothing), matches columns by name and plans the write by
  bucket (:func:`paimon_sql.spark.write.write_dataframe`);
- ``df.writeTo(name)``: :class:`paimon_sql.spark.writer_v2.PaimonWriterV2` for warehouse tables;
- ``spark.read.format("paimon")...load(name)``: the session's ``SET spark.paimon.*`` options are
  added under the read's own (the data source cannot see Spark's session conf);
- ``df.writeStream.format("paimon")...start(name)`` and ``.toTable(name)``: creates a missing
  table, refuses the update output mode, plans the rows by bucket and starts the query on the
  exactly-once sink (:mod:`paimon_sql.spark.sink`).

Everything else (other formats, Spark's own tables) goes to PySpark's methods unchanged. A setting
a Paimon write cannot honour (``bucketBy``, ``sortBy``, ``clusterBy``) is refused, never ignored.
"""

from __future__ import annotations

import json
from typing import Optional

from pyspark.sql import DataFrame
from pyspark.sql.classic.dataframe import DataFrame as ClassicDataFrame
from pyspark.sql.readwriter import DataFrameReader, DataFrameWriter
from pyspark.sql.streaming.readwriter import DataStreamWriter

from paimon_sql.catalog import Identifier
from paimon_sql.catalog.base import SYSTEM_TABLE_SPLITTER
from paimon_sql.exceptions import PaimonError, TableAlreadyExistsError
from paimon_sql.spark import jvm
from paimon_sql.spark.session_options import session_options
from paimon_sql.spark.source import is_location
from paimon_sql.spark.target import (Target, case_sensitive, check_layout, new_schema, target_of, write_into,
                                     write_options)
from paimon_sql.spark.write import PLANNED, by_name, distribute, location_options, merge_schema, source_name
from paimon_sql.spark.writer_v2 import PaimonWriterV2, resolve
from paimon_sql.table import format_table
from paimon_sql.table import materialized_table as mt

_SESSION = "_paimon_sql_session"  # the attribute of a SparkSession naming its connected paimon-sql session
_ORIGINAL: dict = {}


def install(session) -> None:
    """Serve the DataFrame API of ``session.spark`` from ``session``'s warehouse (the latest
    connected session of a SparkSession wins). PySpark's classes are wrapped once per process."""
    session.spark.__dict__[_SESSION] = session
    if _ORIGINAL:
        return
    _ORIGINAL.update(writeTo=ClassicDataFrame.writeTo, save=DataFrameWriter.save, load=DataFrameReader.load,
                     start=DataStreamWriter.start, toTable=DataStreamWriter.toTable)
    ClassicDataFrame.writeTo = _write_to
    DataFrameWriter.save = _save
    DataFrameReader.load = _load
    DataStreamWriter.start = _start
    DataStreamWriter.toTable = _to_table


def uninstall(spark) -> None:
    """Give ``spark``'s DataFrame API back to PySpark (``Session.close``)."""
    spark.__dict__.pop(_SESSION, None)


def _session_of(spark):
    return spark.__dict__.get(_SESSION) if spark is not None else None


# -- the writer state PySpark keeps in the JVM ----------------------------------------------------

def _options(spark, jwriter) -> dict:
    """The options set on a (stream) writer, with their keys as the user wrote them."""
    return jvm.scala_map(spark._jvm, jwriter.extraOptions().originalMap())


def _column_list(spark, option) -> Optional[list]:
    return jvm.scala_seq(spark._jvm, option.get()) if option.isDefined() else None


def _is_paimon(jwriter) -> bool:
    return jwriter.source().lower() == "paimon"


def _served_options(writer) -> Optional[dict]:
    """The options of a (stream) writer these hooks serve — format ``paimon`` on a connected
    SparkSession, not a write planned here already — or None when it is PySpark's."""
    if _session_of(writer._spark) is None or not _is_paimon(writer._jwrite):
        return None
    options = _options(writer._spark, writer._jwrite)
    return None if options.get(PLANNED) else options


# -- spark.read ... load ----------------------------------------------------------------------------

def _load(self: DataFrameReader, path=None, format=None, schema=None, **options):
    """PySpark's ``load``; a Paimon read gets the session's ``SET spark.paimon.*`` options under its
    own (the data source runs where Spark's session conf is not)."""
    if format is not None:
        self.format(format)
    self.options(**options)
    session = _session_of(self._spark)
    if session is not None and _is_paimon(self._jreader):
        given = {k.lower(): v for k, v in _options(self._spark, self._jreader).items()}
        name = path if isinstance(path, str) else given.get("path")
        named = None if not name or is_location(name) else _qualified(name, session.current_database)
        for k, v in session_options(self._spark, named, session.current_database).items():
            if k.lower() not in given:
                self.option(k, v)
    return _ORIGINAL["load"](self, path, None, schema)


def _qualified(name: str, database: str) -> str:
    """``name`` (``t``, ``db.t``, ``db.t$ro``) qualified by ``database`` when it has none: a system
    table keeps its suffix, so per-table session options name it as paimon-spark's do (``t$ro``)."""
    base, dollar, suffix = name.partition(SYSTEM_TABLE_SPLITTER)
    return str(Identifier.parse(base, database)) + dollar + suffix


# -- df.write ... save ------------------------------------------------------------------------------

def _save(self: DataFrameWriter, path=None, format=None, mode=None, partitionBy=None, **options):
    """PySpark's ``save``, Paimon writes served as the module says."""
    self.mode(mode).options(**options)
    if partitionBy is not None:
        self.partitionBy(partitionBy)
    if format is not None:
        self.format(format)
    opts = _served_options(self)
    if opts is None:
        return _ORIGINAL["save"](self, path)
    _refuse_layout(self._jwrite)
    return save_dataframe(_session_of(self._spark), self._df, opts, path, self._jwrite.curmode().toString().lower(),
                          _column_list(self._spark, self._jwrite.partitioningColumns()))


def _refuse_layout(jwriter) -> None:
    for setting, method in (("bucketBy", "numBuckets"), ("sortBy", "sortColumnNames"),
                            ("clusterBy", "clusteringColumns")):
        if getattr(jwriter, method)().isDefined():
            raise PaimonError(f"{setting}() cannot be honoured by a Paimon table: Spark's bucketing is not Paimon's "
                              "(use options 'bucket' and 'bucket-key')")


def save_dataframe(session, df: DataFrame, options: dict, name: Optional[str], mode: str,
                   partition_by: Optional[list]) -> None:
    """``df.write.format("paimon")...save(name)`` in save mode ``mode``: a missing table is
    created (whatever the mode), an existing one appended to, overwritten, refused or left alone."""
    target = target_of(session, options, name)
    table = target.find()
    if table is None:
        return target.created_and_written(new_schema(df, options, partition_by),
                                          lambda t: write_into(session, df, t, target, options))
    if mode in ("errorifexists", "error", "default"):
        raise TableAlreadyExistsError(f"[TABLE_OR_VIEW_ALREADY_EXISTS] table {table.name} already exists "
                                      "(save mode 'errorifexists'; use 'append' or 'overwrite')")
    if mode == "ignore":
        return None
    check_layout(table, options, partition_by)
    overwrite = mode == "overwrite"
    spec = options.get("paimon.overwrite-partition")
    dynamic = next((v for k, v in options.items() if k.lower() == "partitionoverwritemode"), "static")
    write_into(session, df, table, target, options, overwrite, json.loads(spec) if spec else None,
               overwrite and dynamic.lower() == "dynamic")
    return None


# -- df.writeTo ------------------------------------------------------------------------------------

def _write_to(self: DataFrame, table: str):
    """PySpark's ``writeTo``; a table of the connected warehouse gets a :class:`PaimonWriterV2`."""
    session = _session_of(self.sparkSession)
    target = resolve(session, table) if session is not None else None
    if target is None:
        return _ORIGINAL["writeTo"](self, table)
    return PaimonWriterV2(session, self, table, target, _ORIGINAL["writeTo"])


# -- df.writeStream ... start / toTable -------------------------------------------------------------

def _start(self: DataStreamWriter, path=None, format=None, outputMode=None, partitionBy=None, queryName=None,
           **options):
    """PySpark's ``start``, Paimon sinks started as the module says."""
    _configure(self, format, outputMode, partitionBy, queryName, options)
    opts = _served_options(self)
    if opts is None:
        return _ORIGINAL["start"](self, path)
    session = _session_of(self._spark)
    return start_stream(session, self, target_of(session, opts, path), opts)


def _to_table(self: DataStreamWriter, tableName: str, format=None, outputMode=None, partitionBy=None,
              queryName=None, **options):
    """PySpark's ``toTable``; a Paimon format, or a table of the connected warehouse, streams into it."""
    _configure(self, format, outputMode, partitionBy, queryName, options)
    session = _session_of(self._spark)
    target = resolve(session, tableName) if session is not None else None
    if target is None or not (_is_paimon(self._jwrite) or target.find() is not None):
        return _ORIGINAL["toTable"](self, tableName)
    return start_stream(session, self, target, _options(self._spark, self._jwrite))


def _configure(writer: DataStreamWriter, format, output_mode, partition_by, query_name, options) -> None:
    """The settings ``start``/``toTable`` take as arguments, set as PySpark sets them."""
    writer.options(**options)
    if format is not None:
        writer.format(format)
    if output_mode is not None:
        writer.outputMode(output_mode)
    if partition_by is not None:
        writer.partitionBy(partition_by)
    if query_name is not None:
        writer.queryName(query_name)


def start_stream(session, writer: DataStreamWriter, target: Target, options: dict):
    """Start ``writer``'s query into the Paimon table ``target`` (created from the stream's schema
    when missing): rows matched by name and brought to their bucket's task, then the sink."""
    spark, jwriter = session.spark, writer._jwrite
    mode = jwriter.outputMode().toString().lower()
    if mode == "update":
        raise PaimonError("a Paimon sink takes the append or complete output mode, not update "
                          "(update mode gives no retractions a table could apply)")
    partition_by = _column_list(spark, jwriter.partitioningColumns())
    table = target.find()
    if table is None:
        table = target.create(new_schema(writer._df, options, partition_by))
    else:
        mt.refuse_write(table, "a streaming write")
        format_table.refuse(table, "a streaming write")  # a micro-batch commits a snapshot
        check_layout(table, options, partition_by)
    table = merge_schema(table.copy(write_options(options)), writer._df.schema)
    rows = distribute(by_name(writer._df, table, case_sensitive(session)), table)
    passed = {k: v for k, v in options.items() if k.lower() != "path"}  # the table is named by start()
    planned = (rows.writeStream.format("paimon").options(**passed).options(**target.store)
               .options(**location_options(table, target.warehouse)).option(PLANNED, "true").outputMode(mode))
    planned._jwrite = planned._jwrite.trigger(jwriter.trigger())
    return _ORIGINAL["start"](planned, source_name(table, target.warehouse))
