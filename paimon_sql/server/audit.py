"""The audit log (``--audit-log F``): one JSON object per line for every statement and metadata call a
client ran, for whoever must later answer "who read or changed what, from where, and when".

A line is written when its operation ends for good: the client closes it (so ``rows`` counts the rows
it fetched), its session closes (CloseSession, or the connection drops without one), the server stops,
or it failed before the client had a handle to close. Each operation gets exactly one line. The file
is rotated by size as :class:`logging.handlers.RotatingFileHandler` does (F, F.1 ... F.K), is readable
by the server's user only (0600), and every line is flushed as it is written. Statements are written
with their credentials masked by the rule SHOW and the system tables mask options with.
"""

from __future__ import annotations

import json
import logging
import logging.handlers
import os
import threading
import time
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Protocol

from TCLIService import ttypes

from paimon_sql.options.core_options import scrub

if TYPE_CHECKING:
    from paimon_sql.server.operations import Operation


class ClientSession(Protocol):
    """What a line tells of the session an operation ran in (``service.ClientSession`` is one)."""
    user: str
    address: str
    handle: ttypes.TSessionHandle

S = ttypes.TOperationState
DEFAULT_MAX_BYTES = 100 * 1024 * 1024
DEFAULT_BACKUPS = 10
_OUTCOMES = {S.FINISHED_STATE: "ok", S.ERROR_STATE: "error", S.CANCELED_STATE: "cancelled",
             S.TIMEDOUT_STATE: "timed out", S.CLOSED_STATE: "cancelled"}  # closed before it finished


class _PrivateRotatingFile(logging.handlers.RotatingFileHandler):
    """A RotatingFileHandler whose files are created (and kept) with mode 0600."""

    def _open(self):
        fd = os.open(self.baseFilename, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        os.fchmod(fd, 0o600)  # a file that existed with a wider mode
        return open(fd, "a", encoding="utf-8")


class AuditLog:
    """The audit log file ``path``: rotated past ``max_bytes`` keeping ``backups`` old files. Opening
    it fails (OSError) at once when the file cannot be written."""

    def __init__(self, path: str, max_bytes: int = DEFAULT_MAX_BYTES, backups: int = DEFAULT_BACKUPS):
        if max_bytes < 1:
            raise ValueError("--audit-log-max-bytes must be 1 or more")
        if backups < 1:
            raise ValueError("--audit-log-backups must be 1 or more")
        self._file = _PrivateRotatingFile(path, maxBytes=max_bytes, backupCount=backups, encoding="utf-8")
        self._lock = threading.Lock()

    def operation(self, client: ClientSession, op: Operation) -> None:
        """Write ``op``'s line (once: later calls for it do nothing). ``op`` should have ended."""
        with self._lock:
            if op.audited:
                return
            op.audited = True
        self.write(entry(client, op))

    def write(self, record: dict) -> None:
        self._file.handle(logging.makeLogRecord({"msg": json.dumps(record, ensure_ascii=False), "args": None}))

    def close(self) -> None:
        self._file.close()


def entry(client: ClientSession, op: Operation) -> dict:
    """The audit record of ``op``, an operation of ``client``; ``rows`` is None for a statement without
    a result set, or one that ended before it had one (a failure, a cancel)."""
    outcome = _OUTCOMES.get(op.ended_as, "cancelled")
    record = {
        "time": datetime.fromtimestamp(op.started / 1000, timezone.utc).isoformat(timespec="milliseconds")
        .replace("+00:00", "Z"),
        "user": client.user, "client": client.address,
        "session": client.handle.sessionId.guid.hex(), "operation": op.key.hex(),
        "kind": op.kind, "statement": scrub(op.text, op.text),
        "tables_read": list(op.tables_read), "tables_written": list(op.tables_written),
        "rows": op.rows_sent if op.schema is not None and (op.rows_sent or outcome == "ok") else None,
        "duration_ms": max((op.completed or int(time.time() * 1000)) - op.started, 0),
        "outcome": outcome,
    }
    if outcome != "ok":
        record["error"] = scrub(str(op.error), op.text) if op.error is not None else \
            "the statement was closed before it finished"
    return record

