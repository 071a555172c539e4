"""The per-snapshot publisher (the core of Paimon's IcebergCommitCallback): which snapshots get
Iceberg metadata, and for each whether its metadata extends the previous snapshot's
(:mod:`paimon_sql.iceberg.incremental`) or is written afresh (:mod:`paimon_sql.iceberg.afresh`).

What both paths share (schemas, which files Iceberg sees, manifests, summaries, the metadata file)
is the :class:`~paimon_sql.iceberg.publication.Publication` a Publisher is.

After a rollback (as Paimon's master after 2.0, #9036): each snapshot's summary names the Paimon
commit it was built from (``paimon-commit-identity``: the snapshot's uuid), so metadata a rollback
abandoned is told from the live one by its commit, not by clocks; an abandoned base is not
extended (the metadata is written afresh); metadata written in place of abandoned metadata keeps
its table uuid, and ``last-column-id`` never goes below an id once handed out.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional

from paimon_sql.exceptions import PaimonError
from paimon_sql.iceberg import afresh, incremental, lineage, rest
from paimon_sql.iceberg import deletion_vectors as dvs
from paimon_sql.iceberg.metadata import current_snapshot, read_metadata
from paimon_sql.iceberg.publication import COMMIT_IDENTITY, Publication, commit_identity
from paimon_sql.options.iceberg_options import HIVE_CATALOG, REST_CATALOG, IcebergOptions
from paimon_sql.read.scan import ScanStore

if TYPE_CHECKING:
    from paimon_sql.snapshot.snapshot import Snapshot

CATCH_UP = 100  # snapshots published one by one after the last published; beyond, the latest alone


def commit_to_catalog(table: ScanStore, options: IcebergOptions, path: str, base_path: Optional[str]) -> None:
    """Java's metadataCommitter: metadata ``path`` (extending ``base_path``, if any) registered in
    the Hive metastore (``hive-catalog``) or committed to the REST catalog (``rest-catalog``);
    nothing for the storages without a catalog."""
    if options.storage == HIVE_CATALOG and table.env.iceberg_hive is not None:
        table.env.iceberg_hive.commit(table, path, base_path)
    elif options.storage == REST_CATALOG:
        rest.commit(table, path)


class Publisher(Publication):
    """Which snapshots of one table get Iceberg metadata, and by which path."""

    def __init__(self, table: ScanStore, options: IcebergOptions):
        super().__init__(table, options, dvs.published(table, options))

    # -- which snapshots -------------------------------------------------------------------

    def publish_up_to(self, latest: int) -> None:
        published = self.paths.metadata_ids(self.io)
        for stale in (v for v in published if v > latest):  # metadata of snapshots rolled back
            self.retire(stale)
        first = published[-1] + 1 if published and published[-1] < latest else latest
        if not published:  # every snapshot of this commit (data, then compaction), as Java's callback sees each
            first = self._first_of_commit(latest)
        if latest - first > CATCH_UP:  # a long gap: the latest snapshot alone, written afresh
            first = latest
        for sid in range(first, latest + 1):
            if self.io.exists(self.table.paths.snapshot_path(sid)):
                self.publish(self.table.snapshot_manager.snapshot(sid))

    def _first_of_commit(self, latest: int) -> int:
        """The first snapshot of the commit that made ``latest`` (same user and identifier): a write
        may commit its data, then its compaction."""
        last = self.table.snapshot_manager.snapshot(latest)
        first = latest
        while first - 1 >= max(1, latest - CATCH_UP) and self.io.exists(self.table.paths.snapshot_path(first - 1)):
            prev = self.table.snapshot_manager.snapshot(first - 1)
            if (prev.commit_user, prev.commit_identifier) != (last.commit_user, last.commit_identifier):
                break
            first -= 1
        return first

    def publish(self, snap: Snapshot, afresh_only: bool = False) -> None:
        """The metadata of ``snap``: extending the previous snapshot's when it exists (unless
        ``afresh_only``) and is of the same format version, else written afresh."""
        path = self.paths.metadata(snap.id)
        if self.io.exists(path):
            if built_from(read_metadata(self.io, path), snap):
                return  # published already
            self.retire(snap.id)  # written for an earlier snapshot of this id (rolled back, or the table made again)
        if snap.id == 1:  # a table made again: the metadata of its earlier life (catalog-location) goes
            self.io.delete(self.paths.dir)
            self.retired_uuid, self.retired_columns = None, 0  # and its identity: a new table
        base_path = self.paths.metadata(snap.id - 1)
        base = read_metadata(self.io, base_path) if not afresh_only and self.io.exists(base_path) else None
        if base is not None and self._abandoned(base, snap.id - 1):  # a rollback left it: not extended
            self._remember(base)
            base = None
        if base is not None and base.get("format-version", 0) > self.options.format_version:
            raise PaimonError(f"table {self.table.name}: its Iceberg metadata has format version "
                              f"{base['format-version']}, above 'metadata.iceberg.format-version' = "
                              f"{self.options.format_version}: a version is never lowered")
        row_floor = self._row_floor(snap.id) if self.lineage else 0
        unlined = self.lineage and base is not None and lineage.NEXT_ROW_ID not in base  # Java Paimon 2.0's
        if base is not None and base.get("format-version") == self.options.format_version and not unlined:
            incremental.write_with_base(self, snap, base, row_floor)
        else:  # v3 metadata without row lineage is written again, under its table uuid, as Paimon's master
            afresh.write_afresh(self, snap, row_floor, base["table-uuid"] if unlined else self.retired_uuid)
            base_path = None
        commit_to_catalog(self.table, self.options, path, base_path)

    def _row_floor(self, sid: int) -> int:
        """The first row id snapshot ``sid`` may hand out: past the newest metadata before it (the
        base, or what a long gap, a lost file or a fast-forward left) and the metadata retired."""
        older = [v for v in self.paths.metadata_ids(self.io) if v < sid]
        return max(lineage.floor_at(self.io, self.paths.metadata(older[-1])) if older else 0, self.retired_floor)

    def retire(self, version: int) -> None:
        """Delete metadata ``version`` of a snapshot rolled back, keeping its row ids and column ids
        from reuse and its table uuid for the metadata written in its place."""
        path = self.paths.metadata(version)
        if self.lineage:
            self.retired_floor = max(self.retired_floor, lineage.floor_at(self.io, path))
        try:
            self._remember(read_metadata(self.io, path))
        except (PaimonError, OSError):  # damaged or gone: nothing of it to keep
            pass
        self.io.delete(path)

    def _remember(self, abandoned: dict) -> None:
        """Keep the identity of metadata a rollback abandoned: its uuid (the newest's, as versions
        are retired oldest first) and the column ids it handed out."""
        self.retired_uuid = abandoned.get("table-uuid") or self.retired_uuid
        self.retired_columns = max(self.retired_columns, abandoned.get("last-column-id", 0))

    def _abandoned(self, base: dict, sid: int) -> bool:
        """Whether ``base``, metadata of snapshot ``sid``, was built from another snapshot of that id
        (one a rollback removed); unknown when snapshot ``sid`` has expired."""
        if not self.io.exists(self.table.paths.snapshot_path(sid)):
            return False
        try:
            return not built_from(base, self.table.snapshot_manager.snapshot(sid))
        except PaimonError:  # base names a current snapshot it does not hold: not ours to extend
            return True


def built_from(metadata: dict, snap: Snapshot) -> bool:
    """Whether ``metadata``'s current snapshot was built from ``snap``: by the commit identity it
    names; metadata without one (Java Paimon 2.0's, paimon-sql's before) by its time, written after
    ``snap`` was committed."""
    current = current_snapshot(metadata)
    identity = current.get("summary", {}).get(COMMIT_IDENTITY)
    if identity is not None:
        return identity == commit_identity(snap)
    return current["timestamp-ms"] >= snap.time_millis
