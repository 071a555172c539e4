"""JdbcClient: the connection of a JDBC catalog, opened from the Java-style ``uri`` Paimon's
JdbcCatalog takes, through the Python driver of that database.

``jdbc:sqlite:<file>`` uses Python's sqlite3, ``jdbc:postgresql://host[:port]/db`` psycopg (3),
``jdbc:mysql://`` / ``jdbc:mariadb://`` pymysql. ``jdbc.user`` and ``jdbc.password`` log in; the
other ``jdbc.*`` options (and the uri's query parameters) are handed to the driver under its own
names, so one the driver does not know is refused rather than ignored.

Statements are written with ``?`` placeholders. The connection runs in autocommit (as Java's
pooled JDBC connections do); :meth:`JdbcClient.transaction` groups statements that must land
together. One connection per catalog, used by one thread at a time.
"""

from __future__ import annotations

import re
import sqlite3
import threading
from contextlib import contextmanager
from typing import Any, Iterator, List, Sequence, Tuple
from urllib.parse import parse_qsl, unquote, urlparse

from paimon_sql.exceptions import InvalidOptionError, JdbcKeyConflict, PaimonError

PROPERTY_PREFIX = "jdbc."  # Paimon's JdbcCatalog.PROPERTY_PREFIX
SQLITE_BUSY_TIMEOUT_S = 60.0  # a writer waits this long for another's transaction (a create in flight)
_PROTOCOL = re.compile(r"jdbc:([^:]+):(.*)", re.S)  # as Java's JdbcClientPool.PROTOCOL_PATTERN

# JDBC URL parameters of PostgreSQL's driver -> libpq's names for the same setting
_PG_NAMES = {"ApplicationName": "application_name", "connectTimeout": "connect_timeout"}


class JdbcClient:
    def __init__(self, uri: str, options: dict):
        m = _PROTOCOL.fullmatch(uri)
        if not m:
            raise InvalidOptionError(f"catalog option 'uri' = {_mask(uri, options)!r} is not a JDBC URL "
                                     "(jdbc:sqlite:<file>, jdbc:postgresql://host:port/db, jdbc:mysql://host:port/db)")
        self.protocol = m.group(1).lower()
        self._secret = options.get(PROPERTY_PREFIX + "password") or ""
        self._shown_uri = _mask(uri, options)
        driver = {"sqlite": _sqlite, "postgresql": _postgresql, "mysql": _mysql, "mariadb": _mysql}.get(self.protocol)
        if driver is None:
            raise InvalidOptionError(f"catalog option 'uri': JDBC protocol '{self.protocol}' is not supported "
                                     "(sqlite, postgresql, mysql, mariadb)")
        props = {k[len(PROPERTY_PREFIX):]: v for k, v in options.items() if k.startswith(PROPERTY_PREFIX)}
        self._errors, self._integrity, self._placeholder = (), (), "?"
        self._mutex = threading.RLock()
        self._in_transaction = False
        self._open = lambda: driver(self, m.group(2), props)
        self._conn = self._guarded(self._open)

    def _guarded(self, action):
        """``action()``, a driver error becoming a one-line PaimonError that names the catalog's
        database (password masked) and never shows the password."""
        try:
            return action()
        except self._integrity as e:
            raise JdbcKeyConflict(str(e)) from None
        except self._errors as e:
            text = " ".join(str(e).split())
            if self._secret:
                text = text.replace(self._secret, "******")
            raise PaimonError(f"JDBC catalog database {self._shown_uri}: {text}") from None

    def _lost(self) -> bool:
        """Whether the server dropped the connection (a restart, an idle timeout): psycopg then
        says it is closed, pymysql that it is not open. SQLite's never is."""
        return bool(getattr(self._conn, "closed", False)) or not getattr(self._conn, "open", True)

    def _reconnect_if_lost(self) -> None:
        if not self._in_transaction and self._lost():
            self._conn = self._guarded(self._open)

    def execute(self, sql: str, *args) -> int:
        """Run one statement; the number of rows it changed. A primary-key clash raises :class:`JdbcKeyConflict`.
        A statement on a connection the server dropped fails (it may have run), and the next one
        reconnects."""
        with self._mutex:
            self._reconnect_if_lost()
            return self._guarded(lambda: self._run(sql, args).rowcount)

    def query(self, sql: str, *args) -> List[Tuple[Any, ...]]:
        """Rows of a query; one on a connection the server dropped is run again on a new one."""
        with self._mutex:
            self._reconnect_if_lost()
            try:
                return self._guarded(lambda: self._fetch(sql, args))
            except PaimonError:
                if self._in_transaction or not self._lost():
                    raise
            self._reconnect_if_lost()
            return self._guarded(lambda: self._fetch(sql, args))

    def _run(self, sql: str, args: Sequence):
        cur = self._conn.cursor()
        cur.execute(sql.replace("?", self._placeholder), tuple(args))
        return cur

    def _fetch(self, sql: str, args: Sequence):
        cur = self._run(sql, args)
        rows = cur.fetchall()
        cur.close()
        return [tuple(r) for r in rows]

    @contextmanager
    def transaction(self) -> Iterator["JdbcClient"]:
        """Statements in the block commit together, or none does (an exception rolls back). A
        writer that touches a row the open transaction holds waits until it ends. SQLite takes
        its write lock at the start (BEGIN IMMEDIATE), so two writers never deadlock upgrading."""
        with self._mutex:
            self._reconnect_if_lost()
            self._guarded(lambda: self._run("BEGIN IMMEDIATE" if self.protocol == "sqlite" else "BEGIN", ()))
            self._in_transaction = True
            try:
                yield self
            except BaseException:
                self._in_transaction = False
                try:
                    self._guarded(lambda: self._run("ROLLBACK", ()))
                except PaimonError:
                    pass  # the error that made us roll back is the one to report
                raise
            self._in_transaction = False
            self._guarded(lambda: self._run("COMMIT", ()))

    def create_table_if_absent(self, ddl: str) -> None:
        """``CREATE TABLE IF NOT EXISTS`` (the same columns Java creates): two catalogs opening at
        once may race on PostgreSQL's catalog rows, where the loser's error means the table is there."""
        try:
            self.execute(ddl.replace("CREATE TABLE ", "CREATE TABLE IF NOT EXISTS ", 1))
        except JdbcKeyConflict:
            pass

    def close(self) -> None:
        with self._mutex:
            self._conn.close()


def _mask(uri: str, options: dict) -> str:
    """The uri as shown in messages: a ``password=`` parameter and the ``jdbc.password`` value masked."""
    shown = re.sub(r"(?i)(password=)[^&;]*", r"\1******", uri)
    secret = options.get(PROPERTY_PREFIX + "password")
    return shown.replace(secret, "******") if secret else shown


def _sqlite(client: JdbcClient, rest: str, props: dict):
    """``jdbc:sqlite:<path>`` (or ``file:...`` URI, or ``:memory:``). SQLite has no login: user and
    password are not used (as sqlite-jdbc); ``jdbc.busy_timeout`` (ms) is sqlite-jdbc's setting."""
    client._errors, client._integrity = (sqlite3.Error,), (sqlite3.IntegrityError,)
    extra = set(props) - {"user", "password", "busy_timeout"}
    if extra:
        raise InvalidOptionError(f"catalog option(s) {', '.join('jdbc.' + k for k in sorted(extra))}: not a setting "
                                 "of the SQLite JDBC catalog (jdbc.busy_timeout is)")
    timeout = int(props["busy_timeout"]) / 1000 if "busy_timeout" in props else SQLITE_BUSY_TIMEOUT_S
    return sqlite3.connect(rest, timeout=timeout, isolation_level=None, check_same_thread=False,
                           uri=rest.startswith("file:"))


def _host_url(rest: str, protocol: str, default_port: int) -> Tuple[dict, dict]:
    """host, port and database of ``//host:port/db?k=v``; the query parameters apart."""
    url = urlparse(rest if rest.startswith("//") else "//localhost/" + rest)
    where = {"host": url.hostname or "localhost", "port": url.port or default_port,
             "database": unquote(url.path.lstrip("/"))}
    if not where["database"]:
        raise InvalidOptionError(f"catalog option 'uri': jdbc:{protocol}:{rest.split('?')[0]} names no database")
    return where, dict(parse_qsl(url.query))


def _postgresql(client: JdbcClient, rest: str, props: dict):
    try:
        import psycopg
    except ImportError:
        raise PaimonError("metastore=jdbc on PostgreSQL needs psycopg: pip install 'paimon-sql[jdbc]'") from None
    client._errors, client._integrity, client._placeholder = (psycopg.Error,), (psycopg.IntegrityError,), "%s"
    where, params = _host_url(rest, "postgresql", 5432)
    conninfo = {"host": where["host"], "port": where["port"], "dbname": where["database"]}
    for key, value in {**params, **props}.items():
        if key == "currentSchema":
            conninfo["options"] = f"-c search_path={value}"
        elif key == "ssl":
            conninfo.setdefault("sslmode", "require" if value.lower() == "true" else "disable")
        else:
            conninfo[_PG_NAMES.get(key, key)] = value
    try:
        return psycopg.connect(autocommit=True, **conninfo)
    except psycopg.ProgrammingError as e:  # an option libpq does not know
        raise InvalidOptionError(f"catalog option 'jdbc.*' or uri parameter: {e}") from None


def _mysql(client: JdbcClient, rest: str, props: dict):
    try:
        import pymysql
    except ImportError:
        raise PaimonError("metastore=jdbc on MySQL needs pymysql: pip install 'paimon-sql[jdbc]'") from None
    client._errors, client._integrity, client._placeholder = (pymysql.Error,), (pymysql.IntegrityError,), "%s"
    where, params = _host_url(rest, "mysql", 3306)
    settings = {**params, **props}
    settings.setdefault("charset", "utf8mb4")
    try:
        return pymysql.connect(host=where["host"], port=where["port"], database=where["database"],
                               autocommit=True, **settings)
    except TypeError as e:  # a keyword pymysql does not take
        raise InvalidOptionError(f"catalog option 'jdbc.*' or uri parameter: {e}") from None
