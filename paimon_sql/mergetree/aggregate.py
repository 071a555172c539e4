"""Field aggregators of the aggregation merge engine (``fields.<f>.aggregate-function``), vectorized.

Paimon folds a key's records one at a time: ``agg(acc, value)`` for +I/+U, ``retract(acc, value)``
for -U/-D. Each aggregator here computes the same result for every key at once from the sorted
column, the retract mask and the group boundaries of :class:`KeyGroups`:

- sum: adds minus retracts; product: adds times, retracts divide;
- max / min / first_value / first_non_null_value / listagg / bool_and / bool_or: no retraction
  (an error, unless ``fields.<f>.ignore-retract``);
- last_value: the last record's value (NULL when it retracts);
- last_non_null_value (the default): the last non-null input; a retract of a non-null value clears it;
- collect: the arrays concatenated (``fields.<f>.distinct`` dedupes), retracts remove elements;
- merge_map: maps merged, later keys win; retracts remove keys.
"""

from __future__ import annotations

from typing import Callable, Dict

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from paimon_sql.data.types import ArrayType, AtomicType, DataType, MapType
from paimon_sql.exceptions import MergeError, SchemaError
from paimon_sql.mergetree.key_groups import KeyGroups

_NUMERIC = ("TINYINT", "SMALLINT", "INT", "BIGINT", "FLOAT", "DOUBLE", "DECIMAL")
_ORDERED = _NUMERIC + ("CHAR", "VARCHAR", "DATE", "TIME", "TIMESTAMP", "TIMESTAMP_LTZ", "BOOLEAN")


def _valid(col: pa.Array) -> np.ndarray:
    return np.asarray(col.is_valid().to_numpy(zero_copy_only=False))


def _by_group(g: KeyGroups, values: pa.Array, mask: np.ndarray, func: str, options=None) -> pa.Array:
    """Arrow's hash aggregate ``func`` of ``values[mask]`` per group; NULL for groups with no input."""
    gid = g.row_group()[mask]
    t = pa.table({"g": pa.array(gid, pa.int64()), "v": values.filter(pa.array(mask))})
    agg = t.group_by("g", use_threads=False).aggregate([("v", func, options) if options else ("v", func)])
    agg = agg.sort_by("g")
    out = np.full(g.count, -1, np.int64)
    out[agg.column("g").to_numpy()] = np.arange(agg.num_rows)
    return g.pick(agg.column(f"v_{func}").combine_chunks(), out)


def _sum(g, values, retract, field):
    signed = pc.if_else(pa.array(retract), pc.negate(values), values) if retract.any() else values
    return _by_group(g, signed, np.ones(g.n, bool), "sum")


def _product(g, values, retract, field):
    num = _by_group(g, values, ~retract, "product")
    if not retract.any():
        return num
    den = _by_group(g, values, retract, "product")
    den = pc.if_else(den.is_null(), pa.scalar(1, den.type), den)
    if pa.types.is_integer(values.type):  # Java integer division truncates toward zero
        q = pc.divide(pc.abs(num), pc.abs(den))
        return pc.if_else(pc.equal(pc.less(num, 0), pc.less(den, 0)), q, pc.negate(q))
    return pc.divide(num, den)


def _max(g, values, retract, field):
    return _by_group(g, values, np.ones(g.n, bool), "max")


def _min(g, values, retract, field):
    return _by_group(g, values, np.ones(g.n, bool), "min")


def _bool_and(g, values, retract, field):
    return _by_group(g, values, np.ones(g.n, bool), "all", pc.ScalarAggregateOptions(skip_nulls=True, min_count=1))


def _bool_or(g, values, retract, field):
    return _by_group(g, values, np.ones(g.n, bool), "any", pc.ScalarAggregateOptions(skip_nulls=True, min_count=1))


def _last_value(g, values, retract, field):
    pos = g.last()
    return g.pick(values, np.where(retract[pos], -1, pos))


def _last_non_null_value(g, values, retract, field):
    pos = g.last(_valid(values))
    return g.pick(values, np.where((pos >= 0) & retract[np.maximum(pos, 0)], -1, pos))


def _first_value(g, values, retract, field):
    return g.pick(values, g.first())


def _first_non_null_value(g, values, retract, field):
    return g.pick(values, g.first(_valid(values)))


def _listagg(g, values, retract, field):
    delimiter = field.options.get("list-agg-delimiter", ",")
    text = values.cast(pa.string())
    keep = _valid(text) & np.asarray(pc.fill_null(pc.not_equal(pc.utf8_trim_whitespace(text), ""), False))
    if field.options.get("distinct", "false").lower() == "true":
        return _listagg_distinct(g, text, keep, delimiter)
    lists = _lists_of(g, text.filter(pa.array(keep)), g.row_group()[keep])
    return pc.binary_join(lists, delimiter)


def _listagg_distinct(g, text, keep, delimiter):
    parts = pc.split_pattern(text.filter(pa.array(keep)), delimiter)
    row_gid = g.row_group()[keep][np.asarray(pc.list_parent_indices(parts))]
    tokens = pc.list_flatten(parts)
    ok = np.asarray(pc.not_equal(pc.utf8_trim_whitespace(tokens), "").to_numpy(zero_copy_only=False))
    tokens, row_gid = tokens.filter(pa.array(ok)), row_gid[ok]
    first = _first_occurrence(tokens, row_gid)
    return pc.binary_join(_lists_of(g, tokens.filter(pa.array(first)), row_gid[first]), delimiter)


def _lists_of(g: KeyGroups, values: pa.Array, gid: np.ndarray) -> pa.Array:
    """A list per group of ``values`` (already in group order, ``gid`` their groups); NULL when empty."""
    counts = np.bincount(gid, minlength=g.count)
    offsets = np.r_[0, np.cumsum(counts)].astype(np.int32)
    return pa.ListArray.from_arrays(pa.array(offsets), values, mask=pa.array(counts == 0))


def _first_occurrence(values: pa.Array, gid: np.ndarray) -> np.ndarray:
    """Mask of the first occurrence of each (group, value)."""
    codes = np.asarray(pc.dictionary_encode(values).indices.to_numpy(zero_copy_only=False), np.int64)
    pair = gid * (int(codes.max()) + 1 if len(codes) else 1) + codes
    _, first_idx = np.unique(pair, return_index=True)
    mask = np.zeros(len(values), bool)
    mask[first_idx] = True
    return mask


def _collect(g, values, retract, field):
    valid = _valid(values)
    add = valid & ~retract
    flat_add, gid_add = _flatten(g, values, add)
    if field.options.get("distinct", "false").lower() == "true" and len(flat_add):
        first = _first_occurrence(flat_add, gid_add)
        flat_add, gid_add = flat_add.filter(pa.array(first)), gid_add[first]
    rm = valid & retract
    if rm.any() and len(flat_add):
        flat_rm, gid_rm = _flatten(g, values, rm)
        keep = _minus_multiset(flat_add, gid_add, flat_rm, gid_rm)
        flat_add, gid_add = flat_add.filter(pa.array(keep)), gid_add[keep]
    counts = np.bincount(gid_add, minlength=g.count)
    offsets = np.r_[0, np.cumsum(counts)].astype(np.int32)
    has_input = g.any(add)
    return pa.ListArray.from_arrays(pa.array(offsets), flat_add, type=values.type, mask=pa.array(~has_input))


def _flatten(g: KeyGroups, lists: pa.Array, mask: np.ndarray):
    chosen = lists.filter(pa.array(mask))
    parents = np.asarray(pc.list_parent_indices(chosen))
    return pc.list_flatten(chosen), g.row_group()[mask][parents]


def _minus_multiset(values, gid, removed, removed_gid) -> np.ndarray:
    """Mask over ``values`` dropping, per (group, value), as many leading occurrences as ``removed`` has."""
    both = pa.concat_arrays([values, removed.cast(values.type)])
    codes = np.asarray(pc.dictionary_encode(both).indices.to_numpy(zero_copy_only=False), np.int64)
    width = int(codes.max()) + 1
    pair_add = gid * width + codes[:len(values)]
    pair_rm = removed_gid * width + codes[len(values):]
    uniq_rm, rm_count = np.unique(pair_rm, return_counts=True)
    order = np.argsort(pair_add, kind="stable")
    sorted_pairs = pair_add[order]
    starts = np.flatnonzero(np.r_[True, sorted_pairs[1:] != sorted_pairs[:-1]])
    rank = np.arange(len(order)) - np.repeat(starts, np.diff(np.r_[starts, len(order)]))
    limit = np.zeros(len(order), np.int64)
    where = np.searchsorted(uniq_rm, sorted_pairs)
    hit = (where < len(uniq_rm)) & (uniq_rm[np.minimum(where, len(uniq_rm) - 1)] == sorted_pairs)
    limit[hit] = rm_count[where[hit]]
    keep = np.ones(len(values), bool)
    keep[order[rank < limit]] = False
    return keep


def _merge_map(g, values, retract, field):
    valid = _valid(values)
    chosen = values.filter(pa.array(valid))
    # entries in event order (list_parent_indices aborts on map arrays in pyarrow, so use offsets)
    offsets = np.asarray(chosen.offsets)
    parents = np.repeat(np.arange(len(chosen)), np.diff(offsets))
    row_gid = g.row_group()[valid][parents]
    row_retract = retract[valid][parents]
    start, stop = int(offsets[0]), int(offsets[-1])
    keys, items = chosen.keys.slice(start, stop - start), chosen.items.slice(start, stop - start)
    codes = np.asarray(pc.dictionary_encode(keys).indices.to_numpy(zero_copy_only=False), np.int64)
    pair = row_gid * (int(codes.max()) + 1 if len(codes) else 1) + codes
    # the last event of each (group, key) decides: an add keeps its value, a retract drops the key
    rev_unique, rev_idx = np.unique(pair[::-1], return_index=True)
    last = len(pair) - 1 - rev_idx
    last = np.sort(last[~row_retract[last]])
    counts = np.bincount(row_gid[last], minlength=g.count)
    offsets = np.r_[0, np.cumsum(counts)].astype(np.int32)
    take = pa.array(last)
    has_input = g.any(valid)
    return pa.MapArray.from_arrays(pa.array(offsets), keys.take(take), items.take(take), type=values.type,
                                   mask=pa.array(~has_input))


class Aggregator:
    """One field's aggregate function: the kernel, whether it can retract, which types it takes."""

    def __init__(self, name: str, kernel: Callable, retracts: bool, accepts: Callable[[DataType], bool]):
        self.name, self.kernel, self.retracts, self.accepts = name, kernel, retracts, accepts


def _atomic_in(names):
    return lambda t: isinstance(t, AtomicType) and t.name in names


_ANY = lambda t: True  # noqa: E731

AGGREGATORS: Dict[str, Aggregator] = {a.name: a for a in [
    Aggregator("sum", _sum, True, _atomic_in(_NUMERIC)),
    Aggregator("product", _product, True, _atomic_in(_NUMERIC)),
    Aggregator("max", _max, False, _atomic_in(_ORDERED)),
    Aggregator("min", _min, False, _atomic_in(_ORDERED)),
    Aggregator("last_value", _last_value, True, _ANY),
    Aggregator("last_non_null_value", _last_non_null_value, True, _ANY),
    Aggregator("first_value", _first_value, False, _ANY),
    Aggregator("first_non_null_value", _first_non_null_value, False, _ANY),
    Aggregator("listagg", _listagg, False, _atomic_in(("CHAR", "VARCHAR"))),
    Aggregator("bool_and", _bool_and, False, _atomic_in(("BOOLEAN",))),
    Aggregator("bool_or", _bool_or, False, _atomic_in(("BOOLEAN",))),
    Aggregator("collect", _collect, True, lambda t: isinstance(t, ArrayType)),
    Aggregator("merge_map", _merge_map, True, lambda t: isinstance(t, MapType)),
]}
AGGREGATORS["first_not_null_value"] = AGGREGATORS["first_non_null_value"]  # Paimon's legacy name
UNSUPPORTED = ("merge_map_with_keytime", "nested_update", "nested_partial_update", "hll_sketch", "theta_sketch",
               "rbm32", "rbm64", "count", "avg")


class FieldAggregate:
    """A field bound to its aggregator and its ``fields.<f>.*`` options."""

    def __init__(self, field, function: str, options: Dict[str, str]):
        if function in UNSUPPORTED:
            raise SchemaError(f"aggregate function '{function}' of field '{field.name}' is not supported")
        if function not in AGGREGATORS:
            raise SchemaError(f"unknown aggregate function '{function}' for field '{field.name}'")
        agg = AGGREGATORS[function]
        if not agg.accepts(field.type):
            raise SchemaError(f"aggregate function '{function}' does not accept field '{field.name}' of type "
                              f"{field.type}")
        self.field, self.agg, self.options = field, agg, options
        self.ignore_retract = options.get("ignore-retract", "false").lower() == "true"

    def fold(self, g: KeyGroups, values: pa.Array, retract: np.ndarray) -> pa.Array:
        if retract.any():
            if self.ignore_retract:
                keep = ~retract
                sub = g.subset(keep)
                result = self.agg.kernel(sub, values.filter(pa.array(keep)), np.zeros(sub.n, bool), self)
                pos = np.full(g.count, -1, np.int64)
                pos[g.group_of_subset(keep)] = np.arange(sub.count)
                return g.pick(result, pos).cast(values.type)
            if not self.agg.retracts:
                raise MergeError(f"aggregate function '{self.agg.name}' of field '{self.field.name}' does not "
                                 f"accept retractions (-U/-D rows); set 'fields.{self.field.name}.ignore-retract'")
        return self.agg.kernel(g, values, retract, self).cast(values.type, safe=False)
