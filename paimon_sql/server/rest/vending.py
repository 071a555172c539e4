"""What a client's reads get besides metadata: storage credentials (``/token``) and query auth (``/auth``).

``GET .../token`` (called when ``data-token.enabled``, which the config handshake turns on for a
warehouse on an object store) answers the catalog's own object-store options (``s3.*``, ``gs.*``,
``fs.*``), valid 4000 s (Paimon's clients refresh a token with less than an hour left), to a user
who may read the table; a local warehouse has none to vend (501). These are the server's own
credentials, not per-table scoped ones: give REST tokens only to users trusted with the store.

``POST .../auth`` (``{"select": [columns] | null}``, called when the table has
``query-auth.enabled``, which :mod:`tables` adds for a user with rules on it) answers the user's row
filters and column masks as Paimon's Predicate and Transform JSON (:mod:`query_auth`); the client
applies them to what it reads. The policy has no column grants: ``select`` is only checked to name
columns of the table (or Paimon's system fields).
"""

from __future__ import annotations

import time
from typing import Any, Dict

from paimon_sql.access.policy import READ
from paimon_sql.server.rest.databases import object_store
from paimon_sql.server.rest.errors import RestError, bad_request
from paimon_sql.server.rest.query_auth import SYSTEM_FIELDS
from paimon_sql.server.rest.state import Call, field_of
from paimon_sql.server.rest.tables import TABLE_PATH, auth_result, load

TOKEN_SECONDS = 4000
STORE_OPTIONS = ("s3.", "gs.", "fs.")


def data_token(call: Call) -> Dict[str, Any]:
    load(call, READ)
    state = call.state
    if not object_store(state.warehouse):
        raise RestError(501, "the warehouse is on a local file system: there are no storage credentials to vend")
    token = {k: v for k, v in state.options.items() if k.startswith(STORE_OPTIONS)}
    return {"token": token, "expiresAtMillis": int(time.time() * 1000) + TOKEN_SECONDS * 1000}


def query_auth(call: Call) -> Dict[str, Any]:
    db, name, table = load(call, READ)
    select = field_of(call.json(), "select", list, optional=True) or []
    columns = {f.name for f in table.schema.fields}
    unknown = [c for c in select if not isinstance(c, str) or (c not in columns and c not in SYSTEM_FIELDS)]
    if unknown:
        raise bad_request(f"select names {unknown[0]!r}, which is not a column of table {db}.{name}"[:300])
    auth = auth_result(call, db, name, table)
    return auth.body() if auth is not None else {}


ROUTES = [
    ("GET", TABLE_PATH + "/token", data_token),
    ("POST", TABLE_PATH + "/auth", query_auth),
]
