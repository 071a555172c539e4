"""Who may do what: grants from a policy file, checked against what each statement needs.

``policy`` reads the file, ``statement`` works out a parsed statement's needs (which privilege on
which table or database), ``control`` holds one user's grants and refuses what they do not cover.
The server gives each client session an :class:`AccessControl`; the library's own sessions have none.
"""

from paimon_sql.access.control import AccessControl
from paimon_sql.access.policy import ADMIN, READ, WRITE, Policy, PolicyFile, Principal
from paimon_sql.access.statement import StatementAccess

__all__ = ["AccessControl", "Policy", "PolicyFile", "Principal", "StatementAccess", "READ", "WRITE", "ADMIN"]
