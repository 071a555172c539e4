"""Bucket selection: a filter that pins every bucket-key column to a few values reads only the
buckets those values hash to (Paimon's ``BucketSelectConverter`` and ``BucketSelector``).

A fixed-bucket table (``bucket`` > 0) puts a row in ``abs(hash(bucket key) % total buckets)``, so a
point query on the key needs one bucket per partition; without this a primary-key table plans
(and merges) files of every bucket whose key stats span the value. As Paimon: the filter's
conjuncts that mention bucket-key columns only are read, each an ``=`` / ``IN`` or an ``OR`` of them
on one column (others are ignored, not fatal); a column in several conjuncts keeps the values they
share; every bucket-key column needs values and their combinations are at most
:data:`MAX_VALUES`. Each combination is hashed as the writer hashes rows
(:func:`paimon_sql.data.binary_row.hash_rows` over Arrow columns of the key's types), and an entry
is kept when its bucket is one of the combinations' buckets modulo the entry's own
``total_buckets`` (after a rescale, partitions differ in bucket count).

Where Paimon converts nothing, a literal is taken only when it is exactly a value of its column's
type — an ``int`` within an integer type's range, a ``Decimal`` or ``int`` with no digits beyond the
scale, a ``str`` for VARCHAR, ``bytes`` for VARBINARY, a ``date`` for DATE, a ``bool`` for BOOLEAN —
since a row the filter matches must hash to a selected bucket. Anything else (a float key, where
``-0.0 = 0.0`` and NaNs hash apart; CHAR and BINARY padding; timestamps and times; a literal out of
range) selects nothing: every bucket is read and no row is lost. So is a file written under a schema
whose bucket-key types differ (an append table's bucket key may change type): it is kept.
"""

from __future__ import annotations

import datetime as dt
from decimal import Context, Decimal, InvalidOperation
from itertools import product
from typing import TYPE_CHECKING, Any, Dict, FrozenSet, List, Optional, Sequence, Tuple

import numpy as np
import pyarrow as pa

from paimon_sql.data import binary_row
from paimon_sql.data.predicate import Predicate
from paimon_sql.data.types import AtomicType, DataType
from paimon_sql.manifest.manifest_file import ManifestEntry

if TYPE_CHECKING:
    from paimon_sql.table.table import FileStoreTable

MAX_VALUES = 1000  # Paimon's BucketSelector.MAX_VALUES: more combinations select nothing

_INT_BITS = {"TINYINT": 8, "SMALLINT": 16, "INT": 32, "BIGINT": 64}
_EXACT = Context(prec=80)  # a DECIMAL(38) literal quantized without rounding


class BucketSelector:
    """The buckets a filter's bucket-key values hash to, per total bucket count."""

    def __init__(self, table: FileStoreTable, hashes: np.ndarray):
        self._table = table
        self._hashes = hashes
        self._ids = [f.id for f in table.schema.fields_of(table.schema.bucket_keys)]
        self._types = [table.schema.field(n).type for n in table.schema.bucket_keys]
        self._buckets: Dict[int, FrozenSet[int]] = {}
        self._same_keys: Dict[int, bool] = {table.schema.id: True}

    def buckets(self, total_buckets: int) -> FrozenSet[int]:
        if total_buckets not in self._buckets:
            self._buckets[total_buckets] = frozenset(binary_row.bucket_of(self._hashes, total_buckets).tolist())
        return self._buckets[total_buckets]

    def keep(self, entries: List[ManifestEntry]) -> List[ManifestEntry]:
        """Entries in a selected bucket, and those this cannot judge (no bucket count recorded, a
        file of a schema with other bucket-key types)."""
        return [e for e in entries if e.total_buckets <= 0 or not self._same_key_types(e.file.schema_id)
                or e.bucket in self.buckets(e.total_buckets)]

    def _same_key_types(self, schema_id: int) -> bool:
        if schema_id not in self._same_keys:
            old = {f.id: f.type for f in self._table.schema_at(schema_id).fields}
            self._same_keys[schema_id] = all(_bare(old.get(i)) == _bare(t) for i, t in zip(self._ids, self._types))
        return self._same_keys[schema_id]


def selector(table: FileStoreTable, predicate: Optional[Predicate]) -> Optional[BucketSelector]:
    """A selector for ``predicate`` on ``table``, or None when it cannot narrow the buckets."""
    schema = table.schema
    if predicate is None or table.options.bucket <= 0:
        return None
    keys = schema.bucket_keys
    types = [schema.field(k).type for k in keys]
    values = _key_values(predicate, keys, types)
    if not values:
        return None
    combos = list(product(*(values[k] for k in keys)))
    columns = [pa.array([c[i] for c in combos], type=t.to_arrow()) for i, t in enumerate(types)]
    return BucketSelector(table, binary_row.hash_rows(columns, types))


def _key_values(predicate: Predicate, keys: Sequence[str], types: Sequence[DataType]) -> Optional[Dict[str, list]]:
    """Per bucket-key column, the exact values the filter allows (None: not every column pinned, too
    many combinations, or a literal that is not exactly a value of its column)."""
    type_of = dict(zip(keys, types))
    found: Dict[str, list] = {}
    for conjunct in _split(predicate, "and"):
        if not conjunct.columns() or not conjunct.columns() <= set(keys):
            continue
        column, literals = _equalities(conjunct)
        if column is None:
            continue
        exact = [_exact(v, type_of[column]) for v in literals if v is not None]
        if any(v is _INEXACT for v in exact):
            return None
        mine = list(dict.fromkeys(exact))
        found[column] = [v for v in found[column] if v in mine] if column in found else mine
        if not found[column]:
            return None
    if set(found) != set(keys):
        return None
    count = 1
    for k in keys:
        count *= len(found[k])
    return found if 0 < count <= MAX_VALUES else None


def _split(p: Predicate, op: str) -> List[Predicate]:
    return [x for c in p.children for x in _split(c, op)] if p.op == op else [p]


def _equalities(conjunct: Predicate) -> Tuple[Optional[str], Tuple[Any, ...]]:
    """(column, literals) of an ``=`` / ``IN`` leaf or an OR of such leaves on one column."""
    leaves = _split(conjunct, "or")
    if any(leaf.op not in ("=", "in") for leaf in leaves) or len({leaf.column for leaf in leaves}) != 1:
        return None, ()
    return leaves[0].column, tuple(v for leaf in leaves for v in leaf.literals)


_INEXACT = object()


def _exact(v: Any, t: DataType) -> Any:
    """``v`` as the value of type ``t`` equal to it, or ``_INEXACT`` when no single value is."""
    n = t.name if isinstance(t, AtomicType) else None
    if n in _INT_BITS:
        bits = _INT_BITS[n]
        ok = isinstance(v, int) and not isinstance(v, bool) and -(1 << bits - 1) <= v < 1 << bits - 1
        return v if ok else _INEXACT
    if n == "DECIMAL":
        return _exact_decimal(v, t.precision, t.scale)
    if n == "VARCHAR":
        return v if isinstance(v, str) else _INEXACT
    if n == "VARBINARY":
        return bytes(v) if isinstance(v, (bytes, bytearray)) else _INEXACT
    if n == "DATE":
        return v if isinstance(v, dt.date) and not isinstance(v, dt.datetime) else _INEXACT
    if n == "BOOLEAN":
        return v if isinstance(v, bool) else _INEXACT
    return _INEXACT


def _exact_decimal(v: Any, precision: int, scale: int) -> Any:
    if isinstance(v, bool) or not isinstance(v, (int, Decimal)):
        return _INEXACT
    try:
        d = Decimal(v)
        quantized = d.quantize(Decimal(1).scaleb(-scale), context=_EXACT)
    except InvalidOperation:  # NaN, infinity, or more digits than the context holds
        return _INEXACT
    if quantized != d or len(quantized.as_tuple().digits) > precision:
        return _INEXACT
    return quantized


def _bare(t: Optional[DataType]) -> Optional[str]:
    """A type without its nullability (a NOT NULL change keeps the bytes a value hashes to)."""
    return None if t is None else str(t.copy(True))
