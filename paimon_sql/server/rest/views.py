"""Views: list (by database, with details, across databases), create, get, alter (Paimon's
``ViewChange``: options, comment, dialects), drop, rename, kept by the catalog as SQL's views are
(Paimon's ViewSchema JSON). A view is granted as a table of its name is: READ to see it, ADMIN to
change it, ADMIN on a database to make one there.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any, Callable, Dict

from paimon_sql.access.policy import ADMIN, READ
from paimon_sql.catalog.base import Identifier
from paimon_sql.exceptions import CorruptMetadataError
from paimon_sql.schema.view_schema import ViewSchema
from paimon_sql.server.rest import wire
from paimon_sql.server.rest.errors import RestError, bad_request, not_found
from paimon_sql.server.rest.listing import listings
from paimon_sql.server.rest.state import DATABASE_PATH, Call, field_of

DIALECT = "DIALECT"
VIEW_PATH = DATABASE_PATH + r"/views/(?P<view>[^/]+)"


def _response(call: Call, db: str, name: str) -> Dict[str, Any]:
    view = call.state.catalog.get_view(Identifier(db, name))
    owner = wire.database_owner(call.state.catalog, db)
    return {"id": f"{db}.{name}", "name": name, "schema": json.loads(view.to_json()), "owner": owner,
            "createdAt": 0, "createdBy": owner, "updatedAt": 0, "updatedBy": owner}


list_views, view_details, list_views_globally = listings(
    "view", lambda catalog, db: catalog.list_views(db), _response)


def create_view(call: Call) -> Dict[str, Any]:
    body = call.json()
    db = call.params["db"]
    obj_db, name = wire.identifier(body, "identifier")
    if obj_db != db:
        raise bad_request(f"identifier names database {obj_db}, the path {db}")
    call.require(ADMIN, db)
    call.require(ADMIN, db, name)
    try:
        view = ViewSchema.from_json(json.dumps(field_of(body, "schema", dict)), "in the request")
    except CorruptMetadataError as e:
        raise bad_request(str(e)) from None
    call.state.catalog.create_view(Identifier(db, name), view)
    return {}


def get_view(call: Call) -> Dict[str, Any]:
    db, name = call.params["db"], call.params["view"]
    call.require(READ, db, name)
    return _response(call, db, name)


def _dialect(view: ViewSchema, d: dict, present: bool) -> str:
    dialect = field_of(d, "dialect", str)
    if present and dialect not in view.dialects:
        raise not_found(DIALECT, dialect, f"the view has no dialect '{dialect}'")
    if not present and dialect in view.dialects:
        raise RestError(409, f"the view has dialect '{dialect}' already", DIALECT, dialect)
    return dialect


def _without(mapping: Dict[str, str], key: str) -> Dict[str, str]:
    return {k: v for k, v in mapping.items() if k != key}


_CHANGES: Dict[str, Callable[[ViewSchema, dict], ViewSchema]] = {
    "setOption": lambda v, d: replace(v, options={**v.options, field_of(d, "key", str): field_of(d, "value", str)}),
    "removeOption": lambda v, d: replace(v, options=_without(v.options, field_of(d, "key", str))),
    "updateComment": lambda v, d: replace(v, comment=field_of(d, "comment", str, optional=True)),
    "addDialect": lambda v, d: replace(v, dialects={**v.dialects, _dialect(v, d, False): field_of(d, "query", str)}),
    "updateDialect": lambda v, d: replace(v, dialects={**v.dialects, _dialect(v, d, True): field_of(d, "query", str)}),
    "dropDialect": lambda v, d: replace(v, dialects=_without(v.dialects, _dialect(v, d, True))),
}


def alter_view(call: Call) -> Dict[str, Any]:
    db, name = call.params["db"], call.params["view"]
    call.require(ADMIN, db, name)
    changes = field_of(call.json(), "changes", list)
    ident = Identifier(db, name)
    view = call.state.catalog.get_view(ident)
    for d in changes:
        action = d.get("action") if isinstance(d, dict) else None
        if action not in _CHANGES:
            raise bad_request(f"unknown view change action {action!r}")
        view = _CHANGES[action](view, d)
    call.state.catalog.alter_view(ident, view)
    return {}


def drop_view(call: Call) -> Dict[str, Any]:
    db, name = call.params["db"], call.params["view"]
    call.require(ADMIN, db, name)
    call.state.catalog.drop_view(Identifier(db, name))
    return {}


def rename_view(call: Call) -> Dict[str, Any]:
    call.state.catalog.rename_view(*wire.renamed(call))
    return {}


ROUTES = [
    ("GET", DATABASE_PATH + r"/views", list_views),
    ("POST", DATABASE_PATH + r"/views", create_view),
    ("GET", DATABASE_PATH + r"/view-details", view_details),
    ("GET", r"/views", list_views_globally),
    ("POST", r"/views/rename", rename_view),
    ("GET", VIEW_PATH, get_view),
    ("POST", VIEW_PATH, alter_view),
    ("DELETE", VIEW_PATH, drop_view),
]
