"""Incremental batch reads: what changed between two snapshots (Paimon's ``incremental-between``).

``incremental-between = 'start,end'`` (snapshot ids or tag names) or
``incremental-between-timestamp = 't1,t2'`` (epoch millis or timestamps; each resolved to the
latest snapshot at or before it) select the range (start, end]. ``incremental-between-scan-mode``
says what to return:

- ``delta``: the files APPEND commits in the range added, merged by key for primary-key tables
  (a key inserted then deleted inside the range is gone);
- ``changelog``: the changelog files the commits in the range produced (``changelog-producer``);
- ``diff``: per bucket, the end snapshot's rows that differ from the start snapshot's (new keys,
  changed values); append tables: the rows of files added between them;
- ``auto`` (default): ``diff`` when both ends are tags, else ``changelog`` for tables with a
  changelog producer and ``delta`` for the others.

As in Paimon's batch incremental read, retractions (-U, -D) are not returned; ``$audit_log``
over the same options shows them. ``delta`` and ``changelog`` read every snapshot of the range, so
one that is gone (expired, or in a hole a fast-forward left, docs/branches.md) fails the read with a
one-line error, as Java's does; ``diff`` reads only the two ends.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Dict, List, Optional, Tuple

from paimon_sql.exceptions import InvalidOptionError, SnapshotNotFoundError
from paimon_sql.manifest import manifest_file
from paimon_sql.manifest.manifest_file import ADD, DataFileMeta
from paimon_sql.mergetree.interval_partition import sections
from paimon_sql.read import data_evolution
from paimon_sql.read.postpone import postpone_table, real_buckets
from paimon_sql.read.split import Split
from paimon_sql.snapshot.changelog_lifecycle import snapshot_or_changelog
from paimon_sql.snapshot.references import changelog_path
from paimon_sql.snapshot.time_travel import snapshot_at, timestamp_millis

if TYPE_CHECKING:
    from paimon_sql.table.table import FileStoreTable

MODES = ("auto", "delta", "changelog", "diff")


def between(table: FileStoreTable) -> Optional[Tuple[int, int, str]]:
    """(start id, end id, mode) from the table's options; None when they ask for no incremental read."""
    raw = table.options.raw
    by_ids, by_time = raw.get("incremental-between"), raw.get("incremental-between-timestamp")
    if not by_ids and not by_time:
        return None
    if by_ids and by_time:
        raise InvalidOptionError("give one of 'incremental-between' and 'incremental-between-timestamp'")
    key = "incremental-between" if by_ids else "incremental-between-timestamp"
    parts = [p.strip() for p in str(by_ids or by_time).split(",")]
    if len(parts) != 2 or not all(parts):
        raise InvalidOptionError(f"option '{key}' must be 'start,end', got '{by_ids or by_time}'")
    tags = False
    if by_ids:
        tags = all(not p.isdigit() for p in parts)
        start, end = (_snapshot_id(table, p) for p in parts)
    else:
        start, end = (snapshot_at(table, timestamp_millis(p)).id for p in parts)
    if start > end:
        raise InvalidOptionError(f"option '{key}': start {parts[0]} is after end {parts[1]}")
    mode = str(raw.get("incremental-between-scan-mode", "auto")).lower()
    if mode not in MODES:
        raise InvalidOptionError(f"incremental-between-scan-mode must be one of {', '.join(MODES)}, got '{mode}'")
    if mode == "auto":
        mode = "diff" if tags else "delta" if table.options.get("changelog-producer") == "none" else "changelog"
    return start, end, mode


def _snapshot_id(table: FileStoreTable, text: str) -> int:
    if text.isdigit():
        return int(text)
    return table.tag_manager.get(text).snapshot.id


def splits(scan, start: int, end: int, mode: str, streaming: bool = False) -> list:
    """The splits of an incremental read of ``scan``'s table over (start, end]. A postpone table's
    postpone-bucket files are not read by a batch read; a stream without a changelog producer reads
    them as they were committed, each file as it is (Paimon's stream scan: real buckets only when a
    changelog producer writes the changes at compaction)."""
    table = scan.table
    if mode == "diff":
        return _diff_splits(scan, start, end)
    entries = []
    for sid in range(start + 1, end + 1):
        try:
            snap = snapshot_or_changelog(table, sid)  # an expired snapshot's changes may outlive it
        except SnapshotNotFoundError:
            raise SnapshotNotFoundError(f"cannot read the changes of table {table.name} in ({start}, {end}]: "
                                        f"{missing_snapshot(table, sid)}") from None
        if mode == "changelog" and table.schema.is_primary_key_table:
            names = [m.file_name for m in table.manifest_list(snap.changelog_manifest_list)]
        elif snap.commit_kind == "APPEND":
            names = [m.file_name for m in table.manifest_list(snap.delta_manifest_list)]
        else:
            continue
        entries += [e for n in names for e in table.manifest_entries(n) if e.kind == ADD]
    data_evolution.check_incremental(table, [e.file for e in entries], start, end)
    postpone = [] if not (streaming and table.options.get("changelog-producer") == "none") else \
        [e for e in entries if e.bucket < 0 and postpone_table(table)]
    entries = real_buckets(table, entries)
    groups: Dict[Tuple[bytes, int], List[DataFileMeta]] = {}
    for e in entries:
        groups.setdefault((e.partition, e.bucket), []).append(e.file)
    out = [_split(table, p, b, files, merge=mode == "delta") for (p, b), files in sorted(groups.items())]
    return out + [_split(table, e.partition, e.bucket, [e.file], merge=False) for e in postpone]


def readable_until(table: FileStoreTable, start: int, end: int) -> int:
    """The last id in [start, end] up to which every snapshot after ``start`` still has its changes
    (its snapshot or long-lived changelog file): where a stream must stop before a missing one."""
    sid = start
    while sid < end and (table.io.exists(table.paths.snapshot_path(sid + 1))
                         or table.io.exists(changelog_path(table, sid + 1))):
        sid += 1
    return sid


def missing_snapshot(table: FileStoreTable, sid: int) -> str:
    """Why snapshot ``sid`` cannot be read, in words for a one-line error."""
    sm = table.snapshot_manager
    latest, earliest = sm.latest_id(), sm.earliest_id()
    if latest is None or sid > latest:
        why = f"the latest is {latest}"
    elif earliest is None or sid < earliest:
        why = f"expired: the earliest is {earliest}"
    else:
        later = next((i for i in sm.listed_ids() if i > sid), latest)
        why = f"a hole before snapshot {later}, as a fast-forward after a rollback leaves"
    return f"snapshot {sid} does not exist ({why})"


def _split(table: FileStoreTable, partition: bytes, bucket: int, files, merge: bool, before=()):
    if not table.schema.is_primary_key_table:
        return Split(partition, bucket, tuple(files), before=tuple(before))
    parts = sections(files, table.key_range) if merge else [(f,) for f in files]
    return Split(partition, bucket, tuple(files), tuple(parts), before=tuple(before))


def _live(table: FileStoreTable, snapshot_id: int) -> Dict[Tuple[bytes, int], Dict[str, DataFileMeta]]:
    snap = table.snapshot_manager.snapshot(snapshot_id)
    metas = table.manifest_list(snap.base_manifest_list) + table.manifest_list(snap.delta_manifest_list)
    out: Dict[Tuple[bytes, int], Dict[str, DataFileMeta]] = {}
    for e in real_buckets(table, manifest_file.merge_entries([e for m in metas
                                                               for e in table.manifest_entries(m.file_name)])):
        out.setdefault((e.partition, e.bucket), {})[e.file.file_name] = e.file
    return out


def _diff_splits(scan, start: int, end: int) -> list:
    """Buckets whose files changed between the two snapshots; primary-key splits carry the start
    snapshot's files as ``before`` so the reader can drop rows that did not change."""
    table = scan.table
    old, new = _live(table, start), _live(table, end)
    out = []
    for key in sorted(new):
        files, before = new[key], old.get(key, {})
        if set(files) == set(before):
            continue
        if table.schema.is_primary_key_table:
            out.append(_split(table, *key, list(files.values()), True, list(before.values())))
        else:
            out.append(_split(table, *key, [f for n, f in files.items() if n not in before], False))
    return out
