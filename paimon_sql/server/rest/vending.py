"""What a client's reads get besides metadata: storage credentials (``/token``) and query auth (``/auth``).

``GET .../token`` (called when ``data-token.enabled``, which the config handshake turns on for a
warehouse on an object store) answers the catalog's own object-store options (``s3.*``, ``gs.*``,
``fs.*``), valid 4000 s (Paimon's clients refresh a token with less than an hour left), to a user
who may read the table; a local warehouse has none to vend (501). These are the server's own
credentials, not per-table scoped ones: give REST tokens only to users trusted with the store.

``POST .../auth`` answers no filter and no masks: a user with row filters or column masks on the
table is refused it altogether (403, by :mod:`grants`) until query auth is served.
"""

from __future__ import annotations

import time
from typing import Any, Dict

from paimon_sql.access.policy import READ
from paimon_sql.server.rest.databases import object_store
from paimon_sql.server.rest.errors import RestError
from paimon_sql.server.rest.state import Call
from paimon_sql.server.rest.tables import TABLE_PATH, load

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
    load(call, READ)
    return {}


ROUTES = [
    ("GET", TABLE_PATH + "/token", data_token),
    ("POST", TABLE_PATH + "/auth", query_auth),
]
