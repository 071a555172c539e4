"""The ``paimon`` Spark data source (PySpark's Python data source API).

    spark.read.format("paimon").option("warehouse", W).load("db.t")
    spark.read.format("paimon").load("/path/to/table")        # by location, as paimon-spark
    df.write.format("paimon").option("warehouse", W).mode("append" | "overwrite").save("db.t")
    df.writeStream.format("paimon").option("checkpointLocation", C).start("/path/to/table")

A table is named by ``db.t`` with option ``warehouse``, or by its location (a path with ``/``,
a ``file:`` or ``s3://`` URI; ``s3.*`` options reach the store) without one.

Reading: the driver plans the scan (splits); each split is one input partition, read on an
executor by :class:`SplitReader` and handed to Spark as Arrow record batches. Table options
(``scan.snapshot-id``, ``scan.tag-name``, any ``scan.*``) and ``branch`` pick what is read, as in
Paimon; the front layer narrows with ``paimon.columns`` (JSON list), ``paimon.filter`` (JSON
predicate), ``paimon.snapshot-id`` (the snapshot the driver planned), ``paimon.read-optimized``,
``paimon.row-kind`` and ``paimon.metadata`` (metadata columns to add, JSON list).

Writing: every task writes data files with :class:`TableWrite` and returns its commit messages;
the driver commits them as ONE snapshot after all tasks succeeded, or deletes the files when the
job aborts. An overwrite replaces the whole table (Spark's static mode), only the partitions of a
``paimon.overwrite-partition`` spec (JSON object), or — with ``partitionOverwriteMode=dynamic`` as
in Spark — only the partitions written. A streaming write commits each micro-batch exactly once
(:mod:`paimon_sql.spark.sink`). Creating a missing table, Spark's other save modes and writing by
column name are the DataFrame API hooks' (:mod:`paimon_sql.spark.hooks`).
"""

from __future__ import annotations

import json
from typing import Iterator, List, Optional, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition

from paimon_sql.catalog import load_catalog
from paimon_sql.data import predicate as P
from paimon_sql.data.types import DataField
from paimon_sql.exceptions import PaimonError
from paimon_sql.options.core_options import as_paimon_spells, catalog_registry
from paimon_sql.read import metadata_columns
from paimon_sql.read.split_read import FILE_COLUMN, POSITION_COLUMN
from paimon_sql.schema.table_schema import ROW_ID, SEQUENCE_NUMBER
from paimon_sql.spark.columns import ROW_KIND_OUTPUTS, ROWKIND_NAME
from paimon_sql.spark.scan import VectorCap, native_splits, split_key
from paimon_sql.spark.sink import PaimonStreamWriter
from paimon_sql.spark.stream import PaimonStreamReader
from paimon_sql.spark.types import spark_ddl, spark_type, to_spark_arrow
from paimon_sql.spark.write import merge_schema  # write.merge-schema: add the data's new columns
from paimon_sql.spark.writer import PaimonWriter
from paimon_sql.table import fallback_read
from paimon_sql.table.object_table import ObjectTable
from paimon_sql.table.table import table_at

_SOURCE_KEYS = ("warehouse", "path", "table", "branch", "checkpointlocation")


def is_location(name: str) -> bool:
    """Whether ``name`` given to load()/save()/start() is a table's location rather than ``db.t``."""
    return "/" in name or name.lower().startswith("file:")


def store_options(options) -> dict:
    """The ``s3.*`` options: how to reach the warehouse or table location (never table options)."""
    return {k: v for k, v in options.items() if k.lower().startswith("s3.")}


def catalog_options(options) -> dict:
    """The options of the catalog the source's options name (:func:`store_options`, ``jdbc.*`` and the
    keys of Paimon's catalog option classes, the warehouse aside): the data source loads the catalog
    a session uses, so that a commit has that catalog's lock and metastore callbacks, and a catalog
    option it cannot honour is refused as the session's would be."""
    keys = catalog_registry()
    return {**store_options(options), **{k: v for k, v in as_paimon_spells(options).items()
                                         if (k in keys and k != "warehouse") or k.lower().startswith("jdbc.")}}


def locate_table(options):
    """The table the options name, as it is stored: ``db.t`` in the ``warehouse``, or a location."""
    warehouse = options.get("warehouse")
    name = options.get("path") or options.get("table")
    if not name:
        raise PaimonError("the paimon data source needs a table: load('db.t') with option 'warehouse', "
                          "or load('<table location>')")
    if warehouse:
        return load_catalog(warehouse, catalog_options(options)).get_table(name)
    if not is_location(name):
        raise PaimonError(f"'{name}' names a table of a warehouse: give option 'warehouse', or the table's "
                          "location (a path or URI)")
    return table_at(name, store_options(options))


def load_table(options, travel: bool = True):
    """The table the options name (:func:`locate_table`): on ``branch`` if given, with every other
    option that is not the source's own (``paimon.*``, ``s3.*``, warehouse, path) as a dynamic
    table option; a batch read travels to the snapshot ``scan.*`` options name (a stream starts
    there instead)."""
    table = locate_table(options)
    if options.get("branch") and options["branch"] != table.branch:
        table = table.switch_to_branch(options["branch"])
    dynamic = {k: v for k, v in as_paimon_spells(options).items()
               if k.lower() not in _SOURCE_KEYS and not k.lower().startswith(("paimon.", "s3.")) and v is not None}
    return table.travel(dynamic) if travel else table.copy(dynamic)


# readable suffixes of a table name given to load(): t$branch_<b>, t$audit_log, t$ro
_NAME_SUFFIXES = {"audit_log": {"paimon.row-kind": "true"}, "binlog": {"paimon.row-kind": "binlog"},
                  "ro": {"paimon.read-optimized": "true"}}


def _apply_name_suffixes(options) -> None:
    """``load("db.t$audit_log")`` / ``$ro`` / ``$branch_b``: set the table name and the options the
    suffixes mean, in place (Spark's options are a case-insensitive mapping: keep it one)."""
    key = "path" if options.get("path") else "table"
    name = options.get(key) or ""
    if "$" not in name:
        return
    base, *suffixes = name.split("$")
    options[key] = base
    for suffix in suffixes:
        if suffix.lower().startswith("branch_"):
            options["branch"] = suffix[len("branch_"):]
        elif suffix.lower() in _NAME_SUFFIXES:
            options.update(_NAME_SUFFIXES[suffix.lower()])
        else:
            raise PaimonError(f"'{name}': the paimon data source reads tables, branches, $audit_log, $binlog and $ro; "
                              f"query other system tables with SQL")


def build_scan(table, options):
    scan = table.new_scan()
    if options.get("paimon.snapshot-id"):
        scan = scan.with_snapshot(int(options["paimon.snapshot-id"]))
    if options.get("paimon.read-optimized") == "true":
        scan = scan.with_read_optimized()
    if options.get("paimon.row-kind") in ("true", "binlog"):
        scan = scan.with_row_kind()
    if options.get("paimon.columns"):
        scan = scan.select(json.loads(options["paimon.columns"]))
    if options.get("paimon.filter"):
        scan = scan.filter(P.from_json(options["paimon.filter"]))
    return scan


class PaimonDataSource(DataSource):
    @classmethod
    def name(cls) -> str:
        return "paimon"

    def __init__(self, options):
        super().__init__(options)
        _apply_name_suffixes(self.options)
        self.table = load_table(self.options)

    def _columns(self) -> List[str]:
        cols = self.options.get("paimon.columns")
        return json.loads(cols) if cols else self.table.schema.field_names

    def _positions(self) -> bool:
        """``paimon.positions``: also return each row's data file and row position (row-level DML)."""
        return self.options.get("paimon.positions", "false") == "true"

    def _metadata(self) -> List[str]:
        """``paimon.metadata``: metadata columns to add after the table's (JSON list; file path,
        row index, bucket — :mod:`paimon_sql.read.metadata_columns`)."""
        names = self.options.get("paimon.metadata")
        return json.loads(names) if names else []

    def _row_kinds(self) -> Optional[str]:
        """``paimon.row-kind``: ``true`` — rows with ``rowkind`` (+I/-U/+U/-D) and
        ``_SEQUENCE_NUMBER`` first ($audit_log); ``binlog`` — ``rowkind`` then arrays ($binlog)."""
        mode = self.options.get("paimon.row-kind", "false")
        return {"true": "audit_log", "binlog": "binlog"}.get(mode)

    def schema(self) -> str:
        fields = self.table.schema.fields_of(self._columns())
        if self._row_kinds() == "binlog":
            return f"`{ROWKIND_NAME}` STRING, " + ", ".join(f"`{f.name}` ARRAY<{spark_type(f.type)}>" for f in fields)
        extra = f", `{POSITION_COLUMN}` BIGINT, `{FILE_COLUMN}` STRING" if self._positions() else ""
        if self._positions() and metadata_columns.row_tracking(self.table.schema):  # rows keep their ids
            extra += f", `{ROW_ID}` BIGINT"
        kinds = f"`{ROWKIND_NAME}` STRING, `{SEQUENCE_NUMBER}` BIGINT, " if self._row_kinds() else ""
        hidden = {f.name: f for f in metadata_columns.fields(self.table.schema)}
        meta = "".join(f", {spark_ddl([hidden[n]])}" for n in self._metadata())
        return kinds + spark_ddl(fields) + extra + meta

    def reader(self, schema) -> "PaimonReader":
        if fallback_read.tables(self.table) is not None:
            key, name = fallback_read.other_branch(self.table)
            raise PaimonError(f"table {self.table.name} reads partitions of branch '{name}' ('{key}'): read it with "
                              f"SQL (spark.sql after paimon_sql.connect()); the DataFrame source reads one branch "
                              f"(option '{key}' = '' reads branch '{self.table.branch}' alone)")
        if isinstance(self.table, ObjectTable):  # Paimon 2.0's: the files under its location, listed by the task
            return ObjectListingReader(self.table, self.table.schema.fields_of(self._columns()))
        skip_native = VectorCap.parse(self.options.get("paimon.skip-native"))  # the cap the driver used
        vectored = self.options.get("paimon.merged-natively")  # buckets the driver read as deletion vectors
        merged = {(bytes.fromhex(p), b) for p, b in json.loads(vectored)} if vectored else set()
        return PaimonReader(build_scan(self.table, self.options), self.table.schema.fields_of(self._columns()),
                            skip_native, self._positions(), self._row_kinds(), self._metadata(), merged)

    def streamReader(self, schema):
        table = load_table(self.options, travel=False)
        return PaimonStreamReader(table, table.schema.fields_of(self._columns()), self._row_kinds())

    def writer(self, schema, overwrite: bool) -> PaimonWriter:
        spec = self.options.get("paimon.overwrite-partition")
        dynamic = self.options.get("partitionOverwriteMode", "static").lower() == "dynamic"
        return PaimonWriter(merge_schema(self.table, schema), overwrite, json.loads(spec) if spec else None, dynamic,
                            self._catalog())

    def _catalog(self) -> Optional[tuple]:
        """(warehouse, catalog options) of a table named in a warehouse, for the writers' commits."""
        warehouse = self.options.get("warehouse")
        return (warehouse, catalog_options(self.options)) if warehouse else None

    def streamWriter(self, schema, overwrite: bool):
        """``overwrite``: Spark's complete output mode (each micro-batch replaces the table)."""
        return PaimonStreamWriter(merge_schema(self.table, schema), overwrite, self.options.get("checkpointLocation"),
                                  store_options(self.options), self._catalog())


class _SplitPartition(InputPartition):
    def __init__(self, split):
        super().__init__(None)
        self.split = split


class PaimonReader(DataSourceReader):
    def __init__(self, scan, fields, skip_native: Optional[VectorCap] = None, positions: bool = False,
                 row_kinds: Optional[str] = None, metadata: Sequence[str] = (), merged_natively=frozenset()):
        self.scan = scan
        self.fields = fields
        self.skip_native = skip_native  # None, or the cap by which the front layer chose its native splits
        self.positions = positions
        self.row_kinds = row_kinds  # None, "audit_log" or "binlog"
        self.metadata = list(metadata)  # metadata columns after the table's
        self.merged_natively = merged_natively  # (partition, bucket) of merge splits Spark's reader took

    def partitions(self):
        splits = self.scan.plan().splits
        if self.skip_native is not None:
            native = {split_key(s) for s in native_splits(self.scan.table, splits, self.skip_native)}
            splits = [s for s in splits if split_key(s) not in native]
        splits = [s for s in splits if (s.partition, s.bucket) not in self.merged_natively]
        return [_SplitPartition(s) for s in splits] or [InputPartition(None)]

    def read(self, partition) -> Iterator[pa.RecordBatch]:
        if not isinstance(partition, _SplitPartition):
            return
        if self.positions:
            tracked = metadata_columns.row_tracking(self.scan.table.schema)
            rows = self.scan.reader().read_positions(partition.split, tracked=tracked)
            out = to_spark_arrow(rows, self.fields)
            out = out.append_column(POSITION_COLUMN, rows.column(POSITION_COLUMN)) \
                .append_column(FILE_COLUMN, rows.column(FILE_COLUMN))
            if tracked:
                out = out.append_column(ROW_ID, rows.column(ROW_ID))
        elif self.metadata:
            out = with_metadata(self.scan.reader(), partition.split, self.fields, self.metadata)
        elif self.row_kinds:
            out = ROW_KIND_OUTPUTS[self.row_kinds](self.scan.reader().read(partition.split), self.fields)
        else:
            out = to_spark_arrow(self.scan.reader().read(partition.split), self.fields)
        yield from out.to_batches()


class ObjectListingReader(DataSourceReader):
    """An object table's rows: one task lists its location (``ObjectTableImpl``'s single split)."""

    def __init__(self, table: ObjectTable, fields: List[DataField]):
        self.table = table
        self.fields = fields

    def partitions(self):
        return [InputPartition(None)]

    def read(self, partition) -> Iterator[pa.RecordBatch]:
        yield from to_spark_arrow(self.table.listing([f.name for f in self.fields]), self.fields).to_batches()


def with_metadata(reader, split, fields, names: Sequence[str]) -> pa.Table:
    """A split's rows with the metadata columns ``names`` (file path, row index, bucket, and a
    row-tracking table's ``_ROW_ID`` / ``_SEQUENCE_NUMBER``)."""
    tracked = bool(set(metadata_columns.TRACKED) & set(names))
    located = tracked or bool(metadata_columns.LOCATED & set(names))
    rows = reader.read_positions(split, tracked) if located else reader.read(split)
    out = to_spark_arrow(rows, fields)
    for name in names:
        if name in metadata_columns.TRACKED:
            column = rows.column(name)
        elif name == metadata_columns.ROW_INDEX:
            column = rows.column(POSITION_COLUMN)
        elif name == metadata_columns.FILE_PATH:  # by file name: one path per file, taken per row
            paths = pa.array([reader.file_path(split, f) for f in split.files], pa.string())
            where = pc.index_in(rows.column(FILE_COLUMN), value_set=pa.array([f.file_name for f in split.files]))
            column = paths.take(where)
        else:
            column = pa.array(np.full(rows.num_rows, split.bucket, np.int32))
        out = out.append_column(name, column)
    return out
