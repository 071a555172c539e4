"""Procedures: what ``CALL sys.<name>(...)`` runs, one module per family, each registering its own.

:func:`lookup` finds a procedure by name, :func:`bind` matches a call's arguments to its
parameters; :mod:`paimon_sql.sql.call` parses the statement and runs it.
"""

from paimon_sql.exceptions import ProcedureError
from paimon_sql.procedures import (  # noqa: F401  (each import registers its procedures)  # noqa: F401  # noqa: F401  # noqa: F401  # noqa: F401  # noqa: F401
    branches,
    compact,
    compact_database,
    compact_manifest,
    consumers,
    expire_partitions,
    expire_snapshots,
    functions,
    indexes,
    migrate,  # noqa: F401
    partitions,
    purge_files,
    refresh_object_table,  # noqa: F401
    remove_orphan_files,
    remove_unexisting_files,
    repair,
    rescale,
    rollback,
    tags,  # noqa: F401
    unsupported,
)
from paimon_sql.procedures.base import PROCEDURES, Procedure, bind, describe_lines, lookup

__all__ = ["PROCEDURES", "Procedure", "ProcedureError", "bind", "describe_lines", "lookup"]
