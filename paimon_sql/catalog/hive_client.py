"""Talking to a Hive metastore over its Thrift API: a small pool of clients, the metastore's
address from the catalog options or ``hive-site.xml``, and the commit lock through the metastore's
lock API (Paimon's ``CachedClientPool``, ``HiveCatalog.createHiveConf`` and ``HiveCatalogLock``).

The Thrift client is ``pymetastore``'s generated one (the metastore's IDL; newer fields are
optional, so a Hive 2.3 metastore reads its calls). Its errors become our one-line errors here.
"""

from __future__ import annotations

import getpass
import os
import queue
import socket
import threading
import time
import xml.etree.ElementTree as ET
from typing import Callable, List, TypeVar
from urllib.parse import urlparse

from paimon_sql.exceptions import InvalidOptionError, MetastoreExists, MetastoreMissing, PaimonError

try:
    from pymetastore.hive_metastore import ThriftHiveMetastore, ttypes
    from thrift.protocol.TBinaryProtocol import TBinaryProtocol
    from thrift.Thrift import TException
    from thrift.transport import TSocket, TTransport
except ImportError:  # pragma: no cover - depends on the install
    raise InvalidOptionError("catalog option 'metastore' = 'hive' needs the Hive metastore client: "
                             "pip install 'paimon-sql[hive]'") from None

T = TypeVar("T")
HIVE_SITE = "hive-site.xml"
METASTORE_URIS = "hive.metastore.uris"
SOCKET_TIMEOUT_MS = 600_000  # Hive's hive.metastore.client.socket.timeout


def metastore_uris(options: dict) -> List[str]:
    """``uri`` (``thrift://host:port``, comma-separated for several), else ``hive.metastore.uris``
    of ``<hive-conf-dir>/hive-site.xml`` (``hive-conf-dir`` or the HIVE_CONF_DIR environment variable),
    as Paimon finds the metastore."""
    text = options.get("uri")
    if not text:
        conf_dir = options.get("hive-conf-dir") or os.environ.get("HIVE_CONF_DIR")
        if not conf_dir:
            raise InvalidOptionError("the Hive catalog needs the metastore's address: catalog option 'uri' "
                                     "(thrift://host:port) or 'hive-conf-dir' (a directory with hive-site.xml)")
        text = _site_property(os.path.join(conf_dir, HIVE_SITE), METASTORE_URIS)
    uris = [u.strip() for u in text.split(",") if u.strip()]
    for uri in uris:
        parsed = urlparse(uri)
        if parsed.scheme != "thrift" or not parsed.hostname or not parsed.port:
            raise InvalidOptionError(f"Hive metastore uri {uri!r} is not thrift://host:port")
    return uris


def _site_property(path: str, name: str) -> str:
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError) as e:
        raise InvalidOptionError(f"cannot read {path} ('hive-conf-dir'): {e}") from None
    for prop in root.iter("property"):
        if (prop.findtext("name") or "").strip() == name:
            return (prop.findtext("value") or "").strip()
    raise InvalidOptionError(f"{path} sets no '{name}'; give the catalog option 'uri'")


class ClientPool:
    """At most ``size`` connected clients, shared by the threads of one catalog; a client whose
    connection broke is replaced and the call tried once more (the metastore restarted)."""

    def __init__(self, uris: List[str], size: int):
        if size < 1:
            raise InvalidOptionError(f"catalog option 'client-pool-size' must be at least 1, got {size}")
        self.uris = uris
        self._idle: queue.LifoQueue = queue.LifoQueue()
        self._slots = threading.BoundedSemaphore(size)

    def run(self, call: Callable[[ThriftHiveMetastore.Client], T]) -> T:
        """``call(client)``; metastore exceptions other than a broken connection reach the caller."""
        with self._slots:
            client = self._take()
            try:
                try:
                    return call(client)
                except TTransport.TTransportException:
                    self._close(client)
                    client = None
                    client = self._connect()
                    return call(client)
            except TTransport.TTransportException as e:
                self._close(client)
                client = None
                raise PaimonError(f"Hive metastore {', '.join(self.uris)}: {e}") from None
            finally:
                if client is not None:
                    self._idle.put(client)

    def call(self, call: Callable[[ThriftHiveMetastore.Client], T], what: str) -> T:
        """:meth:`run`, the metastore's exceptions as ours (Thrift's are immutable: they cannot pass
        through a context manager): :class:`MetastoreMissing`, :class:`MetastoreExists`, else one line naming ``what``."""
        try:
            return self.run(call)
        except ttypes.NoSuchObjectException as e:
            raise MetastoreMissing(f"Hive metastore: cannot {what}: {message(e)}") from None
        except ttypes.AlreadyExistsException as e:
            raise MetastoreExists(f"Hive metastore: cannot {what}: {message(e)}") from None
        except TException as e:
            raise PaimonError(f"Hive metastore: cannot {what}: {message(e)}") from None

    def _take(self) -> ThriftHiveMetastore.Client:
        try:
            return self._idle.get_nowait()
        except queue.Empty:
            return self._connect()

    def _connect(self) -> ThriftHiveMetastore.Client:
        errors = []
        for uri in self.uris:
            parsed = urlparse(uri)
            sock = TSocket.TSocket(parsed.hostname, parsed.port)
            sock.setTimeout(SOCKET_TIMEOUT_MS)
            transport = TTransport.TBufferedTransport(sock)
            try:
                transport.open()
                return ThriftHiveMetastore.Client(TBinaryProtocol(transport))
            except TTransport.TTransportException as e:
                errors.append(f"{uri}: {e}")
        raise PaimonError(f"cannot reach the Hive metastore ({'; '.join(errors)})")

    @staticmethod
    def _close(client) -> None:
        client._iprot.trans.close()

    def close(self) -> None:
        while True:
            try:
                self._close(self._idle.get_nowait())
            except queue.Empty:
                return


def message(e: TException) -> str:
    """A metastore exception's own message (Thrift exceptions carry it in ``message``)."""
    return getattr(e, "message", None) or str(e) or type(e).__name__


class HiveLock:
    """The commit lock of one table through the metastore's lock API, as Paimon's HiveCatalogLock:
    an EXCLUSIVE table-level lock, polled (50 ms doubling up to ``check_max_sleep``) while WAITING
    until ``acquire_timeout``; a lock not acquired is released, and always released after the action."""

    def __init__(self, pool: ClientPool, database: str, table: str, check_max_sleep_ms: int,
                 acquire_timeout_ms: int):
        self.pool, self.database, self.table = pool, database, table
        self.check_max_sleep = check_max_sleep_ms / 1000
        self.acquire_timeout = acquire_timeout_ms / 1000

    def __call__(self, action: Callable[[], T]) -> T:
        lock_id = self._acquire()
        try:
            return action()
        finally:
            self._release(lock_id)

    def _acquire(self) -> int:
        component = ttypes.LockComponent(type=ttypes.LockType.EXCLUSIVE, level=ttypes.LockLevel.TABLE,
                                         dbname=self.database, tablename=self.table, operationType=None)
        request = ttypes.LockRequest(component=[component], user=getpass.getuser(), hostname=socket.gethostname())
        start = time.monotonic()
        response = self.pool.call(lambda c: c.lock(request), f"lock table {self.database}.{self.table}")
        lock_id, sleep = response.lockid, 0.05
        try:
            while response.state == ttypes.LockState.WAITING and time.monotonic() - start < self.acquire_timeout:
                sleep = min(sleep * 2, self.check_max_sleep)
                time.sleep(sleep)
                response = self.pool.call(lambda c: c.check_lock(ttypes.CheckLockRequest(lockid=lock_id)),
                                          f"lock table {self.database}.{self.table}")
        finally:
            if response.state != ttypes.LockState.ACQUIRED:
                self._release(lock_id)
        if response.state != ttypes.LockState.ACQUIRED:
            state = ttypes.LockState._VALUES_TO_NAMES.get(response.state, response.state)
            raise PaimonError(f"could not acquire the Hive metastore lock of table {self.database}.{self.table} "
                              f"within {time.monotonic() - start:.1f} s (state {state}; "
                              "catalog option 'lock-acquire-timeout')")
        return lock_id

    def _release(self, lock_id: int) -> None:
        try:
            self.pool.call(lambda c: c.unlock(ttypes.UnlockRequest(lockid=lock_id)), "unlock")
        except PaimonError:
            pass  # as Java: a lock that cannot be released times out on the metastore
