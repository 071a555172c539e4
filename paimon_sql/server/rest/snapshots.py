"""Commits and snapshots: commit, the latest snapshot, snapshots by version and listed, rollback.

A commit (``POST .../commit``, Paimon's ``CommitTableRequest``) is made under a lock per table (per
branch) in this server, then checked against the files, which every writer shares (SQL through
this server, Spark jobs, pypaimon on the files): ``tableId`` must be the table's id (else 404
TABLE: the table was dropped and made again); the snapshot must be built on the latest one
(``baseSnapshotUuid`` equal to its uuid, None when there is none; Paimon 1.x clients send no base
and are checked by id alone) and be numbered next to it; then ``snapshot-N`` is created if
absent, as JSON exactly as sent. A check that fails answers ``{"success": false}`` and the client
rebuilds on the new latest; nothing is written. A commit made is told to the server's catalog as
a commit through SQL is (a Hive metastore's partitions).

``GET .../snapshot`` answers Paimon's ``TableSnapshot``: the snapshot, its ``totalRecordCount`` as
``recordCount``; file counts, sizes and times are 0 (they would need every manifest read).
"""

from __future__ import annotations

import json
import logging
from typing import Any, Dict

from paimon_sql.access.policy import ADMIN, READ, WRITE
from paimon_sql.exceptions import PaimonError, SnapshotNotFoundError
from paimon_sql.maintenance.rollback import rollback_to_snapshot, rollback_to_tag
from paimon_sql.server.rest import wire
from paimon_sql.server.rest.errors import SNAPSHOT, TABLE, TAG, RestError, bad_request, not_found
from paimon_sql.server.rest.paging import page
from paimon_sql.server.rest.state import Call, field_of
from paimon_sql.server.rest.tables import TABLE_PATH, load
from paimon_sql.snapshot.snapshot import Snapshot

BASE = "baseSnapshotUuid"
_LOG = logging.getLogger(__name__)


def commit(call: Call) -> Dict[str, Any]:
    body = call.json()
    db, name, table = load(call, WRITE)
    table_id = field_of(body, "tableId", str, optional=True)
    actual = wire.table_uuid(db, name, table)
    if table_id != actual:
        raise not_found(TABLE, call.params["table"], f"table {db}.{name} has id {actual}, not {table_id}: it was "
                                                     "dropped and made again, or renamed")
    snapshot = field_of(body, "snapshot", dict)
    snapshot_id = field_of(snapshot, "id", int)
    data = json.dumps(snapshot, indent=2, ensure_ascii=False).encode("utf-8")
    sm = table.snapshot_manager
    with call.state.commit_lock(sm.paths.snapshot_dir):
        latest = sm.latest()
        if BASE in body and body[BASE] != (latest.uuid if latest else None):
            return {"success": False}
        if snapshot_id != (latest.id + 1 if latest else 1):
            return {"success": False}
        if not sm.publish(snapshot_id, data):
            return {"success": False}
    _tell_catalog(table, snapshot)
    return {"success": True}


def _tell_catalog(table, snapshot: Dict[str, Any]) -> None:
    """The server's catalog told of a commit its client made (a Hive metastore's partitions), as a
    commit through SQL tells it; the commit has happened whatever a callback says (logged;
    ``CALL sys.repair`` syncs a metastore again)."""
    if not table.env.commit_callbacks:
        return
    snap = Snapshot.from_dict(snapshot)
    try:
        entries = [e for m in table.manifest_list(snap.delta_manifest_list)
                   for e in table.manifest_entries(m.file_name)] if snap.delta_manifest_list else []
        for callback in table.env.commit_callbacks:
            callback(table, snap, entries)
    except (PaimonError, OSError) as e:
        _LOG.warning("table %s: snapshot %d is committed, but the catalog could not be told: %s",
                     table.name, snap.id, e)


def latest_snapshot(call: Call) -> Dict[str, Any]:
    _, name, table = load(call, READ)
    sid = table.snapshot_manager.latest_id()
    if sid is None:
        raise not_found(SNAPSHOT, name, f"table {table.name} has no snapshot")
    snap = wire.snapshot_json(table, sid)
    return {"snapshot": {"snapshot": snap, "recordCount": snap.get("totalRecordCount") or 0, "fileSizeInBytes": 0,
                         "fileCount": 0, "lastFileCreationTime": 0}}


def snapshot_by_version(call: Call) -> Dict[str, Any]:
    """``version``: a snapshot id, ``LATEST``, ``EARLIEST`` or a tag's name."""
    _, _, table = load(call, READ)
    version, sm = call.params["version"], table.snapshot_manager
    if version.isdigit():
        sid = int(version)
    elif version.upper() in ("LATEST", "EARLIEST"):
        sid = sm.latest_id() if version.upper() == "LATEST" else sm.earliest_id()
    elif table.tag_manager.exists(version):
        return {"snapshot": table.tag_manager.get(version).snapshot.to_dict()}
    else:
        sid = None
    if sid is None or not sm.io.exists(sm.paths.snapshot_path(sid)):
        raise not_found(SNAPSHOT, version, f"table {table.name} has no snapshot {version}")
    return {"snapshot": wire.snapshot_json(table, sid)}


def list_snapshots(call: Call) -> Dict[str, Any]:
    _, _, table = load(call, READ)
    ids = table.snapshot_manager.listed_ids()
    answer = page(((f"{i:020d}", i) for i in ids), call.query, "snapshots")
    answer["snapshots"] = [wire.snapshot_json(table, i) for i in answer["snapshots"]]
    return answer


def rollback(call: Call) -> Dict[str, Any]:
    """To a snapshot (``{"type": "snapshot", "snapshotId"}``) or a tag (``{"type": "tag", "tagName"}``),
    refused when ``fromSnapshot`` is given and is no longer the latest."""
    body = call.json()
    _, _, table = load(call, ADMIN)
    instant = field_of(body, "instant", dict)
    kind = instant.get("type")
    from_snapshot = field_of(body, "fromSnapshot", int, optional=True)
    sm = table.snapshot_manager
    with call.state.commit_lock(sm.paths.snapshot_dir):
        if from_snapshot is not None and sm.latest_id() != from_snapshot:
            raise RestError(409, f"table {table.name}'s latest snapshot is {sm.latest_id()}, not {from_snapshot}: "
                                 "not rolled back")
        if kind == "snapshot":
            sid = field_of(instant, "snapshotId", int)
            try:
                rollback_to_snapshot(table, sid)
            except SnapshotNotFoundError as e:
                raise not_found(SNAPSHOT, str(sid), str(e)) from None
        elif kind == "tag":
            tag = field_of(instant, "tagName", str)
            if not table.tag_manager.exists(tag):
                raise not_found(TAG, tag, f"tag '{tag}' of table {table.name} does not exist")
            rollback_to_tag(table, tag)
        else:
            raise bad_request(f"unknown rollback instant type {kind!r} (snapshot or tag)")
    return {}


ROUTES = [
    ("POST", TABLE_PATH + "/commit", commit),
    ("GET", TABLE_PATH + "/snapshot", latest_snapshot),
    ("GET", TABLE_PATH + "/snapshots", list_snapshots),
    ("GET", TABLE_PATH + "/snapshots/(?P<version>[^/]+)", snapshot_by_version),
    ("POST", TABLE_PATH + "/rollback", rollback),
]
