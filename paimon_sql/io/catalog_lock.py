"""The catalog's commit lock, as the store's writers see it: ``lock(action)`` runs ``action``
holding it. Where the store cannot create a file only if it is absent (an object store without
conditional puts), a catalog's lock (JDBC, Hive) is held around creating each ``snapshot-N`` and
``schema-N``, as Paimon's ``Lock`` wraps the commit; elsewhere there is none (:func:`unlocked`).
The catalog hands its lock to a table through its environment (table/catalog_environment.py).
"""

from __future__ import annotations

from typing import Callable, TypeVar

T = TypeVar("T")


def unlocked(action: Callable[[], T]) -> T:
    """No lock: the store's own create-if-absent is atomic (local files, conditional puts)."""
    return action()
