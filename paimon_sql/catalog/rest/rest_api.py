"""Paimon's REST catalog API as its clients speak it (Paimon's ``RESTApi``): the config handshake,
the bearer token on every call, one JSON call per endpoint, pages followed, and Paimon's error body
(``message``, ``resourceType``, ``resourceName``, ``code``) turned into paimon-sql's errors.

The handshake: ``GET /v1/config?warehouse=<warehouse>`` answers ``defaults`` and ``overrides``; the
catalog's options are the defaults, then the client's own options, then the overrides (each wins
over the one before, as in Java Paimon), and their ``prefix`` roots every other path. Server-given
``header.<name>`` options are sent back on every later call.

Caveats: ``token.provider`` = ``bear`` (a static token) is the one provider; DLF's request signing
is refused by name. The body's ``code``, where the server gives one, decides the error, as Java's
client decides it.

Example::

    api = RESTApi({"uri": "http://127.0.0.1:8080", "warehouse": "wh", "token.provider": "bear",
                   "token": "secret"})
    api.create_database("db")
    api.list_databases()  # ['db']
"""

from __future__ import annotations

import urllib.parse
from typing import Any, Dict, List, Optional

from paimon_sql.catalog.rest.resource_paths import CONFIG, ResourcePaths
from paimon_sql.exceptions import (AccessDeniedError, BranchError, DatabaseAlreadyExistsError, DatabaseNotFoundError,
                                   FunctionAlreadyExistsError, FunctionNotFoundError,
                                   InvalidOptionError, RestCatalogError, SnapshotNotFoundError,
                                   TableAlreadyExistsError, TableNotFoundError, TagError, ViewAlreadyExistsError,
                                   ViewNotFoundError)
from paimon_sql.io import http_json
from paimon_sql.schema.table_schema import TableSchema

HEADER = "header."  # options naming a header every call sends
# resourceType -> the error of a missing (404) or an existing (409) resource of that type
_NOT_FOUND = {"DATABASE": DatabaseNotFoundError, "TABLE": TableNotFoundError, "VIEW": ViewNotFoundError,
              "SNAPSHOT": SnapshotNotFoundError, "BRANCH": BranchError, "TAG": TagError,
              "FUNCTION": FunctionNotFoundError}
_EXISTS = {"DATABASE": DatabaseAlreadyExistsError, "TABLE": TableAlreadyExistsError, "VIEW": ViewAlreadyExistsError,
           "BRANCH": BranchError, "FUNCTION": FunctionAlreadyExistsError}


class RESTApi:
    """One catalog of a Paimon REST server: ``options`` are the catalog's (``uri``, ``warehouse``,
    ``token.provider``, ``token``, ``header.*``); ``self.options`` the ones merged with the server's."""

    def __init__(self, options: Dict[str, str]):
        uri = options.get("uri")
        if not uri:
            raise InvalidOptionError("catalog option 'uri' is required with metastore = rest "
                                     "(the REST catalog server's URL)")
        self.uri = (uri if "://" in uri else f"http://{uri}").rstrip("/")
        self.headers = {"Accept": "application/json", "Content-Type": "application/json",
                        "Authorization": f"Bearer {_token(options)}", **_headers(options)}
        warehouse = options.get("warehouse")
        config = self._call("GET", CONFIG, query={"warehouse": warehouse} if warehouse else None) or {}
        merged = {**(config.get("defaults") or {}), **options, **(config.get("overrides") or {})}
        self.options = {k: v for k, v in merged.items() if v is not None}
        self.headers.update(_headers(self.options))
        self.paths = ResourcePaths(self.options.get("prefix") or "")

    # -- databases ---------------------------------------------------------------------------------

    def list_databases(self) -> List[str]:
        return self._pages(self.paths.databases(), "databases")

    def create_database(self, name: str, options: Optional[Dict[str, str]] = None) -> None:
        self._call("POST", self.paths.databases(), {"name": name, "options": dict(options or {})})

    def get_database(self, name: str) -> dict:
        """``{"id", "name", "location", "options", ...}`` of database ``name``."""
        return self._call("GET", self.paths.database(name)) or {}

    def alter_database(self, name: str, removals: List[str] = (), updates: Optional[Dict[str, str]] = None) -> None:
        self._call("POST", self.paths.database(name), {"removals": list(removals), "updates": dict(updates or {})})

    def drop_database(self, name: str) -> None:
        self._call("DELETE", self.paths.database(name))

    # -- tables ------------------------------------------------------------------------------------

    def list_tables(self, database: str) -> List[str]:
        return self._pages(self.paths.tables(database), "tables")

    def create_table(self, database: str, table: str, schema: TableSchema) -> None:
        """The table of ``schema`` (sent as Paimon's Schema JSON, :func:`schema_json`); the server
        writes its first schema file."""
        self._call("POST", self.paths.tables(database), {"identifier": _identifier(database, table),
                                                         "schema": schema_json(schema)})

    def get_table(self, database: str, table: str) -> dict:
        """``{"id" (the table's uuid), "name", "path", "isExternal", "schemaId", "schema", ...}``."""
        return self._call("GET", self.paths.table(database, table)) or {}

    def alter_table(self, database: str, table: str, changes: List[dict]) -> None:
        self._call("POST", self.paths.table(database, table), {"changes": changes})

    def drop_table(self, database: str, table: str) -> None:
        self._call("DELETE", self.paths.table(database, table))

    def replace_table(self, database: str, table: str, schema: TableSchema) -> None:
        """CREATE OR REPLACE of an existing table (Java Paimon 2.0's ``replaceTable``)."""
        self._call("POST", self.paths.replace(database, table), {"schema": schema_json(schema)})

    def rename_table(self, source: tuple, target: tuple) -> None:
        """``source`` and ``target``: (database, table)."""
        self._call("POST", self.paths.rename_table(), {"source": _identifier(*source),
                                                       "destination": _identifier(*target)})

    def table_token(self, database: str, table: str) -> dict:
        """``{"token": {storage option: value}, "expiresAtMillis": ms}``: the credentials the server
        vends for the table's files (with ``data-token.enabled``)."""
        return self._call("GET", self.paths.token(database, table)) or {}

    # -- branches ----------------------------------------------------------------------------------

    def create_branch(self, database: str, table: str, branch: str, from_tag: Optional[str] = None) -> None:
        self._call("POST", self.paths.branches(database, table), {"branch": branch, "fromTag": from_tag})

    def drop_branch(self, database: str, table: str, branch: str) -> None:
        self._call("DELETE", self.paths.branch(database, table, branch))

    def fast_forward(self, database: str, table: str, branch: str) -> None:
        """The main branch takes ``branch``'s state (Paimon's ``fastForward``)."""
        self._call("POST", self.paths.branch(database, table, branch) + "/forward", {})

    def rename_branch(self, database: str, table: str, branch: str, to: str) -> None:
        self._call("POST", self.paths.branch(database, table, branch) + "/rename", {"toBranch": to})

    # -- views -------------------------------------------------------------------------------------

    def list_views(self, database: str) -> List[str]:
        return self._pages(self.paths.views(database), "views")

    def create_view(self, database: str, view: str, schema: dict) -> None:
        """``schema``: Paimon's ViewSchema JSON (fields, query, dialects, comment, options)."""
        self._call("POST", self.paths.views(database), {"identifier": _identifier(database, view), "schema": schema})

    def get_view(self, database: str, view: str) -> dict:
        """``{"id", "name", "schema" (Paimon's ViewSchema JSON), ...}``."""
        return self._call("GET", self.paths.view(database, view)) or {}

    def drop_view(self, database: str, view: str) -> None:
        self._call("DELETE", self.paths.view(database, view))

    def rename_view(self, source: tuple, target: tuple) -> None:
        self._call("POST", self.paths.rename_view(), {"source": _identifier(*source),
                                                      "destination": _identifier(*target)})

    # -- functions ---------------------------------------------------------------------------------

    def list_functions(self, database: str) -> List[str]:
        return self._pages(self.paths.functions(database), "functions")

    def create_function(self, database: str, function: dict) -> None:
        """``function``: Paimon's function JSON (name, inputParams, returnParams, definitions, ...)."""
        self._call("POST", self.paths.functions(database), function)

    def get_function(self, database: str, name: str) -> dict:
        return self._call("GET", self.paths.function(database, name)) or {}

    def alter_function(self, database: str, name: str, changes: List[dict]) -> None:
        self._call("POST", self.paths.function(database, name), {"changes": list(changes)})

    def drop_function(self, database: str, name: str) -> None:
        self._call("DELETE", self.paths.function(database, name))

    # -- snapshots -----------------------------------------------------------------------------------

    def latest_snapshot(self, database: str, table: str) -> Optional[dict]:
        """The table's latest snapshot (Paimon's Snapshot JSON) as the server holds it; None before
        its first commit."""
        try:
            answer = self._call("GET", self.paths.snapshot(database, table)) or {}
        except SnapshotNotFoundError:
            return None
        return (answer.get("snapshot") or {}).get("snapshot")

    def commit(self, database: str, table: str, table_id: str, base_uuid: Optional[str], snapshot: dict,
               statistics: List[dict] = ()) -> bool:
        """Ask the server to make ``snapshot`` the table's next one: False when the table moved past
        ``base_uuid`` (the uuid of the snapshot it was built on; None for the first), the caller then
        builds it again on the new latest. ``table_id``: the table's uuid, as ``get_table`` gave it."""
        answer = self._call("POST", self.paths.commit(database, table),
                            {"tableId": table_id, "baseSnapshotUuid": base_uuid, "snapshot": snapshot,
                             "statistics": list(statistics)}) or {}
        return bool(answer.get("success"))

    def rollback(self, database: str, table: str, snapshot_id: Optional[int] = None, tag: Optional[str] = None,
                 from_snapshot: Optional[int] = None) -> None:
        """Roll the table back to snapshot ``snapshot_id`` or to tag ``tag``; ``from_snapshot``: refused
        unless the table's latest is still that one."""
        instant = {"type": "snapshot", "snapshotId": snapshot_id} if tag is None else {"type": "tag", "tagName": tag}
        self._call("POST", self.paths.rollback(database, table), {"instant": instant, "fromSnapshot": from_snapshot})

    # -- calls -------------------------------------------------------------------------------------

    def _pages(self, path: str, key: str, query: Optional[Dict[str, str]] = None) -> List[Any]:
        """Every item of a paged listing: the server's pages followed by their ``nextPageToken``."""
        items, query = [], dict(query or {})
        while True:
            page = self._call("GET", path, query=query) or {}
            items += page.get(key) or []
            token = page.get("nextPageToken")
            if not token:
                return items
            query["pageToken"] = token

    def _call(self, method: str, path: str, body: Optional[dict] = None,
              query: Optional[Dict[str, str]] = None) -> Optional[Any]:
        url = self.uri + path + (f"?{urllib.parse.urlencode(query)}" if query else "")
        try:
            return http_json.send(http_json.json_request(method, url, self.headers, body))
        except http_json.HttpError as e:
            raise self._error(e, method, path) from None

    def _error(self, e: http_json.HttpError, method: str, path: str) -> Exception:
        """Paimon's error body as paimon-sql's error: by its ``code`` (else the HTTP status) and,
        for a missing or existing resource, by its ``resourceType``."""
        where = f"Paimon REST catalog {self.uri}: {method} {path}"
        if e.status is None:
            return RestCatalogError(f"{where} failed: {e.reason}")
        body = e.body if isinstance(e.body, dict) else {}
        code = body.get("code") if body.get("message") and isinstance(body.get("code"), int) else e.status
        message = body.get("message") or e.text.strip()[:200] or e.reason
        kind = {404: _NOT_FOUND, 409: _EXISTS}.get(code, {}).get(body.get("resourceType"))
        if kind is not None:
            return kind(f"{message} ({where})")
        if code == 403:
            return AccessDeniedError(f"{where}: {message}")
        return RestCatalogError(f"{where} failed: {code} {message}", code)


def schema_json(schema: TableSchema) -> dict:
    """``schema`` as Paimon's ``Schema`` (a new table's: fields with their ids, keys, options,
    comment), the body a REST catalog creates a table from."""
    return {"fields": [f.to_json() for f in schema.fields], "partitionKeys": list(schema.partition_keys),
            "primaryKeys": list(schema.primary_keys), "options": dict(schema.options), "comment": schema.comment}


def _identifier(database: str, table: str) -> dict:
    return {"database": database, "object": table}


def _token(options: Dict[str, str]) -> str:
    provider = options.get("token.provider")
    if not provider:
        raise InvalidOptionError("catalog option 'token.provider' is not set (metastore = rest: 'bear', with 'token')")
    if provider != "bear":
        raise InvalidOptionError(f"catalog option 'token.provider' = '{provider}' is not supported (only 'bear')")
    if not options.get("token"):
        raise InvalidOptionError("catalog option 'token' is required with token.provider = bear")
    return options["token"]


def _headers(options: Dict[str, str]) -> Dict[str, str]:
    return {k[len(HEADER):]: v for k, v in options.items() if k.startswith(HEADER) and v is not None}
