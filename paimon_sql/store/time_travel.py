"""Time travel: which snapshot a batch read sees, from the read's options.

The keys are Paimon's (``scan.snapshot-id``, ``scan.tag-name``, ``scan.version``,
``scan.timestamp-millis``, ``scan.timestamp``, ``scan.watermark``, ``scan.mode``); SQL's
``VERSION AS OF`` / ``TIMESTAMP AS OF`` and ``/*+ OPTIONS(...) */`` hints are turned into them.
Without any of them a read sees the latest snapshot.
"""

from __future__ import annotations

import datetime as dt
from typing import Optional

from paimon_sql.exceptions import InvalidOptionError, SnapshotNotFoundError
from paimon_sql.snapshot.snapshot import Snapshot
from paimon_sql.store.file_store import FileStore


TRAVEL_KEYS = ("scan.snapshot-id", "scan.tag-name", "scan.version", "scan.timestamp-millis", "scan.timestamp",
               "scan.watermark")


def travel_snapshot(table: FileStore) -> Optional[Snapshot]:
    """The snapshot the table's options point at; the latest when they point nowhere."""
    raw = _adapted_version(table, table.options.raw)
    given = [k for k in TRAVEL_KEYS if raw.get(k) not in (None, "")]
    if len(given) > 1:
        raise InvalidOptionError(f"time travel options conflict: {', '.join(given)} (give one)")
    sm = table.snapshot_manager
    mode = str(raw.get("scan.mode", "default")).lower()
    if not given:
        if mode in _MODE_NEEDS:
            raise InvalidOptionError(f"scan.mode '{mode}' needs option '{_MODE_NEEDS[mode]}'")
        return latest_compacted(table) if mode == "compacted-full" else sm.latest()
    key, value = given[0], str(raw[given[0]]).strip()
    if key == "scan.snapshot-id":
        return sm.snapshot(_number(key, value))
    if key == "scan.tag-name":
        return table.tag_manager.get(value).snapshot
    if key == "scan.watermark":
        return watermark_snapshot(table, _number(key, value))
    millis = _number(key, value) if key == "scan.timestamp-millis" else timestamp_millis(value)
    return snapshot_at(table, millis)


def _adapted_version(table: FileStore, raw: dict) -> dict:
    """``scan.version`` replaced by the option it means (Paimon's ``TimeTravelUtil.adaptScanVersion``):
    ``scan.tag-name`` for a tag, ``scan.snapshot-id`` for digits, ``scan.watermark`` for
    ``watermark-<millis>``. That option is overwritten, so ``VERSION AS OF 3`` wins over a session's
    ``scan.snapshot-id`` but conflicts with its ``scan.tag-name``, as in Paimon."""
    version = raw.get("scan.version")
    if version in (None, ""):
        return raw
    version = str(version).strip()
    out = {k: v for k, v in raw.items() if k != "scan.version"}
    if table.tag_manager.exists(version):
        out["scan.tag-name"] = version
    elif version.startswith("watermark-") and version[len("watermark-"):].isdigit():
        out["scan.watermark"] = version[len("watermark-"):]
    elif version.isdigit():
        out["scan.snapshot-id"] = version
    else:
        raise SnapshotNotFoundError(f"table {table.name} has no tag or snapshot '{version}'")
    return out


# batch scan modes that name their snapshot by another option
_MODE_NEEDS = {"from-snapshot": "scan.snapshot-id", "from-snapshot-full": "scan.snapshot-id",
               "from-timestamp": "scan.timestamp-millis"}


def snapshot_at(table: FileStore, millis: int) -> Snapshot:
    """``TIMESTAMP AS OF``: the latest snapshot committed at or before ``millis`` (commit times grow
    with ids, so a binary search reads O(log n) snapshot files)."""
    sm = table.snapshot_manager
    ids = sm.listed_ids()
    lo, hi, found = 0, len(ids) - 1, None
    while lo <= hi:
        mid = (lo + hi) // 2
        snap = sm.snapshot(ids[mid])
        if snap.time_millis <= millis:
            found, lo = snap, mid + 1
        else:
            hi = mid - 1
    if found is None:
        when = dt.datetime.fromtimestamp(millis / 1000).isoformat(sep=" ", timespec="milliseconds")
        raise SnapshotNotFoundError(f"table {table.name} has no snapshot at or before {when}")
    return found


def watermark_snapshot(table: FileStore, watermark: int) -> Snapshot:
    """The first snapshot whose watermark reached ``watermark``."""
    for snap in table.snapshot_manager.snapshots():
        if snap.watermark is not None and snap.watermark >= watermark:
            return snap
    raise SnapshotNotFoundError(f"table {table.name} has no snapshot with watermark >= {watermark}")


def latest_compacted(table: FileStore) -> Optional[Snapshot]:
    """``scan.mode = compacted-full``: the latest COMPACT snapshot (the latest if none compacted)."""
    sm = table.snapshot_manager
    latest = sm.latest_id()
    if latest is None:
        return None
    earliest = sm.earliest_id() or 1
    for sid in reversed(sm.listed_ids()):  # the ids on disk: a fast-forward can leave holes
        if earliest <= sid <= latest:
            snap = sm.snapshot(sid)
            if snap.commit_kind == "COMPACT":
                return snap
    return sm.snapshot(latest)


def timestamp_millis(text: str) -> int:
    """``'yyyy-MM-dd[ HH:mm:ss[.SSS]]'`` in the session's local time zone, or epoch millis."""
    text = text.strip()
    if text.lstrip("-").isdigit():
        return int(text)
    try:
        return round(dt.datetime.fromisoformat(text).timestamp() * 1000)
    except ValueError:
        raise InvalidOptionError(f"not a timestamp: '{text}' (expected 'yyyy-MM-dd HH:mm:ss[.SSS]')") from None


def _number(key: str, value: str) -> int:
    try:
        return int(value)
    except ValueError:
        raise InvalidOptionError(f"option '{key}' must be a number, got '{value}'") from None
