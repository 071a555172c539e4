"""Changelog that outlives its snapshots (Paimon's decoupled, "long-lived" changelog).

A streaming reader (or a consumer) may need the changes of snapshots that snapshot expiry would
remove. When ``changelog.num-retained.min/max`` or ``changelog.time-retained`` keep more than
their ``snapshot.*`` twins (which they default to), expiring snapshot N writes
``changelog/changelog-N`` first, the snapshot JSON reduced to what reading its changes needs (as
Java's ``Changelog``):

- a snapshot with a changelog manifest list (a ``changelog-producer``) keeps that list, its
  manifests and changelog files;
- an APPEND snapshot without one (producer ``none``: its changes are its delta) keeps its delta
  manifest list, manifests and the data files the delta added;
- any other snapshot keeps nothing (an empty entry, so the ids stay consecutive).

:func:`expire_changelogs` later removes the oldest of them within the changelog bounds (and never
what a consumer still reads), deleting only files that no kept snapshot, tag, other branch or
remaining changelog names. ``changelog/EARLIEST`` and ``LATEST`` are hints, as Paimon's.
"""

from __future__ import annotations

import json
from typing import Optional, Set

from paimon_sql.exceptions import SnapshotNotFoundError
from paimon_sql.manifest.manifest_file import ADD
from paimon_sql.snapshot.snapshot import Snapshot
from paimon_sql.store.file_store import FileStore
from paimon_sql.store.references import CHANGELOG_DIR, References, branch_tables, changelog_ids, changelog_path


_MISSING = (FileNotFoundError, OSError)


def retention(options):
    """(retain_max, retain_min, time_retained ms) of changelog: its own options, else the snapshot's."""
    def own(key, snapshot_key):
        value = options.get(key)
        return options.get(snapshot_key) if value is None else value
    return (own("changelog.num-retained.max", "snapshot.num-retained.max"),
            own("changelog.num-retained.min", "snapshot.num-retained.min"),
            own("changelog.time-retained", "snapshot.time-retained"))


def decoupled(options) -> bool:
    """Whether changelog is kept longer than snapshots (Paimon's ``isChangelogDecoupled``)."""
    retain_max, retain_min, time_retained = retention(options)
    return (retain_max > options.get("snapshot.num-retained.max") or retain_min > options.get("snapshot.num-retained.min")
            or time_retained > options.get("snapshot.time-retained"))


def of_snapshot(snap: Snapshot) -> Snapshot:
    """The long-lived changelog of ``snap``: the snapshot naming only its changes."""
    has_changelog = snap.changelog_manifest_list is not None
    delta = snap.delta_manifest_list if not has_changelog and snap.commit_kind == "APPEND" else None
    return Snapshot(id=snap.id, schema_id=snap.schema_id, base_manifest_list=None, delta_manifest_list=delta,
                    commit_user=snap.commit_user, commit_identifier=snap.commit_identifier,
                    commit_kind=snap.commit_kind, time_millis=snap.time_millis,
                    total_record_count=snap.total_record_count,
                    delta_record_count=snap.delta_record_count if delta else 0,
                    changelog_record_count=snap.changelog_record_count if has_changelog else 0,
                    changelog_manifest_list=snap.changelog_manifest_list,
                    delta_manifest_list_size=snap.delta_manifest_list_size if delta else None,
                    changelog_manifest_list_size=snap.changelog_manifest_list_size,
                    watermark=snap.watermark, properties=snap.properties, next_row_id=snap.next_row_id,
                    uuid=snap.uuid, operation=snap.operation, version=snap.version)


def kept_files(files: References, changelog: Snapshot) -> Set[str]:
    """Every file a long-lived changelog names: its lists, their manifests, and the changelog or
    data files they add."""
    added = {p for name in (changelog.changelog_manifest_list, changelog.delta_manifest_list)
             for e in files.entries(name) if e.kind == ADD for p in files.data(e)}
    return files.metadata(changelog) | added


def commit(table: FileStore, changelog: Snapshot) -> None:
    """Write ``changelog/changelog-N`` (JSON with explicit nulls, as Java writes) and the LATEST hint."""
    doc = changelog.to_dict()
    doc.setdefault("baseManifestList", None)
    doc.setdefault("deltaManifestList", None)
    table.io.write_bytes(changelog_path(table, changelog.id), json.dumps(doc, indent=2).encode())
    _hint(table, "LATEST", changelog.id)


def read(table: FileStore, cid: int) -> Optional[Snapshot]:
    try:
        return Snapshot.read(table.io, changelog_path(table, cid))
    except _MISSING:
        return None


def snapshot_or_changelog(table: FileStore, sid: int) -> Snapshot:
    """Snapshot ``sid``, or its long-lived changelog once the snapshot has expired (what an
    incremental or streaming read of the changes needs)."""
    try:
        return table.snapshot_manager.snapshot(sid)
    except SnapshotNotFoundError:
        changelog = read(table, sid)
        if changelog is None:
            raise
        return changelog


def _hint(table: FileStore, name: str, cid: int) -> None:
    table.io.write_bytes(f"{table.paths.branch_root}/{CHANGELOG_DIR}/{name}", str(cid).encode())


def expire_changelogs(table: FileStore, now_millis: int, max_deletes: int) -> int:
    """Remove the oldest long-lived changelogs past the changelog bounds, as Paimon's
    ExpireChangelogImpl, deleting the files only they name. Returns how many were removed."""
    ids = changelog_ids(table)
    sm = table.snapshot_manager
    latest, earliest = sm.latest_id(), sm.earliest_id()
    if not ids or latest is None or earliest is None:
        return 0
    retain_max, retain_min, time_retained = retention(table.options)
    end = min(latest - retain_min + 1, ids[0] + max_deletes, ids[-1])
    consumers = table.consumer_manager.consumers()
    if consumers:
        end = min(end, min(consumers.values()))
    cutoff = now_millis - time_retained
    changelogs = {cid: c for cid, c in ((cid, read(table, cid)) for cid in ids) if c is not None}
    for cid in range(max(latest - retain_max + 1, ids[0]), end + 1):
        if cid in changelogs and cutoff <= changelogs[cid].time_millis:
            end = cid
            break
    expiring = [c for cid, c in changelogs.items() if cid < end]
    if not expiring:
        return 0
    files = References(table)
    keep = files.whole(sm.snapshot(earliest))  # a file a later snapshot names, the earliest names too
    keep = keep.union(*(files.whole(t.snapshot) for t in table.tag_manager.tags()),
                      *(References(bt).branch() for bt in branch_tables(table) if bt.branch != table.branch),
                      *(kept_files(files, c) for cid, c in changelogs.items() if cid >= end))
    resumed = References(table, missing_ok=True)  # an interrupted run may have deleted some already
    doomed = set().union(*(kept_files(resumed, c) for c in expiring)) - keep
    for path in sorted(doomed):
        table.io.delete(path)
    for changelog in expiring:  # the changelog files last, so an interrupted run is finished by the next
        table.io.delete(changelog_path(table, changelog.id))
    _hint(table, "EARLIEST", end)
    return len(expiring)
