"""BranchManager: ``branch/branch-<name>/`` directories of a table.

A branch starts as a copy of the main branch's schemas (an empty branch) or of one tag: the tag
file, its snapshot and the schemas up to that snapshot's, so the branch reads the tagged data
and goes on from there. Data and manifest files stay shared under the table root, so nothing
here deletes one: dropping or fast-forwarding only removes metadata files, and what becomes
unreferenced is left to orphan cleanup (which, like expiry, keeps what any branch still reads).
"""

from __future__ import annotations

import re
from typing import Dict, List, Optional, Tuple

from paimon_sql.exceptions import BranchError
from paimon_sql.iceberg.branches import after_fast_forward
from paimon_sql.io import FileIO
from paimon_sql.io.paths import MAIN_BRANCH, PathFactory, branch_path
from paimon_sql.write.commit_message import CommitMessage

_PREFIX = "branch-"


def check_branch_name(name: str) -> str:
    """Paimon's rules for a new branch (not blank, not ``main``, not a number) and ours: only
    letters, digits, '_' and '-', so that ``t$branch_<name>`` always parses back to the branch.
    Every branch path is also checked by the path guard (:func:`branch_path`)."""
    if not name or not name.strip():
        raise BranchError("branch name must not be blank")
    if name == MAIN_BRANCH:
        raise BranchError(f"branch name '{MAIN_BRANCH}' is the default branch's")
    if name.isdigit() or not re.fullmatch(r"[A-Za-z0-9_\-]+", name):
        raise BranchError(f"branch name must be letters, digits, '_' or '-' and not only digits: '{name}'")
    return name


class BranchManager:
    def __init__(self, io: FileIO, root: str):
        self.io = io
        self.root = root.rstrip("/")

    def path(self, name: str) -> str:
        return branch_path(self.root, name)

    def exists(self, name: str) -> bool:
        return name == MAIN_BRANCH or self.io.exists(f"{self.path(name)}/schema")

    def branches(self) -> List[Tuple[str, Optional[int]]]:
        """(name, creation millis) of every branch but main, by name."""
        names = sorted(n[len(_PREFIX):] for n in self.io.list_dirs(f"{self.root}/branch") if n.startswith(_PREFIX))
        return [(n, self.io.modification_millis(self.path(n))) for n in names]

    def create(self, name: str, table, tag: Optional[str] = None, ignore_if_exists: bool = False) -> None:
        """``table``: the main branch's FileStoreTable (its schemas, tags and snapshots are copied)."""
        if not self.is_new(name, ignore_if_exists):
            return
        target = PathFactory(self.root, [], "parquet", branch=name)
        src = table.paths
        if tag is None:
            last_schema = table.schema.id
        else:
            tagged = table.tag_manager.get(tag)
            self.io.write_bytes(target.tag_path(tag), self.io.read_bytes(src.tag_path(tag)))
            self.io.write_bytes(target.snapshot_path(tagged.snapshot.id), tagged.snapshot.to_json().encode("utf-8"))
            self.io.write_bytes(f"{target.snapshot_dir}/LATEST", str(tagged.snapshot.id).encode())
            self.io.write_bytes(f"{target.snapshot_dir}/EARLIEST", str(tagged.snapshot.id).encode())
            last_schema = tagged.snapshot.schema_id
        for sid in table.schema_manager.list_ids():
            if sid <= last_schema:
                self.io.write_bytes(target.schema_path(sid), self.io.read_bytes(src.schema_path(sid)))

    def is_new(self, name: str, ignore_if_exists: bool) -> bool:
        """Whether branch ``name`` (a valid name) is to be made: False when it exists and that is
        to be ignored; an existing one otherwise refused."""
        check_branch_name(name)
        if not self.exists(name):
            return True
        if ignore_if_exists:
            return False
        raise BranchError(f"branch '{name}' already exists")

    def drop(self, name: str) -> None:
        self.check_existing(name, "dropped")
        self.io.delete(self.path(name))

    def check_existing(self, name: str, verb: str) -> None:
        if name == MAIN_BRANCH:
            raise BranchError(f"the main branch cannot be {verb}")
        if not self.exists(name):
            raise BranchError(f"branch '{name}' does not exist")

    def rename(self, old: str, new: str) -> None:
        """Paimon's renameBranch: the branch directory moves; its files name no branch inside."""
        self.check_existing(old, "renamed")
        check_branch_name(new)
        if self.exists(new):
            raise BranchError(f"branch '{new}' already exists")
        self.io.rename(self.path(old), self.path(new))

    def fast_forward(self, table, name: str) -> None:
        """Paimon's fastForward: ``table``'s branch (main, usually) takes branch ``name``'s state.
        Its snapshots from the branch's earliest one on, its schemas from that snapshot's schema on
        and its tags on those snapshots are removed, and the branch's snapshots, schemas and tags
        copied in. Unlike Java, which copies the branch's EARLIEST hint too, EARLIEST is the real
        earliest (the target's older snapshots stay and still expire)."""
        check_fast_forward(table.branch, name)
        source = table.switch_to_branch(name)
        src_snaps = source.snapshot_manager
        first = src_snaps.earliest_id()
        if first is None:
            raise BranchError(f"cannot fast-forward branch '{name}': it has no snapshot")
        first_schema = src_snaps.snapshot(first).schema_id
        dst, src = table.paths, source.paths
        snaps = table.snapshot_manager
        # Drop the target's later snapshots newest first, so a reader meanwhile sees a valid older line.
        for sid in reversed([i for i in snaps.listed_ids() if i >= first]):
            self.io.delete(dst.snapshot_path(sid))
        for tag in table.tag_manager.tags():
            if tag.snapshot.id >= first:
                self.io.delete(dst.tag_path(tag.name))
        for sid in table.schema_manager.list_ids():
            if sid >= first_schema:
                self.io.delete(dst.schema_path(sid))
        # Schemas before snapshots, so every snapshot a reader can see has its schema.
        for sid in source.schema_manager.list_ids():
            self.io.write_bytes(dst.schema_path(sid), self.io.read_bytes(src.schema_path(sid)))
        for tag in source.tag_manager.names():
            self.io.write_bytes(dst.tag_path(tag), self.io.read_bytes(src.tag_path(tag)))
        ids = src_snaps.listed_ids()
        for sid in ids:
            self.io.write_bytes(dst.snapshot_path(sid), self.io.read_bytes(src.snapshot_path(sid)))
        self.io.write_bytes(f"{dst.snapshot_dir}/LATEST", str(ids[-1]).encode())
        self.io.write_bytes(f"{dst.snapshot_dir}/EARLIEST", str(snaps.listed_ids()[0]).encode())
        after_fast_forward(table.switch_to_branch(table.branch), first)  # main's Iceberg metadata catches up

    def merge(self, table, source: str, target: str = MAIN_BRANCH) -> Optional[int]:
        """Paimon's mergeBranch: the data files live on branch ``source`` and not on ``target`` are
        committed to ``target`` as one APPEND snapshot (None when there are none). A file-level
        merge is only sound without a recorded fork point when both branches hold their whole
        history and it only ever appended, so, as Java, both must be append tables with every
        snapshot from 1 on being APPEND or ANALYZE, and the same columns; every schema the merged
        files were written with must be the same on both. Nothing is copied: the files are shared
        under the table root, so they stay referenced from both branches."""
        if source == target:
            raise BranchError(f"cannot merge branch '{source}' into itself")
        src, dst = table.switch_to_branch(source), table.switch_to_branch(target)
        for name, side in ((source, src), (target, dst)):
            _check_append_history(name, side)
        if [f.to_json() for f in src.schema.fields] != [f.to_json() for f in dst.schema.fields]:
            raise BranchError(f"cannot merge branch '{source}' into '{target}': their columns differ")
        present = {e.identifier() for e in dst.new_scan().plan_entries()}
        files = [e for e in src.new_scan().plan_entries() if e.identifier() not in present]
        for schema_id in sorted({e.file.schema_id for e in files}):
            if schema_id not in dst.schema_manager.list_ids() or \
                    src.schema_at(schema_id).to_json() != dst.schema_at(schema_id).to_json():
                raise BranchError(f"cannot merge branch '{source}' into '{target}': schema {schema_id} of its "
                                  "files differs between them")
        messages: Dict[tuple, CommitMessage] = {}
        for e in files:
            key = (e.partition, e.bucket, e.total_buckets)
            messages.setdefault(key, CommitMessage(*key)).new_files.append(e.file)
        return dst.new_commit().commit(list(messages.values()))


def _check_append_history(name: str, table) -> None:
    """Both sides of a merge: an append table whose snapshots 1..latest all exist and all appended."""
    if table.schema.primary_keys:
        raise BranchError(f"branch merge is for append tables, but branch '{name}' has a primary key")
    snaps = table.snapshot_manager
    ids = snaps.listed_ids()
    if not ids:
        raise BranchError(f"cannot merge branch '{name}': it has no snapshot")
    if ids != list(range(1, ids[-1] + 1)):
        raise BranchError(f"cannot merge branch '{name}': its snapshots do not all exist from 1 on "
                          "(a merge needs the whole append-only history)")
    for sid in ids:
        kind = snaps.snapshot(sid).commit_kind
        if kind not in ("APPEND", "ANALYZE"):
            raise BranchError(f"cannot merge branch '{name}': snapshot {sid} is {kind} "
                              "(a merge needs the whole append-only history)")


def check_fast_forward(current: str, name: str) -> None:
    """Paimon's fastForwardValidate: a named branch other than main and than the target."""
    if not name or not name.strip():
        raise BranchError("branch name must not be blank")
    if name == MAIN_BRANCH:
        raise BranchError(f"branch '{MAIN_BRANCH}' cannot be fast-forwarded from")
    if name == current:
        raise BranchError(f"fast-forward from the current branch '{name}' is not allowed")
