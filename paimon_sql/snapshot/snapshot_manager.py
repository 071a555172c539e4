"""SnapshotManager: find, read and publish snapshots of one table directory.

``LATEST`` and ``EARLIEST`` are hints, never trusted blindly: writers, expiry and rollback
update them after the snapshot files and may die before, and a hint may be garbage. A hint counts
only when its snapshot exists; the latest id is then the hint followed by probing
``snapshot-(hint+1)...`` until one is missing, the earliest the hint followed by probing
``snapshot-(hint-1)...`` down (snapshot ids are consecutive, except for the hole a fast-forward
leaves below a branch's first snapshot when the target had been rolled back under it,
docs/branches.md); without a usable hint, the ids listed in ``snapshot/``.
"""

from __future__ import annotations

import logging
from typing import Iterator, List, Optional, Sequence

from paimon_sql.exceptions import SnapshotNotFoundError
from paimon_sql.io import FileIO
from paimon_sql.io.catalog_lock import unlocked
from paimon_sql.io.paths import PathFactory
from paimon_sql.snapshot.snapshot import Snapshot


class SnapshotManager:
    def __init__(self, io: FileIO, paths: PathFactory, lock=unlocked, commit=None, loader=None):
        self.io = io
        self.paths = paths
        self.lock = lock  # the catalog's commit lock (io/catalog_lock.py), held to create snapshot-N
        self.commit = commit  # the catalog's snapshot_commit, when it publishes snapshots (table/catalog_environment.py)
        self.loader = loader  # the catalog's latest_snapshot, when it knows the latest (table/catalog_environment.py)

    def _hint(self, name: str) -> Optional[int]:
        path = f"{self.paths.snapshot_dir}/{name}"
        try:
            return int(self.io.read_text(path).strip())
        except (FileNotFoundError, OSError, ValueError):
            return None

    def listed_ids(self) -> List[int]:
        ids = []
        for name in self.io.list_names(self.paths.snapshot_dir):
            if name.startswith("snapshot-") and name[9:].isdigit():
                ids.append(int(name[9:]))
        return sorted(ids)

    def latest_id(self) -> Optional[int]:
        if self.loader is not None:
            latest = self.loader(self.paths.branch)
            return latest.id if latest is not None else None
        hint = self._hint("LATEST")
        if hint is not None and self.io.exists(self.paths.snapshot_path(hint)):
            while self.io.exists(self.paths.snapshot_path(hint + 1)):
                hint += 1
            return hint
        ids = self.listed_ids()
        return ids[-1] if ids else None

    def earliest_id(self) -> Optional[int]:
        hint = self._hint("EARLIEST")
        if hint is not None and self.io.exists(self.paths.snapshot_path(hint)):
            while hint > 1 and self.io.exists(self.paths.snapshot_path(hint - 1)):
                hint -= 1
            return hint
        ids = self.listed_ids()
        return ids[0] if ids else None

    def snapshot(self, snapshot_id: int) -> Snapshot:
        path = self.paths.snapshot_path(snapshot_id)
        try:
            return Snapshot.read(self.io, path)
        except (FileNotFoundError, OSError):
            raise SnapshotNotFoundError(f"snapshot {snapshot_id} does not exist ({path})") from None

    def latest(self) -> Optional[Snapshot]:
        if self.loader is not None:
            return self.loader(self.paths.branch)
        sid = self.latest_id()
        return None if sid is None else self.snapshot(sid)

    def latest_of_user(self, user: str) -> Optional[Snapshot]:
        """The newest snapshot ``user`` committed (Paimon's ``latestSnapshotOfUser``), searched from
        the latest snapshot back: a writer that commits under a stable user resumes after the commit
        identifier found there, so a commit it repeats (a replayed micro-batch) is recognised. A
        snapshot expired meanwhile is passed over."""
        latest = self.latest_id()
        if latest is None:
            return None
        for sid in range(latest, (self.earliest_id() or 1) - 1, -1):
            try:
                snap = self.snapshot(sid)
            except SnapshotNotFoundError:
                continue
            if snap.commit_user == user:
                return snap
        return None

    def snapshots(self) -> Iterator[Snapshot]:
        for sid in self.listed_ids():
            yield self.snapshot(sid)

    def try_commit(self, snapshot: Snapshot, base: Optional[Snapshot] = None, statistics: Sequence[dict] = ()) -> bool:
        """Publish ``snapshot`` (built on ``base``, the latest when it was built) if its id is still
        free; then refresh the hints. Once the snapshot file exists the commit has happened: a hint
        that cannot be written is logged, not raised (readers probe past a stale hint), so the
        caller never cleans up files a snapshot names. A catalog that publishes snapshots is handed
        it instead, with the commit's ``statistics`` (Paimon's PartitionStatistics), and writes the
        file and hints itself."""
        if self.commit is not None:
            return self.commit(self.paths.branch, base, snapshot, statistics)
        return self.publish(snapshot.id, snapshot.to_json().encode("utf-8"))

    def publish(self, snapshot_id: int, data: bytes) -> bool:
        """:meth:`try_commit` of a snapshot's JSON as given (a REST catalog server keeps what its
        client sent, fields we do not model included)."""
        if not self.lock(lambda: self.io.try_create(self.paths.snapshot_path(snapshot_id), data)):
            return False
        try:
            self.io.write_bytes(f"{self.paths.snapshot_dir}/LATEST", str(snapshot_id).encode())
            if snapshot_id == 1 or self._hint("EARLIEST") is None:
                self.io.write_bytes(f"{self.paths.snapshot_dir}/EARLIEST",
                                    str(self.earliest_id() or snapshot_id).encode())
        except OSError as e:
            logging.getLogger(__name__).warning("snapshot %d is committed but its hint files could not be "
                                                "written: %s", snapshot_id, e)
        return True
