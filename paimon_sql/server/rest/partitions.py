"""A table's partitions over REST: listed from its latest snapshot's manifests, as ``t$partitions``
counts them (records as stored, bytes, files, last file creation, buckets); ``done`` is false and the
audit fields are the server's. Marking partitions done writes their ``_SUCCESS`` files, where the
table's mark-done actions include ``success-file``. The endpoints that keep partitions in
the catalog (create, drop, list by names or by filter) are 501: a Paimon table's partitions are its
files, and Java's client then works from the files (it truncates partitions by a commit of its
own, and lists them from the manifests).
"""

from __future__ import annotations

from typing import Any, Dict

from paimon_sql.access.policy import ADMIN, READ
from paimon_sql.commit.partition_statistics import partition_statistics
from paimon_sql.data.partition_names import spec_values
from paimon_sql.maintenance.mark_partition_done import ACTION_OPTION, write_success_files
from paimon_sql.read.postpone import real_buckets
from paimon_sql.server.rest import wire
from paimon_sql.server.rest.errors import RestError, bad_request
from paimon_sql.server.rest.paging import like, page
from paimon_sql.server.rest.state import Call, field_of
from paimon_sql.server.rest.tables import TABLE_PATH, load


SUCCESS_FILE = "success-file"


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


def mark_done(call: Call) -> Dict[str, Any]:
    """``{"specs": [{key: value}]}``: a client's mark-done of partitions (Flink's ``done-partition``
    action), done as the table's ``success-file`` action does it (each partition's ``_SUCCESS``
    file), under the grant ``CALL sys.mark_partition_done`` needs (ADMIN); a table without that
    action has nothing to keep here (501: the catalog keeps no done partitions; Java ignores it)."""
    _, _, table = load(call, ADMIN)
    named = [a.strip().lower() for a in str(table.options.get(ACTION_OPTION) or "").split(",")]
    if SUCCESS_FILE not in named:
        raise RestError(501, f"table {table.name} has no '{SUCCESS_FILE}' mark-done action, and the catalog "
                             "keeps no done partitions")
    keys = table.schema.partition_keys
    if not keys:
        raise bad_request(f"table {table.name} is not partitioned: there is no partition to mark done")
    default = table.schema.options.get("partition.default-name")
    partitions = []
    for spec in field_of(call.json(), "specs", list):
        if not isinstance(spec, dict) or sorted(spec) != sorted(keys):
            raise bad_request(f"partition spec {spec!r} must name every partition column ({', '.join(keys)})")
        typed = spec_values(table.schema, {k: None if v == default else v for k, v in spec.items()})
        partitions.append([typed[k] for k in keys])
    write_success_files(table, partitions)
    return {}


def unserved(call: Call) -> Dict[str, Any]:
    raise RestError(501, "a Paimon table's partitions are its files: the catalog keeps none to create, drop "
                         "or look up by name or filter")


ROUTES = [
    ("GET", TABLE_PATH + "/partitions", list_partitions),
    ("POST", TABLE_PATH + "/partitions", unserved),
    ("POST", TABLE_PATH + "/partitions/drop", unserved),
    ("POST", TABLE_PATH + "/partitions/mark", mark_done),
    ("POST", TABLE_PATH + "/partitions/list-by-names", unserved),
    ("POST", TABLE_PATH + "/partitions/list-by-filter", unserved),
]
