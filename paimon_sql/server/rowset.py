"""Arrow results as HiveServer2 result sets: :func:`table_schema` and :func:`row_set`.

Clients read what Spark's Thrift Server sends, so this follows it (``RowSetUtils``, ``HiveResult``):
booleans and integers travel as themselves, FLOAT as the double its text reads as (0.1f is 0.1),
decimals as plain text (``1.50``), dates as ``2024-01-02``, timestamps in the session time zone as
``2024-01-02 03:04:05.12`` (no trailing zeros in the fraction), binary as bytes, and arrays, maps
and structs as Hive's JSON-like text: ``[1,null]``, ``{"k":1}`` (entries sorted), ``{"a":1,"b":"x"}``,
strings quoted inside them but not escaped. The schema names each column's Hive type, decimals with
their precision and scale; an array, map or struct column is a STRING column holding that text (Spark
says ARRAY_TYPE for it, which drivers such as impyla hand out as raw bytes).

Everything is built column by column with Arrow compute and numpy: the only per-value Python is the
list thrift serialises, and the rare value whose text Arrow writes differently from Java (``1E-7``).
"""

from __future__ import annotations

from decimal import Decimal

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from TCLIService import ttypes

T = ttypes.TTypeId

_FRACTION_ZEROS = r"(\.\d*[1-9])0+$|\.0+$"  # Spark's fraction formatter prints no trailing zeros


def hive_type(dtype: pa.DataType) -> int:
    """The TTypeId a column of Arrow type ``dtype`` is described with (STRING for arrays, maps, structs)."""
    if pa.types.is_boolean(dtype):
        return T.BOOLEAN_TYPE
    if pa.types.is_integer(dtype):
        return {1: T.TINYINT_TYPE, 2: T.SMALLINT_TYPE, 4: T.INT_TYPE}.get(dtype.byte_width, T.BIGINT_TYPE)
    if pa.types.is_float32(dtype):
        return T.FLOAT_TYPE
    if pa.types.is_floating(dtype):
        return T.DOUBLE_TYPE
    if pa.types.is_decimal(dtype):
        return T.DECIMAL_TYPE
    if pa.types.is_date(dtype):
        return T.DATE_TYPE
    if pa.types.is_timestamp(dtype):
        return T.TIMESTAMP_TYPE
    if pa.types.is_binary(dtype) or pa.types.is_large_binary(dtype):
        return T.BINARY_TYPE
    if pa.types.is_null(dtype):
        return T.NULL_TYPE
    return T.STRING_TYPE


def table_schema(schema: pa.Schema) -> ttypes.TTableSchema:
    return ttypes.TTableSchema(columns=[
        ttypes.TColumnDesc(columnName=field.name, position=i + 1, comment=_comment(field),
                           typeDesc=_type_desc(field.type))
        for i, field in enumerate(schema)])


def _comment(field: pa.Field) -> str:
    return (field.metadata or {}).get(b"comment", b"").decode()


def _type_desc(dtype: pa.DataType) -> ttypes.TTypeDesc:
    qualifiers = None
    if pa.types.is_decimal(dtype):
        qualifiers = ttypes.TTypeQualifiers(qualifiers={
            "precision": ttypes.TTypeQualifierValue(i32Value=dtype.precision),
            "scale": ttypes.TTypeQualifierValue(i32Value=dtype.scale)})
    entry = ttypes.TPrimitiveTypeEntry(type=hive_type(dtype), typeQualifiers=qualifiers)
    return ttypes.TTypeDesc(types=[ttypes.TTypeEntry(primitiveEntry=entry)])


def row_set(table: pa.Table, start_offset: int, time_zone: str = "UTC") -> ttypes.TRowSet:
    """Column-based rows of ``table`` (protocol V6 and later); ``time_zone``: the session's, in
    which timestamps are written."""
    table = table.combine_chunks()
    return ttypes.TRowSet(startRowOffset=start_offset, rows=[],
                          columns=[column(c.chunk(0) if c.num_chunks else pa.array([], c.type), time_zone)
                                   for c in table.columns])


def column(arr: pa.Array, time_zone: str = "UTC") -> ttypes.TColumn:
    """One result column: its values (a placeholder where NULL) and the null bitmap, LSB first,
    trailing zero bytes dropped as Java's ``BitSet.toByteArray`` does."""
    nulls = _null_bits(arr)
    kind = hive_type(arr.type)
    if kind == T.BOOLEAN_TYPE:
        return ttypes.TColumn(boolVal=ttypes.TBoolColumn(values=_numbers(arr, False), nulls=nulls))
    if kind in _INTEGER_COLUMNS:
        field, klass = _INTEGER_COLUMNS[kind]
        return ttypes.TColumn(**{field: klass(values=_numbers(arr, 0), nulls=nulls)})
    if kind == T.FLOAT_TYPE:  # as Spark: the double that the float's text reads as
        arr = pc.cast(pc.cast(arr, pa.string()), pa.float64())
    if kind in (T.FLOAT_TYPE, T.DOUBLE_TYPE):
        return ttypes.TColumn(doubleVal=ttypes.TDoubleColumn(values=_numbers(arr, 0.0), nulls=nulls))
    if kind == T.BINARY_TYPE:
        values = arr.fill_null(b"").to_numpy(zero_copy_only=False).tolist()
        return ttypes.TColumn(binaryVal=ttypes.TBinaryColumn(values=values, nulls=nulls))
    text = arr if kind == T.STRING_TYPE and pa.types.is_string(arr.type) else hive_text(arr, time_zone)
    values = text.fill_null("").to_numpy(zero_copy_only=False).tolist()
    return ttypes.TColumn(stringVal=ttypes.TStringColumn(values=values, nulls=nulls))


_INTEGER_COLUMNS = {T.TINYINT_TYPE: ("byteVal", ttypes.TByteColumn), T.SMALLINT_TYPE: ("i16Val", ttypes.TI16Column),
                    T.INT_TYPE: ("i32Val", ttypes.TI32Column), T.BIGINT_TYPE: ("i64Val", ttypes.TI64Column)}


def _numbers(arr: pa.Array, placeholder) -> list:
    return arr.fill_null(placeholder).to_numpy(zero_copy_only=False).tolist() if arr.null_count \
        else arr.to_numpy(zero_copy_only=False).tolist()


def _null_bits(arr: pa.Array) -> bytes:
    if not arr.null_count:
        return b""
    return np.packbits(arr.is_null().to_numpy(zero_copy_only=False), bitorder="little").tobytes().rstrip(b"\0")


def hive_text(arr: pa.Array, time_zone: str = "UTC", nested: bool = False) -> pa.Array:
    """The text Spark's ``HiveResult.toHiveString`` gives each value (NULL stays null). Inside an
    array, map or struct (``nested``) strings are quoted."""
    dtype = arr.type
    if pa.types.is_null(dtype):
        return pa.nulls(len(arr), pa.string())
    if pa.types.is_string(dtype) or pa.types.is_large_string(dtype):
        return _wrap('"', arr.cast(pa.string()), '"') if nested else arr.cast(pa.string())
    if pa.types.is_binary(dtype) or pa.types.is_large_binary(dtype):
        return _utf8(arr)
    if pa.types.is_floating(dtype):
        return _java_float_text(arr)
    if pa.types.is_decimal(dtype):
        return _plain_decimals(arr)
    if pa.types.is_timestamp(dtype):
        if dtype.tz is not None:
            arr = pc.local_timestamp(pc.cast(arr, pa.timestamp(dtype.unit, time_zone)))
        return pc.replace_substring_regex(pc.cast(arr, pa.string()), _FRACTION_ZEROS, r"\1")
    if pa.types.is_map(dtype):
        return _map_text(arr, time_zone)
    if pa.types.is_list(dtype) or pa.types.is_large_list(dtype):
        items = _nested_text(arr.values, time_zone)
        lists = type(arr).from_arrays(arr.offsets, items, mask=arr.is_null() if arr.null_count else None)
        return _wrap("[", pc.binary_join(lists, ","), "]")
    if pa.types.is_struct(dtype):
        parts = [_wrap(f'"{dtype.field(i).name}":', _nested_text(child, time_zone), "")
                 for i, child in enumerate(arr.flatten())]
        text = pc.binary_join_element_wise(*parts, ",") if parts else pa.array([""] * len(arr))
        return pc.if_else(arr.is_null(), pa.scalar(None, pa.string()), _wrap("{", text, "}"))
    try:
        return pc.cast(arr, pa.string())  # booleans, integers, dates
    except pa.ArrowNotImplementedError:
        return pa.array([None if v is None else str(v) for v in arr.to_pylist()], pa.string())


def _nested_text(arr: pa.Array, time_zone: str) -> pa.Array:
    return hive_text(arr, time_zone, nested=True).fill_null("null")


def _wrap(prefix: str, text: pa.Array, suffix: str) -> pa.Array:
    return pc.binary_join_element_wise(prefix, text, suffix, "")


def _map_text(arr: pa.MapArray, time_zone: str) -> pa.Array:
    """``{k:v,...}`` with the entries' texts sorted, as Spark sorts them."""
    entries = pc.binary_join_element_wise(_nested_text(arr.keys, time_zone), _nested_text(arr.items, time_zone), ":")
    lists = pa.ListArray.from_arrays(arr.offsets, entries)
    parent = pc.list_parent_indices(lists)
    ordered = pa.table({"p": parent, "e": pc.list_flatten(lists)}).sort_by([("p", "ascending"), ("e", "ascending")])
    offsets = pc.subtract(arr.offsets, arr.offsets[0])
    mask = arr.is_null() if arr.null_count else None
    return _wrap("{", pc.binary_join(pa.ListArray.from_arrays(offsets, ordered["e"].combine_chunks(), mask=mask),
                                     ","), "}")


def _utf8(arr: pa.Array) -> pa.Array:
    """Binary inside a complex value: its bytes read as UTF-8 (Spark's default binary output style)."""
    try:
        return arr.cast(pa.string())
    except pa.ArrowInvalid:
        return pa.array([None if v is None else v.decode("utf-8", "replace") for v in arr.to_pylist()],
                        pa.string())


def _plain_decimals(arr: pa.Array) -> pa.Array:
    """Java's ``BigDecimal.toPlainString``: Arrow writes tiny values as ``1E-7``; those few are
    rewritten."""
    text = pc.cast(arr, pa.string())
    odd = pc.fill_null(pc.match_substring(text, "E"), False)
    if not pc.any(odd).as_py():
        return text
    fixed = [format(Decimal(v), "f") if v is not None else None for v in pc.filter(text, odd).to_pylist()]
    return pc.replace_with_mask(text, odd, pa.array(fixed, pa.string()))


def _java_float_text(arr: pa.Array) -> pa.Array:
    """Java's ``Double.toString``: ``1.0``, ``0.001``, ``1.0E7``, ``1.0E-4``, ``NaN``, ``Infinity``."""
    text = pc.cast(arr, pa.string())
    values = pc.abs(pc.cast(arr, pa.float64())).fill_null(1.0).to_numpy(zero_copy_only=False)
    with np.errstate(invalid="ignore"):
        plain = (values == 0) | ((values >= 1e-3) & (values < 1e7))
    integral = pc.invert(pc.match_substring(text, "."))
    text = pc.if_else(pc.and_(pa.array(plain), integral), _wrap("", text, ".0"), text)
    if plain.all():
        return text
    odd = pa.array(~plain)
    fixed = [_java_scientific(v) for v in pc.filter(text, odd).to_pylist()]
    return pc.replace_with_mask(text, odd, pa.array(fixed, pa.string()))


def _java_scientific(text: str) -> str:
    special = {"nan": "NaN", "inf": "Infinity", "-inf": "-Infinity"}
    if text.lower() in special:
        return special[text.lower()]
    sign, digits, exponent = Decimal(text).normalize().as_tuple()
    mantissa = "".join(map(str, digits))
    return f"{'-' if sign else ''}{mantissa[0]}.{mantissa[1:] or '0'}E{len(digits) - 1 + exponent}"
