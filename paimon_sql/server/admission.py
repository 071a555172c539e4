"""Admission of statements to their driver-side part: at most N at once, first come first served.

Why: a statement's analysis and scan planning run on the driver, in this process and in Spark's
JVM, on the same cores as Spark's tasks when the master is local. Spark caps its tasks at the
cores it was given; nothing capped the driver-side work, so under many clients a dozen statements
planning at once took the cores from the tasks of the statements already running, and every
statement's tail grew (a scan's p99 most). Holding the driver-side part to the number of cores
keeps the tasks fed and lets the statements that wait start as soon as a place is free.

Caveats: a place is held while the front layer runs the statement (``Session.execute``), which for
a write includes its Spark jobs; a statement gives its place back after ``hold`` seconds even if it
is still running, so a long INSERT … SELECT delays the others by ``hold`` at most. Fetching rows
never needs a place. The wait counts toward the statement's timeout, and a statement cancelled
while it waits leaves the queue without running. Arrival order, not the shortest expected first:
measured, the shortest-first order put point lookups (whose driver-side read makes their part
longer than an aggregate's planning) behind the scans (docs/performance.md, Session 32).

Statements that plan nothing — ``USE db``, ``SET key = value``, ``RESET`` — need no place
(:func:`needs_place`): a client connecting under load (pyhive's ``USE``, a BI tool's ``SET`` statements)
does not wait behind the queries.

Example: ``paimon-sql-server --max-planning-statements 4`` (default: this machine's cores; 0: no limit).
"""

from __future__ import annotations

import itertools
import os
import re
import threading
import time
from collections import deque
from contextlib import contextmanager
from typing import Callable, Deque, Dict, Iterator

HOLD = 0.3  # seconds a statement keeps its place at most
_POLL = 0.25  # seconds between a waiting statement's looks at whether it was cancelled


# USE <name>, SET [<key> [= <value>]], RESET [<key>]: no query anywhere in them (no parenthesis)
_PLANS_NOTHING = re.compile(r"\s*(USE\s+[\w`.]+|SET(\s+[^()]*)?|RESET(\s+[^()]*)?)\s*;?\s*", re.IGNORECASE)


def needs_place(text: str) -> bool:
    """Whether the statement ``text`` waits for a place: all but USE, SET and RESET of a setting."""
    return _PLANS_NOTHING.fullmatch(text) is None


def cores() -> int:
    """This machine's cores: the places by default."""
    return os.cpu_count() or 1


class Admission:
    """``places`` statements in their driver-side part at once (0: no limit), in arrival order; a
    place is given back when its statement's part ends or after ``hold`` seconds."""

    @classmethod
    def per_core(cls) -> "Admission":
        """As many places as this machine has cores (the server's default)."""
        return cls(cores())

    def __init__(self, places: int, hold: float = HOLD):
        self.places = places
        self.hold = hold
        self._cond = threading.Condition()
        self._queue: Deque[int] = deque()  # tickets waiting, oldest first
        self._held: Dict[int, float] = {}  # ticket -> time.monotonic() its place is given back by
        self._tickets = itertools.count()

    @contextmanager
    def place(self, stopped: Callable[[], bool]) -> Iterator[bool]:
        """Wait for a place (yields True) or until ``stopped()`` (yields False: do not run)."""
        if self.places <= 0:
            yield not stopped()
            return
        ticket = next(self._tickets)
        with self._cond:
            self._queue.append(ticket)
            try:
                admitted = self._wait(ticket, stopped)
            finally:
                self._queue.remove(ticket)
                self._cond.notify_all()  # the next in line may head the queue now
            if admitted:
                self._held[ticket] = time.monotonic() + self.hold
        try:
            yield admitted
        finally:
            with self._cond:
                if self._held.pop(ticket, None) is not None:
                    self._cond.notify_all()

    def _wait(self, ticket: int, stopped: Callable[[], bool]) -> bool:
        """Under the lock: until ``ticket`` heads the queue with a place free (True) or is stopped."""
        while True:
            if stopped():
                return False
            now = time.monotonic()
            for held, until in list(self._held.items()):
                if until <= now:  # held past its time: the place is free, its statement runs on
                    del self._held[held]
            if len(self._held) < self.places and self._queue[0] == ticket:
                return True
            next_free = min(self._held.values(), default=now + _POLL)
            self._cond.wait(max(0.0, min(next_free - now, _POLL)))

    def status(self) -> str:
        """``2 planning (limit 2), 5 waiting``, for the server's status line."""
        with self._cond:
            now = time.monotonic()
            planning = sum(1 for until in self._held.values() if until > now)
            limit = self.places if self.places > 0 else "none"
            return f"{planning} planning (limit {limit}), {len(self._queue)} waiting"
