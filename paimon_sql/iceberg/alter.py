"""Iceberg metadata turned on, changed or off for a table that already has data (ALTER TABLE ...
SET / UNSET TBLPROPERTIES on ``metadata.iceberg.*``).

Java 2.0 writes nothing until the next commit, and has no procedure for it; paimon-sql writes the
metadata of the current snapshot as part of the ALTER, so Iceberg readers see the table at once
(afresh, as the first commit would, or extending what an earlier period of the option left).
A table whose metadata would be wrong (deletion vectors, ORC files, ...) is refused before the
option is stored. Turning it off (UNSET, or ``disabled``) stops the metadata and, as in Java,
leaves what was written (the files, a metastore registration) describing the last snapshot
published.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

from paimon_sql.exceptions import PaimonError
from paimon_sql.iceberg.commit_callback import check_publishable, publish_now
from paimon_sql.options.iceberg_options import PREFIX
from paimon_sql.schema.schema_change import RemoveOption, SchemaChange, SetOption, apply

if TYPE_CHECKING:
    from paimon_sql.schema.table_schema import TableSchema
    from paimon_sql.table.table import FileStoreTable


def commit_changes(table: FileStoreTable, changes: Sequence[SchemaChange]) -> TableSchema:
    """Commit ``changes`` to the table's schema; when they touch ``metadata.iceberg.*``, checked
    before and published after."""
    if not any(isinstance(c, (SetOption, RemoveOption)) and c.key.startswith(PREFIX) for c in changes):
        return table.schema_manager.commit_changes(changes)
    check_publishable(table.with_schema(apply(table.schema_manager.latest(), changes)))
    schema = table.schema_manager.commit_changes(changes)
    try:
        publish_now(table.with_schema(schema))
    except (PaimonError, OSError) as e:
        raise PaimonError(f"table {table.name}: the options are set, but writing the Iceberg metadata of the "
                          f"current snapshot failed (the next commit writes it): {e}") from None
    return schema
