"""CatalogEnvironment: what a table's catalog adds to its commits (Paimon's ``CatalogEnvironment``).

A table knows its files; its catalog may know more. Where the store cannot create a file only if
it is absent (an object store without conditional puts), the catalog's ``lock`` is held around
creating each ``snapshot-N`` and ``schema-N`` (io/catalog_lock.py). A metastore that mirrors the
table (a Hive metastore's partitions) is told of every committed snapshot through
``commit_callbacks``, and Iceberg metadata is registered under the table's name (``iceberg_hive``,
an :class:`IcebergRegistrar` the catalog layer provides). A catalog that owns the table's versions
(Paimon's REST catalog: ``supportsVersionManagement``) takes each snapshot, schema change, rollback
and branch itself (``snapshot_commit``, ``alter_table``, ``rollback``, ``branches``), as Paimon's
``CatalogSnapshotCommit`` and ``CatalogBranchManager`` hand them to it.
Executors never commit, so the environment is not pickled with a table.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Optional, Protocol, Sequence, Tuple, TypeVar

from paimon_sql.io import FileIO
from paimon_sql.io.catalog_lock import unlocked

if TYPE_CHECKING:
    from paimon_sql.schema.schema_change import SchemaChange
    from paimon_sql.schema.schema_manager import SchemaManager
    from paimon_sql.schema.table_schema import TableSchema
    from paimon_sql.snapshot.snapshot import Snapshot

T = TypeVar("T")


class RegisteredTable(Protocol):
    """What a registration reads of the table: its name, its options, its latest columns."""

    name: str
    schema: "TableSchema"
    schema_manager: "SchemaManager"


class IcebergRegistrar(Protocol):
    """A catalog's registration of a table's Iceberg metadata under the table's name (a Hive
    metastore's table, catalog/iceberg_hive.py): the name, a check before a write, the commit."""

    database: str
    table: str

    def check(self, table: RegisteredTable) -> None: ...

    def commit(self, table: RegisteredTable, metadata_path: str, base_path: Optional[str]) -> None: ...


@dataclass(frozen=True)
class CatalogEnvironment:
    # ``lock(action)`` runs ``action`` while holding the table's commit lock and returns its result
    lock: Callable[[Callable[[], T]], T] = unlocked
    # each ``callback(table, snapshot, entries)`` runs after ``snapshot`` is committed, with the
    # manifest entries (ADD and DELETE) that snapshot's delta holds; the commit has happened even
    # when a callback fails (its error says so; ``CALL sys.repair`` re-syncs a metastore)
    commit_callbacks: Tuple[Callable, ...] = ()
    # each ``callback(branch, schema)`` runs after ``schema-N`` is committed (a Hive metastore's
    # columns); one raising PaimonError removes that schema-N again and the change fails, as Paimon's
    # HiveCatalog.alterTable deletes a schema the metastore refused
    schema_callbacks: Tuple[Callable, ...] = ()
    # the catalog registers partitions in a metastore: 'metastore.partitioned-table' is honoured
    # (a Hive catalog); elsewhere a table with it is not written, rather than silently unsynced
    partitions_in_metastore: bool = False
    # registers the Iceberg metadata of 'metadata.iceberg.storage' = 'hive-catalog' in a Hive
    # metastore under the table's name in the catalog; a table opened by its path has none (refused)
    iceberg_hive: Optional[IcebergRegistrar] = None
    # ``snapshot_commit(branch, base, snapshot, statistics)`` publishes ``snapshot``, built on ``base``
    # (None: the first), in place of creating its file: False when another commit came first;
    # ``statistics``: what it changes per partition (commit/partition_statistics.py)
    snapshot_commit: Optional[Callable[[str, Optional["Snapshot"], "Snapshot", Sequence[dict]], bool]] = None
    # ``latest_snapshot(branch)``: the latest snapshot as the catalog knows it (None: none yet),
    # in place of the files' (Paimon's SnapshotLoader); older snapshots are read from the files
    latest_snapshot: Optional[Callable[[str], Optional["Snapshot"]]] = None
    # ``alter_table(branch, changes)`` makes the next schema-N of ``changes`` in place of writing it
    alter_table: Optional[Callable[[str, Sequence["SchemaChange"]], None]] = None
    # ``rollback(branch, snapshot_id, tag)`` rolls the table back to a snapshot (or to tag ``tag``)
    rollback: Optional[Callable[[str, int, Optional[str]], None]] = None
    # ``branches(io, table_root)``: the table's BranchManager (table/branch_manager.py, a layer above),
    # when the catalog makes its branches
    branches: Optional[Callable[[FileIO, str], Any]] = None


NO_CATALOG = CatalogEnvironment()
