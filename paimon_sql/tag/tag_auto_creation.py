"""Tags kept by the table itself: Paimon's TagDeletion, TagAutoCreation, TagBatchCreation and
TagTimeExpire, run after each commit (:func:`tags_after_commit`) as Paimon's writers do.

- :func:`delete_tag` removes a tag and, when its snapshot has expired, the files only it named.
- ``tag.automatic-creation`` = ``process-time`` / ``watermark``: after a commit, each new snapshot
  whose time (commit time in ``sink.process-time-zone``, or watermark in
  ``sink.watermark-time-zone``) minus ``tag.creation-delay`` has passed the end of the period
  after the last automatic tag is tagged with the period before its own (``tag.creation-period``,
  or ``tag.creation-period-duration``), named as Java formats it (``2024-05-01``,
  ``2024-05-01 10``, ``202405011030``); ``tag.num-retained-max`` keeps that many automatic tags.
- ``batch``: after a commit the latest snapshot is tagged ``batch-write-<yyyy-MM-dd>`` (or
  ``tag.batch.customized-name``), replacing a tag of that name; ``tag.num-retained-max`` bounds all tags.
- ``tag.time-expire-enabled``: tags whose ``tagTimeRetained`` has passed since their creation are
  deleted (:func:`expire_tags`, also ``CALL sys.expire_tags``).

New tags get ``tag.default-time-retained``. The state (next snapshot, next tag time) is restored
from the latest automatic tag on every run, so runs need no memory between commits.
"""

from __future__ import annotations

import datetime as dt
import logging
import posixpath
from dataclasses import dataclass
from typing import Callable, List, Optional
from zoneinfo import ZoneInfo

from paimon_sql.exceptions import PaimonError, SnapshotNotFoundError, TagError
from paimon_sql.maintenance.remove_orphan_files import remove_empty_dirs
from paimon_sql.maintenance.rollback import _phases
from paimon_sql.snapshot.snapshot import Snapshot
from paimon_sql.store.file_store import FileStore
from paimon_sql.store.references import References, referenced_files


MODES = ("none", "process-time", "watermark", "batch")
_LONG_MIN = -(1 << 63)
_EPOCH = dt.datetime(1970, 1, 1)
_log = logging.getLogger(__name__)


# -- deleting a tag ------------------------------------------------------------------------------

def delete_tag(table: FileStore, name: str) -> bool:
    """Delete tag ``name`` (False when there is none, as Paimon passes it over). When its snapshot
    has expired, the files no snapshot, tag, changelog or branch left still names go too: the tag
    file first (an interruption leaves orphans, never a tag missing files), then data and index
    files, manifests, manifest lists."""
    tm, sm = table.tag_manager, table.snapshot_manager
    if not tm.exists(name):
        return False
    snap = tm.get(name).snapshot
    if sm.io.exists(sm.paths.snapshot_path(snap.id)):  # the snapshot keeps every file
        tm.delete(name, ignore_if_missing=True)
        return True
    doomed = References(table, missing_ok=True).whole(snap)
    doomed -= referenced_files(table, {table.branch: (set(), {name})})
    tm.delete(name, ignore_if_missing=True)
    for phase in _phases(table, doomed):
        for path in phase:
            table.io.delete(path)
    remove_empty_dirs(table, {posixpath.dirname(p) for p in doomed})
    return True


# -- periods and tag names (TagPeriodHandler) ----------------------------------------------------

@dataclass(frozen=True)
class Period:
    length: dt.timedelta
    pattern: str  # strftime of the tag name
    daily: bool = False  # a daily name is parsed from its first word (Java's DailyTagPeriodHandler)

    def name(self, t: dt.datetime) -> str:
        return t.strftime(self.pattern)

    def time(self, name: str) -> Optional[dt.datetime]:
        """The period start a tag name stands for; None when it is not an automatic tag's name
        (parsed strictly: the name must be exactly what the pattern formats)."""
        text = name.split(" ")[0] if self.daily else name
        try:
            t = dt.datetime.strptime(text, self.pattern)
        except ValueError:
            return None
        return t if t.strftime(self.pattern) == text else None

    def previous_start(self, t: dt.datetime) -> dt.datetime:
        """The start of the period before the one ``t`` is in (periods counted from the epoch in
        local time, as Java's ``normalizeToPreviousTag``)."""
        return _EPOCH + ((t - _EPOCH) // self.length) * self.length - self.length


# tag.period-formatter values as Java spells them (TagPeriodFormatter: underscores, any case)
_DAY_PATTERNS = {"with_dashes": "%Y-%m-%d", "without_dashes": "%Y%m%d", "without_dashes_and_spaces": "%Y%m%d"}
_HOUR_PATTERNS = {"with_dashes": "%Y-%m-%d %H", "without_dashes": "%Y%m%d %H", "without_dashes_and_spaces": "%Y%m%d%H"}


def period(options) -> Period:
    duration = options.get("tag.creation-period-duration")
    if duration is not None:
        return _checked(Period(dt.timedelta(milliseconds=duration), "%Y%m%d%H%M"), options)
    kind, formatter = (str(options.get(k)).lower() for k in ("tag.creation-period", "tag.period-formatter"))
    if formatter not in _DAY_PATTERNS:
        raise TagError(f"tag.period-formatter must be one of {', '.join(_DAY_PATTERNS)}, got '{formatter}'")
    if kind == "daily":
        p = Period(dt.timedelta(days=1), _DAY_PATTERNS[formatter], daily=True)
    elif kind == "hourly":
        p = Period(dt.timedelta(hours=1), _HOUR_PATTERNS[formatter])
    elif kind == "two-hours":
        p = Period(dt.timedelta(hours=2), "%Y-%m-%d %H")
    else:
        raise TagError(f"tag.creation-period must be one of daily, hourly, two-hours, got '{kind}'")
    return _checked(p, options)


def _checked(p: Period, options) -> Period:
    if p.length <= dt.timedelta(0):
        raise TagError("tag.creation-period-duration must be positive")
    if dt.timedelta(milliseconds=options.get("tag.creation-delay")) >= p.length:
        raise TagError(f"tag.creation-delay must be shorter than the tag period ({p.length})")
    return p


def to_auto_tag(table: FileStore, end_tag: str) -> dict:
    """``incremental-to-auto-tag = end_tag`` as the options of the read it means (Paimon's
    ``IncrementalDiffStartingScanner.toEndAutoTag``): the diff from the latest automatic tag
    before ``end_tag`` to it, or an empty read when the tag or an earlier one is missing."""
    p = period(table.options)
    end = p.time(end_tag)
    if end is None:
        raise TagError(f"Specified tag '{end_tag}' is not an auto-created tag.")
    latest = table.snapshot_manager.latest_id() or 0
    tm = table.tag_manager
    earlier = [(t, tag.name) for tag in tm.tags() for t in [p.time(tag.name)] if t is not None and t < end]
    if not tm.exists(end_tag) or not earlier:
        return {"incremental-between": f"{latest},{latest}"}
    return {"incremental-between": f"{max(earlier)[1]},{end_tag}", "incremental-between-tag-to-snapshot": "false"}


# -- automatic creation --------------------------------------------------------------------------

def _mode(options) -> str:
    mode = str(options.get("tag.automatic-creation")).lower()
    if mode not in MODES:
        raise TagError(f"tag.automatic-creation must be one of {', '.join(MODES)}, got '{mode}'")
    return mode


def _zone(name: Optional[str]):
    try:
        return ZoneInfo(name) if name else None
    except (ValueError, KeyError):
        raise TagError(f"unknown time zone '{name}'") from None


def _local(millis: int, zone) -> dt.datetime:
    """Epoch millis as a wall-clock time in ``zone`` (None: this machine's), like Java's LocalDateTime."""
    t = dt.datetime.fromtimestamp(millis / 1000, zone)
    return t.replace(tzinfo=None) if zone is not None else t


def _extractor(table: FileStore, mode: str) -> Callable[[Snapshot], Optional[dt.datetime]]:
    """The time a snapshot is tagged by (TagTimeExtractor); None: not tagged (no watermark)."""
    if mode == "process-time":
        zone = _zone(table.options.get("sink.process-time-zone"))
        return lambda s: _local(s.time_millis, zone)
    zone = _zone(table.options.get("sink.watermark-time-zone"))
    return lambda s: None if s.watermark in (None, _LONG_MIN) else _local(s.watermark, zone)


def create_period_tags(table: FileStore) -> List[str]:
    """TagAutoCreation.run: tag every snapshot since the last automatic tag that closes a period;
    returns the names created."""
    opts = table.options
    extract, p = _extractor(table, _mode(opts)), period(opts)
    delay = dt.timedelta(milliseconds=opts.get("tag.creation-delay"))
    retained = opts.get("tag.default-time-retained")
    retained = None if retained is None else dt.timedelta(milliseconds=retained)
    tm, sm = table.tag_manager, table.snapshot_manager
    autos = sorted(((p.time(n), n) for n in tm.names() if p.time(n) is not None), reverse=True)
    if autos:
        next_tag = autos[0][0] + p.length
        next_id = tm.get(autos[0][1]).snapshot.id + 1
    else:
        next_tag, next_id = None, sm.earliest_id() or 1
    created = []
    latest = sm.latest_id()
    while latest is not None and next_id <= latest:
        try:
            snap = sm.snapshot(next_id)
        except SnapshotNotFoundError:  # expired meanwhile
            next_id = max(next_id + 1, sm.earliest_id() or next_id + 1)
            continue
        next_id += 1
        t = extract(snap)
        if t is None or (next_tag is not None and t - delay < next_tag + p.length):
            continue
        this_tag = next_tag if opts.get("tag.automatic-completion") and next_tag is not None \
            else p.previous_start(t)
        name = p.name(this_tag)
        if not tm.exists(name):
            tm.create(name, snap, retained)
            created.append(name)
        next_tag = this_tag + p.length
        _retain_auto_tags(table, p)
    return created


def _retain_auto_tags(table: FileStore, p: Period) -> None:
    """``tag.num-retained-max`` automatic tags (counted by snapshot) are kept; the oldest go."""
    most = table.options.get("tag.num-retained-max")
    if most is None:
        return
    by_snapshot = {}
    for tag in table.tag_manager.tags():
        if p.time(tag.name) is not None:
            by_snapshot.setdefault(tag.snapshot.id, []).append(tag.name)
    for sid in sorted(by_snapshot)[:max(0, len(by_snapshot) - most)]:
        if len(by_snapshot[sid]) != 1:
            raise TagError(f"more than one automatic tag on snapshot {sid}: {', '.join(by_snapshot[sid])}")
        delete_tag(table, by_snapshot[sid][0])


def create_batch_tag(table: FileStore) -> Optional[str]:
    """TagBatchCreation: tag the latest snapshot (replacing a tag of the same name), then keep at
    most ``tag.num-retained-max`` tags, the oldest snapshots' first."""
    opts = table.options
    snap = table.snapshot_manager.latest()
    if snap is None:
        return None
    day = _local(snap.time_millis, _zone(opts.get("sink.process-time-zone")))
    name = opts.get("tag.batch.customized-name") or "batch-write-" + day.strftime("%Y-%m-%d")
    retained = opts.get("tag.default-time-retained")
    delete_tag(table, name)
    table.tag_manager.create(name, snap, None if retained is None else dt.timedelta(milliseconds=retained))
    most = opts.get("tag.num-retained-max")
    if most is not None:
        tags = sorted(table.tag_manager.tags(), key=lambda t: (t.snapshot.id, t.create_time or dt.datetime.min))
        for tag in tags[:max(0, len(tags) - most)]:
            delete_tag(table, tag.name)
    return name


# -- expiry --------------------------------------------------------------------------------------

def expire_tags(table: FileStore, older_than: Optional[dt.datetime] = None) -> List[str]:
    """TagTimeExpire: delete the tags whose ``tagTimeRetained`` has passed since ``tagCreateTime``
    and, with ``older_than`` (local time), those created before it (a tag without a creation time:
    its file's modification time); returns their names."""
    now = dt.datetime.now()
    expired = []
    for tag in table.tag_manager.tags():
        created, retained = tag.create_time, tag.time_retained
        if created is None or retained is None:
            if older_than is None:
                continue
            millis = table.io.modification_millis(table.paths.tag_path(tag.name))
            if millis is None:
                continue
            created = created or _local(millis, None)
        if (retained is not None and now > created + retained) or (older_than is not None and older_than > created):
            delete_tag(table, tag.name)
            expired.append(tag.name)
    return expired


def run_tag_maintenance(table: FileStore) -> None:
    """TagAutoManager.run: period tags (process-time / watermark), then time expiry."""
    if _mode(table.options) in ("process-time", "watermark"):
        create_period_tags(table)
    if table.options.get("tag.time-expire-enabled"):
        expire_tags(table)


def tags_after_commit(table: FileStore) -> None:
    """What a writer runs after each successful commit, before partition and snapshot expiry (as
    Paimon's TableCommitImpl): tag maintenance unless ``write-only``; a batch tag in ``batch``
    mode (as paimon-spark after a write). The commit has happened: a failure is logged and left
    to the next commit, never reported as a failed write."""
    try:
        if not table.options.get("write-only"):
            run_tag_maintenance(table)
        if _mode(table.options) == "batch":
            create_batch_tag(table)
    except (PaimonError, OSError) as e:
        _log.warning("table %s: tag maintenance after the commit failed, the next commit retries it: %s",
                     table.name, e)
