"""Functions: list (by database, with details, across databases), create, get, alter (Paimon's
``FunctionChange``), drop, kept by the catalog (:mod:`paimon_sql.function.function`; the
filesystem, JDBC and Hive catalogs keep them in the warehouse). A function is granted as a table of
its name is: READ to see it, ADMIN on its database to make, change or drop one. An unknown
function is 404 FUNCTION, never 501: paimon-spark resolves function names through the catalog.
"""

from __future__ import annotations

from typing import Any, Dict

from paimon_sql.access.policy import ADMIN, READ
from paimon_sql.exceptions import CorruptMetadataError
from paimon_sql.function.function import Function
from paimon_sql.server.rest import wire
from paimon_sql.server.rest.errors import bad_request
from paimon_sql.server.rest.listing import listings
from paimon_sql.server.rest.state import DATABASE_PATH, Call, field_of

FUNCTION_PATH = DATABASE_PATH + r"/functions/(?P<function>[^/]+)"


def _response(call: Call, db: str, name: str) -> Dict[str, Any]:
    owner = wire.database_owner(call.state.catalog, db)
    return {**call.state.catalog.get_function(db, name).to_dict(), "uuid": f"{db}.{name}", "owner": owner,
            "createdAt": 0, "createdBy": owner, "updatedAt": 0, "updatedBy": owner}


list_functions, function_details, list_functions_globally = listings(
    "function", lambda catalog, db: catalog.list_functions(db), _response)


def create_function(call: Call) -> Dict[str, Any]:
    db = call.params["db"]
    call.require(ADMIN, db)
    try:
        function = Function.from_dict(call.json(), "the request")
    except CorruptMetadataError as e:
        raise bad_request(str(e)) from None
    call.state.catalog.create_function(db, function)
    return {}


def get_function(call: Call) -> Dict[str, Any]:
    db, name = call.params["db"], call.params["function"]
    call.require(READ, db, name)
    return _response(call, db, name)


def alter_function(call: Call) -> Dict[str, Any]:
    db, name = call.params["db"], call.params["function"]
    call.require(ADMIN, db)
    call.state.catalog.alter_function(db, name, field_of(call.json(), "changes", list))
    return {}


def drop_function(call: Call) -> Dict[str, Any]:
    db, name = call.params["db"], call.params["function"]
    call.require(ADMIN, db)
    call.state.catalog.drop_function(db, name)
    return {}


ROUTES = [
    ("GET", DATABASE_PATH + r"/functions", list_functions),
    ("POST", DATABASE_PATH + r"/functions", create_function),
    ("GET", DATABASE_PATH + r"/function-details", function_details),
    ("GET", r"/functions", list_functions_globally),
    ("GET", FUNCTION_PATH, get_function),
    ("POST", FUNCTION_PATH, alter_function),
    ("DELETE", FUNCTION_PATH, drop_function),
]
