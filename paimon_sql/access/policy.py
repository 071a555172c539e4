"""Grants: who may read, write or administer which database or table, as the policy file says.

The file (``paimon-sql-server --policy-file F``) is JSON::

    {
      "admins": ["alice", "group:dba"],
      "grants": [
        {"to": ["bob", "group:analysts"], "read": ["sales", "hr.employees"]},
        {"to": ["etl"], "read": ["*"], "write": ["sales.orders"]},
        {"to": ["carol"], "admin": ["scratch"]}
      ],
      "proxy": {"tableau": ["*"], "gateway": ["bob", "group:analysts"]},
      "row_filters": [{"to": ["group:eu"], "table": "sales.orders", "where": "region = 'EU'"}],
      "column_masks": [{"to": ["group:analysts"], "table": "hr.people", "column": "ssn",
                        "mask": "concat('***-**-', right(ssn, 4))"}]
    }

A principal is a user name, ``group:<name>`` (a directory group the user signed in with) or ``*``
(every signed-in user). A resource is ``*`` (everything), ``db`` or ``db.*`` (a database and all
its tables) or ``db.t``; names match ignoring case, as Spark's do. ``admin`` includes ``read``
and ``write``; ``write`` does not include ``read``. ``admins`` administer everything, and only
they may run what the server cannot check table by table (Spark's statements about files, jars,
functions and catalogs). ``proxy`` says whom a signed-in user may act for
(``hive.server2.proxy.user``).

Row filters and column masks are Paimon's table query auth (1.4: a table's read, for one user,
keeps only the rows every filter of theirs accepts, and shows each masked column as its mask), with
Spark SQL for the predicates and masks where Paimon's REST server sends its JSON predicates and
transforms. They apply to every read of the table by the users they name, through views and
branches too; such a user's UPDATE, DELETE, MERGE, CACHE TABLE and system tables of the table,
which would see the hidden rows or values, are refused.

The file is read again when it changes. A file that no longer parses refuses every statement
until it is fixed (a broken policy never opens anything).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Dict, FrozenSet, Optional, Tuple

import sqlglot

from paimon_sql.exceptions import PolicyError
from paimon_sql.io.watched_file import WatchedFile

READ, WRITE, ADMIN = "read", "write", "admin"
PRIVILEGES = (READ, WRITE, ADMIN)
ANY = "*"
GROUP = "group:"
_KEYS = {"admins", "grants", "proxy", "row_filters", "column_masks"}


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


@dataclass(frozen=True)
class Rule:
    """A row filter (``column`` None: ``expression`` is a predicate) or a column mask of one table."""

    to: FrozenSet[str]
    database: str
    table: str
    expression: str
    column: Optional[str] = None


@dataclass(frozen=True)
class Rules:
    """What one user's reads of one table go through: the filters all hold, masked columns show their mask."""

    filters: Tuple[str, ...]
    masks: Dict[str, str]


@dataclass
class Policy:
    admins: FrozenSet[str] = frozenset()
    grants: Tuple[Grant, ...] = ()
    proxy: Dict[str, FrozenSet[str]] = field(default_factory=dict)
    rules: Tuple[Rule, ...] = ()

    def rules_for(self, who: Principal, database: str, table: str) -> Optional[Rules]:
        """The row filters and column masks of ``who`` on a table (the first mask of a column
        in the file wins); None when there are none."""
        names, db, name = who.names(), database.lower(), table.lower()
        mine = [r for r in self.rules if r.to & names and r.database == db and r.table == name]
        if not mine:
            return None
        masks: Dict[str, str] = {}
        for r in mine:
            if r.column is not None:
                masks.setdefault(r.column, r.expression)
        return Rules(tuple(r.expression for r in mine if r.column is None), masks)

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
    rules = [_rule(e, f"{source} row filter #{i}", "where") for i, e in enumerate(_list(data.get("row_filters", []),
                                                                                     f"{source} 'row_filters'"), 1)]
    rules += [_rule(e, f"{source} column mask #{i}", "mask") for i, e in enumerate(_list(data.get("column_masks", []),
                                                                                     f"{source} 'column_masks'"), 1)]
    return Policy(admins, tuple(grants), {_principal(k, f"{source} 'proxy'"): _principals(v, f"{source} 'proxy' {k}")
                                          for k, v in proxy.items()}, tuple(rules))


def _rule(entry, where: str, key: str) -> Rule:
    """A row filter (``to``, ``table``, ``where``) or column mask (``to``, ``table``, ``column``,
    ``mask``); its SQL must parse as one Spark expression."""
    wanted = {"to", "table", key} | ({"column"} if key == "mask" else set())
    if not isinstance(entry, dict) or set(entry) != wanted:
        raise PolicyError(f"{where} must be an object with exactly {', '.join(sorted(wanted))}")
    database, table = _resource(entry["table"], f"{where} 'table'")
    if table == ANY:
        raise PolicyError(f"{where}: 'table' must name one table (db.table), not {entry['table']!r}")
    expression = entry[key]
    try:
        if not isinstance(expression, str) or not expression.strip():
            raise ValueError("empty")
        sqlglot.parse_one(expression, dialect="spark")
    except (ValueError, sqlglot.errors.SqlglotError):
        raise PolicyError(f"{where}: '{key}' {expression!r} is not a Spark SQL expression") from None
    column = entry.get("column")
    if key == "mask" and (not isinstance(column, str) or not column.strip()):
        raise PolicyError(f"{where}: 'column' must name a column")
    return Rule(_principals(entry["to"], f"{where} 'to'"), database, table, expression,
                column.strip().lower() if column else None)


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
    """The policy of a file, read again when the file changes (:class:`WatchedFile`)."""

    def __init__(self, path: str):
        self.path = path
        self._file = WatchedFile(path, parse, "policy file", PolicyError)
        self.current()  # a file that is wrong at start stops the server with its message

    def current(self) -> Policy:
        """The policy as the file says now; a file that cannot be read or parsed raises (every
        statement is refused until it is fixed)."""
        return self._file.current()


def everyone_admin() -> Policy:
    """The policy of a server without a policy file: everyone administers everything."""
    return Policy(admins=frozenset({ANY}))

