"""Paimon's Spark functions that compute per row, as Arrow UDFs of a Spark session.

paimon-spark registers ``sys.bucket``, ``sys.mod_bucket``, ``sys.hive_bucket`` (Paimon's bucket
functions: ``BucketFunctionType`` DEFAULT, MOD, HIVE), ``sys.path_to_descriptor`` and
``sys.descriptor_to_string`` (BLOB descriptors) in its catalog. A Python project cannot add a
function catalog to Spark, so the front layer (:mod:`paimon_sql.sql.functions`) calls these
temporary functions instead, registered in a session at its first use.
"""

from __future__ import annotations

import decimal
import struct

import numpy as np
import pyarrow as pa
from pyspark.sql.functions import arrow_udf
from pyspark.sql.types import BinaryType, IntegerType, StringType

from paimon_sql.data import binary_row
from paimon_sql.data.types import from_arrow
from paimon_sql.exceptions import PaimonError

BUCKET = "__paimon_bucket"  # (kind, number of buckets, struct of the bucket key)
PATH_TO_DESCRIPTOR = "__paimon_path_to_descriptor"
DESCRIPTOR_TO_STRING = "__paimon_descriptor_to_string"

_MAGIC = 0x424C4F4244455343  # "BLOBDESC", Paimon's BlobDescriptor
_DESCRIPTOR_VERSION = 2
_INT_MASK = 0xFFFFFFFF


def register(spark) -> None:
    spark.udf.register(BUCKET, arrow_udf(_bucket, IntegerType()))
    spark.udf.register(PATH_TO_DESCRIPTOR, arrow_udf(_path_to_descriptor, BinaryType()))
    spark.udf.register(DESCRIPTOR_TO_STRING, arrow_udf(_descriptor_to_string, StringType()))


def _bucket(kind: pa.Array, buckets: pa.Array, keys: pa.Array) -> pa.Array:
    kind = kind[0].as_py() if len(kind) else "bucket"
    n = np.asarray(buckets.fill_null(1).to_numpy(zero_copy_only=False), np.int64)
    columns = [keys.field(i) for i in range(keys.type.num_fields)]
    types = [from_arrow(f.type) for f in keys.type]
    if kind == "mod_bucket":
        if len(columns) != 1 or types[0].name not in ("INT", "BIGINT"):
            raise PaimonError(f"bucket key type must be INT or BIGINT in mod bucket function, but got "
                              f"{', '.join(str(t) for t in types)}")
        values = np.asarray(columns[0].fill_null(0).to_numpy(zero_copy_only=False), np.int64)
        return pa.array(np.mod(values, n).astype(np.int32))
    if kind == "hive_bucket":
        h = np.zeros(len(keys), np.int64)
        for column, t in zip(columns, types):
            h = _int32(31 * h + _hive_hashes(column, t.name))
        return pa.array(np.mod(h & 0x7FFFFFFF, n).astype(np.int32))
    return pa.array(np.abs(np.fmod(binary_row.hash_rows(columns, types).astype(np.int64), n)).astype(np.int32))


def _int32(v: np.ndarray) -> np.ndarray:
    """Java int overflow of int64 values."""
    return ((v & _INT_MASK) ^ 0x80000000) - 0x80000000


def _hive_hashes(column: pa.Array, type_name: str) -> np.ndarray:
    """Paimon's HiveHasher of each value (null: 0), as HiveBucketFunction computes it."""
    if type_name == "DATE":  # days since the epoch, as Paimon holds a DATE
        column = column.cast(pa.int32())
    if type_name in ("BOOLEAN", "TINYINT", "SMALLINT", "INT", "DATE"):
        return np.asarray(column.cast(pa.int64()).fill_null(0).to_numpy(zero_copy_only=False), np.int64)
    if type_name in ("BIGINT", "DOUBLE", "FLOAT"):
        if type_name == "BIGINT":
            v = np.asarray(column.fill_null(0).to_numpy(zero_copy_only=False), np.int64)
        elif type_name == "DOUBLE":
            d = np.asarray(column.fill_null(0.0).to_numpy(zero_copy_only=False), np.float64)
            v = np.where(d == 0.0, 0.0, d).view(np.int64)  # -0.0 hashes as 0
        else:
            f = np.asarray(column.fill_null(0.0).to_numpy(zero_copy_only=False), np.float32)
            return np.where(f == 0.0, np.float32(0.0), f).view(np.int32).astype(np.int64)
        u = v.view(np.uint64)
        return _int32((u ^ (u >> np.uint64(32))).astype(np.int64))
    return np.array([_hive_object_hash(x, type_name) for x in column.to_pylist()], np.int64)


def _hive_object_hash(value, type_name: str) -> int:
    if value is None:
        return 0
    if isinstance(value, str):
        value = value.encode("utf-8")
    if isinstance(value, (bytes, bytearray)):
        h = 0
        for b in value:
            h = (h * 31 + (b - 256 if b > 127 else b)) & _INT_MASK
        return h - (1 << 32) if h & 0x80000000 else h
    if isinstance(value, decimal.Decimal):
        return _big_decimal_hash(value)
    raise PaimonError(f"Unsupported type as bucket key type {type_name}")


def _big_decimal_hash(value: decimal.Decimal) -> int:
    """Java's ``BigDecimal.hashCode()`` of the value as HiveHasher normalises it (trailing zeros
    stripped, scale at least 0, at most 38 digits)."""
    value = value.normalize() if value != 0 else decimal.Decimal(0)
    sign, digits, exponent = value.as_tuple()
    scale = max(-exponent, 0)
    unscaled = int("".join(map(str, digits)) or "0") * (10 ** max(exponent, 0))
    h = 0
    magnitude = unscaled
    words = []
    while magnitude:
        words.append(magnitude & _INT_MASK)
        magnitude >>= 32
    for word in reversed(words):
        h = (31 * h + word) & _INT_MASK
    h = -h if sign else h
    return _int32(np.array([31 * h + scale], np.int64))[0].item()


def _path_to_descriptor(paths: pa.Array) -> pa.Array:
    out = []
    for path in paths.to_pylist():
        if path is None:
            out.append(None)
            continue
        uri = path.encode("utf-8")
        out.append(struct.pack("<bqi", _DESCRIPTOR_VERSION, _MAGIC, len(uri)) + uri + struct.pack("<qq", 0, -1))
    return pa.array(out, pa.binary())


def _descriptor_to_string(descriptors: pa.Array) -> pa.Array:
    return pa.array([None if d is None else _descriptor_text(d) for d in descriptors.to_pylist()], pa.string())


def _descriptor_text(data: bytes) -> str:
    version, pos = data[0], 1
    if version > _DESCRIPTOR_VERSION:
        raise PaimonError(f"Expecting BlobDescriptor version to be less than or equal to {_DESCRIPTOR_VERSION}, "
                          f"but found {version}.")
    if version > 1:
        (magic,), pos = struct.unpack_from("<q", data, pos), pos + 8
        if magic != _MAGIC:
            raise PaimonError(f"Invalid BlobDescriptor: missing magic header. Expected magic: {_MAGIC}, "
                              f"but found: {magic}")
    (length,), pos = struct.unpack_from("<i", data, pos), pos + 4
    uri = data[pos:pos + length].decode("utf-8")
    offset, size = struct.unpack_from("<qq", data, pos + length)
    return f"BlobDescriptor{{version={version}, uri='{uri}', offset={offset}, length={size}}}"
