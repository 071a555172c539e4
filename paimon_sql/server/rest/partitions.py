"""A table's partitions over REST: listed from its latest snapshot's manifests, as ``t$partitions``
counts them (records as stored, bytes, files, last file creation, buckets); ``done`` is false and the
audit fields are the server's. The partition endpoints that keep partitions in the catalog (create,
drop, mark done, list by names or by filter) are 501: a Paimon table's partitions are its files,
and Java's client then works from the files (it ignores 501 on mark-done, lists from manifests).
"""

from __future__ import annotations

from typing import Any, Dict

from paimon_sql.access.policy import READ
from paimon_sql.data import binary_row
from paimon_sql.read.postpone import real_buckets
from paimon_sql.server.rest import wire
from paimon_sql.server.rest.errors import RestError
from paimon_sql.server.rest.paging import like, page
from paimon_sql.server.rest.state import Call
from paimon_sql.server.rest.tables import TABLE_PATH, load


def list_partitions(call: Call) -> Dict[str, Any]:
    db, _, table = load(call, READ)
    keys = table.schema.partition_keys
    snap = table.snapshot_manager.latest()
    if not keys or snap is None:
        return {"partitions": [], "nextPageToken": None}
    types = [f.type for f in table.schema.fields_of(keys)]
    groups: Dict[bytes, Dict[str, Any]] = {}
    for e in real_buckets(table, table.new_scan().with_snapshot(snap.id).plan_entries()):
        g = groups.setdefault(e.partition, {"recordCount": 0, "fileSizeInBytes": 0, "fileCount": 0,
                                            "lastFileCreationTime": 0, "totalBuckets": e.total_buckets})
        g["recordCount"] += e.file.row_count
        g["fileSizeInBytes"] += e.file.file_size
        g["fileCount"] += 1
        if e.file.creation_time is not None:
            g["lastFileCreationTime"] = max(g["lastFileCreationTime"], int(e.file.creation_time.timestamp() * 1000))
    owner = wire.database_owner(call.state.catalog, db)
    pattern = like(call.query.get("partitionNamePattern"))
    found = []
    for part, g in groups.items():
        spec = dict(table.paths.partition_spec(binary_row.from_bytes(part, types), legacy=None))
        name = "/".join(f"{k}={v}" for k, v in spec.items())
        if pattern(name):
            found.append((name, {"spec": spec, **g, "done": False, "createdAt": 0, "createdBy": owner,
                                 "updatedAt": 0, "updatedBy": owner, "options": {}}))
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
