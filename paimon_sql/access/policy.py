"""Grants: who may read, write or administer which database or table, as the policy file says.

The file (``paimon-sql-server --policy-file F``) is JSON::

    {
      "admins": ["alice", "group:dba"],
      "grants": [
        {"to": ["bob", "group:analysts"], "read": ["sales", "hr.employees"]},
        {"to": ["etl"], "read": ["*"], "write": ["sales.orders"]},
        {"to": ["carol"], "admin": ["scratch"]}
      ],
      "proxy": {"tableau": ["*"], "gateway": ["bob", "group:analysts"]}
    }

A principal is a user name, ``group:<name>`` (a directory group the user signed in with) or ``*``
(every signed-in user). A resource is ``*`` (everything), ``db`` or ``db.*`` (a database and all
its tables) or ``db.t``; names match ignoring case, as Spark's do. ``admin`` includes ``read``
and ``write``; ``write`` does not include ``read``. ``admins`` administer everything, and only
they may run what the server cannot check table by table (Spark's statements about files, jars,
functions and catalogs). ``proxy`` says whom a signed-in user may act for
(``hive.server2.proxy.user``).

The file is read again when it changes. A file that no longer parses refuses every statement
until it is fixed (a broken policy never opens anything).
"""

from __future__ import annotations

import json
import os
import threading
from dataclasses import dataclass, field
from typing import Dict, FrozenSet, Optional, Tuple

from paimon_sql.exceptions import PolicyError

READ, WRITE, ADMIN = "read", "write", "admin"
PRIVILEGES = (READ, WRITE, ADMIN)
ANY = "*"
GROUP = "group:"
_KEYS = {"admins", "grants", "proxy"}


@dataclass(frozen=True)
class Principal:
    """Who runs a statement: the signed-in (or proxied) user and the directory groups they belong to."""

    user: str
    groups: FrozenSet[str] = frozenset()

    def names(self) -> FrozenSet[str]:
        """Every principal name of the policy that means this user."""
        return frozenset({ANY, self.user.lower(), *(GROUP + g.lower() for g in self.groups)})


@dataclass(frozen=True)
class Grant:
    to: FrozenSet[str]
    privilege: str
    database: str  # ANY for every database
    table: str  # ANY for every table of the database


@dataclass
class Policy:
    admins: FrozenSet[str] = frozenset()
    grants: Tuple[Grant, ...] = ()
    proxy: Dict[str, FrozenSet[str]] = field(default_factory=dict)

    def is_admin(self, who: Principal) -> bool:
        return bool(self.admins & who.names()) or self.allows(who, ADMIN, ANY, ANY)

    def allows(self, who: Principal, privilege: str, database: str, table: Optional[str] = None) -> bool:
        """Whether ``who`` holds ``privilege`` on table ``database.table``, or on the whole
        database when ``table`` is None (a grant on one table does not reach its database)."""
        if self.admins & who.names():
            return True
        names, db = who.names(), database.lower()
        wanted = {privilege, ADMIN}
        for g in self.grants:
            if g.privilege in wanted and g.to & names and g.database in (ANY, db) \
                    and (g.table == ANY or (table is not None and g.table == table.lower())):
                return True
        return False

    def may_act_for(self, who: Principal, user: str, groups: FrozenSet[str]) -> bool:
        """Whether ``who`` may open a session as ``user`` (of ``groups``): ``proxy`` lists, for a
        signed-in user or group, the users and groups it may act for (``*``: anyone)."""
        target = Principal(user, groups).names() - {ANY}
        for name in who.names() - {ANY}:
            allowed = self.proxy.get(name, frozenset())
            if ANY in allowed or allowed & target:
                return True
        return False


def parse(text: str, source: str = "policy") -> Policy:
    """The policy of a file's ``text``; anything malformed is a :class:`PolicyError` naming it."""
    try:
        data = json.loads(text)
    except ValueError as e:
        raise PolicyError(f"{source} is not JSON: {e}") from None
    if not isinstance(data, dict):
        raise PolicyError(f"{source} must hold a JSON object with 'admins', 'grants' and 'proxy'")
    unknown = set(data) - _KEYS
    if unknown:
        raise PolicyError(f"{source}: unknown key(s) {', '.join(sorted(unknown))} (expected admins, grants, proxy)")
    admins = _principals(data.get("admins", []), f"{source} 'admins'")
    grants = []
    for number, entry in enumerate(_list(data.get("grants", []), f"{source} 'grants'"), 1):
        where = f"{source} grant #{number}"
        if not isinstance(entry, dict) or "to" not in entry:
            raise PolicyError(f"{where} must be an object with 'to' and one or more of read, write, admin")
        extra = set(entry) - {"to", *PRIVILEGES}
        if extra or len(entry) == 1:
            raise PolicyError(f"{where}: expected 'to' and read/write/admin lists, got {', '.join(sorted(entry))}")
        to = _principals(entry["to"], f"{where} 'to'")
        for privilege in PRIVILEGES:
            for resource in _list(entry.get(privilege, []), f"{where} '{privilege}'"):
                grants.append(Grant(to, privilege, *_resource(resource, f"{where} '{privilege}'")))
    proxy = data.get("proxy", {})
    if not isinstance(proxy, dict):
        raise PolicyError(f"{source} 'proxy' must map a user or group:<name> to whom it may act for")
    return Policy(admins, tuple(grants), {_principal(k, f"{source} 'proxy'"): _principals(v, f"{source} 'proxy' {k}")
                                          for k, v in proxy.items()})


def _list(value, where: str) -> list:
    if not isinstance(value, list):
        raise PolicyError(f"{where} must be a JSON list")
    return value


def _principal(name, where: str) -> str:
    text = name.strip().lower() if isinstance(name, str) else ""
    if not text or text == GROUP:
        raise PolicyError(f"{where}: {name!r} is not a user name, group:<name> or *")
    return text


def _principals(value, where: str) -> FrozenSet[str]:
    return frozenset(_principal(n, where) for n in _list(value, where))


def _resource(text, where: str) -> Tuple[str, str]:
    """``*``, ``db``, ``db.*`` or ``db.t`` as (database, table), ANY standing for all."""
    if not isinstance(text, str):
        raise PolicyError(f"{where}: {text!r} is not a resource (*, db, db.* or db.table)")
    parts = [p.strip().strip("`").lower() for p in text.split(".")]
    if not all(parts) or len(parts) > 2 or (parts[0] == ANY and len(parts) > 1):
        raise PolicyError(f"{where}: {text!r} is not a resource (*, db, db.* or db.table)")
    return parts[0], parts[1] if len(parts) == 2 else ANY


class PolicyFile:
    """The policy of a file, read again when the file changes (its modification time or size)."""

    def __init__(self, path: str):
        self.path = path
        self._lock = threading.Lock()
        self._stamp: Optional[Tuple[int, int]] = None
        self._policy: Optional[Policy] = None
        self._error: Optional[PolicyError] = None
        self.current()  # a file that is wrong at start stops the server with its message

    def current(self) -> Policy:
        """The policy as the file says now; a file that cannot be read or parsed raises (every
        statement is refused until it is fixed)."""
        try:
            st = os.stat(self.path)
        except OSError as e:
            raise PolicyError(f"cannot read policy file {self.path}: {e.strerror}") from None
        stamp = (st.st_mtime_ns, st.st_size)
        with self._lock:
            if stamp != self._stamp:
                self._stamp = stamp
                try:
                    with open(self.path, encoding="utf-8") as f:
                        self._policy, self._error = parse(f.read(), f"policy file {self.path}"), None
                except OSError as e:
                    self._policy, self._error = None, PolicyError(f"cannot read policy file {self.path}: {e.strerror}")
                except PolicyError as e:
                    self._policy, self._error = None, e
            if self._error is not None:
                raise self._error
            return self._policy


def everyone_admin() -> Policy:
    """The policy of a server without a policy file: everyone administers everything."""
    return Policy(admins=frozenset({ANY}))

