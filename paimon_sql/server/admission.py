"""Admission of statements to their driver-side part: at most N at once, the shortest expected first.

Why: a statement's analysis and scan planning run on the driver, in this process and in Spark's
JVM, on the same cores as Spark's tasks when the master is local. Spark caps its tasks at the
cores it was given; nothing capped the driver-side work, so under many clients a dozen statements
planning at once took the cores from the tasks of the statements already running, and every
statement's tail grew (a scan's p99 most). Holding the driver-side part to the number of cores
keeps the tasks fed and lets the statements that wait start as soon as a place is free.

Order: in arrival order, except that a statement expected to hold its place for ``x`` seconds
queues as if it had come ``AGING * x`` seconds later. What a statement is expected to hold is what
statements of its shape (its text with literals and spacing left out) held before, on average; a
shape not seen yet, what all statements held. So a point lookup passes the MERGEs that came just
before it — what the cores' sharing among all statements gave it without the cap — and a long
statement is delayed a bounded while, never starved.

Caveats: a place is held while the front layer runs the statement (``Session.execute``), which for
a write includes its Spark jobs; a statement gives its place back after ``hold`` seconds even if it
is still running, so a long INSERT … SELECT delays the others by ``hold`` at most. Fetching rows
never needs a place. The wait counts toward the statement's timeout, and a statement cancelled
while it waits leaves the queue without running.

Example: ``paimon-sql-server --max-planning-statements 4`` (default: this machine's cores; 0: no limit).
"""

from __future__ import annotations

import itertools
import os
import re
import threading
import time
from collections import OrderedDict
from contextlib import contextmanager
from typing import Callable, Dict, Iterator, Tuple

HOLD = 0.3  # seconds a statement keeps its place at most
AGING = 5.0  # a statement expected to hold its place x seconds queues as if it came AGING * x later
_SHAPES = 4096  # statement shapes whose cost is remembered (the least recently seen forgotten)
_WEIGHT = 0.3  # of a statement's hold in its shape's running average
_POLL = 0.25  # seconds between a waiting statement's looks at whether it was cancelled
_LITERALS = re.compile(r"'(?:[^'\\]|\\.|'')*'|\"(?:[^\"\\]|\\.|\"\")*\"|\b\d+(?:\.\d*)?(?:[eE][-+]?\d+)?\b|\s+")


def shape(text: str) -> str:
    """A statement's text with its literals made ``?`` and its spacing one blank (its first 4,000
    characters): statements of one shape cost about the same to plan."""
    return _LITERALS.sub(lambda m: " " if m.group(0).isspace() else "?", text.strip()[:4000])


class Admission:
    """``places`` statements in their driver-side part at once (0: no limit), the shortest expected
    first (module docstring); a place is given back when its statement's part ends or after
    ``hold`` seconds."""

    @classmethod
    def per_core(cls) -> "Admission":
        """As many places as this machine has cores (the server's default)."""
        return cls(os.cpu_count() or 1)

    def __init__(self, places: int, hold: float = HOLD):
        self.places = places
        self.hold = hold
        self._cond = threading.Condition()
        self._queue: Dict[int, Tuple[float, int]] = {}  # ticket -> its rank (lowest goes first)
        self._held: Dict[int, float] = {}  # ticket -> time.monotonic() its place is given back by
        self._tickets = itertools.count()
        self._costs: OrderedDict[int, float] = OrderedDict()  # shape's hash -> seconds it held a place, averaged
        self._typical = 0.0  # seconds any statement held a place, averaged

    @contextmanager
    def place(self, stopped: Callable[[], bool], text: str = "") -> Iterator[bool]:
        """Wait for a place for statement ``text`` (yields True) or until ``stopped()`` (yields
        False: do not run)."""
        if self.places <= 0:
            yield not stopped()
            return
        ticket, key = next(self._tickets), hash(shape(text))
        with self._cond:
            expected = self._costs.get(key, self._typical)
            self._queue[ticket] = (time.monotonic() + AGING * expected, ticket)
            try:
                admitted = self._wait(ticket, stopped)
            finally:
                del self._queue[ticket]
                self._cond.notify_all()  # another may head the queue now
            started = time.monotonic()
            if admitted:
                self._held[ticket] = started + self.hold
        try:
            yield admitted
        finally:
            with self._cond:
                if self._held.pop(ticket, None) is not None:
                    self._cond.notify_all()
                if admitted:
                    self._learn(key, min(time.monotonic() - started, self.hold))

    def _wait(self, ticket: int, stopped: Callable[[], bool]) -> bool:
        """Under the lock: until ``ticket`` heads the queue with a place free (True) or is stopped."""
        while True:
            if stopped():
                return False
            now = time.monotonic()
            for held, until in list(self._held.items()):
                if until <= now:  # held past its time: the place is free, its statement runs on
                    del self._held[held]
            if len(self._held) < self.places and min(self._queue.values())[1] == ticket:
                return True
            next_free = min(self._held.values(), default=now + _POLL)
            self._cond.wait(max(0.0, min(next_free - now, _POLL)))

    def _learn(self, key: int, seconds: float) -> None:
        """Under the lock: fold what a statement of shape ``key`` (its hash) held into the averages."""
        before = self._costs.pop(key, None)
        self._costs[key] = seconds if before is None else before + _WEIGHT * (seconds - before)
        if len(self._costs) > _SHAPES:
            self._costs.popitem(last=False)
        self._typical += _WEIGHT * (seconds - self._typical)

    def expected(self, text: str) -> float:
        """Seconds a statement ``text`` is expected to hold its place (what orders the queue)."""
        with self._cond:
            return self._costs.get(hash(shape(text)), self._typical)

    def status(self) -> str:
        """``2 planning (limit 2), 5 waiting``, for the server's status line."""
        with self._cond:
            now = time.monotonic()
            planning = sum(1 for until in self._held.values() if until > now)
            limit = self.places if self.places > 0 else "none"
            return f"{planning} planning (limit {limit}), {len(self._queue)} waiting"
