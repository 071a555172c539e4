"""Views: list (by database, with details, across databases), create, get, alter (Paimon's
``ViewChange``: options, comment, dialects), drop, rename, kept by the catalog as SQL's views are
(Paimon's ViewSchema JSON). A view is granted as a table of its name is: READ to see it, ADMIN to
change it, ADMIN on a database to make one there.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any, Callable, Dict, List

from paimon_sql.access.policy import ADMIN, READ
from paimon_sql.catalog.base import Identifier
from paimon_sql.exceptions import CorruptMetadataError
from paimon_sql.schema.view_schema import ViewSchema
from paimon_sql.server.rest import wire
from paimon_sql.server.rest.errors import RestError, bad_request, not_found
from paimon_sql.server.rest.paging import like, page
from paimon_sql.server.rest.state import Call, field_of

DIALECT = "DIALECT"
VIEW_PATH = r"/databases/(?P<db>[^/]+)/views/(?P<view>[^/]+)"


def _readable(call: Call, db: str) -> List[str]:
    pattern = like(call.query.get("viewNamePattern"))
    return [v for v in call.state.catalog.list_views(db)
            if pattern(v) and call.state.grants.may_read(call.caller, db, v)]


def _response(call: Call, db: str, name: str) -> Dict[str, Any]:
    view = call.state.catalog.get_view(Identifier(db, name))
    owner = wire.database_owner(call.state.catalog, db)
    return {"id": f"{db}.{name}", "name": name, "schema": json.loads(view.to_json()), "owner": owner,
            "createdAt": 0, "createdBy": owner, "updatedAt": 0, "updatedBy": owner}


def list_views(call: Call) -> Dict[str, Any]:
    return page(((v, v) for v in _readable(call, call.params["db"])), call.query, "views")


def view_details(call: Call) -> Dict[str, Any]:
    db = call.params["db"]
    answer = page(((v, v) for v in _readable(call, db)), call.query, "viewDetails")
    answer["viewDetails"] = [_response(call, db, v) for v in answer["viewDetails"]]
    return answer


def list_views_globally(call: Call) -> Dict[str, Any]:
    dbs = like(call.query.get("databaseNamePattern"))
    found = []
    for db in call.state.catalog.list_databases():
        if dbs(db):
            found += [(f"{db}.{v}", {"database": db, "object": v}) for v in _readable(call, db)]
    return page(found, call.query, "views")


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
    body = call.json()
    (sdb, sname), (ddb, dname) = wire.identifier(body, "source"), wire.identifier(body, "destination")
    call.require(ADMIN, sdb, sname)
    call.require(ADMIN, ddb)
    call.require(ADMIN, ddb, dname)
    call.state.catalog.rename_view(Identifier(sdb, sname), Identifier(ddb, dname))
    return {}


ROUTES = [
    ("GET", r"/databases/(?P<db>[^/]+)/views", list_views),
    ("POST", r"/databases/(?P<db>[^/]+)/views", create_view),
    ("GET", r"/databases/(?P<db>[^/]+)/view-details", view_details),
    ("GET", r"/views", list_views_globally),
    ("POST", r"/views/rename", rename_view),
    ("GET", VIEW_PATH, get_view),
    ("POST", VIEW_PATH, alter_view),
    ("DELETE", VIEW_PATH, drop_view),
]
