"""Schema evolution: changes ALTER TABLE asks for, applied to the latest schema as schema-(N+1).

Columns keep their field ids through every change, so old data files are read through their own
schema by id (:mod:`paimon_sql.read.split_read`): a renamed column keeps its data, a dropped one
vanishes, an added one reads NULL, a widened one is cast on read. What would make old files
unreadable or put keys in other buckets is refused with a message naming the column or option, and
so is a result whose options break the table (:meth:`TableSchema.check`): an option naming a
dropped column, a value out of its range. A renamed column is renamed in the options naming it.

A column change names its column by a path: a top-level name, or a tuple that reaches a field of
a ROW (through an ARRAY's ``element`` or a MAP's ``value``, as Spark names them), as Paimon's
``SchemaChange`` does with its field names. A new field, nested or not, takes the next id above
the schema's highest one and its own ROW type's fields the ids after it (children before their
parent), as Java's ``SchemaManager`` and ``ReassignFieldId`` number them; a reader of older
files, which lack it, reads NULL there.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from typing import Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Union

from paimon_sql.data.types import ArrayType, AtomicType, DataField, DataType, MapType, MultisetType, RowType
from paimon_sql.exceptions import SchemaError
from paimon_sql.options import core_options as opts
from paimon_sql.schema.table_schema import SEQUENCE_NUMBER, VALUE_KIND, TableSchema

# options fixed at CREATE: changing them would re-key, re-bucket or re-merge existing files
IMMUTABLE_OPTIONS = frozenset({"primary-key", "partition", "bucket-key", "merge-engine", "sequence.field",
                               "rowkind.field", "path", "row-tracking.enabled",
                               "data-evolution.enabled"})
# the table's type (table, format-table, ...) is fixed too: files of one type are not another's
TYPE = "type"


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


ColumnName = Union[str, Tuple[str, ...]]  # a top-level name, or the path to a nested field


@dataclass(frozen=True)
class AddColumn:
    name: ColumnName
    type: DataType
    comment: Optional[str] = None
    position: Optional[str] = None  # None (last), "FIRST" or "AFTER <column>"


@dataclass(frozen=True)
class RenameColumn:
    name: ColumnName
    new_name: str


@dataclass(frozen=True)
class DropColumn:
    name: ColumnName


@dataclass(frozen=True)
class UpdateColumnType:
    name: ColumnName
    type: DataType


@dataclass(frozen=True)
class UpdateColumnComment:
    name: ColumnName
    comment: Optional[str]


@dataclass(frozen=True)
class UpdateColumnNullability:
    name: ColumnName
    nullable: bool


@dataclass(frozen=True)
class UpdateColumnPosition:
    name: str
    position: str  # "FIRST" or "AFTER <column>"


SchemaChange = Union[SetOption, RemoveOption, UpdateComment, AddColumn, RenameColumn, DropColumn,
                     UpdateColumnType, UpdateColumnComment, UpdateColumnNullability, UpdateColumnPosition]

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


def path_of(name: ColumnName) -> Tuple[str, ...]:
    return tuple(name) if isinstance(name, (tuple, list)) else (name,)


def dotted(name: ColumnName) -> str:
    return ".".join(path_of(name))


@dataclass
class _Draft:
    """The next schema while changes are applied to it, in order."""

    base: TableSchema
    fields: List[DataField]
    options: Dict[str, str]
    comment: Optional[str]
    highest: int
    primary_keys: List[str]
    set_options: Dict[str, str] = field(default_factory=dict)  # checked against the old options at the end

    def index_of(self, fields: List[DataField], name: str, path: Tuple[str, ...]) -> int:
        for i, f in enumerate(fields):
            if f.name == name:
                return i
        raise SchemaError(f"column '{'.'.join(path)}' does not exist in table schema {self.base.id}")

    def edit(self, name: ColumnName, edit: Callable[[List[DataField], str], None]) -> None:
        """Apply ``edit(siblings, leaf)`` to the field list holding the column ``name`` names (the
        top level, or a ROW its parents lead to); ``siblings`` is changed in place."""
        self.fields = self._edit(self.fields, path_of(name), 0, edit)

    def _edit(self, fields: List[DataField], path: Tuple[str, ...], depth: int, edit) -> List[DataField]:
        out = list(fields)
        if depth == len(path) - 1:
            edit(out, path[depth])
            return out
        i = self.index_of(out, path[depth], path[:depth + 1])
        out[i] = replace(out[i], type=self._edit_type(out[i].type, path, depth + 1, edit))
        return out

    def _edit_type(self, t: DataType, path: Tuple[str, ...], depth: int, edit) -> DataType:
        if isinstance(t, RowType):
            return replace(t, fields=tuple(self._edit(list(t.fields), path, depth, edit)))
        if depth < len(path) - 1 and isinstance(t, (ArrayType, MultisetType)) and path[depth] == "element":
            return replace(t, element=self._edit_type(t.element, path, depth + 1, edit))
        if depth < len(path) - 1 and isinstance(t, MapType) and path[depth] == "value":
            return replace(t, value=self._edit_type(t.value, path, depth + 1, edit))
        raise SchemaError(f"column '{'.'.join(path)}': '{'.'.join(path[:depth])}' is {t}, not a struct")

    def update(self, name: ColumnName, change: Callable[[DataField], DataField]) -> None:
        def edit(siblings, leaf):
            i = self.index_of(siblings, leaf, path_of(name))
            siblings[i] = change(siblings[i])
        self.edit(name, edit)

    def next_id(self) -> int:
        self.highest += 1
        return self.highest

    def numbered(self, t: DataType) -> DataType:
        """``t`` with fresh ids for the fields of its ROW types (children before their parent)."""
        if isinstance(t, RowType):
            nested = []
            for f in t.fields:
                ftype = self.numbered(f.type)
                nested.append(DataField(self.next_id(), f.name, ftype, f.description))
            return replace(t, fields=tuple(nested))
        if isinstance(t, (ArrayType, MultisetType)):
            return replace(t, element=self.numbered(t.element))
        if isinstance(t, MapType):
            return replace(t, key=self.numbered(t.key), value=self.numbered(t.value))
        return t

    def not_key(self, name: ColumnName, verb: str, keys=("partition", "primary")) -> None:
        path = path_of(name)
        for kind, ks in (("partition", self.base.partition_keys), ("primary", self.primary_keys)):
            if len(path) == 1 and kind in keys and path[0] in ks:
                raise SchemaError(f"cannot {verb} {kind} key column '{path[0]}'")


def _place(d: _Draft, siblings: List[DataField], f: DataField, position: Optional[str], path) -> None:
    if position is None:
        siblings.append(f)
    elif position.upper() == "FIRST":
        siblings.insert(0, f)
    else:
        after = position.split(None, 1)[1]
        siblings.insert(d.index_of(siblings, after, tuple(path[:-1]) + (after,)) + 1, f)


def _set_option(d: _Draft, ch: SetOption) -> None:
    d.options[ch.key] = d.set_options[ch.key] = ch.value


def _remove_option(d: _Draft, ch: RemoveOption) -> None:
    if ch.key in IMMUTABLE_OPTIONS and ch.key in d.options or ch.key == TYPE and opts.table_type(d.options) != "table":
        raise SchemaError(f"option '{ch.key}' cannot be removed after the table is created")
    if ch.key == "bucket" and d.options.get("bucket") not in (None, "-1"):
        raise SchemaError("option 'bucket' cannot be removed from a fixed-bucket table")
    d.options.pop(ch.key, None)


def _update_comment(d: _Draft, ch: UpdateComment) -> None:
    d.comment = ch.comment


def _add_column(d: _Draft, ch: AddColumn) -> None:
    path, name = path_of(ch.name), dotted(ch.name)
    if path[-1] in (SEQUENCE_NUMBER, VALUE_KIND) and len(path) == 1:
        raise SchemaError(f"column name '{name}' is reserved by Paimon")
    if not ch.type.nullable:
        raise SchemaError(f"column '{name}': ADD COLUMN cannot be NOT NULL (old rows have no value)")
    fid = d.next_id()  # as Java: the new column's id, then its nested fields' (children first)
    new = DataField(fid, path[-1], d.numbered(ch.type), ch.comment)

    def add(siblings, leaf):
        if any(f.name == leaf for f in siblings):
            raise SchemaError(f"column '{name}' already exists")
        _place(d, siblings, new, ch.position, path)
    d.edit(ch.name, add)


def _rename_column(d: _Draft, ch: RenameColumn) -> None:
    d.not_key(ch.name, "rename", ("partition",))
    path = path_of(ch.name)

    def rename(siblings, leaf):
        i = d.index_of(siblings, leaf, path)
        if any(f.name == ch.new_name for f in siblings):
            raise SchemaError(f"cannot rename '{dotted(ch.name)}' to '{ch.new_name}': that column exists")
        siblings[i] = replace(siblings[i], name=ch.new_name)
    d.edit(ch.name, rename)
    if len(path) == 1:
        d.primary_keys = [ch.new_name if k == ch.name else k for k in d.primary_keys]
        d.options = opts.rename_column(d.options, path[0], ch.new_name)


def _drop_column(d: _Draft, ch: DropColumn) -> None:
    d.not_key(ch.name, "drop")
    path = path_of(ch.name)
    naming = opts.options_naming(d.options, path[0]) if len(path) == 1 else []
    if naming:
        raise SchemaError(f"cannot drop column '{path[0]}': option(s) {', '.join(naming)} name it "
                          "(unset or change them first)")

    def drop(siblings, leaf):
        siblings.pop(d.index_of(siblings, leaf, path))
        if not siblings:
            what = "a table" if len(path) == 1 else f"struct '{dotted(path[:-1])}'"
            raise SchemaError(f"cannot drop the last column of {what}")
    d.edit(ch.name, drop)


def _update_column_type(d: _Draft, ch: UpdateColumnType) -> None:
    d.not_key(ch.name, "change the type of")

    def retype(f: DataField) -> DataField:
        new = ch.type.copy(nullable=f.type.nullable)
        if not _widens(f.type, new):
            raise SchemaError(f"cannot change column '{dotted(ch.name)}' from {f.type} to {new}: "
                              "not a safe widening")
        return replace(f, type=new)
    d.update(ch.name, retype)


def _update_column_comment(d: _Draft, ch: UpdateColumnComment) -> None:
    d.update(ch.name, lambda f: replace(f, description=ch.comment))


def _update_column_nullability(d: _Draft, ch: UpdateColumnNullability) -> None:
    """DROP NOT NULL; SET NOT NULL is refused (older rows may hold NULL), as Paimon refuses it by
    default (``alter-column-null-to-not-null.disabled``)."""
    name = dotted(ch.name)
    if not ch.nullable:
        raise SchemaError(f"cannot change column '{name}' to NOT NULL: existing rows may hold NULL")
    d.not_key(ch.name, "change the nullability of", ("primary",))
    d.update(ch.name, lambda f: replace(f, type=f.type.copy(nullable=True)))


def _update_column_position(d: _Draft, ch: UpdateColumnPosition) -> None:
    path = path_of(ch.name)
    if ch.position.upper() != "FIRST" and ch.position.split(None, 1)[1] == path[-1]:
        raise SchemaError(f"column '{dotted(ch.name)}' cannot be placed after itself")

    def move(siblings, leaf):
        _place(d, siblings, siblings.pop(d.index_of(siblings, leaf, path)), ch.position, path)
    d.edit(ch.name, move)


_APPLY = {SetOption: _set_option, RemoveOption: _remove_option, UpdateComment: _update_comment,
          AddColumn: _add_column, RenameColumn: _rename_column, DropColumn: _drop_column,
          UpdateColumnType: _update_column_type, UpdateColumnComment: _update_column_comment,
          UpdateColumnNullability: _update_column_nullability, UpdateColumnPosition: _update_column_position}


def apply(schema: TableSchema, changes: Sequence[SchemaChange]) -> TableSchema:
    """``schema`` with ``changes`` applied in order, as the next schema id."""
    d = _Draft(schema, list(schema.fields), dict(schema.options), schema.comment, schema.highest_field_id,
               list(schema.primary_keys))
    for ch in changes:
        handler = _APPLY.get(type(ch))
        if handler is None:
            raise SchemaError(f"unknown schema change {ch!r}")
        handler(d, ch)
    out = TableSchema(schema.id + 1, d.fields, d.highest, list(schema.partition_keys), d.primary_keys, d.options,
                      d.comment, int(time.time() * 1000))
    out.check()
    check_option_changes(schema.options, d.set_options)
    return out


def check_option_changes(options: Mapping[str, str], changes: Mapping[str, str]) -> None:
    """Refuse setting ``changes`` over ``options`` when existing files would no longer fit, by
    ALTER TABLE and by a hint for one read or write alike (as Paimon's checkAlterTableOption).
    The values themselves are validated before. A fixed bucket count may change (a rescale);
    dynamic and fixed modes place keys differently."""
    for key, value in changes.items():
        changed = opts.table_type(changes) != opts.table_type(options) if key == TYPE else options.get(key) != value
        if (key in IMMUTABLE_OPTIONS or key == TYPE) and changed:
            raise SchemaError(f"option '{key}' cannot be changed after the table is created")
    old, new = opts.CoreOptions(options).bucket, opts.CoreOptions({**options, **changes}).bucket
    if old != new and (old < 0 or new < 0):
        mode = {-1: "dynamic", -2: "postpone"}
        raise SchemaError(f"option 'bucket' cannot change between {mode.get(min(old, new), 'fixed')} and "
                          f"{mode.get(max(old, new), 'fixed')} ({old} -> {new})")
