"""What every REST call sees: the server's catalog and warehouse, its grants, one commit lock per
table, and the call itself (who, its path's names, its query, its JSON body).

The catalog is the Thrift server's own (``Session.catalog``): REST and SQL clients see one catalog.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from typing import Any, Dict, Optional

from paimon_sql.catalog.base import Catalog
from paimon_sql.server.rest.errors import bad_request
from paimon_sql.server.rest.grants import Caller, Grants

PREFIX = "paimon"  # the one path prefix, /v1/paimon/...: Java's client needs a non-empty one
DATABASE_PATH = r"/databases/(?P<db>[^/]+)"  # the path of one database (after the prefix), its calls below it


@dataclass
class RestState:
    """``warehouse``: the warehouse URI or absolute path served; ``given``: as the command line
    named it (a client's ``warehouse`` option may name either); ``options``: the catalog options."""

    catalog: Catalog
    warehouse: str
    options: Dict[str, str]
    grants: Grants
    given: Optional[str] = None
    _locks: Dict[str, threading.Lock] = field(default_factory=dict)
    _guard: threading.Lock = field(default_factory=threading.Lock)

    def commit_lock(self, table_path: str) -> threading.Lock:
        """The lock serialising commits to one table (its branch included) in this server."""
        with self._guard:
            return self._locks.setdefault(table_path, threading.Lock())


@dataclass
class Call:
    """One request: ``params`` the decoded path names (``db``, ``table``, ...), ``query`` the decoded
    query parameters, ``body`` the raw request body."""

    state: RestState
    caller: Caller
    params: Dict[str, str]
    query: Dict[str, str]
    body: bytes = b""

    def json(self) -> Dict[str, Any]:
        """The body as a JSON object (an empty body: ``{}``)."""
        if not self.body.strip():
            return {}
        try:
            d = json.loads(self.body)
        except ValueError as e:
            raise bad_request(f"request body is not JSON: {e}") from None
        if not isinstance(d, dict):
            raise bad_request("request body must be a JSON object")
        return d

    def require(self, privilege: str, database: str, table: Optional[str] = None) -> None:
        self.state.grants.require(self.caller, privilege, database, table)


def field_of(d: Dict[str, Any], key: str, kind: type, optional: bool = False) -> Any:
    """``d[key]`` checked to be a ``kind`` (None allowed when ``optional``); else a 400 naming it."""
    value = d.get(key)
    if value is None and optional:
        return None
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise bad_request(f"request field '{key}' must be a {'JSON ' + kind.__name__}, got {value!r}"[:300])
    return value
