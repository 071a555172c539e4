"""Decoded manifest files kept by name (Paimon's ``ObjectsCache``): a manifest, manifest list or
index manifest is never rewritten under its name, so its records stay valid as long as kept.

Each table keeps its own. The loader is passed at each :meth:`ObjectsCache.get`, so the cache
holds no reference back to its table: a table whose caches pointed at it (``lru_cache`` of its
own bound method) was a reference cycle, freed only by Python's full collections — with every
record it had read — which then paused a busy server's statements for 100-280 ms every few
seconds (issue 47).

    cache = ObjectsCache(4096)
    entries = cache.get(name, read)   # read(name) once; later calls get the same tuple
"""

from __future__ import annotations

from collections import OrderedDict
from threading import Lock
from typing import Callable, Hashable, TypeVar

V = TypeVar("V")


class ObjectsCache:
    """The last ``size`` values loaded, by key; thread-safe (a failed load keeps nothing)."""

    def __init__(self, size: int):
        self._size = size
        self._values: "OrderedDict[Hashable, object]" = OrderedDict()
        self._lock = Lock()

    def get(self, key: Hashable, load: Callable[[Hashable], V]) -> V:
        with self._lock:
            if key in self._values:
                self._values.move_to_end(key)
                return self._values[key]
        value = load(key)
        with self._lock:
            self._values[key] = value
            while len(self._values) > self._size:
                self._values.popitem(last=False)
        return value
