"""Paimon's FallbackReadFileStoreTable: ``scan.fallback-branch`` and ``scan.primary-branch``.

A table with ``scan.fallback-branch = b`` reads each partition from its own branch when that
branch has the partition, and from branch ``b`` when only ``b`` has it (a batch-written main
branch completed by a streaming-written branch, say). ``scan.primary-branch = b`` turns the
priority around: ``b``'s partitions first, the rest from the table's own branch. As in Paimon
this is for batch reads only: incremental and streaming reads, writes and system tables see the
table's own branch, and the two branches must have the same columns (nullability aside).

:func:`tables` says which branch's partitions win; :func:`second_read` which partitions the
other branch supplies. The Spark scan reads both and unions them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional, Tuple

from paimon_sql.data import binary_row
from paimon_sql.data.predicate import Predicate, and_, equal, is_null, or_
from paimon_sql.exceptions import InvalidOptionError, SnapshotNotFoundError
from paimon_sql.read import incremental
from paimon_sql.store.time_travel import snapshot_at

if TYPE_CHECKING:
    from paimon_sql.table.table import FileStoreTable

FALLBACK, PRIMARY = "scan.fallback-branch", "scan.primary-branch"
# what a branch read as one of the two carries: it reads itself only
_ONE_BRANCH = {FALLBACK: "", PRIMARY: ""}


def other_branch(table: FileStoreTable) -> Optional[Tuple[str, str]]:
    """(option key, branch name) of the table's fallback or primary branch; None without one."""
    raw = table.options.raw
    fallback, primary = (str(raw.get(k) or "").strip() for k in (FALLBACK, PRIMARY))
    if fallback and primary:
        raise InvalidOptionError(f"cannot set both '{FALLBACK}' and '{PRIMARY}'")
    if fallback or primary:
        key, name = (FALLBACK, fallback) if fallback else (PRIMARY, primary)
        return None if name == table.branch else (key, name)
    return None


def tables(table: FileStoreTable) -> Optional[tuple]:
    """(first, second) for a batch read of ``table``: every partition ``first`` has is read from
    it, the others from ``second``; each reads only its own branch. None when the table has no
    fallback or primary branch, or the read is incremental."""
    other = other_branch(table)
    if other is None or incremental.between(table) is not None:
        return None
    key, name = other
    if not table.branch_manager.exists(name):
        raise InvalidOptionError(f"option '{key}' names branch '{name}', which table {table.name} does not have")
    own = table.copy(_ONE_BRANCH)
    branch = table.switch_to_branch(name).travel({**_other_options(table, name), **_ONE_BRANCH})
    mine = [(f.name, f.type.copy(nullable=True)) for f in own.schema.fields]
    theirs = [(f.name, f.type.copy(nullable=True)) for f in branch.schema.fields]
    if mine != theirs:
        raise InvalidOptionError(f"option '{key}': branch '{name}' of table {table.name} does not have the same "
                                 f"columns as branch '{table.branch}'")
    return (own, branch) if key == FALLBACK else (branch, own)


def check_own_rows(table: FileStoreTable, verb: str) -> None:
    """Row-level changes (UPDATE, DELETE, MERGE INTO) rewrite rows they read as a query reads
    them; with another branch's partitions among those they would copy that branch's rows into
    this one, so they are refused (INSERT, which reads nothing of the table, is not)."""
    other = other_branch(table)
    if other is not None:
        key, name = other
        raise InvalidOptionError(f"{verb} of {table.name} is refused: it reads partitions of branch '{name}' "
                                 f"('{key}'); unset the option to change rows of branch '{table.branch}'")


def _other_options(table: FileStoreTable, name: str) -> dict:
    """The read's dynamic options for the other branch, as Paimon's rewriteOtherOptions: a
    snapshot id becomes the other branch's latest snapshot at that snapshot's commit time (its
    first when it has none so early), and ``bucket`` is the other branch's own."""
    options = {k: v for k, v in table.dynamic_options.items() if k != "bucket"}
    snapshot_id = options.pop("scan.snapshot-id", None)
    other = table.switch_to_branch(name)
    first = other.snapshot_manager.earliest_id()
    if snapshot_id is not None and first is not None:
        millis = table.snapshot_manager.snapshot(int(snapshot_id)).time_millis
        try:
            options["scan.snapshot-id"] = str(snapshot_at(other, millis).id)
        except SnapshotNotFoundError:
            options["scan.snapshot-id"] = str(first)
    return options


def second_read(first, second, predicate: Optional[Predicate]) -> Tuple[bool, Optional[Predicate]]:
    """Whether ``second`` has partitions ``first`` lacks (among those ``predicate`` may select), and
    the predicate reading just those from ``second``: ``predicate`` and one partition of them."""
    keys = first.schema.partition_keys
    wanted = predicate.only(set(keys)) if predicate is not None else None
    have = {e.partition for e in first.new_scan().filter(wanted).plan_entries()}
    rest = sorted({e.partition for e in second.new_scan().filter(wanted).plan_entries()} - have)
    if not rest or not keys:  # an unpartitioned table is one partition
        return bool(rest), predicate
    types = [f.type for f in second.schema.fields_of(keys)]
    return True, and_(predicate, or_(*[and_(*[is_null(k) if v is None else equal(k, v)
                                              for k, v in zip(keys, binary_row.from_bytes(p, types))])
                                       for p in rest]))
