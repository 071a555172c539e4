"""Paimon data types: their SQL strings, their schema-JSON form, and their Arrow mapping.

Type strings are the ones Java Paimon writes in ``schema-N`` (``BIGINT NOT NULL``,
``DECIMAL(10, 2)``, ``TIMESTAMP(6) WITH LOCAL TIME ZONE``, ``STRING`` for VARCHAR(2147483647)).
Atomic types are plain strings in schema JSON; ARRAY / MULTISET / MAP / ROW are objects whose
``type`` names the kind and whose children are nested the same way.

Paimon 2.0's BLOB (bytes a writer keeps in ``.blob`` files) and ``VECTOR<FLOAT, 3>`` (``{"type":
"VECTOR", "element": ..., "length": n}`` in schema JSON) are parsed so that a table holding them opens
and shows them; paimon-sql reads and writes neither (:func:`unserved_type`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import List, Optional, Tuple, Union

import pyarrow as pa

from paimon_sql.exceptions import SchemaError

MAX_LENGTH = 2147483647

# name -> (default args, whether args are allowed)
_ATOMIC_DEFAULTS = {
    "BOOLEAN": (), "TINYINT": (), "SMALLINT": (), "INT": (), "BIGINT": (), "FLOAT": (), "DOUBLE": (),
    "DATE": (), "CHAR": (1,), "VARCHAR": (1,), "BINARY": (1,), "VARBINARY": (1,), "DECIMAL": (10, 0),
    "TIME": (0,), "TIMESTAMP": (6,), "TIMESTAMP_LTZ": (6,), "VARIANT": (), "BLOB": (),
}
_ALIASES = {"INTEGER": "INT", "BOOL": "BOOLEAN", "DEC": "DECIMAL", "NUMERIC": "DECIMAL",
            "REAL": "FLOAT", "LONG": "BIGINT", "SHORT": "SMALLINT", "BYTE": "TINYINT"}


@dataclass(frozen=True)
class DataType:
    nullable: bool = field(default=True, kw_only=True)

    def copy(self, nullable: bool) -> "DataType":
        return replace(self, nullable=nullable)

    def _suffix(self) -> str:
        return "" if self.nullable else " NOT NULL"


@dataclass(frozen=True)
class AtomicType(DataType):
    """A type without children. ``args`` are length, precision or (precision, scale)."""

    name: str
    args: Tuple[int, ...] = ()

    def __str__(self) -> str:
        n, a = self.name, self.args
        if n == "VARCHAR" and a == (MAX_LENGTH,):
            body = "STRING"
        elif n == "VARBINARY" and a == (MAX_LENGTH,):
            body = "BYTES"
        elif n == "TIMESTAMP_LTZ":
            body = f"TIMESTAMP({a[0]}) WITH LOCAL TIME ZONE"
        elif a:
            body = f"{n}({', '.join(str(x) for x in a)})"
        else:
            body = n
        return body + self._suffix()

    def to_json(self):
        return str(self)

    @property
    def precision(self) -> int:
        return self.args[0] if self.args else 0

    @property
    def scale(self) -> int:
        return self.args[1] if len(self.args) > 1 else 0

    def to_arrow(self) -> pa.DataType:
        n = self.name
        if n in _SIMPLE_ARROW:
            return _SIMPLE_ARROW[n]
        if n == "DECIMAL":
            return pa.decimal128(self.precision, self.scale)
        if n in ("TIMESTAMP", "TIMESTAMP_LTZ"):
            p = self.precision
            unit = "ms" if p <= 3 else ("us" if p <= 6 else "ns")
            return pa.timestamp(unit, tz="UTC" if n == "TIMESTAMP_LTZ" else None)
        if n == "TIME":
            return pa.time32("ms") if self.precision <= 3 else pa.time64("us")
        if n == "BLOB":  # its shape only: paimon-sql reads no BLOB values
            return pa.large_binary()
        if n == "VARIANT":
            return pa.struct([pa.field("value", pa.binary(), False), pa.field("metadata", pa.binary(), False)])
        raise SchemaError(f"no Arrow type for {self}")


_SIMPLE_ARROW = {
    "BOOLEAN": pa.bool_(), "TINYINT": pa.int8(), "SMALLINT": pa.int16(), "INT": pa.int32(),
    "BIGINT": pa.int64(), "FLOAT": pa.float32(), "DOUBLE": pa.float64(), "DATE": pa.date32(),
    "CHAR": pa.string(), "VARCHAR": pa.string(), "BINARY": pa.binary(), "VARBINARY": pa.binary(),
}


@dataclass(frozen=True)
class ArrayType(DataType):
    element: DataType = None

    def __str__(self):
        return f"ARRAY<{self.element}>{self._suffix()}"

    def to_json(self):
        return {"type": "ARRAY" + self._suffix(), "element": self.element.to_json()}

    def to_arrow(self):
        return pa.list_(pa.field("element", self.element.to_arrow(), self.element.nullable))


@dataclass(frozen=True)
class MultisetType(DataType):
    """A bag: stored as a map from element to its multiplicity (INT NOT NULL)."""

    element: DataType = None

    def __str__(self):
        return f"MULTISET<{self.element}>{self._suffix()}"

    def to_json(self):
        return {"type": "MULTISET" + self._suffix(), "element": self.element.to_json()}

    def to_arrow(self):
        return pa.map_(self.element.to_arrow(), pa.field("value", pa.int32(), False))


@dataclass(frozen=True)
class VectorType(DataType):
    """Paimon 2.0's fixed-length array of numbers (BOOLEAN, TINYINT ... DOUBLE), e.g. an embedding."""

    element: DataType = None
    length: int = 1

    def __str__(self):
        return f"VECTOR<{self.element}, {self.length}>{self._suffix()}"

    def to_json(self):
        return {"type": "VECTOR" + self._suffix(), "element": self.element.to_json(), "length": self.length}

    def to_arrow(self):  # its shape only: paimon-sql reads no VECTOR values
        return pa.list_(pa.field("element", self.element.to_arrow(), self.element.nullable), self.length)


_VECTOR_ELEMENTS = ("BOOLEAN", "TINYINT", "SMALLINT", "INT", "BIGINT", "FLOAT", "DOUBLE")


def _vector(element: DataType, length: int, nullable: bool) -> VectorType:
    if not (isinstance(element, AtomicType) and element.name in _VECTOR_ELEMENTS):
        raise SchemaError(f"VECTOR elements must be one of {', '.join(_VECTOR_ELEMENTS)}, not {element}")
    if not 1 <= length <= MAX_LENGTH:
        raise SchemaError(f"VECTOR length must be 1..{MAX_LENGTH}, got {length}")
    return VectorType(element=element, length=length, nullable=nullable)


@dataclass(frozen=True)
class MapType(DataType):
    key: DataType = None
    value: DataType = None

    def __str__(self):
        return f"MAP<{self.key}, {self.value}>{self._suffix()}"

    def to_json(self):
        return {"type": "MAP" + self._suffix(), "key": self.key.to_json(), "value": self.value.to_json()}

    def to_arrow(self):
        return pa.map_(pa.field("key", self.key.to_arrow(), False),
                       pa.field("value", self.value.to_arrow(), self.value.nullable))


@dataclass(frozen=True)
class DataField:
    """A column: a stable id (schema evolution matches by it), a name, a type, a description, and
    Java 2.0's ``defaultValue`` (SQL text Java's writer puts in place of a NULL; kept, never
    applied here: writes to such a table are refused, see ``TableSchema.check_writable``)."""

    id: int
    name: str
    type: DataType
    description: Optional[str] = None
    default_value: Optional[str] = None

    def to_json(self) -> dict:
        d = {"id": self.id, "name": self.name, "type": self.type.to_json()}
        if self.description is not None:
            d["description"] = self.description
        if self.default_value is not None:
            d["defaultValue"] = self.default_value
        return d

    @staticmethod
    def from_json(d: dict) -> "DataField":
        return DataField(d["id"], d["name"], parse_type_json(d["type"]), d.get("description"), d.get("defaultValue"))

    def to_arrow(self) -> pa.Field:
        return pa.field(self.name, self.type.to_arrow(), self.type.nullable)


@dataclass(frozen=True)
class RowType(DataType):
    fields: Tuple[DataField, ...] = ()

    def __str__(self):
        inner = ", ".join(f"`{f.name}` {f.type}" for f in self.fields)
        return f"ROW<{inner}>{self._suffix()}"

    def to_json(self):
        return {"type": "ROW" + self._suffix(), "fields": [f.to_json() for f in self.fields]}

    def to_arrow(self):
        return pa.struct([f.to_arrow() for f in self.fields])


def unserved_type(t: DataType) -> Optional[str]:
    """The Paimon 2.0 type paimon-sql cannot read or write that ``t`` is or holds (``BLOB``,
    ``VECTOR``), else None."""
    if isinstance(t, VectorType):
        return "VECTOR"
    if isinstance(t, (ArrayType, MultisetType)):
        children = [t.element]
    elif isinstance(t, MapType):
        children = [t.key, t.value]
    elif isinstance(t, RowType):
        children = [f.type for f in t.fields]
    else:
        return "BLOB" if t.name == "BLOB" else None
    return next((u for u in map(unserved_type, children) if u), None)


# ---------------------------------------------------------------------------------------------
# parsing


_TOKEN = re.compile(r"\s*(`(?:[^`]|``)*`|[A-Za-z_][A-Za-z_0-9]*|\d+|[<>(),:]|'(?:[^']|'')*')")


class _Tokens:
    def __init__(self, text: str):
        self.text = text
        self.items: List[str] = []
        pos = 0
        while pos < len(text):
            m = _TOKEN.match(text, pos)
            if not m:
                if text[pos:].strip() == "":
                    break
                raise SchemaError(f"cannot parse type '{text}' at position {pos}")
            self.items.append(m.group(1))
            pos = m.end()
        self.i = 0

    def peek(self, k: int = 0) -> Optional[str]:
        j = self.i + k
        return self.items[j] if j < len(self.items) else None

    def take(self, expected: Optional[str] = None) -> str:
        tok = self.peek()
        if tok is None or (expected is not None and tok.upper() != expected):
            raise SchemaError(f"cannot parse type '{self.text}': expected {expected or 'more'}, got {tok}")
        self.i += 1
        return tok

    def accept(self, word: str) -> bool:
        tok = self.peek()
        if tok is not None and tok.upper() == word:
            self.i += 1
            return True
        return False


def parse_type(text: str) -> DataType:
    """Parse a Paimon/SQL type string: ``INT NOT NULL``, ``MAP<STRING, ARRAY<INT>>``, ``ROW<a INT>``."""
    toks = _Tokens(text)
    t = _parse(toks)
    if toks.peek() is not None:
        raise SchemaError(f"cannot parse type '{text}': unexpected '{toks.peek()}'")
    return t


def _parse_args(toks: _Tokens) -> Tuple[int, ...]:
    args = []
    if toks.accept("("):
        args.append(int(toks.take()))
        while toks.accept(","):
            args.append(int(toks.take()))
        toks.take(")")
    return tuple(args)


def _nullability(toks: _Tokens) -> bool:
    if toks.peek() and toks.peek().upper() == "NOT" and (toks.peek(1) or "").upper() == "NULL":
        toks.i += 2
        return False
    toks.accept("NULL")
    return True


def _parse(toks: _Tokens) -> DataType:
    word = toks.take().upper()
    word = _ALIASES.get(word, word)
    if word in ("ARRAY", "MULTISET"):
        toks.take("<")
        elem = _parse(toks)
        toks.take(">")
        cls = ArrayType if word == "ARRAY" else MultisetType
        return cls(element=elem, nullable=_nullability(toks))
    if word == "VECTOR":
        toks.take("<")
        elem = _parse(toks)
        toks.take(",")
        length = int(toks.take())
        toks.take(">")
        return _vector(elem, length, _nullability(toks))
    if word == "MAP":
        toks.take("<")
        k = _parse(toks)
        toks.take(",")
        v = _parse(toks)
        toks.take(">")
        return MapType(key=k, value=v, nullable=_nullability(toks))
    if word in ("ROW", "STRUCT"):
        toks.take("<")
        fields = []
        while not toks.accept(">"):
            if fields:
                toks.take(",")
            name = toks.take()
            if name.startswith("`"):
                name = name[1:-1].replace("``", "`")
            toks.accept(":")
            ftype = _parse(toks)
            desc = None
            if toks.accept("COMMENT"):
                desc = toks.take()[1:-1].replace("''", "'")
            fields.append(DataField(len(fields), name, ftype, desc))
        return RowType(fields=tuple(fields), nullable=_nullability(toks))
    if word == "STRING":
        return AtomicType("VARCHAR", (MAX_LENGTH,), nullable=_nullability(toks))
    if word == "BYTES":
        return AtomicType("VARBINARY", (MAX_LENGTH,), nullable=_nullability(toks))
    if word == "TIMESTAMP_LTZ":
        args = _parse_args(toks) or (6,)
        _check_args("TIMESTAMP", args)
        return AtomicType("TIMESTAMP_LTZ", args, nullable=_nullability(toks))
    if word == "TIMESTAMP":
        args = _parse_args(toks) or (6,)
        _check_args("TIMESTAMP", args)
        if toks.peek() and toks.peek().upper() == "WITH":
            toks.take("WITH")
            if toks.accept("LOCAL"):
                toks.take("TIME")
                toks.take("ZONE")
                return AtomicType("TIMESTAMP_LTZ", args, nullable=_nullability(toks))
            raise SchemaError("TIMESTAMP WITH TIME ZONE is not a Paimon type; use TIMESTAMP WITH LOCAL TIME ZONE")
        if toks.accept("WITHOUT"):
            toks.take("TIME")
            toks.take("ZONE")
        return AtomicType("TIMESTAMP", args, nullable=_nullability(toks))
    if word not in _ATOMIC_DEFAULTS:
        raise SchemaError(f"unknown data type '{word}'")
    args = _parse_args(toks) or _ATOMIC_DEFAULTS[word]
    if word == "DECIMAL" and len(args) == 1:
        args = (args[0], 0)
    _check_args(word, args)
    return AtomicType(word, args, nullable=_nullability(toks))


def _check_args(word: str, args: Tuple[int, ...]) -> None:
    if word == "DECIMAL" and not (1 <= args[0] <= 38 and 0 <= args[1] <= args[0]):
        raise SchemaError(f"DECIMAL precision must be 1..38 and scale 0..precision, got {args}")
    if word in ("TIME", "TIMESTAMP") and not 0 <= args[0] <= 9:
        raise SchemaError(f"{word} precision must be 0..9, got {args[0]}")
    if word in ("CHAR", "VARCHAR", "BINARY", "VARBINARY") and not 1 <= args[0] <= MAX_LENGTH:
        raise SchemaError(f"{word} length must be 1..{MAX_LENGTH}, got {args[0]}")


def parse_type_json(node: Union[str, dict]) -> DataType:
    """Read a type as it stands in schema JSON: a string, or an object for nested types."""
    if isinstance(node, str):
        return parse_type(node)
    kind = node["type"].upper()
    nullable = not kind.endswith("NOT NULL")
    base = kind.split()[0]
    if base == "ARRAY":
        return ArrayType(element=parse_type_json(node["element"]), nullable=nullable)
    if base == "MULTISET":
        return MultisetType(element=parse_type_json(node["element"]), nullable=nullable)
    if base == "MAP":
        return MapType(key=parse_type_json(node["key"]), value=parse_type_json(node["value"]), nullable=nullable)
    if base == "ROW":
        return RowType(fields=tuple(DataField.from_json(f) for f in node["fields"]), nullable=nullable)
    if base == "VECTOR":
        return _vector(parse_type_json(node["element"]), int(node["length"]), nullable)
    raise SchemaError(f"unknown nested type in schema JSON: {node['type']}")


# ---------------------------------------------------------------------------------------------
# Arrow -> Paimon (for creating tables from Arrow schemas and for checking writes)


def from_arrow(t: pa.DataType, nullable: bool = True) -> DataType:
    """The Paimon type that an Arrow type stores as."""
    simple = {
        pa.bool_(): ("BOOLEAN", ()), pa.int8(): ("TINYINT", ()), pa.int16(): ("SMALLINT", ()),
        pa.int32(): ("INT", ()), pa.int64(): ("BIGINT", ()), pa.float32(): ("FLOAT", ()),
        pa.float64(): ("DOUBLE", ()), pa.date32(): ("DATE", ()),
        pa.string(): ("VARCHAR", (MAX_LENGTH,)), pa.large_string(): ("VARCHAR", (MAX_LENGTH,)),
        pa.binary(): ("VARBINARY", (MAX_LENGTH,)), pa.large_binary(): ("VARBINARY", (MAX_LENGTH,)),
    }
    for k, (name, args) in simple.items():
        if t == k:
            return AtomicType(name, args, nullable=nullable)
    if pa.types.is_decimal(t):
        return AtomicType("DECIMAL", (t.precision, t.scale), nullable=nullable)
    if pa.types.is_timestamp(t):
        p = {"s": 0, "ms": 3, "us": 6, "ns": 9}[t.unit]
        return AtomicType("TIMESTAMP_LTZ" if t.tz else "TIMESTAMP", (p,), nullable=nullable)
    if pa.types.is_time(t):
        return AtomicType("TIME", ({"s": 0, "ms": 3, "us": 6, "ns": 9}[t.unit],), nullable=nullable)
    if pa.types.is_fixed_size_binary(t):
        return AtomicType("BINARY", (t.byte_width,), nullable=nullable)
    if pa.types.is_map(t):
        return MapType(key=from_arrow(t.key_type), value=from_arrow(t.item_type, t.item_field.nullable),
                       nullable=nullable)
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return ArrayType(element=from_arrow(t.value_type, t.value_field.nullable), nullable=nullable)
    if pa.types.is_struct(t):
        fs = tuple(DataField(i, f.name, from_arrow(f.type, f.nullable)) for i, f in enumerate(t))
        return RowType(fields=fs, nullable=nullable)
    raise SchemaError(f"Arrow type {t} has no Paimon counterpart")


def fields_from_arrow(schema: pa.Schema) -> List[DataField]:
    return [DataField(i, f.name, from_arrow(f.type, f.nullable)) for i, f in enumerate(schema)]


def arrow_schema(fields: List[DataField]) -> pa.Schema:
    return pa.schema([f.to_arrow() for f in fields])

def paimon_type_from_sql(text: str) -> DataType:
    """A column type written in DDL: Spark's spellings first, Flink/Paimon ones otherwise."""
    upper = " ".join(text.upper().split())
    base = upper.split(" NOT NULL")[0]
    if base == "TIMESTAMP" or base == "TIMESTAMP_LTZ":
        return parse_type(upper.replace(base, "TIMESTAMP_LTZ(6)", 1))
    if base == "TIMESTAMP_NTZ":
        return parse_type(upper.replace(base, "TIMESTAMP(6)", 1))
    if base == "BINARY":
        return parse_type(upper.replace(base, f"VARBINARY({MAX_LENGTH})", 1))
    return parse_type(text)
