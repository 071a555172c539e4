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
``total_buckets`` (after a rescale, partitions differ in bucket count). A filter naming partition
columns is first bound to each partition's values (Paimon's ``PartitionValuePredicateVisitor``), so
``(dt = 'a' AND id = 1) OR (dt = 'b' AND id = 2)`` reads one bucket of each partition.

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
from typing import Any, Dict, FrozenSet, List, Optional, Sequence, Tuple

import numpy as np
import pyarrow as pa

from paimon_sql.data import binary_row
from paimon_sql.data.predicate import Predicate
from paimon_sql.data.types import AtomicType, DataType
from paimon_sql.manifest.manifest_file import ManifestEntry
from paimon_sql.store.file_store import FileStore


MAX_VALUES = 1000  # Paimon's BucketSelector.MAX_VALUES: more combinations select nothing

_INT_BITS = {"TINYINT": 8, "SMALLINT": 16, "INT": 32, "BIGINT": 64}
_EXACT = Context(prec=80)  # a DECIMAL(38) literal quantized without rounding


class BucketSelector:
    """Which entries may hold rows of the filter: per partition (its values bound into the filter)
    and total bucket count, the buckets of the bucket-key values."""

    def __init__(self, table: FileStore, predicate: Predicate):
        schema = table.schema
        self._table, self._predicate = table, predicate
        self._keys = schema.bucket_keys
        self._types = [f.type for f in schema.fields_of(self._keys)]
        self._ids = [f.id for f in schema.fields_of(self._keys)]
        # partition values are bound only into a filter that names partition columns
        self._parts = schema.partition_keys if predicate.columns() & set(schema.partition_keys) else []
        self._part_types = [f.type for f in schema.fields_of(self._parts)]
        self._bound: Dict[bytes, Any] = {}  # partition → its filter (or True / False)
        self._hashes: Dict[Any, Optional[np.ndarray]] = {}  # filter → hashes of its key values
        self._buckets: Dict[Tuple[int, int], FrozenSet[int]] = {}  # (hashes, total buckets) → buckets
        self._chosen: Dict[Tuple[bytes, int], Optional[FrozenSet[int]]] = {}  # (partition, total) → buckets
        self._same_keys: Dict[int, bool] = {schema.id: True}

    def keep(self, entries: List[ManifestEntry]) -> List[ManifestEntry]:
        """Entries in a selected bucket, and those this cannot judge (no bucket count recorded, a
        file of a schema with other bucket-key types, a partition whose filter pins no key)."""
        return [e for e in entries if self._may_hold(e)]

    def _may_hold(self, e: ManifestEntry) -> bool:
        if e.total_buckets <= 0 or not self._same_key_types(e.file.schema_id):
            return True
        key = (e.partition, e.total_buckets)
        if key not in self._chosen:
            hashes = self._key_hashes(self._bound_filter(e.partition))
            self._chosen[key] = None if hashes is None else self._buckets_of(hashes, e.total_buckets)
        chosen = self._chosen[key]
        return chosen is None or e.bucket in chosen

    def _buckets_of(self, hashes: np.ndarray, total_buckets: int) -> FrozenSet[int]:
        key = (id(hashes), total_buckets)  # the arrays live in ``_hashes``: partitions share them
        if key not in self._buckets:
            self._buckets[key] = frozenset(binary_row.bucket_of(hashes, total_buckets).tolist())
        return self._buckets[key]

    def _bound_filter(self, partition: bytes):
        if not self._parts:
            return self._predicate
        if partition not in self._bound:
            values = dict(zip(self._parts, binary_row.from_bytes(partition, self._part_types)))
            self._bound[partition] = _bind(self._predicate, values)
        return self._bound[partition]

    def _key_hashes(self, bound) -> Optional[np.ndarray]:
        """The bucket hashes of the key values ``bound`` allows (None: it selects nothing)."""
        if bound not in self._hashes:
            values = None if isinstance(bound, bool) else _key_values(bound, self._keys, self._types)
            if not values:
                self._hashes[bound] = None
            else:
                combos = list(product(*(values[k] for k in self._keys)))
                columns = [pa.array([c[i] for c in combos], type=t.to_arrow()) for i, t in enumerate(self._types)]
                self._hashes[bound] = binary_row.hash_rows(columns, self._types)
        return self._hashes[bound]

    def _same_key_types(self, schema_id: int) -> bool:
        if schema_id not in self._same_keys:
            old = {f.id: f.type for f in self._table.schema_at(schema_id).fields}
            self._same_keys[schema_id] = all(_bare(old.get(i)) == _bare(t) for i, t in zip(self._ids, self._types))
        return self._same_keys[schema_id]


def selector(table: FileStore, predicate: Optional[Predicate]) -> Optional[BucketSelector]:
    """A selector for ``predicate`` on ``table``, or None when it cannot narrow the buckets (as
    Paimon's converter: a fixed-bucket table, a filter naming every bucket-key column)."""
    if predicate is None or table.options.bucket <= 0 or not set(table.schema.bucket_keys) <= predicate.columns():
        return None
    return BucketSelector(table, predicate)


def _bind(p: Predicate, values: dict):
    """``p`` with its leaves on partition columns decided by one partition's ``values`` (Paimon's
    PartitionValuePredicateVisitor): True, False or what is left. Only through AND and OR, where a
    leaf that cannot be decided counts as True and so only widens; a NOT stays whole."""
    if p.op in ("and", "or"):
        absorbing = p.op == "or"  # True decides an OR, False an AND
        kids = [_bind(c, values) for c in p.children]
        if any(k is absorbing for k in kids):
            return absorbing
        rest = [k for k in kids if not isinstance(k, bool)]
        return (not absorbing) if not rest else rest[0] if len(rest) == 1 else Predicate(p.op, children=tuple(rest))
    return bool(p.test_values(values)) if p.column in values else p


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
