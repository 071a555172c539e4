"""A materialized table's state: its definition, freshness and refresh status (Paimon's
``materialized-table.*`` options, as Paimon's FlinkCatalog stores them), and what its last refresh
read (snapshot ``properties``), from which the next refresh plans an incremental read.

Each refresh commits one snapshot whose properties say which snapshot of each source table it
brought the table up to (:data:`SOURCES`); a refresh of one partition records none, so the next
refresh is full. A source may be read incrementally from there only while every snapshot since
added rows and nothing else (:func:`appends_only`): an OVERWRITE, a delete, a compaction that
dropped rows or a schema change means the rows already materialized may no longer be the query's.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Dict, Optional

from paimon_sql.commit.table_commit import SNAPSHOT_PROPERTIES
from paimon_sql.exceptions import PaimonError, SchemaError, SnapshotNotFoundError
from paimon_sql.manifest.manifest_file import ADD
from paimon_sql.options import core_options as opts

TYPE = "materialized-table"
DEFINITION_QUERY = "materialized-table.definition-query"
INTERVAL_FRESHNESS = "materialized-table.interval-freshness"
FRESHNESS_TIME_UNIT = "materialized-table.interval-freshness.time-unit"
LOGICAL_REFRESH_MODE = "materialized-table.logical-refresh-mode"
REFRESH_MODE = "materialized-table.refresh-mode"
REFRESH_STATUS = "materialized-table.refresh-status"
ACTIVATED, SUSPENDED = "ACTIVATED", "SUSPENDED"
TIME_UNITS = {"SECOND": 1, "MINUTE": 60, "HOUR": 3600, "DAY": 86400}
# snapshot properties of a refresh: {"db.t": snapshot id} of the sources it covered (absent: a
# partition refresh, after which the next refresh is full)
SOURCES = "materialized-table.refresh.source-snapshots"
REFRESHED = "materialized-table.refresh.kind"


def is_materialized(table) -> bool:
    return opts.table_type(table.schema.options) == TYPE


def is_definition(key: str) -> bool:
    """Whether option ``key`` is part of a materialized table's definition, which only the
    MATERIALIZED TABLE statements set."""
    return key == "type" or key.startswith("materialized-table.")


def refuse_write(table, verb: str, instead: str = "ALTER MATERIALIZED TABLE ... REFRESH") -> None:
    """Only a refresh writes a materialized table (its rows are its query's), whether by SQL or
    by the DataFrame API, and it is dropped as one."""
    if table is not None and is_materialized(table):
        raise PaimonError(f"{verb} on materialized table {table.name} is not supported: use {instead}")


@dataclass(frozen=True)
class Definition:
    query: str
    freshness_seconds: int
    status: str


def definition(table) -> Definition:
    return _definition(table.schema.options, table.name)


def _definition(o, name: str) -> Definition:
    try:
        seconds = int(o[INTERVAL_FRESHNESS]) * TIME_UNITS[o[FRESHNESS_TIME_UNIT].upper()]
        if not o[DEFINITION_QUERY].strip() or seconds <= 0:
            raise ValueError
        return Definition(o[DEFINITION_QUERY], seconds, o.get(REFRESH_STATUS, ACTIVATED).upper())
    except (KeyError, ValueError):
        raise PaimonError(f"materialized table {name} lacks a valid definition query or freshness "
                          f"('{DEFINITION_QUERY}', '{INTERVAL_FRESHNESS}', '{FRESHNESS_TIME_UNIT}')") from None


def check_schema(schema, name: str) -> None:
    """At CREATE: a materialized table holds its definition, which CREATE MATERIALIZED TABLE
    stores; ``'type' = 'materialized-table'`` given to CREATE TABLE would make one that never
    refreshes."""
    try:
        _definition(schema.options, name)
    except PaimonError:
        raise SchemaError(f"table {name}: 'type' = '{TYPE}' is made by CREATE MATERIALIZED TABLE ... FRESHNESS = "
                          "INTERVAL 'n' unit AS <query>, which stores its definition") from None


def options(query: str, interval: int, unit: str, logical_mode: str) -> Dict[str, str]:
    """The options a new materialized table is created with (refreshed by full or incremental
    batch runs: physically FULL, as Flink names a mode without a streaming job)."""
    return {"type": TYPE, DEFINITION_QUERY: query, INTERVAL_FRESHNESS: str(interval),
            FRESHNESS_TIME_UNIT: unit.upper(), LOGICAL_REFRESH_MODE: logical_mode.upper(), REFRESH_MODE: "FULL",
            REFRESH_STATUS: ACTIVATED}


@dataclass(frozen=True)
class LastRefresh:
    snapshot: object  # the refresh's snapshot of the materialized table
    sources: Optional[Dict[str, int]]  # None: the next refresh must be full


def last_refresh(table) -> Optional[LastRefresh]:
    """The newest refresh committed to ``table`` (compactions after it are skipped); None when none
    is left (never refreshed, or its snapshot expired)."""
    manager = table.snapshot_manager
    latest, earliest = manager.latest_id(), manager.earliest_id()
    if latest is None:
        return None
    for sid in reversed(manager.listed_ids()):  # the ids on disk: a fast-forward can leave holes
        if not (earliest or latest) <= sid <= latest:
            continue
        snap = manager.snapshot(sid)
        props = snap.properties or {}
        if REFRESHED in props:
            sources = json.loads(props[SOURCES]) if SOURCES in props else None
            return LastRefresh(snap, sources)
    return None


def refresh_properties(kind: str, sources: Optional[Dict[str, int]]) -> Dict[str, str]:
    """The dynamic option that makes a refresh's write commit its snapshot with these properties."""
    props = {REFRESHED: kind, **({SOURCES: json.dumps(sources, sort_keys=True)} if sources is not None else {})}
    return {SNAPSHOT_PROPERTIES: json.dumps(props)}


def is_lapsed(table, now_millis: Optional[int] = None) -> bool:
    """Whether the table is due: never refreshed, or its freshness interval passed since."""
    last = last_refresh(table)
    now = int(time.time() * 1000) if now_millis is None else now_millis
    return last is None or now - last.snapshot.time_millis >= definition(table).freshness_seconds * 1000


def appends_only(source, start: int, end: int) -> bool:
    """Whether every snapshot of ``source`` in (start, end] only added rows: APPEND commits whose
    entries all add files and which leave the index (deletion vectors) alone, compactions that
    keep the row count, statistics; and the schema stayed the one of snapshot ``start``."""
    manager = source.snapshot_manager
    earliest = manager.earliest_id()
    if end < start or (end > start and (earliest is None or earliest > max(start, 1))):
        return False  # a source made again, or snapshots expired before they were read
    try:
        previous = manager.snapshot(start) if start > 0 else None
        snaps = [manager.snapshot(sid) for sid in range(start + 1, end + 1)]
    except SnapshotNotFoundError:
        return False  # in a hole a fast-forward left: what changed there cannot be known
    for snap in snaps:
        if previous is not None and snap.schema_id != previous.schema_id:
            return False
        if snap.commit_kind == "APPEND":
            if snap.index_manifest != (previous.index_manifest if previous else None):
                return False
            entries = [e for m in source.manifest_list(snap.delta_manifest_list)
                       for e in source.manifest_entries(m.file_name)]
            if any(e.kind != ADD for e in entries):
                return False
        elif snap.commit_kind == "COMPACT":
            if snap.delta_record_count:
                return False
        elif snap.commit_kind != "ANALYZE":
            return False
        previous = snap
    return True
