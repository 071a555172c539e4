"""DataFileCache: data files kept decoded in memory, for the driver's small reads.

A point lookup read on the driver (:mod:`paimon_sql.spark.driver_read`) decodes its buckets' files
whole — pyarrow skips no Parquet pages — to keep a handful of rows: ~15 ms of CPU for a 1M-row table,
paid again by every lookup a BI tool sends, while the server's cores are wanted by everyone else
(docs/performance.md, issue 47). Data files never change under their name, so the decoded columns
of a file read once are its columns for as long as it exists: kept here, least recently used out
first, a lookup filters them instead.

Caveats:

- Only the driver's reads use it; executors' tasks read each file once.
- A hit still asks the store for the file's length (a local ``stat``, an object store's HEAD): a file
  gone or cut since is reported as on any read, never answered from memory.
- Rows deleted by a deletion vector are dropped after the cached decode, as vectors change.
- Bounded by decoded bytes (:data:`CAPACITY`, process-wide); a file larger than a quarter of it is
  not kept.

Example::

    cache = DataFileCache(64 << 20)
    rows = cache.read(io, path, "parquet", ["_KEY_id", "id", "b"], None, file_size=8192, row_count=100)
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import TYPE_CHECKING, List, Optional

import numpy as np
import pyarrow as pa

from paimon_sql.format.file_format import check_size, read_file, without_rows

if TYPE_CHECKING:
    from paimon_sql.io.file_io import FileIO

CAPACITY = 256 << 20  # decoded bytes the driver's cache keeps (the default instance's)


class DataFileCache:
    """Decoded data files by (path, length, columns), least recently used dropped past ``capacity``
    bytes. Safe to share between threads."""

    def __init__(self, capacity: int):
        self.capacity = capacity
        self._entries: OrderedDict = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    def read(self, io: FileIO, path: str, fmt: str, columns: List[str], deleted: Optional[np.ndarray],
             file_size: Optional[int], row_count: Optional[int]) -> pa.Table:
        """:func:`~paimon_sql.format.file_format.read_file`'s answer, decoded once."""
        key = (path, file_size, tuple(columns))
        with self._lock:
            rows = self._entries.get(key)
            if rows is not None:
                self._entries.move_to_end(key)
        if rows is not None:
            check_size(path, io.file_size(path), file_size)
        else:
            rows = read_file(io, path, fmt, columns, None, file_size=file_size, row_count=row_count)
            self._keep(key, rows)
        return without_rows(rows, deleted)

    def _keep(self, key: tuple, rows: pa.Table) -> None:
        size = rows.nbytes
        if size > self.capacity // 4:
            return
        with self._lock:
            if key in self._entries:
                return
            self._entries[key] = rows
            self._bytes += size
            while self._bytes > self.capacity:
                _, old = self._entries.popitem(last=False)
                self._bytes -= old.nbytes

    def __len__(self) -> int:
        return len(self._entries)


DRIVER_FILES = DataFileCache(CAPACITY)  # the process's: every session's driver reads share it
