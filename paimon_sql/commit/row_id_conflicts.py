"""Row id conflicts of a data-evolution table (Java's ``rowIdCheckConflict``), checked at commit.

A partial-column file (UPDATE / MERGE INTO of a data-evolution table,
:mod:`paimon_sql.write.data_evolution_write`) copies the current values of every row of its group
it does not change, as of the snapshot the update read. If another commit touched those row ids
since (another update of the group, a compaction folding it), committing the file would hide that
commit's values or break the group's single range: the commit is refused, nothing is published.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, List, Optional

from paimon_sql.exceptions import CommitConflictError
from paimon_sql.store.file_store import FileStore

if TYPE_CHECKING:
    from paimon_sql.manifest.manifest_file import ManifestEntry
    from paimon_sql.write.commit_message import CommitMessage


def check_conflicts(table: FileStore, message: CommitMessage, changes: Optional[List[ManifestEntry]]) -> None:
    """``changes``: the file entries other commits made to the message's partition since its base
    snapshot (None when unknown). A partial file whose row ids another commit touched meanwhile would
    hide that commit's values: refused, nothing is committed."""
    partial = [f for f in message.new_files if f.first_row_id is not None and f.write_cols]
    if not partial:
        return
    if changes is None:
        raise CommitConflictError(f"table {table.name}: snapshots committed since snapshot {message.base_snapshot}, "
                                  "which this update read, expired meanwhile; nothing was committed")
    for f in partial:
        lo, hi = f.first_row_id, f.first_row_id + f.row_count
        for e in changes:
            other = e.file
            if other.first_row_id is not None and other.first_row_id < hi and lo < other.first_row_id + other.row_count:
                raise CommitConflictError(
                    f"table {table.name}: another commit changed rows {lo}..{hi - 1} (file {other.file_name}) after "
                    f"snapshot {message.base_snapshot}, which this update read: For Data Evolution table, multiple "
                    "'MERGE INTO' operations have encountered conflicts, updating the same file, which can render "
                    "some updates ineffective. Nothing was committed.")
