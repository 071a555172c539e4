"""The policy file (``--policy-file``) applied to REST calls, as the Thrift server applies it to SQL.

A call needs what the equivalent SQL needs (:mod:`paimon_sql.access.statement`): READ on a table to
load it or its snapshots, tags, branches and views; WRITE to commit; ADMIN on the table to alter,
drop, roll back, tag, branch or reset its consumers (SQL's ALTER TABLE and CALL need ADMIN); ADMIN on
the database to create a table or view in it or rename one into it; ADMIN on everything for
databases. Listings show only what the user may read (a database when a grant reaches it or
something in it). A user with row filters or column masks on a table may only read it: its table
carries ``query-auth.enabled`` and ``/auth`` sends the rules, which the client applies
(:mod:`query_auth`; a table whose rules cannot be sent is refused by :func:`tables.load`). Writing
and administering it stay refused: a writer's client reads and merges the raw rows.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, FrozenSet, List, Optional

from paimon_sql.access.policy import ANY, READ, Policy, PolicyFile, Principal, Rules, everyone_admin
from paimon_sql.exceptions import AccessDeniedError


@dataclass
class Caller:
    """Who makes one call, and what it touched (for its audit line), as ``db.table``."""

    principal: Principal
    address: str
    tables_read: List[str] = field(default_factory=list)
    tables_written: List[str] = field(default_factory=list)

    @property
    def user(self) -> str:
        return self.principal.user


class Grants:
    """The policy of ``policy_file`` (None: everyone administers everything) and ``groups(user)``,
    the directory groups a user signed in with (empty without LDAP)."""

    def __init__(self, policy_file: Optional[PolicyFile], groups: Callable[[str], FrozenSet[str]]):
        self.policy_file = policy_file
        self.groups = groups

    def caller(self, user: str, address: str) -> Caller:
        return Caller(Principal(user, frozenset(self.groups(user))), address)

    def policy(self) -> Policy:
        return self.policy_file.current() if self.policy_file is not None else everyone_admin()

    def require(self, caller: Caller, privilege: str, database: str, table: Optional[str] = None) -> None:
        """Raise AccessDeniedError unless ``caller`` holds ``privilege`` on the table (or the whole
        database when ``table`` is None; everything when ``database`` is ANY). Either way the table
        is noted for the audit line, read or written."""
        if table is not None:
            (caller.tables_read if privilege == READ else caller.tables_written).append(f"{database}.{table}")
        policy, who = self.policy(), caller.principal
        if database == ANY:
            if not policy.is_admin(who):
                raise AccessDeniedError(f"permission denied: this call is for the policy's admins, and user "
                                        f"'{who.user}' is not one")
            return
        if not policy.allows(who, privilege, database, table):
            target = f"table {database}.{table}" if table is not None else f"database {database}"
            raise AccessDeniedError(f"permission denied: user '{who.user}' has no {privilege.upper()} grant "
                                    f"on {target}")
        if table is not None and privilege != READ and policy.rules_for(who, database, table) is not None:
            raise AccessDeniedError(f"permission denied: user '{who.user}' has a row filter or column mask on "
                                    f"table {database}.{table}, so over REST may only read it")

    def rules(self, caller: Caller, database: str, table: str) -> Optional[Rules]:
        """The caller's row filters and column masks on a table, None when there are none."""
        return self.policy().rules_for(caller.principal, database, table)

    def may_read(self, caller: Caller, database: str, name: str) -> bool:
        return self.policy().allows(caller.principal, READ, database, name)

    def may_see_database(self, caller: Caller, database: str) -> bool:
        """Whether a listing shows ``database``: some grant of the caller reaches it or one of its tables."""
        policy, names, db = self.policy(), caller.principal.names(), database.lower()
        return bool(policy.admins & names) or any(g.to & names and g.database in (ANY, db) for g in policy.grants)

