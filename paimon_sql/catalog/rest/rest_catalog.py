"""RESTCatalog: databases, tables and views kept by a Paimon REST catalog server (``metastore = rest``).

The server owns the names, the schemas and each table's versions; the data stay where the server
says a table lives (its ``path``), and paimon-sql reads and writes the files there itself, as Java
Paimon's RESTCatalog does. What the server owns goes to it, through the table's
:class:`CatalogEnvironment`: the latest snapshot is the one the server names (older ones are
read from the files); a commit sends the finished snapshot to ``.../commit`` with the uuid
of the snapshot it was built on (the server refuses it when another came first, and the commit is
built again on the new latest); ALTER TABLE sends the schema changes (checked here first, so what
we would refuse is never sent); a rollback and a branch's creation, drop, rename and fast-forward
ask the server. Tags are the table's files, written here (as Java's client writes them). Branches
are named ``t$branch_<b>`` on the wire, as Paimon names them.

Options are Paimon's: ``uri``, ``warehouse`` (the name the server knows the warehouse by),
``token.provider`` = ``bear`` with ``token``, ``header.<name>``; the server's config adds its own
(storage options for the table paths among them).

Caveats: a table the server calls external (``isExternal``) is committed to its files directly,
as Java does. With ``data-token.enabled`` a table's files are reached with the credentials the
server vends for it (``.../token``). Format tables are refused by name; so is a commit whose
outcome the server left unknown and whose snapshot is not on storage afterwards.

Example::

    catalog = load_catalog("my_wh", {"metastore": "rest", "uri": "http://127.0.0.1:8181",
                                     "token.provider": "bear", "token": "secret"})
    catalog.list_databases()
"""

from __future__ import annotations

import json
import time
from dataclasses import replace
from functools import partial
from typing import Dict, List, Optional, Sequence, Tuple

from paimon_sql.catalog.base import Catalog, Identifier
from paimon_sql.catalog.rest import schema_changes
from paimon_sql.catalog.rest.branches import CatalogBranchManager
from paimon_sql.catalog.rest.rest_api import RESTApi
from paimon_sql.data.types import DataField, RowType
from paimon_sql.exceptions import (CorruptMetadataError, DatabaseAlreadyExistsError, DatabaseNotEmptyError,
                                   DatabaseNotFoundError, FunctionAlreadyExistsError, FunctionNotFoundError,
                                   InvalidOptionError, RestCatalogError, TableAlreadyExistsError, TableNotFoundError,
                                   ViewAlreadyExistsError, ViewNotFoundError)
from paimon_sql.function.function import Function
from paimon_sql.io import FileIO
from paimon_sql.io.object_stores import flag
from paimon_sql.io.paths import PathFactory
from paimon_sql.schema.schema_change import SchemaChange
from paimon_sql.schema.schema_manager import SchemaManager
from paimon_sql.schema.table_schema import TableSchema
from paimon_sql.schema.view_schema import ViewSchema
from paimon_sql.snapshot.snapshot import Snapshot
from paimon_sql.store.catalog_environment import CatalogEnvironment
from paimon_sql.table import format_table
from paimon_sql.table.branch_manager import MAIN_BRANCH
from paimon_sql.table.table import FileStoreTable
from paimon_sql.table.table_type import check_create, table_of

BRANCH_PREFIX = "$branch_"  # Paimon's Identifier: 't$branch_b' names branch b of table t
DATA_TOKEN = "data-token.enabled"
LATEST_REUSE_SECONDS = 0.2  # how long a latest snapshot the server named is taken as still latest
TOKEN_SAFE_MILLIS = 3_600_000  # a vended token with less left is fetched again (Paimon's RESTApi)


def wire_name(table: str, branch: str = MAIN_BRANCH) -> str:
    """The object name of ``table`` on ``branch`` as Paimon's REST API spells it."""
    return table if branch == MAIN_BRANCH else f"{table}{BRANCH_PREFIX}{branch}"


class RESTCatalog(Catalog):
    def __init__(self, warehouse: str, options: Optional[dict] = None):
        self.warehouse = warehouse
        self.api = RESTApi({**(options or {}), "warehouse": warehouse})
        self.options = self.api.options  # ours merged with the server's defaults and overrides
        self.data_tokens = flag(self.options, DATA_TOKEN, False)
        self._tokens: Dict[Identifier, Tuple[dict, int]] = {}  # table -> (storage options, expiry millis)
        self._latest_known: Dict[Tuple[Identifier, str], Tuple[float, Optional[Snapshot]]] = {}  # (table, branch)

    # -- databases ---------------------------------------------------------------------------------

    def list_databases(self) -> List[str]:
        return sorted(self.api.list_databases())

    def database_exists(self, name: str) -> bool:
        try:
            self.api.get_database(name)
            return True
        except DatabaseNotFoundError:
            return False

    def create_database(self, name: str, ignore_if_exists: bool = False, properties: Optional[dict] = None):
        try:
            self.api.create_database(name, properties)
        except DatabaseAlreadyExistsError:
            if not ignore_if_exists:
                raise

    def drop_database(self, name: str, ignore_if_not_exists: bool = False, cascade: bool = False):
        """Not CASCADE: refused while the database holds a table or view (as Java checks before the call)."""
        self._latest_known.clear()  # a name may now mean another table
        if not self.database_exists(name):
            if ignore_if_not_exists:
                return
            raise DatabaseNotFoundError(f"database {name} does not exist")
        if not cascade:
            tables, views = self.list_tables(name), self.list_views(name)
            if tables or views:
                raise DatabaseNotEmptyError(f"database {name} is not empty ({len(tables)} table(s), "
                                            f"{len(views)} view(s)); use CASCADE")
        self.api.drop_database(name)

    def database_properties(self, name: str) -> dict:
        return dict(self.api.get_database(name).get("options") or {})

    def alter_database(self, name: str, properties: dict) -> None:
        self.api.alter_database(name, updates={k: str(v) for k, v in properties.items()})

    # -- tables ------------------------------------------------------------------------------------

    def list_tables(self, database: str) -> List[str]:
        return sorted(self.api.list_tables(database))

    def table_path(self, identifier) -> Optional[str]:
        """Where the server keeps an existing table; None for one it has not made (it picks the path)."""
        ident = self._ident(identifier)
        try:
            return self.api.get_table(ident.database, ident.table).get("path") or ""
        except (TableNotFoundError, DatabaseNotFoundError):
            return None

    def table_exists(self, identifier) -> bool:
        return self.table_path(identifier) is not None

    def create_table(self, identifier, schema: TableSchema, ignore_if_exists: bool = False) -> FileStoreTable:
        self._latest_known.clear()  # a name may now mean another table
        ident = self._ident(identifier)
        self._checked(schema, ident)
        try:
            self.api.create_table(ident.database, ident.table, schema)
        except TableAlreadyExistsError:
            if not ignore_if_exists:
                raise
        return self.get_table(ident)

    def _checked(self, schema: TableSchema, ident: Identifier) -> None:
        """A schema's refusals (options it cannot have) before the server is asked."""
        if format_table.is_format_table(schema):
            raise InvalidOptionError(f"table {ident}: format tables are not supported through a REST catalog")
        check_create(schema, str(ident))

    def get_table(self, identifier) -> FileStoreTable:
        """The table at the ``path`` the server gives, with the schema it gives (:meth:`_schema`)."""
        ident = self._ident(identifier)
        answer = self.api.get_table(ident.database, ident.table)
        path, schema_id = answer.get("path"), answer.get("schemaId")
        if not path or schema_id is None:
            raise RestCatalogError(f"Paimon REST catalog {self.api.uri}: table {ident} came without its path "
                                   "or schema id")
        io = FileIO.for_path(path, self._storage_options(ident))
        schema = self._schema(io, path, int(schema_id), answer)
        if format_table.is_format_table(schema):
            raise InvalidOptionError(f"table {ident}: format tables are not supported through a REST catalog")
        env = CatalogEnvironment() if answer.get("isExternal") else self._environment(ident, str(answer.get("id")))
        table = table_of(io, path, schema, str(ident), env)
        if schema.is_primary_key_table:
            table.merge_function  # noqa: B018 - options a merge engine cannot honour fail here, not later
        return table

    @staticmethod
    def _schema(io: FileIO, path: str, schema_id: int, answer: dict) -> TableSchema:
        """Schema ``schema_id`` as the server answers it, as Java's client takes it: its options are
        the server's (a server may add some for one user, such as ``query-auth.enabled``); the rest
        comes from the table's ``schema-N`` file (the field ids, their highest, the creation time),
        or, where the server's storage has none, from the answer alone."""
        given = answer.get("schema") or {}
        options = {str(k): str(v) for k, v in (given.get("options") or {}).items() if k != "path"}
        try:
            schema = SchemaManager(io, PathFactory(path, [], "parquet")).schema(schema_id)
        except CorruptMetadataError:
            if not given.get("fields"):
                raise
            fields = [DataField.from_json(f) for f in given["fields"]]
            return TableSchema(schema_id, fields, max(_field_ids(fields)), list(given.get("partitionKeys") or []),
                               list(given.get("primaryKeys") or []), options, given.get("comment"),
                               int(answer.get("updatedAt") or 0))
        return replace(schema, options=options) if "options" in given else schema

    def _storage_options(self, ident: Identifier) -> dict:
        """The options a table's files are reached with: the catalog's, and over them the credentials
        the server vends for the table (``data-token.enabled``), fetched again when less than an
        hour of them is left (as Paimon's RESTTokenFileIO)."""
        if not self.data_tokens:
            return self.options
        token, expires = self._tokens.get(ident, ({}, 0))
        if expires - time.time() * 1000 < TOKEN_SAFE_MILLIS:
            answer = self.api.table_token(ident.database, ident.table)
            token, expires = dict(answer.get("token") or {}), int(answer.get("expiresAtMillis") or 0)
            self._tokens[ident] = (token, expires)
        return {**self.options, **token}

    def _environment(self, ident: Identifier, table_id: str) -> CatalogEnvironment:
        """Commits, schema changes and rollbacks through the server (Paimon's CatalogSnapshotCommit)."""
        return CatalogEnvironment(partitions_in_metastore=True,  # the server keeps them, told by each commit
                                  snapshot_commit=partial(self._commit, ident, table_id),
                                  latest_snapshot=partial(self._latest, ident),
                                  alter_table=partial(self._alter, ident),
                                  rollback=partial(self._rollback, ident),
                                  branches=partial(CatalogBranchManager, api=self.api, ident=ident,
                                                   changed=self._latest_known.clear))

    def environment(self, identifier: Identifier) -> CatalogEnvironment:
        ident = self._ident(identifier)
        return self._environment(ident, str(self.api.get_table(ident.database, ident.table).get("id")))

    def _commit(self, ident: Identifier, table_id: str, branch: str, base: Optional[Snapshot],
                snapshot: Snapshot, statistics: Sequence[dict] = ()) -> bool:
        """``snapshot`` sent to the server as the one after ``base``; False when another came first.
        When the call fails without an answer the server may have committed it all the same: its
        snapshot file, if there with our uuid, says it did (Paimon's client checks the same way)."""
        self._latest_known.pop((ident, branch), None)
        try:
            done = self.api.commit(ident.database, wire_name(ident.table, branch), table_id,
                                   base.uuid if base is not None else None, json.loads(snapshot.to_json()),
                                   statistics)
            if done:
                self._latest_known[(ident, branch)] = (time.monotonic(), snapshot)
            return done
        except RestCatalogError as e:
            if e.status is not None and e.status < 500:
                raise
            landed = self._landed(ident, branch, snapshot)
            if landed is None:
                raise RestCatalogError(f"{e}; snapshot {snapshot.id} of {ident} was not committed") from None
            return landed

    def _latest(self, ident: Identifier, branch: str) -> Optional[Snapshot]:
        """The server's latest snapshot, reused for :data:`LATEST_REUSE_SECONDS` (a statement asks
        for it several times: planning, restoring a write, committing, expiring); our own commit
        is known at once, and one the server refuses makes the next ask go to it."""
        known = self._latest_known.get((ident, branch))
        if known is not None and time.monotonic() - known[0] < LATEST_REUSE_SECONDS:
            return known[1]
        answer = self.api.latest_snapshot(ident.database, wire_name(ident.table, branch))
        latest = Snapshot.from_dict(answer, f"the latest snapshot of {ident} from {self.api.uri}") if answer else None
        self._latest_known[(ident, branch)] = (time.monotonic(), latest)
        return latest

    def _landed(self, ident: Identifier, branch: str, snapshot: Snapshot) -> Optional[bool]:
        """Whether ``snapshot``'s id now holds it (True), another (False) or nothing (None)."""
        table = self.get_table(ident)
        sm = table.switch_to_branch(branch).snapshot_manager if branch != MAIN_BRANCH else table.snapshot_manager
        if not sm.io.exists(sm.paths.snapshot_path(snapshot.id)):
            return None
        return sm.snapshot(snapshot.id).uuid == snapshot.uuid

    def _alter(self, ident: Identifier, branch: str, changes: Sequence[SchemaChange]) -> None:
        self._latest_known.clear()
        self.api.alter_table(ident.database, wire_name(ident.table, branch),
                             [schema_changes.to_json(c) for c in changes])

    def _rollback(self, ident: Identifier, branch: str, snapshot_id: int, tag: Optional[str]) -> None:
        self._latest_known.clear()
        self.api.rollback(ident.database, wire_name(ident.table, branch), snapshot_id=snapshot_id, tag=tag)

    def drop_table(self, identifier, ignore_if_not_exists: bool = False):
        self._latest_known.clear()  # a name may now mean another table
        ident = self._ident(identifier)
        try:
            self.api.drop_table(ident.database, ident.table)
        except (TableNotFoundError, DatabaseNotFoundError):
            if not ignore_if_not_exists:
                raise TableNotFoundError(f"table {ident} does not exist") from None

    def rename_table(self, source, target):
        self._latest_known.clear()  # a name may now mean another table
        src, dst = self._ident(source), self._ident(target)
        self.api.rename_table((src.database, src.table), (dst.database, dst.table))

    def replace_table(self, identifier, schema: TableSchema) -> FileStoreTable:
        """CREATE OR REPLACE of an existing table: the server's ``replace`` (Java Paimon 2.0's)."""
        self._latest_known.clear()  # a name may now mean another table
        ident = self._ident(identifier)
        self._checked(schema, ident)
        self.api.replace_table(ident.database, ident.table, schema)
        return self.get_table(ident)

    # -- views -------------------------------------------------------------------------------------

    def list_views(self, database: str) -> List[str]:
        return sorted(self.api.list_views(database))

    def get_view(self, identifier) -> ViewSchema:
        ident = self._ident(identifier)
        schema = self.api.get_view(ident.database, ident.table).get("schema") or {}
        return ViewSchema.from_json(json.dumps(schema), f"view {ident} of {self.api.uri}")

    def create_view(self, identifier, view: ViewSchema, ignore_if_exists: bool = False) -> None:
        ident = self._ident(identifier)
        try:
            self.api.create_view(ident.database, ident.table, json.loads(view.to_json()))
        except ViewAlreadyExistsError:
            if not ignore_if_exists:
                raise

    def alter_view(self, identifier, view: ViewSchema) -> None:
        """A view's query or columns changed: dropped and created again, as paimon-spark replaces a
        view (Paimon's view changes reach only options, comment and dialects)."""
        ident = self._ident(identifier)
        self.get_view(ident)
        self.api.drop_view(ident.database, ident.table)
        self.api.create_view(ident.database, ident.table, json.loads(view.to_json()))

    def drop_view(self, identifier, ignore_if_not_exists: bool = False) -> None:
        ident = self._ident(identifier)
        try:
            self.api.drop_view(ident.database, ident.table)
        except (ViewNotFoundError, DatabaseNotFoundError):
            if not ignore_if_not_exists:
                raise ViewNotFoundError(f"view {ident} does not exist") from None

    def rename_view(self, source, target) -> None:
        src, dst = self._ident(source), self._ident(target)
        self.api.rename_view((src.database, src.table), (dst.database, dst.table))

    # -- functions ---------------------------------------------------------------------------------

    def list_functions(self, database: str) -> List[str]:
        return sorted(self.api.list_functions(database))

    def get_function(self, database: str, name: str) -> Function:
        return Function.from_dict(self.api.get_function(database, name), f"function {database}.{name}")

    def create_function(self, database: str, function: Function, ignore_if_exists: bool = False) -> None:
        try:
            self.api.create_function(database, function.to_dict())
        except FunctionAlreadyExistsError:
            if not ignore_if_exists:
                raise

    def alter_function(self, database: str, name: str, changes: Sequence[dict],
                       ignore_if_not_exists: bool = False) -> None:
        try:
            self.api.alter_function(database, name, list(changes))
        except FunctionNotFoundError:
            if not ignore_if_not_exists:
                raise

    def drop_function(self, database: str, name: str, ignore_if_not_exists: bool = False) -> None:
        try:
            self.api.drop_function(database, name)
        except FunctionNotFoundError:
            if not ignore_if_not_exists:
                raise


def _field_ids(fields) -> List[int]:
    """The ids of ``fields`` and of every field nested in their types."""
    ids: List[int] = []
    for f in fields:
        ids.append(f.id)
        stack = [f.type]
        while stack:
            t = stack.pop()
            if isinstance(t, RowType):
                ids += _field_ids(t.fields)
            stack += [c for c in (getattr(t, "element", None), getattr(t, "key", None), getattr(t, "value", None))
                      if c is not None]
    return ids
