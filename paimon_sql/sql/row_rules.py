"""Which row-level statements a Paimon table takes, and which columns they may assign: paimon-spark's
rules (its RowLevelOp, RowLevelHelper and PrimaryKeyTableUtils), so a statement paimon-spark runs runs
here and one it refuses fails here.

- DELETE works on every table. A primary-key table whose merge engine applies a ``-D`` row
  (deduplicate; partial-update with ``partial-update.remove-record-on-delete`` or
  ``partial-update.remove-record-on-sequence-group``; aggregation with
  ``aggregation.remove-record-on-delete``) gets one; the others (first-row, and partial-update or
  aggregation without those options) have the files holding the rows rewritten without them.
- UPDATE and MERGE INTO work on append tables and on the deduplicate and partial-update engines.
- A primary-key column is never assigned by UPDATE; by a MERGE INTO's WHEN MATCHED UPDATE only
  when the ON condition equates every primary-key column of the target with a column. A partition
  column may be assigned, except on a data-evolution table's UPDATE (its rows keep their ids).

One deliberate difference (docs/compatibility.md): a MERGE INTO with a DELETE clause on a
partial-update table that cannot apply ``-D`` rows is refused; paimon-spark writes them, and every
later read of the table fails.
"""

from __future__ import annotations

from typing import Dict, List

from sqlglot import exp

from paimon_sql.exceptions import PaimonError, SchemaError
from paimon_sql.read import data_evolution

# paimon-spark's names of the statements in its messages, and the merge engines each supports
_OPERATION = {"UPDATE": "Update", "MERGE INTO": "MergeInto"}
_ENGINES = ("deduplicate", "partial-update")


def check_engine(table, statement: str) -> None:
    """Refuse UPDATE or MERGE INTO on a merge engine paimon-spark refuses it on (DELETE: every one)."""
    engine = table.options.merge_engine
    name = _OPERATION.get(statement)
    if name is not None and engine not in _ENGINES:
        raise PaimonError(f"table {table.name}: merge engine {engine} can not support {name}, currently only "
                          f"{', '.join(_ENGINES)} can support {name}.")


def deletes_by_row(table) -> bool:
    """Whether DELETE writes ``-D`` rows (the merge engine applies them) rather than rewriting files."""
    if not table.schema.is_primary_key_table:
        return False
    raw, engine = table.options.raw, table.options.merge_engine

    def on(key: str) -> bool:
        return raw.get(key, "false").lower() == "true"
    return {"deduplicate": True,
            "partial-update": on("partial-update.remove-record-on-delete")
            or raw.get("partial-update.remove-record-on-sequence-group") is not None,
            "aggregation": on("aggregation.remove-record-on-delete")}.get(engine, False)


def check_columns(table, columns: List[str]) -> None:
    """Every assigned column is one of the table's."""
    fields = set(table.schema.field_names)
    unknown = [c for c in columns if c not in fields]
    if unknown:
        raise SchemaError(f"table {table.name} has no column(s) {', '.join(unknown)}")


def modified(sets: Dict[str, exp.Expression], qualifiers: List[str]) -> List[str]:
    """The assigned columns whose value is not the column itself (``SET a = a`` / ``t.a``, which
    paimon-spark does not count as assigning ``a``)."""
    def same(name: str, value: exp.Expression) -> bool:
        return (isinstance(value, exp.Column) and value.name == name
                and (not value.table or value.table.lower() in qualifiers))
    return [c for c, v in sets.items() if not same(c, v)]


def check_update(table, columns: List[str]) -> None:
    """UPDATE's assigned columns (those :func:`modified`): no primary-key column; no partition
    column of a data-evolution table."""
    check_columns(table, columns)
    if any(c in table.schema.primary_keys for c in columns):
        raise SchemaError(f"table {table.name}: Can't update the primary key column.")
    if data_evolution.enabled(table) and any(c in table.schema.partition_keys for c in columns):
        raise SchemaError(f"table {table.name}: Update to partition columns is not supported for data evolution "
                          "tables.")


def keys_matched(table, on: exp.Expression, target: str) -> bool:
    """Whether MERGE INTO's ON equates each primary-key column of the target (qualified by
    ``target``, its alias or name) with a column: then its matched rows may assign them."""
    equated = set()
    for conjunct in on.flatten() if isinstance(on, exp.And) else [on]:
        if isinstance(conjunct, exp.EQ) and all(isinstance(s, exp.Column) for s in (conjunct.this, conjunct.expression)):
            equated |= {s.name for s in (conjunct.this, conjunct.expression) if s.table.lower() in ("", target.lower())}
    return all(k in equated for k in table.schema.primary_keys)


def check_merge(table, node: exp.Merge) -> None:
    """MERGE INTO's WHEN MATCHED ... UPDATE SET clauses assign no primary-key column, unless the ON
    condition equates them all (``UPDATE SET *`` and the other clauses are not checked, as in
    paimon-spark)."""
    keys = table.schema.primary_keys
    target = node.this.alias_or_name
    whens = node.args["whens"].expressions
    if keys and not deletes_by_row(table) and any(_is_delete(w.args["then"]) for w in whens):
        raise PaimonError(f"table {table.name}: MERGE INTO ... DELETE writes -D rows, which merge engine "
                          f"{table.options.merge_engine} cannot apply (set 'partial-update.remove-record-on-delete' "
                          "= 'true'); DELETE FROM rewrites the rows' files instead")
    if not keys or keys_matched(table, node.args["on"], target):
        return
    for when in whens:
        then = when.args["then"]
        if when.args.get("matched") and isinstance(then, exp.Update):
            sets = {eq.this.name: eq.expression for eq in then.expressions if isinstance(eq, exp.EQ)}
            if any(c in keys for c in modified(sets, [target.lower(), table.name.lower()])):
                raise SchemaError(f"table {table.name}: Can't update the primary key column in update clause.")


def _is_delete(action: exp.Expression) -> bool:
    return isinstance(action, exp.Var) and action.name.upper() == "DELETE"
