"""A table's partitions over REST: listed from its latest snapshot's manifests, as ``t$partitions``
counts them (records as stored, bytes, files, last file creation, buckets); ``done`` is false and the
audit fields are the server's. The partition endpoints that keep partitions in the catalog (create,
drop, mark done, list by names or by filter) are 501: a Paimon table's partitions are its files,
and Java's client then works from the files (it ignores 501 on mark-done, lists from manifests).
"""

from __future__ import annotations

from typing import Any, Dict

from paimon_sql.access.policy import READ
from paimon_sql.commit.partition_statistics import partition_statistics
from paimon_sql.read.postpone import real_buckets
from paimon_sql.server.rest import wire
from paimon_sql.server.rest.errors import RestError
from paimon_sql.server.rest.paging import like, page
from paimon_sql.server.rest.state import Call
from paimon_sql.server.rest.tables import TABLE_PATH, load


def list_partitions(call: Call) -> Dict[str, Any]:
    db, _, table = load(call, READ)
    snap = table.snapshot_manager.latest()
    if not table.schema.partition_keys or snap is None:
        return {"partitions": [], "nextPageToken": None}
    entries = real_buckets(table, table.new_scan().with_snapshot(snap.id).plan_entries())
    owner = wire.database_owner(call.state.catalog, db)
    pattern = like(call.query.get("partitionNamePattern"))
    found = []
    for stats in partition_statistics(table, entries):  # the live files, each an ADD: the partitions' totals
        name = "/".join(f"{k}={v}" for k, v in stats["spec"].items())
        if pattern(name):
            found.append((name, {**stats, "done": False, "createdAt": 0, "createdBy": owner, "updatedAt": 0,
                                 "updatedBy": owner, "options": {}}))
    return page(found, call.query, "partitions")


def unserved(call: Call) -> Dict[str, Any]:
    raise RestError(501, "a Paimon table's partitions are its files: the catalog keeps none to create, drop, "
                         "mark done or look up by name or filter")


ROUTES = [
    ("GET", TABLE_PATH + "/partitions", list_partitions),
    ("POST", TABLE_PATH + "/partitions", unserved),
    ("POST", TABLE_PATH + "/partitions/drop", unserved),
    ("POST", TABLE_PATH + "/partitions/mark", unserved),
    ("POST", TABLE_PATH + "/partitions/list-by-names", unserved),
    ("POST", TABLE_PATH + "/partitions/list-by-filter", unserved),
]
