"""Procedures: what ``CALL sys.<name>(...)`` runs, one module per family, each registering its own.

:func:`lookup` finds a procedure by name, :func:`bind` matches a call's arguments to its
parameters; :mod:`paimon_sql.sql.call` parses the statement and runs it.
"""

from paimon_sql.procedures import compact, compact_manifest, expire_snapshots  # noqa: F401  (each import registers its procedures)
from paimon_sql.procedures import remove_orphan_files, remove_unexisting_files, rollback  # noqa: F401
from paimon_sql.procedures import expire_partitions, purge_files, repair  # noqa: F401
from paimon_sql.procedures import compact_database, rescale  # noqa: F401
from paimon_sql.procedures import migrate  # noqa: F401
from paimon_sql.procedures import branches, consumers  # noqa: F401
from paimon_sql.procedures import tags  # noqa: F401
from paimon_sql.procedures import indexes, partitions, unsupported  # noqa: F401
from paimon_sql.procedures import refresh_object_table  # noqa: F401
from paimon_sql.procedures.base import PROCEDURES, Procedure, ProcedureError, bind, describe_lines, lookup

__all__ = ["PROCEDURES", "Procedure", "ProcedureError", "bind", "describe_lines", "lookup"]
