"""Client sessions' lifecycle: limits on sessions per user and per address, and the reclaiming of
sessions and operations their clients left idle, with HiveServer2's meaning.

- ``--max-sessions-per-user N`` / ``--max-sessions-per-ip N`` (HiveServer2's
  ``hive.server2.limit.connections.per.user`` / ``.per.ipaddress``; 0, the default: no limit):
  OpenSession beyond the limit is refused with HiveServer2's line, e.g. ``Connection limit per
  user reached (user: alice limit: 2)``. The user is the one the session acts for; the address
  is the client's IP, as the connection shows it.
- ``--idle-session-timeout`` (``hive.server2.idle.session.timeout``; default 6h, Kyuubi's): a
  session none of whose calls, nor its operations', came for that long is closed as CloseSession
  would (its statements cancelled, its temporary views and cached tables gone). A statement
  running synchronously inside a call keeps its session busy; a client that polls a long
  statement's status keeps it alive. A client that vanished without closing its connection (a
  killed host, an HTTP client: each request its own connection) is reclaimed this way; one whose
  connection closed is reclaimed at once (``connection_closed``).
- ``--idle-operation-timeout`` (``hive.server2.idle.operation.timeout``; default 3h, Kyuubi's):
  a finished, failed or cancelled operation not fetched, polled or closed for that long is closed,
  its rows let go. A running one is the query timeout's (``--query-timeout``).

Both accept seconds or a number with ``s``, ``m``, ``h`` or ``d``; 0 never times out. A thread
checks every tenth of the shorter timeout (between 0.5 s and 60 s), so an idle session goes
within the timeout and a tenth.

Example: ``paimon-sql-server --idle-session-timeout 1h --max-sessions-per-user 20``.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from dataclasses import dataclass
from typing import Callable, Iterable, Optional, Protocol

from paimon_sql.exceptions import OperationError


class ClientSession(Protocol):
    """What the limits and the idle check read of a session (``service.ClientSession`` is one)."""
    user: str
    address: str
    touched: float  # time.monotonic() of the client's last call on it or its operations
    busy: int  # its calls running now


log = logging.getLogger("paimon_sql.server")
_UNITS = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}


def duration(text: str) -> float:
    """Seconds of ``300``, ``300s``, ``5m``, ``6h`` or ``7d`` (0: never); ValueError names the text."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([smhd]?)\s*", text.lower())
    if m is None:
        raise ValueError(f"{text!r} is not a duration (seconds, or a number with s, m, h or d; 0: never)")
    return float(m.group(1)) * _UNITS[m.group(2)]


@dataclass
class Limits:
    """The lifecycle settings of a server (seconds; 0 or 0 sessions: none)."""
    idle_session_timeout: float = 6 * 3600.0
    idle_operation_timeout: float = 3 * 3600.0
    max_sessions_per_user: int = 0
    max_sessions_per_ip: int = 0

    def check_interval(self) -> Optional[float]:
        """How often the idle check runs; None when nothing times out."""
        timeouts = [t for t in (self.idle_session_timeout, self.idle_operation_timeout) if t > 0]
        return min(60.0, max(0.5, min(timeouts) / 10)) if timeouts else None


def host_of(address: str) -> str:
    """The IP of a connection's ``ip:port`` (``[v6]:port`` too); '' when unknown."""
    if address.startswith("["):
        return address[1:].partition("]")[0]
    return address.rpartition(":")[0] if address.count(":") == 1 else address


def check_open(limits: Limits, open_sessions: Iterable[ClientSession], user: str, address: str) -> None:
    """Refuse a new session of ``user`` from ``address`` beyond the limits, with HiveServer2's line."""
    if not (limits.max_sessions_per_user or limits.max_sessions_per_ip):
        return
    ip = host_of(address)
    sessions = list(open_sessions)
    mine = sum(1 for s in sessions if s.user == user)
    if limits.max_sessions_per_user and mine >= limits.max_sessions_per_user:
        raise OperationError(f"Connection limit per user reached (user: {user} limit: "
                             f"{limits.max_sessions_per_user})", "HY000")
    here = sum(1 for s in sessions if host_of(s.address) == ip)
    if limits.max_sessions_per_ip and ip and here >= limits.max_sessions_per_ip:
        raise OperationError(f"Connection limit per ipaddress reached (ipaddress: {ip} limit: "
                             f"{limits.max_sessions_per_ip})", "HY000")


def idle(limits: Limits, client: ClientSession, now: float) -> bool:
    """Whether a session has been left idle past the timeout (no call of its own or of its operations)."""
    timeout = limits.idle_session_timeout
    return timeout > 0 and client.busy == 0 and now - client.touched >= timeout


def idle_operation(limits: Limits, op, now: float) -> bool:
    """Whether an ended operation has been left unfetched and unclosed past the timeout."""
    timeout = limits.idle_operation_timeout
    return timeout > 0 and op.ended() and now - op.touched >= timeout


def start_checker(limits: Limits, reap: Callable[[float], None], stop: threading.Event) -> Optional[threading.Thread]:
    """The thread calling ``reap(now)`` every :meth:`Limits.check_interval` until ``stop``."""
    interval = limits.check_interval()
    if interval is None:
        return None

    def run():
        while not stop.wait(interval):
            try:
                reap(time.monotonic())
            except Exception:  # one failed close (Spark busy, say) must not end the checks
                log.exception("closing idle sessions and operations failed")
    thread = threading.Thread(target=run, name="paimon-sql-idle-check", daemon=True)
    thread.start()
    return thread
