"""An operation's log, as HiveServer2 keeps one: the lines a client reads with FetchResults
(``fetchType=1``) or GetLog while its statement runs, which beeline prints as ``INFO  : ...``.

Lines are added by the statement's thread (its start, its end) and, for its Spark stages, polled from
Spark's status tracker whenever a client reads the log: nothing runs in the background. The stages'
last counts and the end line are written when the log is first read after the statement ended, not
when it ends: most clients (pyhive, BI tools) never read it, and that poll of Spark's status (a scan
of its retained jobs for the statement's group, then a call per job and stage) was ~18 % of a busy
server's samples. A read gives the lines added since the previous read, or all of them from the first.
"""

import threading
from typing import Callable, Dict, Iterable, List, Optional, Tuple

# (stage id, tasks, completed tasks, running tasks) of a statement's Spark stages
Stages = Callable[[], Iterable[Tuple[int, int, int, int]]]


class OperationLog:
    def __init__(self):
        self._lines: List[str] = []
        self._read = 0  # lines already given by FETCH_NEXT
        self._stages: Dict[int, Tuple[int, int, int]] = {}  # the counts last written, by stage id
        self._ended = False  # the last line is written: a poll racing with it adds nothing after it
        self._end: Optional[Tuple[Stages, str]] = None  # the end, written at the next read (finish)
        self._lock = threading.Lock()

    def add(self, message: str, level: str = "INFO", last: bool = False) -> None:
        """Add a line (``last``: the statement's end, after which nothing is added)."""
        with self._lock:
            if not self._ended:
                self._lines.append(f"{level:<5} : {message}")
                self._ended = last

    def finish(self, stages: Stages, message: str, level: str = "INFO") -> None:
        """The statement ended: ``stages``' last counts, then ``message`` as the last line, are
        written when the log is next read."""
        with self._lock:
            if not self._ended and self._end is None:
                self._end = (stages, f"{level:<5} : {message}")

    def _write_end(self) -> None:
        with self._lock:
            end, self._end = self._end, None
        if end is not None:
            self.poll(end[0])
            with self._lock:
                if not self._ended:
                    self._lines.append(end[1])
                    self._ended = True

    def poll(self, stages: Stages) -> None:
        """Add a line for each stage whose task counts changed since the last poll."""
        for stage_id, total, done, running in stages():
            with self._lock:
                if self._ended or self._stages.get(stage_id) == (total, done, running):
                    continue
                self._stages[stage_id] = (total, done, running)
                self._lines.append(f"INFO  : Stage-{stage_id}: {done}/{total} tasks ({running} running)")

    def read(self, first: bool) -> List[str]:
        """The lines since the previous read (all of them when ``first``); they count as read."""
        self._write_end()
        with self._lock:
            out = self._lines[0 if first else self._read:]
            self._read = len(self._lines)
            return out

    def text(self) -> str:
        """The whole log (GetLog), leaving what FetchResults reads next as it is."""
        self._write_end()
        with self._lock:
            return "\n".join(self._lines)
