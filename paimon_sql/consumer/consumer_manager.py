"""ConsumerManager: ``consumer/consumer-<id>`` files, each ``{"nextSnapshot": N}``.

A streaming reader with a ``consumer-id`` records the next snapshot it will read, so it resumes
there and snapshot expiration keeps what it has not read yet. A consumer that stopped reading
would keep every later snapshot forever: with ``consumer.expiration-time`` its file is deleted
once it was not written for that long (:meth:`ConsumerManager.expire`, run after commits).
"""

from __future__ import annotations

import json
from typing import Dict, Optional

from paimon_sql.io import FileIO
from paimon_sql.io.paths import PathFactory


class ConsumerManager:
    def __init__(self, io: FileIO, paths: PathFactory):
        self.io = io
        self.paths = paths

    def next_snapshot(self, consumer_id: str) -> Optional[int]:
        try:
            return int(json.loads(self.io.read_text(self.paths.consumer_path(consumer_id)))["nextSnapshot"])
        except (FileNotFoundError, OSError):
            return None

    def record(self, consumer_id: str, next_snapshot: int) -> None:
        self.io.write_bytes(self.paths.consumer_path(consumer_id),
                            json.dumps({"nextSnapshot": next_snapshot}).encode("utf-8"))

    def consumers(self) -> Dict[str, int]:
        out = {}
        for name in sorted(self.io.list_names(self.paths.consumer_dir)):
            if name.startswith("consumer-"):
                nxt = self.next_snapshot(name[len("consumer-"):])
                if nxt is not None:
                    out[name[len("consumer-"):]] = nxt
        return out

    def delete(self, consumer_id: str) -> None:
        self.io.delete(self.paths.consumer_path(consumer_id))

    def expire(self, older_than_millis: int) -> int:
        """Paimon's ConsumerManager.expire: delete the consumers whose file was last written before
        ``older_than_millis``; returns how many."""
        expired = 0
        for name in self.io.list_names(self.paths.consumer_dir):
            path = f"{self.paths.consumer_dir}/{name}"
            written = self.io.modification_millis(path) if name.startswith("consumer-") else None
            if written is not None and written < older_than_millis:
                self.io.delete(path)
                expired += 1
        return expired
