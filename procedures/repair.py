"""``repair`` and ``repair_earliest_snapshot``: paimon-spark's RepairProcedure and
RepairEarliestSnapshotProcedure.

In Paimon, ``repair`` makes a metastore (Hive, JDBC) agree with the tables on the filesystem; its
filesystem catalog has nothing to repair (and refuses). Here, on every catalog, ``repair`` mends
what a table can get wrong by itself: the ``snapshot/LATEST`` and ``snapshot/EARLIEST`` hints
of the table and of each of its branches, which a writer that died between its snapshot and its
hint, an interrupted expiry or a copy by hand leave missing or wrong. ``LATEST`` becomes the
newest snapshot file; ``EARLIEST`` the first snapshot of the unbroken run that holds the
snapshot it names (the oldest listed when that one is gone), so a hint moved past a gap by
``repair_earliest_snapshot`` stays. ``''`` repairs every table of the
catalog, ``db`` every table of a database, ``db.t`` one table; several, comma-separated.

On a Hive catalog the metastore is first made to agree with the warehouse, as Paimon's
``repairCatalog/Database/Table``: databases and tables the warehouse holds are registered, a
table's columns and parameters brought up to its schema, and (``metastore.partitioned-table``)
its partitions added.

A format table has no snapshot hints: its metastore entry is synced as any table's, and the
rest of ``repair`` passes it by.

``repair_earliest_snapshot(table, snapshot_id)``: when snapshot files were lost and the history
has a gap, ``EARLIEST`` is moved to ``snapshot_id``, which must start the unbroken run of
snapshots that ends at the latest (every snapshot from it to the latest exists, the one before it
does not), as Java's ``SnapshotManager.repairEarliestSnapshot``; returns the earliest snapshot
before and after.
"""

from __future__ import annotations

from typing import List, Optional

from paimon_sql.procedures.base import Procedure, columns, register, required
from paimon_sql.store.references import branch_tables
from paimon_sql.table.format_table import FormatTable


def _text(io, path: str) -> Optional[str]:
    try:
        return io.read_text(path).strip()
    except (FileNotFoundError, OSError):
        return None


def repair_hints(table) -> None:
    """Rewrite the LATEST/EARLIEST hints of ``table``'s branch that do not match its snapshot files."""
    sm, io, folder = table.snapshot_manager, table.io, table.paths.snapshot_dir
    ids = sm.listed_ids()
    if not ids:
        for hint in ("LATEST", "EARLIEST"):
            io.delete(f"{folder}/{hint}")
        return
    present = set(ids)
    earliest = sm.earliest_id()
    while earliest - 1 in present:
        earliest -= 1
    for hint, value in (("EARLIEST", earliest), ("LATEST", ids[-1])):
        if _text(io, f"{folder}/{hint}") != str(value):
            io.write_bytes(f"{folder}/{hint}", str(value).encode())


@register
class RepairProcedure(Procedure):
    name = "repair"
    parameters = (required("database_or_table", "STRING"),)
    output = columns("result BOOLEAN")
    description = "Rewrite the snapshot LATEST/EARLIEST hints of a table, a database ('db') or all ('') from the snapshots present."

    def call(self, session, args):
        self.sync_metastore(session.catalog, args["database_or_table"])
        tables = []  # every name is resolved before anything is changed
        for name in self.names(session, args["database_or_table"]):
            table = self.table(session, name, format_tables=True)
            tables += [] if isinstance(table, FormatTable) else branch_tables(table)
        for table in tables:
            repair_hints(table)
        return [(True,)]

    def sync_metastore(self, catalog, text: str) -> None:
        """A metastore catalog (Hive) registers what the warehouse holds; other catalogs have no such step."""
        if not hasattr(catalog, "repair_table"):
            return
        if not text.strip():
            return catalog.repair_catalog()
        for parts in self.items(text):
            catalog.repair_table(".".join(parts)) if len(parts) == 2 else catalog.repair_database(parts[0])

    def items(self, text: str) -> List[List[str]]:
        """Each comma-separated name of ``text`` as ``[db]`` or ``[db, t]``."""
        out = []
        for item in text.split(","):
            parts = item.strip().split(".")
            if len(parts) > 2 or not all(parts):
                raise self.fail(f"cannot read a database or db.table from '{item.strip()}'")
            out.append(parts)
        return out

    def names(self, session, text: str) -> List[str]:
        """The tables ``text`` names: '' all, ``db`` a database's, ``db.t`` one; comma-separated."""
        catalog = session.catalog
        if not text.strip():
            return [f"{db}.{t}" for db in catalog.list_databases() for t in catalog.list_tables(db)]
        out = []
        for parts in self.items(text):
            out += [".".join(parts)] if len(parts) == 2 else self.table_names(session, parts[0])
        return out


@register
class RepairEarliestSnapshotProcedure(Procedure):
    name = "repair_earliest_snapshot"
    parameters = (required("table", "STRING"), required("snapshot_id", "BIGINT"))
    output = columns("previous_earliest_snapshot_id BIGINT NOT NULL", "current_earliest_snapshot_id BIGINT NOT NULL")
    description = "Move the EARLIEST hint past a gap of lost snapshots to snapshot_id (the start of the run up to the latest)."

    def call(self, session, args):
        table = self.table(session, args["table"])
        sid, sm = args["snapshot_id"], table.snapshot_manager
        previous, latest = sm.earliest_id(), sm.latest_id()
        if previous is None or latest is None:
            raise self.fail(f"table '{args['table']}' has no snapshot: there is no earliest snapshot to repair")
        if sid < previous:
            raise self.fail(f"snapshot {sid} must not be earlier than the current earliest snapshot {previous}")
        if sid > latest:
            raise self.fail(f"snapshot {sid} must not be later than the latest snapshot {latest}")
        present = set(sm.listed_ids())
        missing = next((i for i in range(sid, latest + 1) if i not in present), None)
        if missing is not None:
            raise self.fail(f"snapshot {missing} does not exist: snapshot {sid} does not start an unbroken run "
                            f"to the latest snapshot {latest}")
        if sid != previous and sid - 1 in present:
            raise self.fail(f"snapshot {sid} does not immediately follow a snapshot gap (snapshot {sid - 1} exists)")
        table.io.write_bytes(f"{table.paths.snapshot_dir}/EARLIEST", str(sid).encode())
        return [(previous, sid)]
