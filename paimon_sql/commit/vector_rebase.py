"""Deletion vectors written on an older snapshot, joined with the bucket's newer ones at commit.

Two DELETEs of an append table with deletion vectors, started on one snapshot, each write the
bucket's vectors anew (old vectors and their own positions). Whichever commits second would replace
the first's vectors and bring its deleted rows back; so its vectors are joined with those of the
latest snapshot before it commits, and both deletes stay. A delete whose rows were rewritten since
(a compaction moved them to a new file) cannot be joined: the commit conflicts.
"""

from __future__ import annotations

from dataclasses import replace
from typing import List

from paimon_sql.exceptions import CommitConflictError
from paimon_sql.index import deletion_vector as dv
from paimon_sql.manifest.manifest_file import ADD, DELETE, IndexManifestEntry
from paimon_sql.store.file_store import FileStore
from paimon_sql.write.commit_message import CommitMessage, delete_index_files


def rebase_vectors(table: FileStore, m: CommitMessage, current: List[IndexManifestEntry], live: List[str]) -> None:
    """``m``'s deletion vectors were built on older index files than ``current`` (the bucket's
    files in the latest snapshot): rewrite them as the union of both, so a concurrent delete is
    kept, not replaced. The files ``m`` newly deletes from must still be live (else their rows
    moved: :class:`CommitConflictError`); vectors of files gone since are dropped."""
    ours = [c for c in m.index_changes if c.index_type == dv.INDEX_TYPE]
    before = dv.read_vectors(table, [c for c in ours if c.kind == DELETE])
    after = dv.read_vectors(table, [c for c in ours if c.kind == ADD])
    alive = set(live)
    moved = sorted(name for name, v in after.items() if v != before.get(name) and name not in alive)
    if moved:
        raise CommitConflictError(f"table {table.name}: rows to delete were rewritten by a concurrent commit "
                                  f"({', '.join(moved[:3])})")
    merged = dv.read_vectors(table, current)
    for name, v in after.items():
        merged[name] = merged[name] | v if name in merged else v
    merged = {name: v for name, v in merged.items() if name in alive}
    new = [dv.write_index_file(table, m.partition, m.bucket, merged)] if merged else []
    delete_index_files(table, [c for c in ours if c.kind == ADD])
    m.index_changes = ([c for c in m.index_changes if c.index_type != dv.INDEX_TYPE]
                       + [replace(e, kind=DELETE) for e in current] + new)
