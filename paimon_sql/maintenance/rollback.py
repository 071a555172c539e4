"""Rollback: make an earlier snapshot the latest again (Paimon's FileStore.rollbackTo and
RollbackHelper).

Snapshots after the target are removed, and with them the tags on them, their changelogs and
every file only they referenced (data, manifests, manifest lists, index and statistics files);
files shared with anything kept (snapshots up to the target, earlier tags, branches) stay.
pypaimon's rollback leaves those files behind; Paimon's and ours do not.

Order, as Paimon's RollbackHelper: the snapshot files first, from the newest down, so that
whenever the process dies the latest snapshot is a whole one (never one whose files are half
deleted); then the tags and changelogs; then the files only they named (data, index and
statistics files, then manifests, then manifest lists); then the LATEST hint. Rolling back to an
expired tag writes the tag's snapshot and the EARLIEST hint before anything is deleted. A rollback
interrupted before its files are gone leaves them unreferenced: running it again completes what
is still named, and ``remove_orphan_files`` removes the rest.
"""

from __future__ import annotations

import posixpath
from typing import Iterable, Optional, Tuple

from paimon_sql.exceptions import PaimonError, SnapshotNotFoundError
from paimon_sql.maintenance.remove_orphan_files import remove_empty_dirs
from paimon_sql.snapshot.snapshot import Snapshot
from paimon_sql.store.file_store import FileStore
from paimon_sql.store.references import References, changelog_ids, changelog_path, referenced_files, snapshot_files
from paimon_sql.store.time_travel import snapshot_at, watermark_snapshot


def rollback_to_snapshot(table: FileStore, snapshot_id: int) -> Tuple[int, int]:
    """Roll back to snapshot ``snapshot_id``; returns (previous latest id, current id)."""
    sm = table.snapshot_manager
    if not sm.io.exists(sm.paths.snapshot_path(snapshot_id)):
        raise SnapshotNotFoundError(f"cannot roll back table {table.name}: snapshot {snapshot_id} does not exist")
    return _rollback(table, sm.snapshot(snapshot_id))


def rollback_to_tag(table: FileStore, tag: str) -> Tuple[int, int]:
    """Roll back to the snapshot tagged ``tag``. When that snapshot has expired, every snapshot
    is later than it: all are removed and the tag's snapshot is written back as the only one
    (Paimon does the same)."""
    if not table.tag_manager.exists(tag):
        raise SnapshotNotFoundError(f"cannot roll back table {table.name}: tag '{tag}' does not exist")
    return _rollback(table, table.tag_manager.get(tag).snapshot, tag)


def rollback_to_timestamp(table: FileStore, millis: int) -> Tuple[int, int]:
    """Roll back to the latest snapshot committed at or before ``millis``."""
    return _rollback(table, snapshot_at(table, millis))


def rollback_to_watermark(table: FileStore, watermark: int) -> Tuple[int, int]:
    """Roll back to the earliest snapshot whose watermark is at least ``watermark`` (Paimon's
    ``laterOrEqualWatermark``)."""
    return _rollback(table, watermark_snapshot(table, watermark))


def _rollback(table: FileStore, target: Snapshot, tag: Optional[str] = None) -> Tuple[int, int]:
    sm, io = table.snapshot_manager, table.io
    previous = sm.latest_id()
    if previous is None:
        raise PaimonError(f"cannot roll back table {table.name}: it has no snapshot")
    if table.env.rollback is not None:  # the catalog rolls back (a REST catalog's server)
        table.env.rollback(table.branch, target.id, tag)
        return previous, target.id
    doomed_ids = {i for i in sm.listed_ids() if i > target.id} | set(range(target.id + 1, previous + 1))
    doomed_tags = {t.name: t.snapshot for t in table.tag_manager.tags() if t.snapshot.id > target.id}
    doomed_changelogs = [c for c in changelog_ids(table) if c > target.id]

    kept = snapshot_files(table, target)  # the target must be whole, else nothing is touched
    kept |= referenced_files(table, {table.branch: (doomed_ids, set(doomed_tags))})
    later = References(table, missing_ok=True)
    doomed = set()
    for sid in sorted(doomed_ids):
        try:
            doomed |= later.whole(sm.snapshot(sid))
        except SnapshotNotFoundError:
            pass
    for snap in doomed_tags.values():
        doomed |= later.whole(snap)
    doomed -= kept

    if not io.exists(sm.paths.snapshot_path(target.id)):  # rolled back to an expired tag
        io.write_bytes(sm.paths.snapshot_path(target.id), target.to_json().encode("utf-8"))
        io.write_bytes(f"{sm.paths.snapshot_dir}/EARLIEST", str(target.id).encode())
    for sid in sorted(doomed_ids, reverse=True):
        io.delete(sm.paths.snapshot_path(sid))
    for name in doomed_tags:
        table.tag_manager.delete(name, ignore_if_missing=True)
    for cid in doomed_changelogs:
        io.delete(changelog_path(table, cid))
    for phase in _phases(table, doomed):
        for path in phase:
            io.delete(path)
    remove_empty_dirs(table, {posixpath.dirname(p) for p in doomed})
    io.write_bytes(f"{sm.paths.snapshot_dir}/LATEST", str(target.id).encode())
    return previous, target.id


def _phases(table: FileStore, doomed: Iterable[str]):
    """Doomed paths grouped so that no file is deleted before one it names: data, index and
    statistics files; manifests and index manifests; manifest lists."""
    manifest_dir = table.paths.manifest_dir + "/"
    metadata = {p for p in doomed if p.startswith(manifest_dir)}
    lists = {p for p in metadata if posixpath.basename(p).startswith("manifest-list-")}
    yield [p for p in doomed if p not in metadata]
    yield [p for p in metadata if p not in lists]
    yield list(lists)
