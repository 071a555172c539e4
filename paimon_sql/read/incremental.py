"""Incremental batch reads: what changed between two snapshots (Paimon's ``incremental-between``).

``incremental-between = 'start,end'`` (snapshot ids or tag names) or
``incremental-between-timestamp = 't1,t2'`` (epoch millis or timestamps; each resolved to the
latest snapshot at or before it) select the range (start, end]. ``incremental-between-scan-mode``
says what to return:

- ``delta``: the files APPEND commits in the range added;
- ``changelog``: the changelog files the commits in the range produced (``changelog-producer``);
- ``diff``: per bucket, the end snapshot's rows that differ from the start snapshot's (new keys,
  changed values); append tables: the rows of files added between them;
- ``auto`` (default): ``changelog`` for tables with a changelog producer, else ``delta``.

Both are read as Paimon 2.0's batch read reads them (streaming splits, no merge reader): each
file's rows as stored, not merged by key, retractions (-U, -D) included as plain rows;
``$audit_log`` over the same options shows their kinds. Two tags are diffed whatever the mode,
unless ``incremental-between-tag-to-snapshot`` reads the snapshots between them. ``delta`` and ``changelog`` read every snapshot of the range, so
one that is gone (expired, or in a hole a fast-forward left, docs/branches.md) fails the read with a
one-line error, as Java's does; ``diff`` reads only the two ends.
"""

from __future__ import annotations

from typing import Dict, List, Optional, Tuple

from paimon_sql.exceptions import InvalidOptionError, SnapshotNotFoundError
from paimon_sql.manifest import manifest_file
from paimon_sql.manifest.manifest_file import ADD, DataFileMeta
from paimon_sql.mergetree.interval_partition import sections
from paimon_sql.read import data_evolution
from paimon_sql.read.postpone import postpone_table, real_buckets
from paimon_sql.read.split import Split
from paimon_sql.store.changelog_lifecycle import snapshot_or_changelog
from paimon_sql.store.file_store import FileStore
from paimon_sql.store.references import changelog_path
from paimon_sql.store.time_travel import TRAVEL_KEYS, snapshot_at, timestamp_millis


MODES = ("auto", "delta", "changelog", "diff")


def between(table: FileStore) -> Optional[Tuple[int, int, str]]:
    """(start id, end id, mode) from the table's options, as Paimon's ``AbstractDataTableScan``
    resolves them; an empty range (start = end) when Paimon reads nothing; None when the options
    ask for no incremental read."""
    raw = table.options.raw
    by_ids, by_time = raw.get("incremental-between"), raw.get("incremental-between-timestamp")
    if not by_ids and not by_time:
        return None
    if by_ids and by_time:
        raise InvalidOptionError("give one of 'incremental-between' and 'incremental-between-timestamp'")
    key = "incremental-between" if by_ids else "incremental-between-timestamp"
    travel = [k for k in TRAVEL_KEYS if raw.get(k) not in (None, "")]
    if travel:  # Paimon's scan mode is then from-snapshot / from-timestamp, which refuses it
        raise InvalidOptionError(f"[{key}] must be null when you set [{','.join(travel)}]")
    parts = [p.strip() for p in str(by_ids or by_time).split(",")]
    if len(parts) != 2 or not all(parts):
        raise InvalidOptionError(f"option '{key}' must be 'start,end', got '{by_ids or by_time}'")
    mode = str(raw.get("incremental-between-scan-mode", "auto")).lower()
    if mode not in MODES:
        raise InvalidOptionError(f"incremental-between-scan-mode must be one of {', '.join(MODES)}, got '{mode}'")
    by_snapshot = "delta" if table.options.get("changelog-producer") == "none" else "changelog"
    if by_ids:
        tags = [table.tag_manager.get(p) if table.tag_manager.exists(p) else None for p in parts]
        if all(tags):
            if str(raw.get("incremental-between-tag-to-snapshot", "false")).lower() != "true":
                return tags[0].snapshot.id, tags[1].snapshot.id, "diff"  # a diff whatever the mode
            if mode == "diff":
                raise InvalidOptionError("Unsupported incremental scan mode DIFF")
            return tags[0].snapshot.id, tags[1].snapshot.id, by_snapshot if mode == "auto" else mode
        if not all(p.isdigit() for p in parts):
            raise InvalidOptionError(f"Didn't find two tags for start '{parts[0]}' and end '{parts[1]}', and they "
                                     f"are not two snapshot Ids. Please set two tags or two snapshot Ids.")
        start, end = int(parts[0]), int(parts[1])
        if end < start:
            raise InvalidOptionError(f"option '{key}': ending snapshot id {end} should be >= starting snapshot id "
                                     f"{start}")
        if table.snapshot_manager.earliest_id() is None:
            return 0, 0, "delta"
    else:
        start, end = _timestamp_range(table, *(timestamp_millis(p) for p in parts))
    return start, end, "diff" if mode == "diff" else by_snapshot if mode == "auto" else mode


def _timestamp_range(table: FileStore, start: int, end: int) -> Tuple[int, int]:
    """The snapshot ids of ``incremental-between-timestamp`` (start, end]: each end the latest
    snapshot at or before it; a start before the first snapshot takes the first in."""
    if end < start:
        raise InvalidOptionError(f"option 'incremental-between-timestamp': ending timestamp {end} should be >= "
                                 f"starting timestamp {start}")
    sm = table.snapshot_manager
    earliest, latest = sm.earliest_id(), sm.latest_id()
    if earliest is None or latest is None:
        return 0, 0
    first, last = sm.snapshot(earliest), sm.snapshot(latest)
    if start == end or start > last.time_millis or end < first.time_millis:
        return latest, latest
    start_id = earliest - 1 if first.time_millis > start else snapshot_at(table, start).id
    return start_id, snapshot_at(table, end).id if end < last.time_millis else latest


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
    if not streaming:  # Paimon's batch read of these splits: every file's rows as stored, unmerged
        return [_split(table, p, b, files, merge=False, raw=True) for (p, b), files in sorted(groups.items())]
    out = [_split(table, p, b, files, merge=mode == "delta") for (p, b), files in sorted(groups.items())]
    return out + [_split(table, e.partition, e.bucket, [e.file], merge=False) for e in postpone]


def readable_until(table: FileStore, start: int, end: int) -> int:
    """The last id in [start, end] up to which every snapshot after ``start`` still has its changes
    (its snapshot or long-lived changelog file): where a stream must stop before a missing one."""
    sid = start
    while sid < end and (table.io.exists(table.paths.snapshot_path(sid + 1))
                         or table.io.exists(changelog_path(table, sid + 1))):
        sid += 1
    return sid


def missing_snapshot(table: FileStore, sid: int) -> str:
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


def _split(table: FileStore, partition: bytes, bucket: int, files, merge: bool, before=(), raw: bool = False):
    """``raw``: rows read as stored, retractions too (:attr:`Split.keep_retractions`)."""
    if not table.schema.is_primary_key_table:
        return Split(partition, bucket, tuple(files), before=tuple(before))
    parts = sections(files, table.key_range) if merge else [(f,) for f in files]
    return Split(partition, bucket, tuple(files), tuple(parts), before=tuple(before), keep_retractions=raw)


def _live(table: FileStore, snapshot_id: int) -> Dict[Tuple[bytes, int], Dict[str, DataFileMeta]]:
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
