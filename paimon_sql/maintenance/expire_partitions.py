"""Partition expiry (Paimon's NormalPartitionExpire with its two strategies).

A partition expires once its time is older than ``partition.expiration-time`` before now:

- ``values-time`` (default): the time is read from the partition's values
  (:class:`PartitionTimeExtractor`: ``partition.timestamp-pattern`` joins them, e.g.
  ``'$dt $hour:00:00'``, by default the first value alone; ``partition.timestamp-formatter``
  parses the result, by default ``yyyy-MM-dd[ HH:mm:ss[.f]]``). Values are the text Java prints
  for the stored value (Paimon's ``toString`` of its internal form: a DATE column is its day
  number, so it never parses, as in Paimon). A partition whose time cannot be read (a NULL, a
  value the formatter does not match) is left alone.
- ``update-time``: the time is the creation time of the partition's newest live file.

Expired partitions are sorted by their values (joined with ``,``), at most
``partition.expiration-max-num`` are taken, and they are dropped as ALTER TABLE DROP PARTITION
does, one OVERWRITE snapshot per ``partition.expiration-batch-size`` partitions (all in one
without it).

After a commit (:func:`expire_partitions_after_commit`) the check runs at most once per
``partition.expiration-check-interval`` for a table in this process. Paimon keeps the last check
time in its long-lived writer; our writers live one statement, so the time is kept per process
and table directory (and branch): the first commit of a process checks, later ones only once the
interval has passed since the last check. ``CALL sys.expire_partitions`` always checks.
"""

from __future__ import annotations

import datetime as dt
import logging
import re
import threading
import time
from typing import Dict, List, Optional, Sequence, Tuple

from paimon_sql.commit.table_commit import CommitStore
from paimon_sql.data import binary_row
from paimon_sql.data.partition_names import value_text
from paimon_sql.exceptions import PaimonError


STRATEGIES = ("values-time", "update-time")
_LOG = logging.getLogger(__name__)

# -- reading a time from partition values --------------------------------------------------------

# DateTimeFormatter letters we read, by the field they fill (y/u: year-of-era/year, same in the CE)
_LETTERS = {"y": "year", "u": "year", "M": "month", "d": "day", "H": "hour", "m": "minute", "s": "second",
            "S": "fraction"}
_TIME_CHAIN = ("hour", "minute", "second", "fraction")
# Paimon's default: yyyy-MM-dd, optionally HH:mm:ss with a fraction, each number 1..n digits, lenient
_DEFAULT = re.compile(r"(?P<year>\d{1,10})-(?P<month>\d{1,2})-(?P<day>\d{1,2})"
                      r"(?: (?P<hour>\d{1,2}):(?P<minute>\d{1,2}):(?P<second>\d{1,2})(?:\.(?P<fraction>\d{1,9}))?)?")


def _letter_regex(formatter: str, letter: str, count: int) -> str:
    """The digits one run of a pattern letter matches, as DateTimeFormatter.ofPattern reads them."""
    if letter == "S":
        if count > 9:
            raise PaimonError(f"partition.timestamp-formatter '{formatter}': at most 9 'S' letters")
        return rf"\d{{{count}}}"
    if letter in "yu":  # yyyy: exactly 4 digits (more need a '+' in Java's strict parsing)
        return rf"\d{{{count}}}" if count == 2 or count >= 4 else rf"\d{{{count},19}}"
    if count > 2:
        hint = " (month names are not supported)" if letter == "M" else ""
        raise PaimonError(f"partition.timestamp-formatter '{formatter}': too many '{letter}' letters{hint}")
    return r"\d{2}" if count == 2 else r"\d{1,19}"


def compile_formatter(formatter: str) -> re.Pattern:
    """A Java DateTimeFormatter pattern (the subset Paimon's docs use: ``y u M d H m s S``,
    quoted ``'text'`` and other characters as literals) as a regex with one group per field;
    anything else is refused in one line."""
    parts, seen, i = [], set(), 0
    while i < len(formatter):
        c = formatter[i]
        if c == "'":
            literal, i = [], i + 1
            while True:
                if i >= len(formatter):
                    raise PaimonError(f"partition.timestamp-formatter '{formatter}': unclosed quote")
                if formatter[i] == "'" and formatter[i + 1:i + 2] == "'":
                    literal.append("'")
                    i += 2
                elif formatter[i] == "'":
                    i += 1
                    break
                else:
                    literal.append(formatter[i])
                    i += 1
            parts.append(re.escape("".join(literal) or "'"))
        elif c.isascii() and c.isalpha():
            count = len(formatter) - i - len(formatter[i:].lstrip(c))
            field = _LETTERS.get(c)
            if field is None:
                raise PaimonError(f"partition.timestamp-formatter '{formatter}': pattern letter '{c}' is not "
                                  f"supported (supported: {' '.join(_LETTERS)} and quoted literals)")
            if field in seen:
                raise PaimonError(f"partition.timestamp-formatter '{formatter}': the {field} is given twice")
            seen.add(field)
            suffix = "_2" if c in "yu" and count == 2 else ""  # two-digit year: 2000-2099, as Java
            parts.append(f"(?P<{field}{suffix}>{_letter_regex(formatter, c, count)})")
            i += count
        elif c in "[]{}#":
            raise PaimonError(f"partition.timestamp-formatter '{formatter}': '{c}' (optional sections, "
                              "reserved characters) is not supported")
        else:
            parts.append(re.escape(c))
            i += 1
    if not {"year", "month", "day"} <= seen:
        raise PaimonError(f"partition.timestamp-formatter '{formatter}' has no year, month and day "
                          "(y, M, d): no partition time can be read with it")
    return re.compile("".join(parts))


class PartitionTimeExtractor:
    """Paimon's PartitionTimeExtractor: partition values → a local date-time, or None when the
    values do not make one (Paimon logs those and leaves the partition alone)."""

    def __init__(self, pattern: Optional[str], formatter: Optional[str]):
        self.pattern = pattern
        self.formatter = None if formatter is None else compile_formatter(formatter)

    def extract(self, keys: Sequence[str], values: Sequence[Optional[str]]) -> Optional[dt.datetime]:
        if any(v is None for v in values):
            return None
        text = values[0] if self.pattern is None else self._replace(keys, values)
        if self.formatter is None:
            m = _DEFAULT.fullmatch(text)
            return None if m is None else _lenient(m)
        m = self.formatter.fullmatch(text)
        return None if m is None else _smart(m)

    def _replace(self, keys: Sequence[str], values: Sequence[str]) -> str:
        """``$key`` → its value, the longest key first (``$dt`` never matches inside ``$dt1``)."""
        by_length = sorted(range(len(keys)), key=lambda i: -len(keys[i]))
        out, i, p = [], 0, self.pattern
        while i < len(p):
            if p[i] == "$":
                hit = next((k for k in by_length if p.startswith(keys[k], i + 1)), None)
                if hit is not None:
                    out.append(values[hit])
                    i += 1 + len(keys[hit])
                    continue
            out.append(p[i])
            i += 1
        return "".join(out)


def _micros(fraction: Optional[str]) -> int:
    return int((fraction or "0").ljust(9, "0")[:6])


def _lenient(m: re.Match) -> Optional[dt.datetime]:
    """Java's LENIENT resolution: months, days and times past their range roll over."""
    g = {k: int(v) for k, v in m.groupdict().items() if v is not None and k != "fraction"}
    try:
        years, month = divmod(g["month"] - 1, 12)
        return dt.datetime(g["year"] + years, month + 1, 1) + dt.timedelta(
            days=g["day"] - 1, hours=g.get("hour", 0), minutes=g.get("minute", 0), seconds=g.get("second", 0),
            microseconds=_micros(m.group("fraction")))
    except (ValueError, OverflowError):
        return None


def _smart(m: re.Match) -> Optional[dt.datetime]:
    """DateTimeFormatter.ofPattern's SMART resolution: fields in range, a day past the month's end
    (up to 31) becomes its last day; the time only when it is a chain from the hour on (else
    midnight, as Paimon's fallback to a date)."""
    g = m.groupdict()
    year = 2000 + int(g["year_2"]) if g.get("year_2") is not None else int(g["year"])
    month, day = int(g["month"]), int(g["day"])
    present = [f for f in _TIME_CHAIN if g.get(f) is not None]
    chain = present if present == list(_TIME_CHAIN[:len(present)]) else []
    h, mi, s = (int(g[f]) if f in chain else 0 for f in _TIME_CHAIN[:3])
    micros = _micros(g["fraction"] if chain[3:] else None)
    end_of_day = h == 24 and mi == s == micros == 0  # 24:00:00 is the next midnight
    if not (1 <= month <= 12 and 1 <= day <= 31 and (h < 24 or end_of_day) and mi < 60 and s < 60):
        return None
    try:
        last = (dt.date(year + month // 12, month % 12 + 1, 1) - dt.timedelta(days=1)).day
        return dt.datetime(year, month, min(day, last), h % 24, mi, s, micros) + dt.timedelta(days=end_of_day)
    except (ValueError, OverflowError):
        return None


# -- choosing and dropping partitions -----------------------------------------------------------

def _java_texts(table: CommitStore, values: Sequence) -> List[Optional[str]]:
    """Each value as Java's ``toString`` of its internal form (Paimon's legacy partition name; a
    BINARY as text, its Java form being an identity hash); None for NULL."""
    types = [f.type for f in table.schema.fields_of(table.schema.partition_keys)]
    return [None if v is None else value_text(v, t, t.name not in ("BINARY", "VARBINARY")) or str(v)
            for v, t in zip(values, types)]


def _live_partitions(table: CommitStore) -> Dict[bytes, Tuple[list, int]]:
    """Partition bytes → (values, newest file creation millis) over the latest snapshot's live files."""
    types = [f.type for f in table.schema.fields_of(table.schema.partition_keys)]
    out: Dict[bytes, Tuple[list, int]] = {}
    for e in table.new_scan().plan_entries():
        created = int(e.file.creation_time.timestamp() * 1000) if e.file.creation_time is not None else 0
        values, newest = out.get(e.partition) or (binary_row.from_bytes(e.partition, types), 0)
        out[e.partition] = (values, max(newest, created))
    return out


def check_options(table: CommitStore) -> Tuple[int, str, Optional[PartitionTimeExtractor]]:
    """(expiration millis, strategy, extractor) from the table's options; a table that cannot be
    expired fails here in one line."""
    opts = table.options
    expiration = opts.get("partition.expiration-time")
    if expiration is None or not table.schema.partition_keys:
        raise PaimonError(f"table {table.name}: partitions expire only in a partitioned table with "
                          "'partition.expiration-time' set (or expiration_time given)")
    strategy = (opts.get("partition.expiration-strategy") or "").strip().lower()
    if strategy not in STRATEGIES:
        raise PaimonError(f"partition.expiration-strategy must be values-time or update-time, got '{strategy}'")
    for key in ("partition.expiration-max-num", "partition.expiration-batch-size"):
        if opts.get(key) is not None and opts.get(key) < 1:
            raise PaimonError(f"{key} must be at least 1, got {opts.get(key)}")
    extractor = None
    if strategy == "values-time":
        extractor = PartitionTimeExtractor(opts.get("partition.timestamp-pattern"),
                                           opts.get("partition.timestamp-formatter"))
    return expiration, strategy, extractor


def expire_partitions(table: CommitStore, now: Optional[dt.datetime] = None) -> List[str]:
    """Drop the table's expired partitions now (whatever the check interval); returns them as
    Paimon's procedure prints them, ``k1=v1, k2=v2``, in the order they were chosen."""
    expiration, strategy, extractor = check_options(table)
    now = dt.datetime.now() if now is None else now
    cutoff = now - dt.timedelta(milliseconds=expiration)
    keys = table.schema.partition_keys
    default = table.options.partition_default_name
    expired, unreadable = [], []
    for values, newest in _live_partitions(table).values():
        texts = _java_texts(table, values)
        if strategy == "update-time":
            old = newest < cutoff.timestamp() * 1000
        else:
            when = extractor.extract(keys, texts)
            old = when is not None and when < cutoff
            if when is None:
                unreadable.append(texts)
        if old:
            expired.append(([default if t is None else t for t in texts], values))
    if unreadable:
        _LOG.warning("table %s: no time could be read from %d partition(s) (e.g. %s), they are not expired; "
                     "check partition.timestamp-pattern/-formatter, drop them by hand or use 'update-time'",
                     table.name, len(unreadable), dict(zip(keys, unreadable[0])))
    expired.sort(key=lambda item: ",".join(item[0]))
    expired = expired[:table.options.get("partition.expiration-max-num")]
    batch = table.options.get("partition.expiration-batch-size") or max(len(expired), 1)
    # the drop commits run no maintenance of their own, as Paimon's FileStoreCommit
    commit = table.copy({"write-only": "true"}).new_commit()
    for start in range(0, len(expired), batch):
        commit.drop_partitions([dict(zip(keys, values)) for _, values in expired[start:start + batch]])
    return [", ".join(f"{k}={t}" for k, t in zip(keys, texts)) for texts, _ in expired]


_LAST_CHECK: Dict[Tuple[str, str], float] = {}
_LOCK = threading.Lock()


def expire_partitions_after_commit(table: CommitStore) -> None:
    """What a writer runs after each commit (off with ``write-only``): expire partitions when
    ``partition.expiration-time`` is set and the check interval has passed for this table in this
    process. The commit has happened: an expiry that fails is logged, never raised."""
    opts = table.options
    if opts.get("write-only") or opts.get("partition.expiration-time") is None or not table.schema.partition_keys:
        return
    interval = opts.get("partition.expiration-check-interval") / 1000
    key, now = (table.path, table.branch), time.monotonic()
    with _LOCK:
        last = _LAST_CHECK.get(key)
        if interval and last is not None and now <= last + interval:
            return
        _LAST_CHECK[key] = now
    try:
        expire_partitions(table)
    except (PaimonError, OSError) as e:
        _LOG.warning("table %s: partition expiry after the commit failed, a later commit retries it: %s",
                     table.name, e)
