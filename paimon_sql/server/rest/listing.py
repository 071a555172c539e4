"""The three listings of a kind of catalog object that lives in a database (views, functions): by
database, with details, and across databases; each filtered by Paimon's name pattern (SQL LIKE) and
by what the caller may read, then paged (:mod:`paging`).
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Tuple

from paimon_sql.catalog.base import Catalog
from paimon_sql.server.rest.paging import like, page
from paimon_sql.server.rest.state import Call

Listing = Callable[[Call], Dict[str, Any]]


def listings(kind: str, names: Callable[[Catalog, str], List[str]],
             details: Callable[[Call, str, str], Dict[str, Any]]) -> Tuple[Listing, Listing, Listing]:
    """(by database, with details, across databases) of objects ``kind`` (``view``, ``function``):
    ``names(catalog, db)`` lists a database's, ``details(call, db, name)`` answers one."""
    plural, pattern_key = f"{kind}s", f"{kind}NamePattern"

    def readable(call: Call, db: str) -> List[str]:
        pattern = like(call.query.get(pattern_key))
        return [n for n in names(call.state.catalog, db)
                if pattern(n) and call.state.grants.may_read(call.caller, db, n)]

    def by_database(call: Call) -> Dict[str, Any]:
        return page(((n, n) for n in readable(call, call.params["db"])), call.query, plural)

    def with_details(call: Call) -> Dict[str, Any]:
        db, key = call.params["db"], f"{kind}Details"
        answer = page(((n, n) for n in readable(call, db)), call.query, key)
        answer[key] = [details(call, db, n) for n in answer[key]]
        return answer

    def across_databases(call: Call) -> Dict[str, Any]:
        dbs = like(call.query.get("databaseNamePattern"))
        found = []
        for db in call.state.catalog.list_databases():
            if dbs(db):
                found += [(f"{db}.{n}", {"database": db, "object": n}) for n in readable(call, db)]
        return page(found, call.query, plural)

    return by_database, with_details, across_databases
