"""A table's tags, branches and consumers over REST, with the table's own managers (the files SQL's
tags, branches and consumers are). Reading them needs READ on the table; changing them ADMIN, as
SQL's ``ALTER TABLE ... CREATE TAG`` and ``CALL sys.create_tag`` / ``create_branch`` /
``reset_consumer`` need. A tag's retention is a Paimon duration (``'1 d'``, ``'12 h'``) and is
answered as ISO-8601 (``PT43200S``).
"""

from __future__ import annotations

import datetime as dt
from typing import Any, Dict

from paimon_sql.access.policy import ADMIN, READ
from paimon_sql.exceptions import SnapshotNotFoundError
from paimon_sql.options.core_options import parse_duration_ms
from paimon_sql.server.rest.errors import BRANCH, SNAPSHOT, TAG, RestError, bad_request, not_found
from paimon_sql.server.rest.paging import page
from paimon_sql.server.rest.state import Call, field_of
from paimon_sql.server.rest.tables import TABLE_PATH, load
from paimon_sql.snapshot.tag_manager import find_snapshot


def list_tags(call: Call) -> Dict[str, Any]:
    _, _, table = load(call, READ)
    prefix = call.query.get("tagNamePrefix") or ""
    return page(((n, n) for n in table.tag_manager.names() if n.startswith(prefix)), call.query, "tags")


def create_tag(call: Call) -> Dict[str, Any]:
    body = call.json()
    _, _, table = load(call, ADMIN)
    name = field_of(body, "tagName", str)
    snapshot_id = field_of(body, "snapshotId", int, optional=True)
    retained = field_of(body, "timeRetained", str, optional=True)
    try:
        keep = dt.timedelta(milliseconds=parse_duration_ms(retained)) if retained else None
    except ValueError:
        raise bad_request(f"timeRetained must be a duration such as '1 d' or '12 h', got {retained!r}") from None
    if table.tag_manager.exists(name):
        raise RestError(409, f"tag '{name}' of table {table.name} already exists", TAG, name)
    try:
        snapshot = find_snapshot(table, snapshot_id)
    except SnapshotNotFoundError as e:
        raise not_found(SNAPSHOT, str(snapshot_id), str(e)) from None
    table.tag_manager.create(name, snapshot, keep)
    return {}


def get_tag(call: Call) -> Dict[str, Any]:
    _, _, table = load(call, READ)
    name = call.params["tag"]
    if not table.tag_manager.exists(name):
        raise not_found(TAG, name, f"tag '{name}' of table {table.name} does not exist")
    tag = table.tag_manager.get(name)
    created = int(tag.create_time.timestamp() * 1000) if tag.create_time else None
    retained = f"PT{tag.time_retained.total_seconds():g}S" if tag.time_retained is not None else None
    return {"tagName": name, "snapshot": tag.snapshot.to_dict(), "tagCreateTime": created, "tagTimeRetained": retained}


def delete_tag(call: Call) -> Dict[str, Any]:
    _, _, table = load(call, ADMIN)
    name = call.params["tag"]
    if not table.tag_manager.exists(name):
        raise not_found(TAG, name, f"tag '{name}' of table {table.name} does not exist")
    table.tag_manager.delete(name)
    return {}


def list_branches(call: Call) -> Dict[str, Any]:
    _, _, table = load(call, READ)
    return {"branches": [name for name, _ in table.branch_manager.branches()]}


def create_branch(call: Call) -> Dict[str, Any]:
    body = call.json()
    _, _, table = load(call, ADMIN)
    name = field_of(body, "branch", str)
    tag = field_of(body, "fromTag", str, optional=True)
    if table.branch_manager.exists(name):
        raise RestError(409, f"branch '{name}' of table {table.name} already exists", BRANCH, name)
    if tag is not None and not table.tag_manager.exists(tag):
        raise not_found(TAG, tag, f"tag '{tag}' of table {table.name} does not exist")
    table.branch_manager.create(name, table, tag)
    return {}


def _branch(call: Call):
    """The call's table and its existing branch ``branch``."""
    _, _, table = load(call, ADMIN)
    name = call.params["branch"]
    if not table.branch_manager.exists(name):
        raise not_found(BRANCH, name, f"branch '{name}' of table {table.name} does not exist")
    return table, name


def drop_branch(call: Call) -> Dict[str, Any]:
    table, name = _branch(call)
    table.branch_manager.drop(name)
    return {}


def forward_branch(call: Call) -> Dict[str, Any]:
    """Main takes the branch's state (Paimon's fastForward), under main's commit lock."""
    table, name = _branch(call)
    with call.state.commit_lock(table.snapshot_manager.paths.snapshot_dir):
        table.branch_manager.fast_forward(table, name)
    return {}


def rename_branch(call: Call) -> Dict[str, Any]:
    body = call.json()
    table, name = _branch(call)
    target = field_of(body, "toBranch", str)
    if table.branch_manager.exists(target):
        raise RestError(409, f"branch '{target}' of table {table.name} already exists", BRANCH, target)
    table.branch_manager.rename(name, target)
    return {}


def list_consumers(call: Call) -> Dict[str, Any]:
    _, _, table = load(call, READ)
    found = table.consumer_manager.consumers()
    return page(((c, {"consumerId": c, "nextSnapshot": n}) for c, n in found.items()), call.query, "consumers")


def reset_consumer(call: Call) -> Dict[str, Any]:
    """``nextSnapshotId`` null deletes the consumer."""
    body = call.json()
    _, _, table = load(call, ADMIN)
    consumer = field_of(body, "consumerId", str)
    next_id = field_of(body, "nextSnapshotId", int, optional=True)
    if next_id is None:
        table.consumer_manager.delete(consumer)
    else:
        table.consumer_manager.record(consumer, next_id)
    return {}


ROUTES = [
    ("GET", TABLE_PATH + "/tags", list_tags),
    ("POST", TABLE_PATH + "/tags", create_tag),
    ("GET", TABLE_PATH + "/tags/(?P<tag>[^/]+)", get_tag),
    ("DELETE", TABLE_PATH + "/tags/(?P<tag>[^/]+)", delete_tag),
    ("GET", TABLE_PATH + "/branches", list_branches),
    ("POST", TABLE_PATH + "/branches", create_branch),
    ("DELETE", TABLE_PATH + "/branches/(?P<branch>[^/]+)", drop_branch),
    ("POST", TABLE_PATH + "/branches/(?P<branch>[^/]+)/forward", forward_branch),
    ("POST", TABLE_PATH + "/branches/(?P<branch>[^/]+)/rename", rename_branch),
    ("GET", TABLE_PATH + "/consumers", list_consumers),
    ("POST", TABLE_PATH + "/consumers/reset", reset_consumer),
]
