"""The files a table still references: the one walk expiry, orphan cleanup and rollback share.

:func:`referenced_files` gives the absolute path of every file something kept needs, across all
branches (they share the data, manifest, index and statistics directories); :class:`References`
answers the same for single snapshots (what expiry and rollback weigh before deleting).

Speed: a snapshot committed on top of the one before it lives on that one's files plus what its
delta adds: one whole read, then one delta per snapshot. That holds only within one lineage: after
a fast-forward main's ids go on with the branch's snapshots, built on the branch's, so a snapshot
is read through its predecessor only when every manifest its base names was in that predecessor's
base or delta (manifest names are unique); else (a fast-forward, or manifests merged) it is read
whole. Manifests come through the table's cache, so each manifest list and manifest is read once.

Safety, the rules of Paimon issue #7710 (orphan cleanup lost data when every snapshot it read had
expired meanwhile): a caller lists what it may delete first and calls this after; snapshots
committed while it reads are read too until the latest is stable; a snapshot that vanishes while
read is passed over only when a later one exists, and the latest of every branch must be read
whole, else :class:`CorruptMetadataError` ("nothing was deleted"). A tag or long-lived changelog
that vanishes is passed over; one still present but unreadable stops the walk the same way.
"""

from __future__ import annotations

import os
from typing import Dict, Iterable, List, Optional, Set, Tuple

from paimon_sql.data import binary_row
from paimon_sql.exceptions import CorruptMetadataError, PaimonError, SnapshotNotFoundError
from paimon_sql.io.paths import MAIN_BRANCH, PathFactory
from paimon_sql.manifest.manifest_file import ADD, ManifestEntry, merge_entries
from paimon_sql.schema.schema_manager import SchemaManager
from paimon_sql.snapshot.snapshot import Snapshot
from paimon_sql.store.file_store import FileStore


CHANGELOG_DIR = "changelog"
_MISSING = (FileNotFoundError, SnapshotNotFoundError)


class References:
    """Absolute paths of the files snapshots of one table (branch) name: manifest lists,
    manifests, data files and their extra files (``.index``), changelog files, index manifests,
    index files (deletion vectors, HASH) and statistics files. With ``missing_ok`` a metadata
    file already deleted is passed over (a resumed expiry or rollback)."""

    def __init__(self, table: FileStore, missing_ok: bool = False):
        self.table = table
        self.missing_ok = missing_ok
        self._types = [f.type for f in table.schema.fields_of(table.schema.partition_keys)]
        self._bucket_dirs: Dict[Tuple[bytes, int], str] = {}

    def _read(self, reader, name: Optional[str]) -> list:
        if not name:
            return []
        try:
            return reader(name)
        except FileNotFoundError:
            if self.missing_ok:
                return []
            raise

    def data(self, e: ManifestEntry) -> List[str]:
        """A data or changelog file and its extra files."""
        f = e.file
        if f.external_path:
            folder = os.path.dirname(f.external_path)
        else:
            folder = self._bucket_dirs.get((e.partition, e.bucket))
            if folder is None:
                values = binary_row.from_bytes(e.partition, self._types)
                folder = self._bucket_dirs[(e.partition, e.bucket)] = self.table.paths.bucket_dir(values, e.bucket)
        return [f"{folder}/{name}" for name in (f.file_name, *f.extra_files)]

    def entries(self, list_name: Optional[str]) -> List[ManifestEntry]:
        return [e for m in self._read(self.table.manifest_list, list_name)
                for e in self._read(self.table.manifest_entries, m.file_name)]

    def metadata(self, snap: Snapshot) -> Set[str]:
        """Manifest lists, manifests, index manifest, index files and statistics ``snap`` names
        (its own lists and index manifest even when they cannot be read, with ``missing_ok``)."""
        t = self.table
        out = set()
        for name in (snap.base_manifest_list, snap.delta_manifest_list, snap.changelog_manifest_list):
            if name:
                out.add(t.paths.manifest_path(name))
                out.update(t.paths.manifest_path(m.file_name) for m in self._read(t.manifest_list, name))
        if snap.index_manifest:
            out.add(t.paths.manifest_path(snap.index_manifest))
            out.update(e.external_path or t.paths.index_path(e.file_name)
                       for e in self._read(t.index_manifest_entries, snap.index_manifest))
        if snap.statistics:
            out.add(t.paths.statistics_path(snap.statistics))
        return out

    def live_data(self, snap: Snapshot) -> Set[str]:
        """Data files live in ``snap`` (its base and delta merged)."""
        entries = merge_entries(self.entries(snap.base_manifest_list) + self.entries(snap.delta_manifest_list))
        return {p for e in entries for p in self.data(e)}

    def added_data(self, snap: Snapshot) -> Set[str]:
        """Data files ``snap``'s delta added."""
        return {p for e in self.entries(snap.delta_manifest_list) if e.kind == ADD for p in self.data(e)}

    def changelog(self, snap: Snapshot) -> Set[str]:
        return {p for e in self.entries(snap.changelog_manifest_list) if e.kind == ADD for p in self.data(e)}

    def whole(self, snap: Snapshot) -> Set[str]:
        """Every file ``snap`` needs."""
        return self.metadata(snap) | self.live_data(snap) | self.changelog(snap)

    def branch(self, skip_ids: Iterable[int] = (), skip_tags: Iterable[str] = ()) -> Set[str]:
        """Every file the snapshots, tags and long-lived changelogs of this branch need, but for
        the snapshot (and changelog) ids and tag names skipped (what a rollback removes)."""
        t = self.table
        skip_ids, skip_tags = set(skip_ids), set(skip_tags)
        out = self._snapshots(skip_ids)
        for name in t.tag_manager.names():
            if name not in skip_tags:
                out |= self._kept(lambda n=name: t.tag_manager.get(n).snapshot,
                                  lambda n=name: t.tag_manager.exists(n), f"tag '{name}'")
        for cid in changelog_ids(t):
            if cid not in skip_ids:
                path = changelog_path(t, cid)
                out |= self._kept(lambda p=path: Snapshot.read(t.io, p),
                                  lambda p=path: t.io.exists(p), f"changelog {cid}")
        return out

    def _snapshots(self, done: Set[int]) -> Set[str]:
        """Files of every snapshot of the branch, following commits made meanwhile until the
        latest is stable; a snapshot right after one read adds only its delta's files."""
        sm = self.table.snapshot_manager
        out: Set[str] = set()
        previous: Optional[Snapshot] = None
        while True:
            pending = [i for i in sm.listed_ids() if i not in done]
            latest = sm.latest_id()
            if latest is not None and latest not in done and latest not in pending:
                pending.append(latest)
            if not pending:
                return out
            for sid in pending:
                done.add(sid)
                try:
                    snap = sm.snapshot(sid)
                    data = self.added_data(snap) if self._follows(previous, snap) else self.live_data(snap)
                    out |= self.metadata(snap) | self.changelog(snap) | data
                except _MISSING as e:
                    if sid >= (sm.latest_id() or 0):
                        raise CorruptMetadataError(f"latest snapshot {sid} of table {self.table.name} cannot be "
                                                   f"read whole ({e}); nothing was deleted") from None
                    continue
                previous = snap

    def _follows(self, previous: Optional[Snapshot], snap: Snapshot) -> bool:
        """Whether ``snap`` was committed on top of ``previous``: the id before it, and every
        manifest of its base one of ``previous``'s base or delta."""
        if previous is None or previous.id != snap.id - 1:
            return False
        lists = self.table.manifest_list
        before = {m.file_name for name in (previous.base_manifest_list, previous.delta_manifest_list)
                  for m in self._read(lists, name)}
        return all(m.file_name in before for m in self._read(lists, snap.base_manifest_list))

    def _kept(self, read, exists, what: str) -> Set[str]:
        try:
            return self.whole(read())
        except _MISSING as e:
            if exists():
                raise CorruptMetadataError(f"{what} of table {self.table.name} cannot be read whole ({e}); "
                                           "nothing was deleted") from None
            return set()


def snapshot_files(table: FileStore, snap: Snapshot) -> Set[str]:
    """Absolute paths of every file one snapshot needs; raises when one of its metadata files is
    missing."""
    return References(table).whole(snap)


def branch_tables(table: FileStore) -> List:
    """The table seen from main and from each of its branches (all share data and manifests).
    A branch without a schema is damaged: refused, as Paimon's validBranches does."""
    main = table if table.branch == "main" else _main(table)
    out = [main]
    for name, _ in main.branch_manager.branches():
        try:
            out.append(main.switch_to_branch(name))
        except PaimonError:
            raise CorruptMetadataError(f"branch '{name}' of table {table.name} has no schema; "
                                       "check it by hand before deleting files") from None
    return out


def _main(table: FileStore):
    schema = SchemaManager(table.io, PathFactory(table.path, [], "parquet")).latest()
    return table.with_schema(schema, MAIN_BRANCH)


def changelog_ids(table: FileStore) -> List[int]:
    """Ids of ``changelog/changelog-N`` files (changelogs kept longer than their snapshots)."""
    names = table.io.list_names(f"{table.paths.branch_root}/{CHANGELOG_DIR}")
    return sorted(int(n[10:]) for n in names if n.startswith("changelog-") and n[10:].isdigit())


def changelog_path(table: FileStore, cid: int) -> str:
    return f"{table.paths.branch_root}/{CHANGELOG_DIR}/changelog-{cid}"


def _own_files(bt) -> Set[str]:
    """The branch's snapshot, changelog, schema, tag and consumer files and its hints (strays in
    those directories are not among them)."""
    p = bt.paths
    kinds = ((p.snapshot_dir, "snapshot-"), (f"{p.branch_root}/{CHANGELOG_DIR}", "changelog-"),
             (p.schema_dir, "schema-"), (p.tag_dir, "tag-"), (p.consumer_dir, "consumer-"))
    return {f"{folder}/{n}" for folder, prefix in kinds for n in bt.io.list_names(folder)
            if n.startswith(prefix) or (prefix in ("snapshot-", "changelog-") and n in ("EARLIEST", "LATEST"))}


def referenced_files(table: FileStore, skip: Optional[Dict[str, Tuple[Set[int], Set[str]]]] = None) -> Set[str]:
    """Absolute path of every file of the table something kept still needs: across all branches,
    every snapshot, tag, consumer, schema, hint and long-lived changelog file, and every file those
    name (see :class:`References`); data files with an external path as that path. ``skip``: per
    branch, snapshot (and changelog) ids and tag names to leave out (what a rollback removes).
    A file written by a commit still in flight is not in it, hence orphan cleanup's age threshold."""
    out: Set[str] = set()
    for bt in branch_tables(table):
        skip_ids, skip_tags = (skip or {}).get(bt.branch, (set(), set()))
        out |= References(bt).branch(skip_ids, skip_tags) | _own_files(bt)
    return out
