"""TableSchema: the content of ``schema/schema-N`` (JSON, version 3), and what follows from it.

Derived facts live here because every layer needs them the same way: the *trimmed* primary key
(primary key minus partition columns: what ``_KEY_*`` columns and min/max keys hold), the bucket
key (``bucket-key`` option, else the trimmed primary key, else every non-partition column... of
an append table with a fixed bucket only by ``bucket-key``), and the Arrow schemas of data files.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field, replace
from typing import Dict, List, Optional

import pyarrow as pa

from paimon_sql.data.types import (ArrayType, AtomicType, DataField, DataType, MapType, MultisetType, RowType,
                                   arrow_schema, unserved_type)
from paimon_sql.exceptions import CorruptMetadataError, SchemaError
from paimon_sql.format.avro_data import avro_schema
from paimon_sql.format.format_table_options import check_schema as check_format_table
from paimon_sql.index.file_index import check as check_file_indexes
from paimon_sql.options import core_options as opts
from paimon_sql.options.iceberg_options import iceberg_options

KEY_PREFIX = "_KEY_"
SEQUENCE_NUMBER = "_SEQUENCE_NUMBER"
VALUE_KIND = "_VALUE_KIND"
ROW_ID = "_ROW_ID"  # row tracking: a row's id, kept through compaction (physical in compacted files)
ROW_ID_FIELD_ID = 2147483642  # Java's SpecialFields.ROW_ID
SYSTEM_FIELD_IDS = {SEQUENCE_NUMBER: 2147483646, VALUE_KIND: 2147483645}
KEY_FIELD_ID_START = 1073741823  # Paimon: key field id = value field id + this


@dataclass(frozen=True)
class TableSchema:
    id: int
    fields: List[DataField]
    highest_field_id: int
    partition_keys: List[str] = field(default_factory=list)
    primary_keys: List[str] = field(default_factory=list)
    options: Dict[str, str] = field(default_factory=dict)
    comment: Optional[str] = None
    time_millis: int = 0
    version: int = 3

    # -- construction ----------------------------------------------------------------------

    @staticmethod
    def create(fields: List[DataField], partition_keys=(), primary_keys=(), options=None,
               comment: Optional[str] = None) -> "TableSchema":
        """A first schema (id 0): validates names and keys, numbers fields (nested ones too)."""
        options = dict(options or {})
        pk_opt = options.pop("primary-key", None)
        part_opt = options.pop("partition", None)
        if pk_opt and not primary_keys:
            primary_keys = [k.strip() for k in pk_opt.split(",") if k.strip()]
        if part_opt and not partition_keys:
            partition_keys = [k.strip() for k in part_opt.split(",") if k.strip()]
        partition_keys, primary_keys = list(partition_keys), list(primary_keys)
        names = [f.name for f in fields]
        if not fields:
            raise SchemaError("a table needs at least one column")
        dup = {n for n in names if names.count(n) > 1}
        if dup:
            raise SchemaError(f"duplicate column name(s): {', '.join(sorted(dup))}")
        for kind, keys in (("partition", partition_keys), ("primary", primary_keys)):
            missing = [k for k in keys if k not in names]
            if missing:
                raise SchemaError(f"{kind} key column(s) not in the table: {', '.join(missing)}")
        for reserved in (SEQUENCE_NUMBER, VALUE_KIND):
            if reserved in names:
                raise SchemaError(f"column name '{reserved}' is reserved by Paimon")
        if primary_keys and set(primary_keys) <= set(partition_keys):
            raise SchemaError("the primary key must contain columns besides the partition keys")
        next_id = [0]

        def number(t: DataType) -> DataType:
            if isinstance(t, RowType):
                nested = []
                for f in t.fields:  # as Java's ReassignFieldId: a nested field's children first, then it
                    ftype = number(f.type)
                    nested.append(DataField(next_id[0], f.name, ftype, f.description))
                    next_id[0] += 1
                return replace(t, fields=tuple(nested))
            if isinstance(t, (ArrayType, MultisetType)):
                return replace(t, element=number(t.element))
            if isinstance(t, MapType):
                return replace(t, key=number(t.key), value=number(t.value))
            return t

        numbered = []
        for f in fields:
            fid = next_id[0]
            next_id[0] += 1
            ftype = f.type
            if f.name in primary_keys and ftype.nullable:
                ftype = ftype.copy(nullable=False)  # Paimon makes primary key columns NOT NULL
            numbered.append(DataField(fid, f.name, number(ftype), f.description))
        schema = TableSchema(0, numbered, next_id[0] - 1, partition_keys, primary_keys, options, comment,
                             int(time.time() * 1000))
        schema.check()
        return schema

    def check(self) -> None:
        """Refuse a schema whose options would break the table: each option keeps its rule and names
        only columns the table has (:func:`options.validate`), the bucket setup holds, and the file
        indexes fit their columns. Run at CREATE and after every ALTER. A format table's options
        are those of its file format (:func:`~paimon_sql.format.format_table_options.check_schema`)."""
        if self.options.get("type", "").strip().lower() == "format-table":
            return check_format_table(self)
        opts.validate(self.options, self.field_names)
        iceberg_options(self.options)
        self._check_unserved_types()
        self._check_bucket_setup()
        self._check_branch_merge()
        self._check_row_tracking()
        self._check_data_evolution()
        check_file_indexes(self, self.options)
        if self.core_options().file_format == "avro":  # as Java's validateDataFields: what Avro cannot hold
            avro_schema(self.data_file_arrow_schema())

    def _check_unserved_types(self) -> None:
        """Paimon 2.0's BLOB and VECTOR columns are read by their table's other columns only: a table
        paimon-sql makes or alters must hold none (a Java table holding one opens, and refuses writes)."""
        for f in self.fields:
            kind = unserved_type(f.type)
            if kind:
                raise SchemaError(f"column '{f.name}' is {kind}, which paimon-sql does not write")

    def _check_branch_merge(self) -> None:
        """``branch-merge.enabled`` keeps a table's history append-only so that sys.merge_branch can
        merge it file by file: that needs an append table and no deletion vectors (they change
        files' rows without a new file)."""
        if not self.core_options().get("branch-merge.enabled"):
            return
        if self.primary_keys:
            raise SchemaError("'branch-merge.enabled' is for append tables, not a table with a primary key")
        for key in ("deletion-vectors.enabled", "partition.expiration-time"):  # DVs; expiry drops files
            if self.core_options().get(key):
                raise SchemaError(f"'branch-merge.enabled' cannot be used with '{key}'")

    def _check_row_tracking(self) -> None:
        """``row-tracking.enabled`` numbers an append table's rows once (Java's
        SchemaValidation.validateRowTracking): no primary key, no fixed bucket, and no column
        named as one of the row-tracking columns (``_ROW_ID``, ``_SEQUENCE_NUMBER``)."""
        if not self.core_options().get("row-tracking.enabled"):
            return
        if self.primary_keys:
            raise SchemaError("Cannot define primary-key for row tracking table.")
        if self.core_options().bucket != -1:
            raise SchemaError("Cannot define bucket for row tracking table, it only support bucket = -1")
        if ROW_ID in self.field_names:
            raise SchemaError(f"Row tracking field name '{ROW_ID}' conflicts with existing field names.")

    def _check_data_evolution(self) -> None:
        """``data-evolution.enabled`` merges files by row id: it needs row tracking (Java's
        SchemaValidation, in its words)."""
        if self.core_options().get("data-evolution.enabled") and not self.core_options().get("row-tracking.enabled"):
            raise SchemaError("Data evolution config must enabled with row-tracking.enabled")

    def _check_bucket_setup(self) -> None:
        o = self.core_options()
        bucket, bucket_key = o.bucket, o.bucket_key
        if bucket_key:
            if set(bucket_key) & set(self.partition_keys):
                raise SchemaError("bucket-key must not contain partition columns")
            if self.primary_keys and not set(bucket_key) <= set(self.primary_keys):
                raise SchemaError("bucket-key of a primary-key table must be part of the primary key")
        if not self.primary_keys and bucket == -2:  # Paimon's SchemaValidation, in its words
            raise SchemaError("The number of buckets needs to be greater than 0. "
                              "(postpone bucket mode, bucket = -2, is for primary-key tables)")
        if not self.primary_keys and bucket > 0 and not bucket_key:
            raise SchemaError("an append table with a fixed 'bucket' needs 'bucket-key'")
        if self.cross_partition_update:  # Paimon's SchemaValidation, in its words
            pk, parts = _java_list(self.primary_keys), _java_list(self.partition_keys)
            if bucket != -1:
                raise SchemaError(f"You should use dynamic bucket (bucket = -1) mode in cross partition update case "
                                  f"(Primary key constraint {pk} not include all partition fields {parts}).")
            if o.sequence_fields:
                raise SchemaError(f"You can not use sequence.field in cross partition update case "
                                  f"(Primary key constraint '{pk}' not include all partition fields '{parts}').")
        for f in self.fields:
            if (f.name in self.primary_keys or f.name in self.partition_keys) and not isinstance(f.type, AtomicType):
                raise SchemaError(f"key column '{f.name}' must have an atomic type, not {f.type}")

    def check_writable(self, table: str) -> None:
        """Refuse new rows for a table whose columns have Java 2.0 default values: Java's writer puts
        the default where a row holds NULL, ours would keep the NULL (reads, compaction and schema
        changes keep the defaults and are fine)."""
        defaults = [f.name for f in self.fields if f.default_value is not None]
        if defaults:
            raise SchemaError(f"table {table}: column(s) {', '.join(defaults)} have a default value "
                              "(Paimon 2.0 'defaultValue'), which paimon-sql does not apply: the table cannot be "
                              "written here")

    # -- JSON ------------------------------------------------------------------------------

    def to_json(self) -> str:
        d = {
            "version": self.version,
            "id": self.id,
            "fields": [f.to_json() for f in self.fields],
            "highestFieldId": self.highest_field_id,
            "partitionKeys": self.partition_keys,
            "primaryKeys": self.primary_keys,
            "options": self.options,
        }
        if self.comment is not None:
            d["comment"] = self.comment
        d["timeMillis"] = self.time_millis
        return json.dumps(d, indent=2)

    @staticmethod
    def read(io, path: str) -> "TableSchema":
        """The schema file at ``path``; a damaged one fails naming it (a missing one raises
        FileNotFoundError, for the caller to name as the schema id it wanted)."""
        return TableSchema.from_json(io.read_bytes(path), f"schema file {path}")

    @staticmethod
    def from_json(text, where: str = "schema JSON") -> "TableSchema":
        """``text``: str or UTF-8 bytes; ``where`` names it in the error when it is not a schema."""
        try:
            d = json.loads(text)
            options = dict(d.get("options") or {})
            version = d.get("version", 1)
            if version <= 1 and "bucket" not in options:
                options["bucket"] = "1"
            if version <= 2 and "file.format" not in options:
                options["file.format"] = "orc"
            return TableSchema(
                id=d["id"],
                fields=[DataField.from_json(f) for f in d["fields"]],
                highest_field_id=d["highestFieldId"],
                partition_keys=list(d.get("partitionKeys") or []),
                primary_keys=list(d.get("primaryKeys") or []),
                options=options,
                comment=d.get("comment"),
                time_millis=d.get("timeMillis", 0),
                version=version,
            )
        except (AttributeError, KeyError, TypeError, ValueError) as e:  # ValueError: also bytes not UTF-8
            raise CorruptMetadataError(f"{where} is malformed: {type(e).__name__}: {e}") from None

    # -- derived ---------------------------------------------------------------------------

    def core_options(self) -> opts.CoreOptions:
        return opts.CoreOptions(self.options)

    @property
    def field_names(self) -> List[str]:
        return [f.name for f in self.fields]

    def field(self, name: str) -> DataField:
        for f in self.fields:
            if f.name == name:
                return f
        raise SchemaError(f"column '{name}' does not exist")

    def fields_of(self, names: List[str]) -> List[DataField]:
        return [self.field(n) for n in names]

    @property
    def trimmed_primary_keys(self) -> List[str]:
        return [k for k in self.primary_keys if k not in self.partition_keys]

    @property
    def bucket_keys(self) -> List[str]:
        explicit = self.core_options().bucket_key
        if explicit:
            return explicit
        if self.primary_keys:
            return self.trimmed_primary_keys
        return [f.name for f in self.fields if f.name not in self.partition_keys]

    @property
    def is_primary_key_table(self) -> bool:
        return bool(self.primary_keys)

    @property
    def cross_partition_update(self) -> bool:
        """A partitioned primary key lacking a partition column: one key may move between
        partitions, so writes keep a global key index (:mod:`paimon_sql.write.cross_partition`)."""
        return bool(self.primary_keys and self.partition_keys) and not set(self.partition_keys) <= set(self.primary_keys)

    def arrow_schema(self) -> pa.Schema:
        """The table's rows as Arrow."""
        return arrow_schema(self.fields)

    def key_fields(self) -> List[DataField]:
        """Fields of the ``_KEY_*`` columns of primary-key data files."""
        return [DataField(KEY_FIELD_ID_START + f.id, KEY_PREFIX + f.name, f.type)
                for f in self.fields_of(self.trimmed_primary_keys)]

    def data_file_arrow_schema(self) -> pa.Schema:
        """Columns of a data file: append files hold the table columns; primary-key files hold
        ``_KEY_<k>..., _SEQUENCE_NUMBER, _VALUE_KIND`` and then the table columns."""
        if not self.is_primary_key_table:
            return self.arrow_schema()
        key = [f.to_arrow() for f in self.key_fields()]
        system = [pa.field(SEQUENCE_NUMBER, pa.int64(), False), pa.field(VALUE_KIND, pa.int8(), False)]
        return pa.schema(key + system + list(self.arrow_schema()))


def _java_list(names: List[str]) -> str:
    """A list of names as Java prints one (``[a, b]``), as Paimon's messages quote keys."""
    return f"[{', '.join(names)}]"
