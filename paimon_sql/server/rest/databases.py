"""The config handshake and databases: list, create, get, alter, drop.

``GET /v1/config?warehouse=W`` answers ``{"defaults": {"prefix": "paimon"}, "overrides": {...}}``
when W names the served warehouse (as the command line gave it, or its absolute path or URI;
pypaimon quotes it twice, so it is unquoted until stable). A warehouse on an object store also
turns on Paimon's data tokens (``data-token.enabled``): clients then take their storage
credentials from ``/token``.

Databases are for the policy's admins to create, alter and drop (as CREATE/ALTER/DROP DATABASE);
a drop takes the database's tables with it (Paimon's clients check emptiness themselves before
asking, unless told to cascade). Removing a database property is 501: the catalogs only set them.
"""

from __future__ import annotations

import urllib.parse
from typing import Any, Dict

from paimon_sql.access.policy import ADMIN, ANY
from paimon_sql.server.rest import wire
from paimon_sql.server.rest.errors import DATABASE, RestError
from paimon_sql.server.rest.paging import like, page
from paimon_sql.server.rest.state import DATABASE_PATH, PREFIX, Call, field_of


def unquoted(text: str) -> str:
    """``text`` percent-decoded until it no longer changes (pypaimon encodes it twice)."""
    for _ in range(5):
        decoded = urllib.parse.unquote_plus(text)
        if decoded == text:
            break
        text = decoded
    return text


def object_store(warehouse: str) -> bool:
    scheme = urllib.parse.urlparse(warehouse).scheme
    return scheme not in ("", "file")


def config(call: Call) -> Dict[str, Any]:
    state = call.state
    asked = call.query.get("warehouse")
    if asked:
        asked = unquoted(asked).rstrip("/")
        served = {state.warehouse.rstrip("/"), (state.given or "").rstrip("/"), f"file:{state.warehouse}",
                  f"file://{state.warehouse}"}
        if asked not in served:
            raise RestError(404, f"warehouse '{asked}' is not served here; this server serves '{state.warehouse}'")
    tokens = "true" if object_store(state.warehouse) else "false"
    return {"defaults": {"prefix": PREFIX}, "overrides": {"data-token.enabled": tokens}}


def list_databases(call: Call) -> Dict[str, Any]:
    pattern, grants = like(call.query.get("databaseNamePattern")), call.state.grants
    names = [d for d in call.state.catalog.list_databases() if pattern(d) and grants.may_see_database(call.caller, d)]
    return page(((d, d) for d in names), call.query, "databases")


def create_database(call: Call) -> Dict[str, Any]:
    body = call.json()
    name = field_of(body, "name", str)
    options = field_of(body, "options", dict, optional=True) or {}
    call.require(ADMIN, ANY)
    catalog = call.state.catalog
    catalog.create_database(name)
    if options:
        catalog.alter_database(name, {str(k): str(v) for k, v in options.items()})
    return {}


def get_database(call: Call) -> Dict[str, Any]:
    """Free, as DESCRIBE DATABASE and USE are (Spark's catalog asks for its default database at start)."""
    name = call.params["db"]
    catalog = call.state.catalog
    if not catalog.database_exists(name):
        raise RestError(404, f"database {name} does not exist", DATABASE, name)
    return wire.database_response(catalog, call.state.warehouse, name)


def alter_database(call: Call) -> Dict[str, Any]:
    body = call.json()
    name = call.params["db"]
    removals = field_of(body, "removals", list, optional=True) or []
    updates = {str(k): str(v) for k, v in (field_of(body, "updates", dict, optional=True) or {}).items()}
    call.require(ADMIN, ANY)
    catalog = call.state.catalog
    current = catalog.database_properties(name)
    present = [k for k in removals if k in current]
    if present:
        raise RestError(501, f"removing database properties ({', '.join(map(str, present))}) is not supported: "
                             "paimon-sql's catalogs only set them")
    if updates:
        catalog.alter_database(name, updates)
    return {"removed": [], "updated": sorted(updates), "missing": [str(k) for k in removals]}


def drop_database(call: Call) -> Dict[str, Any]:
    call.require(ADMIN, ANY)
    call.state.catalog.drop_database(call.params["db"], cascade=True)
    return {}


ROUTES = [
    ("GET", r"/databases", list_databases),
    ("POST", r"/databases", create_database),
    ("GET", DATABASE_PATH, get_database),
    ("POST", DATABASE_PATH, alter_database),
    ("DELETE", DATABASE_PATH, drop_database),
]
