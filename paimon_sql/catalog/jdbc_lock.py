"""JdbcCatalogLock: a table's commit lock as a row of ``paimon_distributed_locks``, as Paimon's
``JdbcCatalogLock``, so Java writers and we exclude each other.

The lock id is ``<catalog-key>.<database>.<table>``. Acquiring inserts the row (the primary key
lets one holder in); releasing deletes it. A row older than the ``expire_time_seconds`` its
holder wrote (the holder's ``lock-acquire-timeout``) belongs to a holder that died: it is deleted
before each try. A waiter retries with a doubling sleep (100 ms on, at most ``lock-check-max-sleep``)
until ``lock-acquire-timeout`` has passed.
"""

from __future__ import annotations

import time
from typing import Callable, TypeVar

from paimon_sql.catalog.jdbc_client import JdbcClient
from paimon_sql.exceptions import JdbcKeyConflict, PaimonError

T = TypeVar("T")

TABLE = "paimon_distributed_locks"
CREATE_TABLE = (f"CREATE TABLE {TABLE}(lock_id VARCHAR(%d) NOT NULL,"
                "acquired_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP NOT NULL,"
                "expire_time_seconds BIGINT DEFAULT 0 NOT NULL,PRIMARY KEY (lock_id))")
# how each database tells that a row outlived its expire_time_seconds (Java's *DistributedLockDialect)
_EXPIRED = {
    "sqlite": "strftime('%s', 'now') - strftime('%s', acquired_at) > expire_time_seconds",
    "mysql": "TIMESTAMPDIFF(SECOND, acquired_at, NOW()) > expire_time_seconds",
    "mariadb": "TIMESTAMPDIFF(SECOND, acquired_at, NOW()) > expire_time_seconds",
    "postgresql": "EXTRACT(EPOCH FROM AGE(NOW(), acquired_at)) > expire_time_seconds",
}


class JdbcCatalogLock:
    def __init__(self, client: JdbcClient, catalog_key: str, check_max_sleep_ms: int, acquire_timeout_ms: int,
                 key_max_length: int = 255):
        self.client = client
        self.catalog_key = catalog_key
        self.check_max_sleep_ms = check_max_sleep_ms
        self.acquire_timeout_ms = acquire_timeout_ms
        client.create_table_if_absent(CREATE_TABLE % key_max_length)

    def lock_id(self, database: str, table: str) -> str:
        return f"{self.catalog_key}.{database}.{table}"

    def run_with_lock(self, database: str, table: str, action: Callable[[], T]) -> T:
        lock_id = self.lock_id(database, table)
        self.acquire(lock_id)
        try:
            return action()
        finally:
            self.release(lock_id)

    def try_acquire(self, lock_id: str) -> bool:
        """One try: clear an expired row of ``lock_id``, then insert ours. While a live holder's
        row is there, a waiter only reads: on SQLite a write would wait for every reader, and
        Java 1.0's catalog keeps a read open as long as it lives (a result set it never closes)."""
        expired = _EXPIRED[self.client.protocol]
        held = self.client.query(f"SELECT {expired} FROM {TABLE} WHERE lock_id = ?", lock_id)
        if held and not held[0][0]:
            return False
        if held:
            self.client.execute(f"DELETE FROM {TABLE} WHERE {expired} AND lock_id = ?", lock_id)
        try:
            self.client.execute(f"INSERT INTO {TABLE} (lock_id, expire_time_seconds) VALUES (?, ?)",
                                lock_id, self.acquire_timeout_ms // 1000)
            return True
        except JdbcKeyConflict:
            return False

    def acquire(self, lock_id: str) -> None:
        start, sleep_ms = time.monotonic(), 50
        while not self.try_acquire(lock_id):
            waited_ms = (time.monotonic() - start) * 1000
            if waited_ms > self.acquire_timeout_ms:
                raise PaimonError(f"could not acquire the catalog lock '{lock_id}' within {waited_ms / 1000:.1f} s "
                                  f"(lock-acquire-timeout): another writer holds it")
            sleep_ms = min(sleep_ms * 2, self.check_max_sleep_ms)
            time.sleep(sleep_ms / 1000)

    def release(self, lock_id: str) -> None:
        self.client.execute(f"DELETE FROM {TABLE} WHERE lock_id = ?", lock_id)
