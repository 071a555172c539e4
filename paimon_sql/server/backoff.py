"""Back-off of failed sign-ins: a flood of wrong passwords for one user, or from one address, is
refused without checking, so it neither guesses on nor makes the server hash passwords or ask the
directory for it.

After ``FREE`` failed sign-ins in a row of a user (``FREE_ADDRESS`` from an address: many users may
share one, behind a BI server or a proxy, and any success from it clears it), each further attempt
within ``2 ** (failures - FREE)`` seconds of the last failure (at most ``MAX_SECONDS``) is refused
as a wrong password is, without a check; a sign-in that succeeds clears its user and address. A refusal
looks the same to the client as a wrong password (it tells nothing about the account); the
server's stderr says when a user or address starts backing off. What is remembered is bounded:
entries quiet for ``FORGET_SECONDS`` go, and at most ``MAX_ENTRIES`` are kept (the oldest go first).

Example: ``backoff.refused(user, ip)`` before a check, then ``failed(user, ip)`` or ``succeeded(user, ip)``.
"""

from __future__ import annotations

import sys
import threading
import time
from collections import OrderedDict
from typing import Callable, Tuple

FREE = 5
FREE_ADDRESS = 20
MAX_SECONDS = 60.0
FORGET_SECONDS = 900.0
MAX_ENTRIES = 10_000


class SignInBackoff:
    def __init__(self, clock: Callable[[], float] = time.monotonic):
        self._clock = clock
        self._failures: "OrderedDict[str, Tuple[int, float]]" = OrderedDict()  # key -> (failures, last)
        self._lock = threading.Lock()

    def refused(self, user: str, address: str) -> bool:
        """Whether a sign-in of ``user`` from ``address`` is refused without a check."""
        now = self._clock()
        with self._lock:
            return any(self._waiting(key, now) for key in _keys(user, address))

    def failed(self, user: str, address: str) -> None:
        now = self._clock()
        with self._lock:
            for key in _keys(user, address):
                count = self._failures.pop(key, (0, now))[0] + 1
                self._failures[key] = (count, now)
                if count == _free(key):
                    sys.stderr.write(f"paimon-sql-server: {count} failed sign-ins in a row of {key}: "
                                     f"backing off (up to {MAX_SECONDS:.0f} s between attempts)\n")
            while len(self._failures) > MAX_ENTRIES:
                self._failures.popitem(last=False)

    def succeeded(self, user: str, address: str) -> None:
        with self._lock:
            for key in _keys(user, address):
                self._failures.pop(key, None)

    def _waiting(self, key: str, now: float) -> bool:
        found = self._failures.get(key)
        if found is None:
            return False
        count, last = found
        if now - last >= FORGET_SECONDS:
            del self._failures[key]
            return False
        free = _free(key)
        return count >= free and now - last < min(MAX_SECONDS, 2.0 ** (count - free))


def _free(key: str) -> int:
    return FREE_ADDRESS if key.startswith("address ") else FREE


def _keys(user: str, address: str):
    keys = [f"user {user!r}"]
    if address:
        keys.append(f"address {address}")
    return keys
