"""Merge functions: what one key's rows (sorted by sequence) fold into — Paimon's merge engines.

``merge(groups)`` takes :class:`KeyGroups` over rows that carry ``_SEQUENCE_NUMBER``, ``_VALUE_KIND``
and value columns (and the key columns the groups were cut by), and returns one row per key with
the same columns: the key's latest sequence number, its resulting row kind, its merged values.
The same functions fold duplicate keys in the write buffer, merge overlapping files on read, and
rewrite files in compaction, so the three always agree.

- deduplicate: the last row wins (a trailing -D deletes the key);
- first-row: the first row wins; later rows of the key are ignored;
- partial-update: each field takes its last non-null value; ``fields.<s>.sequence-group = 'a,b'``
  updates a, b only from rows whose sequence field s is not older, and lets -U/-D retract them;
- aggregation: each field folds by its ``fields.<f>.aggregate-function`` (see :mod:`.aggregate`).

``ignore-delete`` drops -U/-D rows first; ``<engine>.remove-record-on-delete`` makes a -D forget
everything before it (and delete the key when nothing follows).
"""

from __future__ import annotations

import re
from typing import Dict, List, Optional, Set

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from paimon_sql.data import row_kind
from paimon_sql.exceptions import MergeError, SchemaError
from paimon_sql.mergetree.aggregate import FieldAggregate
from paimon_sql.mergetree.key_groups import KeyGroups
from paimon_sql.schema.table_schema import SEQUENCE_NUMBER, VALUE_KIND

_FIELD_OPTION = re.compile(r"fields\.(.+)\.([a-z\-]+)$")


def field_options(options: Dict[str, str]) -> Dict[str, Dict[str, str]]:
    """``fields.<name>.<suffix> = v`` options grouped by name (``default-aggregate-function`` aside)."""
    out: Dict[str, Dict[str, str]] = {}
    for k, v in options.items():
        m = _FIELD_OPTION.fullmatch(k)
        if m:
            out.setdefault(m.group(1), {})[m.group(2)] = v
    return out


def _valid(col: pa.Array) -> np.ndarray:
    return np.asarray(col.is_valid().to_numpy(zero_copy_only=False))


def _kinds(g: KeyGroups) -> np.ndarray:
    return np.asarray(g.column(VALUE_KIND).to_numpy(zero_copy_only=False))


class MergeFunction:
    """Base: handles ignore-delete and remove-record-on-delete, then the engine's :meth:`_merge`."""

    name = ""
    remove_on_delete_option: Optional[str] = None
    retracts_after_delete = True  # whether -U rows after a key's last -D still retract (aggregation)
    keeps_lone_rows = False  # whether _merge of a one-row key returns that row as it is (no split needed)

    def __init__(self, schema):
        self.schema = schema
        self.options = schema.core_options()
        self.field_options = field_options(schema.options)
        self.ignore_delete = self.options.ignore_delete
        self.remove_on_delete = bool(self.remove_on_delete_option) and \
            str(schema.options.get(self.remove_on_delete_option, "false")).lower() == "true"
        self.keys = set(schema.primary_keys)

    def extra_fields(self, fields: Set[str]) -> Set[str]:
        """Columns a merge of ``fields`` needs besides them (sequence fields, sequence groups)."""
        return set(self.options.sequence_fields)

    def order_columns(self) -> List[str]:
        return self.options.sequence_fields + [SEQUENCE_NUMBER]

    def descending(self) -> List[str]:
        desc = self.options.get("sequence.field.sort-order") == "descending"
        return list(self.options.sequence_fields) if desc else []

    def group(self, table: pa.Table, key_columns: List[str], in_sequence_order: bool = False) -> KeyGroups:
        """``in_sequence_order``: rows already come in sequence-number order (a write buffer), so the
        stable sort needs no sequence column as tie-breaker."""
        order = self.order_columns()
        if in_sequence_order and order[-1] == SEQUENCE_NUMBER:
            order = order[:-1]
        return KeyGroups.of(table, key_columns, order, self.descending())

    def value_columns(self, table: pa.Table) -> List[str]:
        return [f.name for f in self.schema.fields if f.name in table.column_names and f.name not in self.keys]

    def merge(self, g: KeyGroups) -> pa.Table:
        """One row per key. A key with a single row keeps it as it is, kind included (Paimon's
        ReducerMergeFunctionWrapper): a lone -U stays a retraction for a later merge to apply."""
        if self.keeps_lone_rows and not self.ignore_delete and not self.remove_on_delete:
            return self._merge(g, None)
        single = g.sizes == 1
        if single.all():
            return g.rows(g.starts)
        if not single.any():
            return self._fold(g)
        multi_rows = ~single[g.row_group()]
        return _interleave([self._fold(g.subset(multi_rows)), g.rows(g.starts[single])],
                           [np.flatnonzero(~single), np.flatnonzero(single)])

    def _fold(self, g: KeyGroups) -> pa.Table:
        kinds = _kinds(g)
        retract = (kinds == row_kind.UPDATE_BEFORE) | (kinds == row_kind.DELETE)
        if self.ignore_delete and retract.any():
            g = g.subset(~retract)
            return self._merge(g, np.zeros(g.n, bool)) if g.count else g.table.slice(0, 0)
        if self.remove_on_delete and retract.any():
            return self._merge_after_deletes(g, kinds, retract)
        return self._merge(g, retract)

    def _merge_after_deletes(self, g: KeyGroups, kinds: np.ndarray, retract: np.ndarray) -> pa.Table:
        """Only rows after a key's last -D count; nothing after it: the key is deleted."""
        last_delete = g.last(kinds == row_kind.DELETE)
        keep = np.arange(g.n) > last_delete[g.row_group()]
        if not self.retracts_after_delete:
            keep &= ~retract
        alive = g.group_of_subset(keep)
        dead = np.setdiff1d(np.arange(g.count), alive)
        parts, groups = [], []
        if len(alive):
            parts.append(self._merge(g.subset(keep), retract[keep]))
            groups.append(alive)
        if len(dead):
            parts.append(_with_kind(g.rows(g.last()[dead]), row_kind.DELETE))
            groups.append(dead)
        return _interleave(parts, groups)

    def _merge(self, g: KeyGroups, retract: np.ndarray) -> pa.Table:
        raise NotImplementedError


class Deduplicate(MergeFunction):
    name = "deduplicate"
    keeps_lone_rows = True

    def _merge(self, g, retract):
        return g.rows(g.last())


class FirstRow(MergeFunction):
    name = "first-row"

    def __init__(self, schema):
        super().__init__(schema)
        if self.options.sequence_fields:
            raise SchemaError("merge-engine 'first-row' does not support 'sequence.field'")
        if self.options.get("changelog-producer") not in ("none", "lookup"):
            raise SchemaError("merge-engine 'first-row' supports only changelog-producer 'none' or 'lookup'")
        if self.options.get("deletion-vectors.enabled"):
            raise SchemaError("First row merge engine does not need deletion vectors because there is no deletion "
                              "of old data in this merge engine.")

    def order_columns(self) -> List[str]:
        return [SEQUENCE_NUMBER]

    def _merge(self, g, retract):
        if retract.any():
            raise MergeError("merge-engine 'first-row' does not accept -U/-D rows; set 'first-row.ignore-delete'")
        return g.rows(g.first())


class PartialUpdate(MergeFunction):
    name = "partial-update"
    remove_on_delete_option = "partial-update.remove-record-on-delete"
    retracts_after_delete = False

    def __init__(self, schema):
        super().__init__(schema)
        names = set(schema.field_names)
        self.sequence_groups: List[tuple] = []  # (sequence fields, fields they guard)
        for key, opts in self.field_options.items():
            if "aggregate-function" in opts:
                raise SchemaError(f"aggregate functions inside partial-update (field '{key}') are not supported")
            if "sequence-group" not in opts:
                continue
            seq = [s.strip() for s in key.split(",")]
            guarded = [s.strip() for s in opts["sequence-group"].split(",") if s.strip()]
            unknown = [c for c in seq + guarded if c not in names]
            if unknown:
                raise SchemaError(f"sequence-group 'fields.{key}.sequence-group' names unknown column(s) "
                                  f"{', '.join(unknown)}")
            self.sequence_groups.append((seq, guarded))
        grouped = [c for s, gf in self.sequence_groups for c in s + gf]
        twice = sorted({c for c in grouped if grouped.count(c) > 1})
        if twice:
            raise SchemaError(f"column(s) {', '.join(twice)} belong to more than one sequence group")

    def extra_fields(self, fields):
        extra = set(super().extra_fields(fields))
        for seq, guarded in self.sequence_groups:
            if fields & set(seq + guarded):
                extra |= set(seq)
        return extra

    def _merge(self, g, retract):
        if retract.any() and not self.sequence_groups:
            raise MergeError("merge-engine 'partial-update' does not accept -U/-D rows by default; set "
                             "'partial-update.ignore-delete', 'partial-update.remove-record-on-delete' "
                             "or sequence groups")
        out = g.rows(g.last())
        present = set(self.value_columns(g.table))
        grouped = set()
        for seq, guarded in self.sequence_groups:
            grouped |= set(seq + guarded)
            if not present & set(seq + guarded):
                continue
            winner = self._group_winner(g, seq)
            for name in seq + guarded:
                if name in present:
                    pos = winner if name in seq else np.where(retract[np.maximum(winner, 0)], -1, winner)
                    out = _set(out, name, g.pick(g.column(name), pos))
        for name in present - grouped:
            col = g.column(name)
            out = _set(out, name, g.pick(col, g.last(~retract & _valid(col))))
        return _with_kind(out, row_kind.INSERT)

    @staticmethod
    def _group_winner(g: KeyGroups, seq: List[str]) -> np.ndarray:
        """Per key, the row with the greatest sequence-group value (later rows win ties); -1 if none."""
        mask = np.ones(g.n, bool)
        for s in seq:
            mask &= _valid(g.column(s))
        idx = np.flatnonzero(mask)
        winner = np.full(g.count, -1, np.int64)
        if not len(idx):
            return winner
        t = pa.table({"g": g.row_group()[idx], **{f"s{i}": g.column(s).take(pa.array(idx))
                                                   for i, s in enumerate(seq)}, "p": idx})
        order = np.asarray(pc.sort_indices(t, [(c, "ascending") for c in t.column_names]))
        gs = t.column("g").to_numpy()[order]
        last = np.r_[gs[1:] != gs[:-1], True]
        winner[gs[last]] = idx[order[last]]
        return winner


class Aggregation(MergeFunction):
    name = "aggregation"
    remove_on_delete_option = "aggregation.remove-record-on-delete"

    def __init__(self, schema):
        super().__init__(schema)
        default = schema.options.get("fields.default-aggregate-function", "last_non_null_value")
        known = set(schema.field_names)
        for key, opts in self.field_options.items():
            if "sequence-group" in opts:
                raise SchemaError("sequence groups with merge-engine 'aggregation' are not supported")
            if key != "default-aggregate-function" and key not in known and "aggregate-function" in opts:
                raise SchemaError(f"'fields.{key}.aggregate-function' names an unknown column")
        self.aggregates = {f.name: FieldAggregate(f, self.field_options.get(f.name, {}).get("aggregate-function",
                                                                                           default),
                                                  self.field_options.get(f.name, {}))
                           for f in schema.fields if f.name not in self.keys}

    def _merge(self, g, retract):
        out = g.rows(g.last())
        for name in self.value_columns(g.table):
            out = _set(out, name, self.aggregates[name].fold(g, g.column(name), retract))
        return _with_kind(out, row_kind.INSERT)


def _interleave(parts: List[pa.Table], groups: List[np.ndarray]) -> pa.Table:
    """Rows of ``parts`` (part i holds the rows of groups ``groups[i]``) back in group order."""
    out = pa.concat_tables(parts)
    return out.take(pa.array(np.argsort(np.concatenate(groups), kind="stable")))


def _set(table: pa.Table, name: str, values: pa.Array) -> pa.Table:
    i = table.column_names.index(name)
    return table.set_column(i, table.field(i), values.cast(table.field(i).type))


def _with_kind(table: pa.Table, kind: int) -> pa.Table:
    return _set(table, VALUE_KIND, pa.array(np.full(table.num_rows, kind, np.int8)))


ENGINES = {e.name: e for e in (Deduplicate, FirstRow, PartialUpdate, Aggregation)}


def for_schema(schema) -> MergeFunction:
    """The schema's merge engine, its options validated (a bad option is a SchemaError naming it)."""
    return ENGINES[schema.core_options().merge_engine](schema)
