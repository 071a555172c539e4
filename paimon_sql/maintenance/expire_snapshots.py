"""Snapshot expiry (Paimon's ExpireSnapshotsImpl + SnapshotDeletion).

:func:`expire_snapshots` removes the oldest snapshots of one branch within Paimon's bounds: keep at
least ``retain_min``, at most ``retain_max``; between those, expire a snapshot only when the one
after it is older than ``older_than`` (``snapshot.time-retained`` ago); never the snapshot a
consumer reads next or any after it; at most ``max_deletes`` per run. For the range
``[earliest, end)`` it deletes, in Paimon's order:

1. data files a delta of ``(earliest, end]`` deleted (the first kept snapshot no longer has them),
   unless the nearest earlier tag or another branch still reads them;
2. changelog files the expired snapshots added; when ``changelog.*`` retention is longer than the
   snapshots' (Paimon's decoupled changelog), each expired snapshot's changes are kept instead as
   ``changelog/changelog-N`` (:mod:`paimon_sql.store.changelog_lifecycle`), which later expire on
   their own bounds, and every file such a changelog names is kept until then;
3. manifests, manifest lists, index manifests, index files and statistics files of the expired
   snapshots that the first kept snapshot, a tag or another branch does not name;
4. the snapshot files, oldest first; then the ``EARLIEST`` hint.

Every deleted file is one no kept snapshot names, so a reader of a kept snapshot never misses a
file; and the snapshot files go last, so an interrupted run leaves the expired snapshots listed
and the next run deletes the rest (files already gone, or manifests it can no longer read, are
passed over, as Paimon's ``tryReadManifestList`` does). What a snapshot, tag or other branch
names comes from :mod:`paimon_sql.store.references`.
"""

from __future__ import annotations

import datetime as dt
import logging
from typing import Dict, Iterable, List, Optional, Set, Union

from paimon_sql.exceptions import CorruptMetadataError, PaimonError, SnapshotNotFoundError
from paimon_sql.io.paths import POSTPONE_BUCKET
from paimon_sql.manifest.manifest_file import ADD, DELETE
from paimon_sql.snapshot.snapshot import Snapshot
from paimon_sql.store import changelog_lifecycle
from paimon_sql.store.file_store import FileStore
from paimon_sql.store.references import References, branch_tables, changelog_ids, changelog_path


_MISSING = (FileNotFoundError, OSError, CorruptMetadataError)


def _long_lived_changelogs(table: FileStore) -> List[Snapshot]:
    """Java's decoupled ``changelog/changelog-<id>`` files (snapshot-shaped) of the branch."""
    out = []
    for cid in changelog_ids(table):
        try:
            out.append(Snapshot.read(table.io, changelog_path(table, cid)))
        except _MISSING:
            continue  # expired meanwhile
    return out


def _millis(older_than: Union[int, dt.datetime]) -> int:
    if isinstance(older_than, dt.datetime):
        return int(older_than.timestamp() * 1000)
    if isinstance(older_than, int) and not isinstance(older_than, bool):
        return older_than
    raise PaimonError(f"older_than must be a timestamp or epoch milliseconds, not {older_than!r}")


def expire_snapshots(table: FileStore, retain_max: Optional[int] = None, retain_min: Optional[int] = None,
                     older_than: Union[int, dt.datetime, None] = None, max_deletes: Optional[int] = None,
                     now_millis: Optional[int] = None) -> int:
    """Expire the oldest snapshots of ``table``'s branch; returns how many were expired.

    Arguments left None come from the table's options (``snapshot.num-retained.max``,
    ``snapshot.num-retained.min``, ``snapshot.time-retained`` before ``now_millis``,
    ``snapshot.expire.limit``), as paimon-spark's procedure fills them in. Cheap when nothing is
    due: the hints, the consumer files and one snapshot file are read, no manifest."""
    opts = table.options
    retain_max = opts.get("snapshot.num-retained.max") if retain_max is None else retain_max
    retain_min = opts.get("snapshot.num-retained.min") if retain_min is None else retain_min
    max_deletes = opts.get("snapshot.expire.limit") if max_deletes is None else max_deletes
    now = int(dt.datetime.now().timestamp() * 1000) if now_millis is None else now_millis
    time_retained = opts.get("snapshot.time-retained")
    cutoff = now - time_retained if older_than is None else _millis(older_than)
    if retain_min < 0:
        raise PaimonError(f"retain_min must not be negative, got {retain_min}")
    if retain_max < retain_min:
        raise PaimonError(f"retain_max ({retain_max}) must not be less than retain_min ({retain_min})")
    if max_deletes < 0:
        raise PaimonError(f"max_deletes must not be negative, got {max_deletes}")

    sm = table.snapshot_manager
    latest, earliest = sm.latest_id(), sm.earliest_id()
    if latest is None or earliest is None:
        return 0
    begin = max(latest - retain_max + 1, earliest)
    end = latest - retain_min + 1
    consumers = table.consumer_manager.consumers()
    if consumers:
        end = min(end, min(consumers.values()))
    end = min(end, earliest + max_deletes)
    for sid in range(begin, end):
        # a snapshot goes only when the next one has been alive longer than the retention
        try:
            if cutoff <= sm.snapshot(sid + 1).time_millis:
                end = sid
                break
        except SnapshotNotFoundError:
            continue
    # retain_min 0 may reach past the latest: as in Paimon, whose expiry then finds no end snapshot
    # and expires none (it keeps the latest either way)
    expired = _expire_until(table, earliest, end) if end <= latest else 0
    changelog_lifecycle.expire_changelogs(table, now, max_deletes)
    return expired


def expire_after_commit(table: FileStore) -> int:
    """What a writer runs after each successful commit (off with ``write-only``): consumers not
    written within ``consumer.expiration-time`` are deleted, then snapshots expire. The commit has
    happened: an expiry that fails is logged and left to the next commit, never reported as a failed
    write (which a caller might retry, writing its rows twice)."""
    if table.options.get("write-only"):
        return 0
    if table.schema.is_primary_key_table and table.options.bucket == POSTPONE_BUCKET:
        return 0  # as Paimon (no expire runnable for a postpone table): its compaction commits expire
    try:
        consumer_ttl = table.options.get("consumer.expiration-time")
        if consumer_ttl is not None:  # first, so that a consumer gone idle no longer holds snapshots (Paimon's order)
            table.consumer_manager.expire(int(dt.datetime.now().timestamp() * 1000) - consumer_ttl)
        return expire_snapshots(table)
    except (PaimonError, OSError) as e:
        logging.getLogger(__name__).warning("table %s: snapshot expiry after the commit failed, the next commit "
                                            "retries it: %s", table.name, e)
        return 0


def _write_earliest(table: FileStore, snapshot_id: int) -> None:
    table.io.write_bytes(f"{table.paths.snapshot_dir}/EARLIEST", str(snapshot_id).encode())


def _expire_until(table: FileStore, earliest: int, end: int) -> int:
    """Expire the snapshots ``[earliest, end)``; ``end`` is the first one kept."""
    sm = table.snapshot_manager
    if end <= earliest:
        if not table.io.exists(f"{table.paths.snapshot_dir}/EARLIEST"):
            _write_earliest(table, earliest)
        return 0
    snapshots = []
    for sid in range(earliest, end + 1):
        try:
            snapshots.append(sm.snapshot(sid))
        except SnapshotNotFoundError:
            continue
    if not snapshots or snapshots[-1].id != end:
        return 0  # the first snapshot to keep is gone (a concurrent rollback or expiry): do nothing
    expiring, kept = snapshots[:-1], snapshots[-1]
    files = References(table)
    others: Set[str] = set()
    for bt in branch_tables(table):
        if bt.branch != table.branch:
            others |= References(bt).branch()
    tags = table.tag_manager.tags()
    new_changelogs = [changelog_lifecycle.of_snapshot(s) for s in expiring] \
        if changelog_lifecycle.decoupled(table.options) else []
    changelogs = _long_lived_changelogs(table) + new_changelogs
    lived = set().union(*(changelog_lifecycle.kept_files(files, c) for c in changelogs))

    # 1-2: data files the range's deltas deleted, changelog files the expired snapshots added
    doomed: List[str] = []
    tag_files: Dict[int, Set[str]] = {}
    for snap in snapshots[1:]:
        previous_tag = max((t.snapshot for t in tags if t.snapshot.id < snap.id), key=lambda s: s.id, default=None)
        keep = others | lived
        if previous_tag is not None:
            if previous_tag.id not in tag_files:
                tag_files[previous_tag.id] = files.live_data(previous_tag)
            keep = keep | tag_files[previous_tag.id]
        doomed += [p for p in _deleted_in_delta(files, snap) if p not in keep]
    pinned = others.union(lived, *(files.changelog(t.snapshot) for t in tags))
    for snap in expiring:
        doomed += [p for p in _readable(lambda: files.changelog(snap)) if p not in pinned]

    # 3: metadata no kept snapshot, tag, long-lived changelog or other branch names
    skipping = files.metadata(kept) | others
    for pin in [t.snapshot for t in tags] + changelogs:
        skipping |= files.metadata(pin)
    metadata: List[str] = []
    for snap in expiring:
        named = _readable(lambda: files.metadata(snap)) | _list_names(files, snap)
        metadata += sorted(named - skipping)

    for path in doomed + metadata:
        table.io.delete(path)
    # 4: snapshot files last, oldest first, so an interrupted run is finished by the next one
    for snap, changelog in zip(expiring, new_changelogs or [None] * len(expiring)):
        if changelog is not None:  # its changes outlive it
            changelog_lifecycle.commit(table, changelog)
        table.io.delete(table.paths.snapshot_path(snap.id))
    _write_earliest(table, end)
    return len(expiring)


def _readable(read) -> Set[str]:
    """What ``read()`` finds, or nothing when an interrupted run already deleted the manifests."""
    try:
        return read()
    except _MISSING:
        return set()


def _list_names(files: References, snap: Snapshot) -> Set[str]:
    """The snapshot's own manifest lists and index manifest, even when they cannot be read."""
    names = (snap.base_manifest_list, snap.delta_manifest_list, snap.changelog_manifest_list, snap.index_manifest)
    return {files.table.paths.manifest_path(n) for n in names if n}


def _deleted_in_delta(files: References, snap: Snapshot) -> Iterable[str]:
    """Data files ``snap``'s delta deleted and did not add back (an upgrade re-adds the same file
    at another level, before or after deleting it); unreadable deltas (an interrupted run deleted them) give nothing."""
    try:
        entries = files.entries(snap.delta_manifest_list)
    except _MISSING:
        return []
    deleted = {e.file.file_name: e for e in entries if e.kind == DELETE}
    for e in entries:  # whatever order the writer put them in (Paimon: deletes first; ours: adds)
        if e.kind == ADD:
            deleted.pop(e.file.file_name, None)
    return [p for e in deleted.values() for p in files.data(e)]
