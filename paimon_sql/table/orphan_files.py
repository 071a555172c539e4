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

:func:`referenced_files` (name → path of what the table still references) is the walk rollback
uses too. ``expire.referenced_files`` answers the same question as relative paths, but passes
over any snapshot that vanishes, the latest included, and does not follow commits made while it
reads: the #7710 hole. The two should become one walk with these rules.
"""

from __future__ import annotations

import os
import time
from typing import Dict, Iterator, List, Optional, Set, Tuple

import pyarrow.fs as pafs

from paimon_sql.exceptions import CorruptMetadataError, PaimonError, SnapshotNotFoundError
from paimon_sql.format import binary_row
from paimon_sql.format.snapshot import Snapshot

ONE_DAY_MILLIS = 24 * 3600 * 1000
CHANGELOG_DIR = "changelog"
_MISSING = (FileNotFoundError, SnapshotNotFoundError)


# -- references -------------------------------------------------------------------------------

class References:
    """Name → path (``files``) of what the snapshots given to :meth:`add` need: their manifest
    lists, manifests, the data files (and extra files) those name, index manifests, index files
    and statistics. Snapshots share most manifests; each list and manifest is read once, so the
    walk grows with the table's files, not with snapshots × files."""

    def __init__(self, table, missing_ok: bool = False):
        self.table = table
        self.missing_ok = missing_ok  # a missing metadata file is passed over (resumed rollback)
        self.files: Dict[str, str] = {}
        self._read: Set[str] = set()
        self._types = [f.type for f in table.schema.fields_of(table.schema.partition_keys)]
        self._bucket_dirs: Dict[Tuple[bytes, int], str] = {}

    def add(self, snap: Snapshot) -> "References":
        """Raises FileNotFoundError when a metadata file ``snap`` names is missing (unless
        ``missing_ok``); what was read before stays referenced."""
        paths = self.table.paths
        for name in (snap.base_manifest_list, snap.delta_manifest_list, snap.changelog_manifest_list):
            if name:
                self.files[name] = paths.manifest_path(name)
                for meta in self._once(self.table.manifest_list, name):
                    self.files[meta.file_name] = paths.manifest_path(meta.file_name)
                    self._add_entries(self._once(self.table.manifest_entries, meta.file_name))
        if snap.index_manifest:
            self.files[snap.index_manifest] = paths.manifest_path(snap.index_manifest)
            for e in self._once(self.table.index_manifest_entries, snap.index_manifest):
                self.files[e.file_name] = e.external_path or paths.index_path(e.file_name)
        if snap.statistics:
            self.files[snap.statistics] = paths.statistics_path(snap.statistics)
        return self

    def _once(self, reader, name: str) -> list:
        if name in self._read:
            return []
        try:
            records = reader(name)
        except FileNotFoundError:
            if self.missing_ok:
                return []
            raise
        self._read.add(name)
        return records

    def _add_entries(self, entries) -> None:
        for e in entries:
            f = e.file
            if f.external_path:
                folder = os.path.dirname(f.external_path)
            else:
                folder = self._bucket_dirs.get((e.partition, e.bucket))
                if folder is None:
                    values = binary_row.from_bytes(e.partition, self._types)
                    folder = self._bucket_dirs[(e.partition, e.bucket)] = self.table.paths.bucket_dir(values, e.bucket)
            for file_name in (f.file_name, *f.extra_files):
                self.files[file_name] = f"{folder}/{file_name}"


def snapshot_files(table, snap: Snapshot, missing_ok: bool = False) -> Dict[str, str]:
    """Name → path of every file one snapshot needs (see :class:`References`)."""
    return References(table, missing_ok).add(snap).files


def branch_tables(table) -> List:
    """The table seen from main and from each of its branches (all share data and manifests).
    A branch without a schema is damaged: refused, as Paimon's validBranches does."""
    main = table if table.branch == "main" else _main(table)
    out = [main]
    for name, _ in main.branch_manager.branches():
        try:
            out.append(main.switch_to_branch(name))
        except PaimonError:
            raise CorruptMetadataError(f"branch '{name}' of table {table.name} has no schema; "
                                       "check it by hand before removing orphan files") from None
    return out


def _main(table):
    from paimon_sql.table.table import FileStoreTable
    from paimon_sql.table.paths import PathFactory
    from paimon_sql.table.schema_manager import SchemaManager
    schema = SchemaManager(table.io, PathFactory(table.path, [], "parquet")).latest()
    return FileStoreTable(table.io, table.path, schema, table.name)


def changelog_ids(table) -> List[int]:
    """Ids of ``changelog/changelog-N`` files (changelogs kept longer than their snapshots)."""
    names = table.io.list_names(f"{table.paths.branch_root}/{CHANGELOG_DIR}")
    return sorted(int(n[10:]) for n in names if n.startswith("changelog-") and n[10:].isdigit())


def _changelog_path(table, cid: int) -> str:
    return f"{table.paths.branch_root}/{CHANGELOG_DIR}/changelog-{cid}"


def _snapshot_references(table, skip_ids: Set[int], refs: References) -> None:
    """Files of every snapshot of one branch, following commits made while reading until the
    latest is stable. A snapshot that vanishes is skipped unless it is (still) the latest."""
    sm = table.snapshot_manager
    done: Set[int] = set(skip_ids)
    while True:
        pending = [i for i in sm.listed_ids() if i not in done]
        latest = sm.latest_id()
        if latest is not None and latest not in done and latest not in pending:
            pending.append(latest)
        if not pending:
            return
        for sid in pending:
            done.add(sid)
            try:
                refs.add(sm.snapshot(sid))
            except _MISSING as e:
                if sid >= (sm.latest_id() or 0):
                    raise CorruptMetadataError(f"latest snapshot {sid} of table {table.name} cannot be read "
                                               f"whole ({e}); nothing was deleted") from None


def _kept_references(table, read, exists, what: str, refs: References) -> None:
    """Add the files of a tag or changelog; one that vanishes while read is skipped, one still
    present but unreadable stops everything."""
    try:
        refs.add(read())
    except _MISSING as e:
        if exists():
            raise CorruptMetadataError(f"{what} of table {table.name} cannot be read whole ({e}); "
                                       "nothing was deleted") from None


def referenced_files(table, skip: Optional[Dict[str, Tuple[Set[int], Set[str]]]] = None) -> Dict[str, str]:
    """Name → path of every file any snapshot, tag, changelog or branch of the table references
    (consumers protect snapshots, which keep their files). ``skip``: per branch, snapshot (and
    changelog) ids and tag names to leave out (what a rollback removes)."""
    files: Dict[str, str] = {}
    for bt in branch_tables(table):
        refs = References(bt)
        skip_ids, skip_tags = (skip or {}).get(bt.branch, (set(), set()))
        _snapshot_references(bt, skip_ids, refs)
        for name in bt.tag_manager.names():
            if name not in skip_tags:
                _kept_references(bt, lambda n=name: bt.tag_manager.get(n).snapshot,
                                 lambda n=name: bt.tag_manager.exists(n), f"tag '{name}'", refs)
        for cid in (c for c in changelog_ids(bt) if c not in skip_ids):
            path = _changelog_path(bt, cid)
            _kept_references(bt, lambda p=path: Snapshot.from_json(bt.io.read_text(p)),
                             lambda p=path: bt.io.exists(p), f"changelog {cid}", refs)
        files.update(refs.files)
    return files


# -- listing ----------------------------------------------------------------------------------

def _files(io, folder: str) -> Iterator[pafs.FileInfo]:
    selector = pafs.FileSelector(io.arrow_path(folder), recursive=False, allow_not_found=True)
    yield from (i for i in io.fs.get_file_info(selector) if i.type == pafs.FileType.File)


def _bucket_dirs(io, folder: str, levels: int) -> Iterator[str]:
    """Bucket directories under ``levels`` of partition directories (names with '=')."""
    for name in io.list_dirs(folder):
        if levels == 0 and name.startswith("bucket-"):
            yield f"{folder}/{name}"
        elif levels > 0 and "=" in name:
            yield from _bucket_dirs(io, f"{folder}/{name}", levels - 1)


def _candidates(table, branches) -> Iterator[Tuple[str, pafs.FileInfo]]:
    """(folder, file) of every file orphan removal may judge: manifest/, index/, statistics/,
    bucket directories, and what is not a snapshot, changelog or hint in each branch's
    snapshot/ and changelog/."""
    io, root = table.io, table.path
    folders = [f"{root}/manifest", f"{root}/index", f"{root}/statistics",
               *_bucket_dirs(io, root, len(table.schema.partition_keys))]
    for folder in folders:
        yield from ((folder, i) for i in _files(io, folder))
    for bt in branches:
        for folder, prefix in ((bt.paths.snapshot_dir, "snapshot-"),
                               (f"{bt.paths.branch_root}/{CHANGELOG_DIR}", "changelog-")):
            yield from ((folder, i) for i in _files(io, folder)
                        if not i.base_name.startswith(prefix) and i.base_name not in ("EARLIEST", "LATEST"))


# -- removal ----------------------------------------------------------------------------------

def remove_orphan_files(table, older_than_millis: Optional[int] = None, dry_run: bool = False) -> Tuple[int, int]:
    """Delete (or with ``dry_run`` only count) the table's unreferenced files last modified before
    ``older_than_millis`` (default: one day ago); returns (files, total bytes). Bucket and
    partition directories left empty are removed too."""
    now = int(time.time() * 1000)
    if older_than_millis is None:
        older_than_millis = now - ONE_DAY_MILLIS
    elif older_than_millis > now:
        raise PaimonError("older_than must not be later than now: files younger than it may belong to "
                          "a write not committed yet")
    branches = branch_tables(table)
    stale = [(folder, i) for folder, i in _candidates(table, branches)
             if i.mtime is not None and i.mtime.timestamp() * 1000 < older_than_millis]
    if not stale:
        return 0, 0
    referenced = referenced_files(table)  # read after listing: see the module docstring
    orphans = [(folder, i) for folder, i in stale if i.base_name not in referenced]
    if not dry_run:
        for folder, info in orphans:
            table.io.delete(f"{folder}/{info.base_name}")
        remove_empty_dirs(table, {folder for folder, _ in orphans})
    return len(orphans), sum(i.size for _, i in orphans)


def remove_empty_dirs(table, folders: Set[str]) -> None:
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
