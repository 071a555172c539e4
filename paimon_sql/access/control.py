"""A session's access control: the statement's needs (:mod:`.statement`) against the policy's grants.

A server session gets one (``Session.access``); :meth:`paimon_sql.session.Session.execute` asks
it before a statement runs, so a denied statement reads and changes nothing. Its message names
the user, the missing privilege and the table or database, never what the table holds.
Without a policy file every user administers everything, and the needs are still worked out:
the audit log lists the tables each statement read and wrote.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, List, Optional

from sqlglot import exp

from paimon_sql.access import rules, statement
from paimon_sql.access.policy import ANY, READ, Policy, PolicyFile, Principal, Rules, everyone_admin
from paimon_sql.access.statement import Session, StatementAccess
from paimon_sql.exceptions import AccessDeniedError, PaimonError
from paimon_sql.sql.query import SYS_DATABASE
from paimon_sql.systables import GLOBAL_TABLES, SystemTable

if TYPE_CHECKING:
    from pyspark.sql import DataFrame


class AccessControl:
    """The grants of ``principal`` under the policy of ``policy_file`` (None: everyone is an admin)."""

    def __init__(self, principal: Principal, policy_file: Optional[PolicyFile] = None):
        self.principal = principal
        self.policy_file = policy_file

    def policy(self) -> Policy:
        return self.policy_file.current() if self.policy_file is not None else everyone_admin()

    def needs_of(self, session: "Session", node: Optional[exp.Expression], text: str = "") -> StatementAccess:
        """What the statement ``node`` (None: one only Spark could parse, ``text``) needs. Without
        a policy file, a statement whose needs cannot be read (a malformed CALL) is left to run:
        its own run says what is wrong with it; under one, that error refuses it."""
        try:
            return statement.analyze(session, node) if node is not None else statement.unparsed(text)
        except PaimonError:
            if self.policy_file is not None:
                raise
            return StatementAccess()

    def check_setting(self, key: str) -> None:
        """A session setting from the client's opening configuration, as ``SET key=...``."""
        access = StatementAccess()
        statement.setting(key, access)
        self.require(access)

    def require(self, access: StatementAccess) -> None:
        """Raises :class:`AccessDeniedError` for the first need the principal's grants do not cover."""
        policy = self.policy()
        # what only admins may do first: it is the reason a statement is refused, whatever else it names
        for need in sorted(access.needs, key=lambda n: n.database != ANY):
            if need.database == ANY and need.table is None and need.privilege == "admin":
                if not policy.is_admin(self.principal):
                    raise AccessDeniedError(f"permission denied: {need.reason or 'this statement'} is for the "
                                            f"policy's admins, and user '{self.principal.user}' is not one")
            elif not policy.allows(self.principal, need.privilege, need.database, need.table):
                raise AccessDeniedError(f"permission denied: user '{self.principal.user}' has no "
                                        f"{need.privilege.upper()} grant on {need}")
            elif need.raw and need.table and policy.rules_for(self.principal, need.database, need.table):
                raise AccessDeniedError(f"permission denied: {need.reason} reads every row and value of {need}, "
                                        f"and user '{self.principal.user}' has a row filter or column mask on it")

    def may_read(self, database: Optional[str], name: str) -> bool:
        """Whether a listing (GetTables, GetColumns) may show relation ``database.name``: a
        temporary view (no database) always, a system table as its table, ``sys.*`` as everything."""
        if database is None:
            return True
        policy = self.policy()
        if database.lower() == SYS_DATABASE and name.lower() in GLOBAL_TABLES:
            return policy.allows(self.principal, READ, ANY)
        return policy.allows(self.principal, READ, database, name.split("$")[0])

    def scan(self, ref, read: rules.Read, columns: List[str], predicate) -> "DataFrame":
        """``read(columns, predicate)`` of a reference (table, branch, system table) through the
        user's row filters and column masks of its table; a system table of such a table, which
        would show what they hide (file statistics, the change log), is refused."""
        if isinstance(ref, SystemTable):
            base = None if ref.is_global else ref.table
            if base is not None and self._rules(base) is not None:
                raise AccessDeniedError(f"permission denied: system table {ref.full_name} would show rows or values "
                                        f"that user '{self.principal.user}''s row filter or column mask hides")
            return read(columns, predicate)
        found = self._rules(ref)
        return read(columns, predicate) if found is None else \
            rules.guarded(found, [f.name for f in ref.schema.fields], read, columns, predicate)

    def _rules(self, table) -> Optional[Rules]:
        database, _, name = table.name.partition(".")
        return self.policy().rules_for(self.principal, database, name.split("$")[0]) if name else None

    def may_act_for(self, user: str, groups) -> bool:
        return self.policy().may_act_for(self.principal, user, frozenset(groups))
