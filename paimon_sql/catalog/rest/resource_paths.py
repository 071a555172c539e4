"""The URLs of Paimon's REST catalog API under its prefix (Paimon's ``ResourcePaths``), each name one
percent-encoded path segment (a table's ``$branch_<b>`` suffix included).

Example: ``ResourcePaths("paimon").table("db", "t")`` -> ``/v1/paimon/databases/db/tables/t``.
"""

from __future__ import annotations

from paimon_sql.io.http_json import segment as _segment

CONFIG = "/v1/config"


class ResourcePaths:
    """Paths of one catalog, by the ``prefix`` its server's config gives (none: ``/v1/...``)."""

    def __init__(self, prefix: str = ""):
        self.base = "/v1" + (f"/{_segment(prefix)}" if prefix else "")

    def databases(self) -> str:
        return f"{self.base}/databases"

    def database(self, name: str) -> str:
        return f"{self.databases()}/{_segment(name)}"

    def tables(self, database: str) -> str:
        return f"{self.database(database)}/tables"

    def table(self, database: str, table: str) -> str:
        return f"{self.tables(database)}/{_segment(table)}"

    def rename_table(self) -> str:
        return f"{self.base}/tables/rename"

    def commit(self, database: str, table: str) -> str:
        return f"{self.table(database, table)}/commit"

    def snapshot(self, database: str, table: str) -> str:
        return f"{self.table(database, table)}/snapshot"

    def rollback(self, database: str, table: str) -> str:
        return f"{self.table(database, table)}/rollback"

    def branches(self, database: str, table: str) -> str:
        return f"{self.table(database, table)}/branches"

    def branch(self, database: str, table: str, branch: str) -> str:
        return f"{self.branches(database, table)}/{_segment(branch)}"

    def token(self, database: str, table: str) -> str:
        return f"{self.table(database, table)}/token"

    def replace(self, database: str, table: str) -> str:
        return f"{self.table(database, table)}/replace"

    def views(self, database: str) -> str:
        return f"{self.database(database)}/views"

    def view(self, database: str, view: str) -> str:
        return f"{self.views(database)}/{_segment(view)}"

    def functions(self, database: str) -> str:
        return f"{self.database(database)}/functions"

    def function(self, database: str, name: str) -> str:
        return f"{self.functions(database)}/{_segment(name)}"

    def rename_view(self) -> str:
        return f"{self.base}/views/rename"
