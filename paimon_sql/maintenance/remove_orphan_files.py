"""remove_orphan_files: delete the files of a table directory that nothing references any more
(Paimon's OrphanFilesClean / LocalOrphanFilesClean).

Orphans come from writes that died before their commit, from expiry or rollback interrupted
between deleting a snapshot and its files, and from stray copies. A file is deleted only when it
is older than ``older_than`` (a live writer's staged files are young) **and** no snapshot, tag,
changelog or branch of the table references it.

The race that lost data in Paimon (issue #7710): references were read after snapshots were
listed, a snapshot expired in between was silently skipped, and when all of them were skipped
every old file looked orphaned. Here the candidates are listed first and the references read
after; a snapshot that vanishes while being read is skipped only if a later one exists, and
snapshots committed meanwhile are read too until the latest is stable. The latest snapshot of
every branch must be read whole, else nothing is deleted: expiry never deletes the latest, so
every file still live is referenced by a snapshot read in full.

The reference walk and those rules live in :mod:`paimon_sql.store.references`, shared with
expiry and rollback. A candidate is matched by file name, as Paimon does.
"""

from __future__ import annotations

import os
import posixpath
import time
from functools import partial
from typing import Callable, Iterator, List, Optional, Set, Tuple

import pyarrow.fs as pafs

from paimon_sql.exceptions import PaimonError
from paimon_sql.store.file_store import FileStore
from paimon_sql.store.references import CHANGELOG_DIR, branch_tables, referenced_files


ONE_DAY_MILLIS = 24 * 3600 * 1000


# -- listing ----------------------------------------------------------------------------------

def _files(io, folder: str) -> Iterator[pafs.FileInfo]:
    selector = pafs.FileSelector(io.arrow_path(folder), recursive=False, allow_not_found=True)
    try:
        infos = io.fs.get_file_info(selector)
    except FileNotFoundError:  # made between Arrow's failed listing and its check (a table's first commit)
        infos = io.fs.get_file_info(selector)
    yield from (i for i in infos if i.type == pafs.FileType.File)


def _bucket_dirs(io, folder: str, levels: int) -> Iterator[str]:
    """Bucket directories under ``levels`` of partition directories (names with '=')."""
    for name in io.list_dirs(folder):
        if levels == 0 and name.startswith("bucket-"):
            yield f"{folder}/{name}"
        elif levels > 0 and "=" in name:
            yield from _bucket_dirs(io, f"{folder}/{name}", levels - 1)


_HINTS = ("EARLIEST", "LATEST")


def _folders(table: FileStore, branches) -> List[Tuple[str, Optional[str]]]:
    """(folder, prefix of the names kept out of judgement) of every folder orphan removal may
    judge: manifest/, index/, statistics/, bucket directories, and in each branch's snapshot/ and
    changelog/ what is not a snapshot, changelog or hint."""
    io, root = table.io, table.path
    folders: List[Tuple[str, Optional[str]]] = [
        (f, None) for f in (f"{root}/manifest", f"{root}/index", f"{root}/statistics",
                            *_bucket_dirs(io, root, len(table.schema.partition_keys)))]
    for bt in branches:
        folders += [(bt.paths.snapshot_dir, "snapshot-"), (f"{bt.paths.branch_root}/{CHANGELOG_DIR}", "changelog-")]
    return folders


def _stale(io, older_than_millis: int, folder: Tuple[str, Optional[str]]) -> List[Tuple[str, str, int]]:
    """(folder, name, size) of the folder's files last modified before the cut-off (one task)."""
    path, kept_prefix = folder
    return [(path, i.base_name, i.size) for i in _files(io, path)
            if (kept_prefix is None or not (i.base_name.startswith(kept_prefix) or i.base_name in _HINTS))
            and i.mtime is not None and i.mtime.timestamp() * 1000 < older_than_millis]


def _delete(io, paths: List[str]) -> int:
    for p in paths:
        io.delete(p)
    return len(paths)


def _in_process(fn: Callable, items: list) -> list:
    return [fn(item) for item in items]


# -- removal ----------------------------------------------------------------------------------

def remove_orphan_files(table: FileStore, older_than_millis: Optional[int] = None, dry_run: bool = False,
                        map_tasks: Callable[[Callable, list], list] = _in_process) -> Tuple[int, int]:
    """Delete (or with ``dry_run`` only count) the table's unreferenced files last modified before
    ``older_than_millis`` (default: one day ago); returns (files, total bytes). Bucket and
    partition directories left empty are removed too.

    ``map_tasks(fn, items)`` runs the per-folder listing and per-chunk deletion; in process by
    default, in Spark tasks for the procedure's distributed mode
    (:mod:`paimon_sql.spark.orphan_files`). The reference walk stays here, after the listing."""
    now = int(time.time() * 1000)
    if older_than_millis is None:
        older_than_millis = now - ONE_DAY_MILLIS
    elif older_than_millis > now:
        raise PaimonError("older_than must not be later than now: files younger than it may belong to "
                          "a write not committed yet")
    branches = branch_tables(table)
    stale = [f for listed in map_tasks(partial(_stale, table.io, older_than_millis), _folders(table, branches))
             for f in listed]
    if not stale:
        return 0, 0
    referenced = {posixpath.basename(p) for p in referenced_files(table)}  # read after listing: see above
    orphans = [(folder, name, size) for folder, name, size in stale if name not in referenced]
    if not dry_run and orphans:
        paths = [f"{folder}/{name}" for folder, name, _ in orphans]
        chunk = max(1, -(-len(paths) // 64))
        map_tasks(partial(_delete, table.io), [paths[i:i + chunk] for i in range(0, len(paths), chunk)])
        remove_empty_dirs(table, {folder for folder, _, _ in orphans})
    return len(orphans), sum(size for _, _, size in orphans)


def remove_empty_dirs(table: FileStore, folders: Set[str]) -> None:
    """Empty bucket directories, then their partition directories up to the table root. Only
    local directories: ``rmdir`` refuses a directory a writer has just put a file in (object
    stores have no empty directories)."""
    io, root = table.io, table.path
    if io.scheme != "":
        return
    for folder in sorted(folders, key=len, reverse=True):
        name = folder.rsplit("/", 1)[-1]
        if not name.startswith("bucket-"):
            continue
        while folder != root and folder.startswith(root + "/") and not io.list_names(folder):
            try:
                os.rmdir(io.arrow_path(folder))
            except OSError:  # a writer put a file there meanwhile
                break
            folder = folder.rsplit("/", 1)[0]
