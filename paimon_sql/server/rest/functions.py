"""Functions: paimon-sql's catalogs keep none, so every listing is empty and every function is
unknown (404 FUNCTION, never 501: paimon-spark resolves function names through the catalog and
would fail on 501); creating one is 501, saying why.
"""

from __future__ import annotations

from typing import Any, Dict

from paimon_sql.server.rest.errors import DATABASE, FUNCTION, RestError, not_found
from paimon_sql.server.rest.state import Call

FUNCTION_PATH = r"/databases/(?P<db>[^/]+)/functions/(?P<function>[^/]+)"


def _empty(key: str):
    def listing(call: Call) -> Dict[str, Any]:
        db = call.params.get("db")
        if db is not None and not call.state.catalog.database_exists(db):
            raise not_found(DATABASE, db, f"database {db} does not exist")
        return {key: [], "nextPageToken": None}
    return listing


def unknown_function(call: Call) -> Dict[str, Any]:
    name = call.params["function"]
    raise not_found(FUNCTION, name, f"function {call.params['db']}.{name} does not exist (paimon-sql keeps no "
                                    "catalog functions)")


def create_function(call: Call) -> Dict[str, Any]:
    raise RestError(501, "paimon-sql's catalogs keep no functions: CREATE FUNCTION is not supported")


ROUTES = [
    ("GET", r"/databases/(?P<db>[^/]+)/functions", _empty("functions")),
    ("POST", r"/databases/(?P<db>[^/]+)/functions", create_function),
    ("GET", r"/databases/(?P<db>[^/]+)/function-details", _empty("functionDetails")),
    ("GET", r"/functions", _empty("functions")),
    ("GET", FUNCTION_PATH, unknown_function),
    ("POST", FUNCTION_PATH, unknown_function),
    ("DELETE", FUNCTION_PATH, unknown_function),
]
