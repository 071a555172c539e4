"""Rebuild the file indexes of existing data files after the ``file-index.*`` options changed.

Each live data file of the current schema is read (only the indexed columns) and indexed as a
new file would be; the snapshot replaces each file's manifest entry by one with the new
``_EMBEDDED_FILE_INDEX`` / ``_EXTRA_FILES`` (a COMPACT commit: same data file, new identifier), as
Paimon's ``rewrite_file_index`` procedure does. As in Java (FileIndexProcessor), an index kept in
a ``.index`` file is written to a new file each time (``...-1.index``, ``...-2.index``: older
snapshots keep reading theirs), so such a file is always rewritten and counted; a file whose
embedded index comes out the same is left alone. Files of an older schema are indexed under their
own column names (matched by field id); columns they predate are skipped.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from functools import partial
from typing import Callable, Dict, Optional, Tuple

from paimon_sql.commit.table_commit import CommitStore
from paimon_sql.data import binary_row
from paimon_sql.data.predicate import Predicate
from paimon_sql.format.file_format import read_file
from paimon_sql.index.file_index import INDEX_SUFFIX, indexed_columns, next_index_name, write_index
from paimon_sql.manifest.manifest_file import DataFileMeta
from paimon_sql.read.file_skipping import names_in_file
from paimon_sql.write.commit_message import CommitMessage


def rewrite_file_index(table: CommitStore, partition_predicate: Optional[Predicate] = None,
                       commit_user: Optional[str] = None) -> Optional[int]:
    """Rewrite the indexes of the (matching partitions') files; the new snapshot id, or None."""
    return rewrite(table, partition_predicate, commit_user)[0]


def rewrite(table: CommitStore, partition_predicate: Optional[Predicate] = None, commit_user: Optional[str] = None,
            run: Optional[Callable] = None) -> Tuple[Optional[int], int, int]:
    """(snapshot id or None, partitions written, files re-indexed). ``run(fn, items)`` maps the
    per-file work (default: four threads here; the procedure passes Spark tasks)."""
    work = [(e.partition, e.bucket, e.total_buckets, e.file)
            for e in table.new_scan().filter(partition_predicate).plan_entries()]
    work.sort(key=lambda w: (w[0], w[1]))
    if run is None:
        def run(fn, items):
            with ThreadPoolExecutor(max_workers=4) as pool:
                return list(pool.map(fn, items))
    rewritten = run(partial(reindex, table), work)
    messages: Dict[Tuple[bytes, int], CommitMessage] = {}
    for (partition, bucket, total, before), after in zip(work, rewritten):
        if before == after:
            continue
        msg = messages.setdefault((partition, bucket), CommitMessage(partition, bucket, total))
        msg.compact_before.append(before)
        msg.compact_after.append(after)
    if not messages:
        return None, 0, 0
    snapshot = table.new_commit(commit_user).commit_or_abort(list(messages.values()))
    return snapshot, len({p for p, _ in messages}), sum(len(m.compact_after) for m in messages.values())


def reindex(table: CommitStore, item) -> DataFileMeta:
    """One data file (partition, bucket, total buckets, file) indexed anew: its new metadata."""
    partition, bucket, _, f = item
    columns = sorted({c.column for c in indexed_columns(table.schema.options)})
    part_types = [t.type for t in table.schema.fields_of(table.schema.partition_keys)]
    path = table.paths.data_file_path(binary_row.from_bytes(partition, part_types), bucket, f.file_name,
                                      f.external_path)
    name_of = names_in_file(table, f)
    in_file = [name_of(c) for c in columns if name_of(c) is not None]
    old_index = next((x for x in f.extra_files if x.endswith(INDEX_SUFFIX)), None)
    index_path = None if old_index is None else f"{path.rsplit('/', 1)[0]}/{next_index_name(old_index)}"
    if in_file:
        rows = read_file(table.io, path, f.file_name.rsplit(".", 1)[-1], in_file)
        embedded, extra = write_index(table, table.schema_at(f.schema_id), rows, path, name_of, index_path)
    else:
        embedded, extra = None, ()
    kept = tuple(x for x in f.extra_files if not x.endswith(INDEX_SUFFIX))
    return replace(f, embedded_index=embedded, extra_files=kept + extra)
