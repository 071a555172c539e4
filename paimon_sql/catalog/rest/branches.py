"""CatalogBranchManager: the branches of a table a REST catalog keeps, made by its server (Paimon's
``CatalogBranchManager``).

A branch's files are the server's to write: it copies the schemas (and a tag's snapshot) when it
creates one, and it knows the branch's latest snapshot from then on, so commits to ``t$branch_b``
find it. What a branch holds is still read from the table's files, as the plain BranchManager
reads it; only the changes go to the server. Names are checked here first, so a name the
filesystem catalog would refuse is never sent.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Optional

from paimon_sql.exceptions import BranchError
from paimon_sql.io import FileIO
from paimon_sql.table.branch_manager import BranchManager, check_branch_name, check_fast_forward

if TYPE_CHECKING:
    from paimon_sql.catalog.base import Identifier
    from paimon_sql.catalog.rest.rest_api import RESTApi


class CatalogBranchManager(BranchManager):
    def __init__(self, io: FileIO, root: str, api: "RESTApi", ident: "Identifier", changed: Callable[[], None]):
        super().__init__(io, root)
        self.api, self.ident = api, ident
        self.changed = changed  # told after each change: what the catalog knows of latest snapshots is stale

    def create(self, name: str, table, tag: Optional[str] = None, ignore_if_exists: bool = False) -> None:
        if not self.is_new(name, ignore_if_exists):
            return
        if tag is not None:
            table.tag_manager.get(tag)  # a missing tag is refused with our message
        self.api.create_branch(self.ident.database, self.ident.table, name, tag)
        self.changed()

    def drop(self, name: str) -> None:
        self.check_existing(name, "dropped")
        self.api.drop_branch(self.ident.database, self.ident.table, name)
        self.changed()

    def rename(self, old: str, new: str) -> None:
        self.check_existing(old, "renamed")
        check_branch_name(new)
        self.api.rename_branch(self.ident.database, self.ident.table, old, new)
        self.changed()

    def fast_forward(self, table, name: str) -> None:
        check_fast_forward(table.branch, name)
        self.check_existing(name, "fast-forwarded")
        if table.switch_to_branch(name).snapshot_manager.earliest_id() is None:
            raise BranchError(f"cannot fast-forward branch '{name}': it has no snapshot")
        self.api.fast_forward(self.ident.database, self.ident.table, name)
        self.changed()
