"""BranchManager: ``branch/branch-<name>/`` directories of a table.

A branch starts as a copy of the main branch's schemas (an empty branch) or of one tag: the tag
file, its snapshot and the schemas up to that snapshot's, so the branch reads the tagged data
and goes on from there. Data and manifest files stay shared under the table root.
"""

from __future__ import annotations

import re
from typing import List, Optional, Tuple

from paimon_sql.exceptions import PaimonError
from paimon_sql.io import FileIO
from paimon_sql.table.paths import MAIN_BRANCH, PathFactory, branch_path

_PREFIX = "branch-"


class BranchError(PaimonError):
    """A branch that cannot be created, read or dropped as asked."""


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
        check_branch_name(name)
        if self.exists(name):
            if ignore_if_exists:
                return
            raise BranchError(f"branch '{name}' already exists")
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

    def drop(self, name: str) -> None:
        if name == MAIN_BRANCH:
            raise BranchError("the main branch cannot be dropped")
        if not self.exists(name):
            raise BranchError(f"branch '{name}' does not exist")
        self.io.delete(self.path(name))
