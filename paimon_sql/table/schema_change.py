"""Schema evolution: changes ALTER TABLE asks for, applied to the latest schema as schema-(N+1).

Columns keep their field ids through every change, so old data files are read through their own
schema by id (:mod:`paimon_sql.table.read`): a renamed column keeps its data, a dropped one
vanishes, an added one reads NULL, a widened one is cast on read. What would make old files
unreadable or put keys in other buckets is refused with a message naming the column or option, and
so is a result whose options break the table (:meth:`TableSchema.check`): an option naming a
dropped column, a value out of its range. A renamed column is renamed in the options naming it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from typing import List, Mapping, Optional, Sequence, Union

from paimon_sql.exceptions import SchemaError
from paimon_sql.format import options as opts
from paimon_sql.format.schema import SEQUENCE_NUMBER, VALUE_KIND, TableSchema
from paimon_sql.format.types import AtomicType, DataField, DataType

# options fixed at CREATE: changing them would re-key, re-bucket or re-merge existing files
IMMUTABLE_OPTIONS = frozenset({"primary-key", "partition", "bucket-key", "merge-engine", "sequence.field",
                               "rowkind.field", "path"})


@dataclass(frozen=True)
class SetOption:
    key: str
    value: str


@dataclass(frozen=True)
class RemoveOption:
    key: str


@dataclass(frozen=True)
class UpdateComment:
    comment: Optional[str]


@dataclass(frozen=True)
class AddColumn:
    name: str
    type: DataType
    comment: Optional[str] = None
    position: Optional[str] = None  # None (last), "FIRST" or "AFTER <column>"


@dataclass(frozen=True)
class RenameColumn:
    name: str
    new_name: str


@dataclass(frozen=True)
class DropColumn:
    name: str


@dataclass(frozen=True)
class UpdateColumnType:
    name: str
    type: DataType


@dataclass(frozen=True)
class UpdateColumnComment:
    name: str
    comment: Optional[str]


@dataclass(frozen=True)
class UpdateColumnPosition:
    name: str
    position: str  # "FIRST" or "AFTER <column>"


SchemaChange = Union[SetOption, RemoveOption, UpdateComment, AddColumn, RenameColumn, DropColumn,
                     UpdateColumnType, UpdateColumnComment, UpdateColumnPosition]

# integral widenings and the float widening; DECIMAL/CHAR/VARCHAR/BINARY may grow (see _widens)
_RANKS = {"TINYINT": 1, "SMALLINT": 2, "INT": 3, "BIGINT": 4}


def _widens(old: DataType, new: DataType) -> bool:
    """Whether every value of ``old`` is a value of ``new`` (a safe ALTER COLUMN TYPE)."""
    if not (isinstance(old, AtomicType) and isinstance(new, AtomicType)):
        return old.copy(nullable=True) == new.copy(nullable=True)
    a, b = old.name, new.name
    if a == b and old.args == new.args:
        return True
    if a in _RANKS and b in _RANKS:
        return _RANKS[a] <= _RANKS[b]
    if a in _RANKS and b in ("FLOAT", "DOUBLE"):
        return _RANKS[a] <= (2 if b == "FLOAT" else 3)  # exact in the float's mantissa
    if a in _RANKS and b == "DECIMAL":
        digits = {"TINYINT": 3, "SMALLINT": 5, "INT": 10, "BIGINT": 19}[a]
        return new.precision - new.scale >= digits
    if (a, b) == ("FLOAT", "DOUBLE"):
        return True
    if a == b == "DECIMAL":
        return new.scale >= old.scale and new.precision - new.scale >= old.precision - old.scale
    if a in ("CHAR", "VARCHAR") and b == "VARCHAR" or a in ("BINARY", "VARBINARY") and b == "VARBINARY":
        return new.args[0] >= old.args[0]
    if a in ("TIMESTAMP", "TIMESTAMP_LTZ") and b == a:
        return new.precision >= old.precision
    if (a, b) == ("DATE", "TIMESTAMP"):
        return True
    return False


def apply(schema: TableSchema, changes: Sequence[SchemaChange]) -> TableSchema:
    """``schema`` with ``changes`` applied in order, as the next schema id."""
    fields: List[DataField] = list(schema.fields)
    options = dict(schema.options)
    comment, highest = schema.comment, schema.highest_field_id
    partition_keys, primary_keys = list(schema.partition_keys), list(schema.primary_keys)
    set_options = {}  # what SET TBLPROPERTIES asks for, checked against the old options at the end

    def index_of(name: str) -> int:
        for i, f in enumerate(fields):
            if f.name == name:
                return i
        raise SchemaError(f"column '{name}' does not exist in table schema {schema.id}")

    def place(f: DataField, position: Optional[str]) -> None:
        if position is None:
            fields.append(f)
        elif position.upper() == "FIRST":
            fields.insert(0, f)
        else:
            after = position.split(None, 1)[1]
            fields.insert(index_of(after) + 1, f)

    def not_key(name: str, verb: str, keys=("partition", "primary")) -> None:
        for kind, ks in (("partition", partition_keys), ("primary", primary_keys)):
            if kind in keys and name in ks:
                raise SchemaError(f"cannot {verb} {kind} key column '{name}'")

    for ch in changes:
        if isinstance(ch, SetOption):
            options[ch.key] = set_options[ch.key] = ch.value
        elif isinstance(ch, RemoveOption):
            if ch.key in IMMUTABLE_OPTIONS and ch.key in options:
                raise SchemaError(f"option '{ch.key}' cannot be removed after the table is created")
            if ch.key == "bucket" and options.get("bucket") not in (None, "-1"):
                raise SchemaError("option 'bucket' cannot be removed from a fixed-bucket table")
            options.pop(ch.key, None)
        elif isinstance(ch, UpdateComment):
            comment = ch.comment
        elif isinstance(ch, AddColumn):
            if any(f.name == ch.name for f in fields):
                raise SchemaError(f"column '{ch.name}' already exists")
            if ch.name in (SEQUENCE_NUMBER, VALUE_KIND):
                raise SchemaError(f"column name '{ch.name}' is reserved by Paimon")
            if not ch.type.nullable:
                raise SchemaError(f"column '{ch.name}': ADD COLUMN cannot be NOT NULL (old rows have no value)")
            highest += 1
            place(DataField(highest, ch.name, ch.type, ch.comment), ch.position)
        elif isinstance(ch, RenameColumn):
            not_key(ch.name, "rename", ("partition",))
            i = index_of(ch.name)
            if any(f.name == ch.new_name for f in fields):
                raise SchemaError(f"cannot rename '{ch.name}' to '{ch.new_name}': that column exists")
            fields[i] = replace(fields[i], name=ch.new_name)
            primary_keys = [ch.new_name if k == ch.name else k for k in primary_keys]
            options = opts.rename_column(options, ch.name, ch.new_name)
        elif isinstance(ch, DropColumn):
            not_key(ch.name, "drop")
            naming = opts.options_naming(options, ch.name)
            if naming:
                raise SchemaError(f"cannot drop column '{ch.name}': option(s) {', '.join(naming)} name it "
                                  "(unset or change them first)")
            fields.pop(index_of(ch.name))
            if not fields:
                raise SchemaError("cannot drop the last column of a table")
        elif isinstance(ch, UpdateColumnType):
            not_key(ch.name, "change the type of")
            i = index_of(ch.name)
            old = fields[i].type
            new = ch.type.copy(nullable=old.nullable)
            if not _widens(old, new):
                raise SchemaError(f"cannot change column '{ch.name}' from {old} to {new}: not a safe widening")
            fields[i] = replace(fields[i], type=new)
        elif isinstance(ch, UpdateColumnComment):
            i = index_of(ch.name)
            fields[i] = replace(fields[i], description=ch.comment)
        elif isinstance(ch, UpdateColumnPosition):
            f = fields.pop(index_of(ch.name))
            if ch.position.upper() != "FIRST" and ch.position.split(None, 1)[1] == ch.name:
                raise SchemaError(f"column '{ch.name}' cannot be placed after itself")
            place(f, ch.position)
        else:
            raise SchemaError(f"unknown schema change {ch!r}")
    out = TableSchema(schema.id + 1, fields, highest, partition_keys, primary_keys, options, comment,
                      int(time.time() * 1000))
    out.check()
    check_option_changes(schema.options, set_options)
    return out


def check_option_changes(options: Mapping[str, str], changes: Mapping[str, str]) -> None:
    """Refuse setting ``changes`` over ``options`` when existing files would no longer fit, by
    ALTER TABLE and by a hint for one read or write alike (as Paimon's checkAlterTableOption).
    The values themselves are validated before. A fixed bucket count may change (a rescale);
    dynamic and fixed modes place keys differently."""
    for key, value in changes.items():
        if key in IMMUTABLE_OPTIONS and options.get(key) != value:
            raise SchemaError(f"option '{key}' cannot be changed after the table is created")
    old, new = opts.CoreOptions(options).bucket, opts.CoreOptions({**options, **changes}).bucket
    if old != new and (old < 0 or new < 0):
        raise SchemaError(f"option 'bucket' cannot change between dynamic and fixed ({old} -> {new})")
