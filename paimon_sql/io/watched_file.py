"""WatchedFile: what a local file says, read again whenever it changes (its modification time or
size), for the files a server is run with and edited while it runs (its policy, its REST tokens).
A file that cannot be read or parsed raises the same one-line error on every use until it is fixed,
so a broken file never opens anything.
"""

from __future__ import annotations

import os
import threading
from typing import Callable, Generic, Optional, Tuple, Type, TypeVar

T = TypeVar("T")


class WatchedFile(Generic[T]):
    """``parse(text, source)`` of file ``path``; ``what`` names the file in errors, raised as ``error``
    (the class ``parse`` raises too)."""

    def __init__(self, path: str, parse: Callable[[str, str], T], what: str, error: Type[Exception]):
        self.path, self.parse, self.what, self.error = path, parse, what, error
        self._lock = threading.Lock()
        self._stamp: Optional[Tuple[int, int]] = None
        self._value: Optional[T] = None
        self._failure: Optional[Exception] = None

    def current(self) -> T:
        try:
            st = os.stat(self.path)
        except OSError as e:
            raise self.error(f"cannot read {self.what} {self.path}: {e.strerror}") from None
        stamp = (st.st_mtime_ns, st.st_size)
        with self._lock:
            if stamp != self._stamp:
                self._stamp = stamp
                try:
                    with open(self.path, encoding="utf-8") as f:
                        self._value, self._failure = self.parse(f.read(), f"{self.what} {self.path}"), None
                except OSError as e:
                    self._value, self._failure = None, self.error(f"cannot read {self.what} {self.path}: {e.strerror}")
                except self.error as e:
                    self._value, self._failure = None, e
            if self._failure is not None:
                raise self._failure
            return self._value
