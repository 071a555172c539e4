"""CACHE TABLE, UNCACHE TABLE and REFRESH TABLE on Paimon tables, as Spark caches its own tables.

``CACHE [LAZY] TABLE t [OPTIONS ('storageLevel' 'DISK_ONLY')]`` keeps all of ``t``'s rows at its
latest snapshot in Spark's cache (eagerly unless LAZY); every later query that reads ``t`` at its
latest snapshot reads the cached rows (Spark prunes columns and filters over the in-memory
relation). Spark refreshes the cache of a table its own writes change; here a query that finds the
cache holding an older snapshot than the table's latest caches the table anew (lazily), whoever
wrote the new snapshot, so a cached table never answers with rows a commit replaced. ``REFRESH
TABLE t`` does so at once. ``UNCACHE TABLE t`` and Spark's ``CLEAR CACHE`` drop the cache. A
format table's cache has no snapshot to date it: it lasts until a write through the session or
REFRESH TABLE, as Spark's cache of its own file tables. ``CACHE TABLE name AS <query>`` over
Paimon tables caches the query's rows under a temporary view ``name``, as Spark does, and caches
them anew when a table the query reads has a newer snapshot.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from pyspark import StorageLevel
from pyspark.sql import DataFrame
from sqlglot import exp

from paimon_sql.exceptions import PaimonError
from paimon_sql.spark import format_table as spark_format_table
from paimon_sql.sql import parse, views
from paimon_sql.table.format_table import FormatTable

_DEFAULT_LEVEL = "MEMORY_AND_DISK"  # Spark's default for CACHE TABLE


@dataclass
class Cached:
    snapshot_id: Optional[int]
    df: DataFrame
    level: str


def _key(table) -> tuple:
    return table.path, None if isinstance(table, FormatTable) else table.branch


def _latest_id(table) -> Optional[int]:
    """The snapshot a cache holds; None for a format table (plain files: as Spark caches its own file
    tables, its cache lasts until a write through this session or REFRESH TABLE)."""
    snap = None if isinstance(table, FormatTable) else table.snapshot_manager.latest()
    return snap.id if snap else None


def _storage_level(node: exp.Cache) -> str:
    """``OPTIONS ('storageLevel' 'DISK_ONLY')``: the level named, Spark's default otherwise."""
    opts = [o.this if isinstance(o, exp.Literal) else o.name for o in node.args.get("options") or []]
    pairs = dict(zip(opts[::2], opts[1::2]))
    level = {k.lower(): v for k, v in pairs.items()}.get("storagelevel", _DEFAULT_LEVEL).upper()
    if not isinstance(getattr(StorageLevel, level, None), StorageLevel):
        raise PaimonError(f"CACHE TABLE: unknown storageLevel '{level}'")
    return level


def _persist(session, table, level: str, lazy: bool) -> Cached:
    """The table's rows at its latest snapshot, all columns, in Spark's cache."""
    snapshot_id = _latest_id(table)
    if isinstance(table, FormatTable):
        df = spark_format_table.read(session.spark, table)
    else:
        pinned = table.travel({"scan.snapshot-id": str(snapshot_id)}) if snapshot_id else table
        df = session.scan_dataframe(pinned, None, None)
    df = df.persist(getattr(StorageLevel, level))
    if not lazy:
        df.count()
    entry = session.cached_tables[_key(table)] = Cached(snapshot_id, df, level)
    return entry


def lookup(session, table) -> Optional[DataFrame]:
    """The cached rows of a table read at its latest snapshot; None when it is not cached (or the
    cache was cleared). An older snapshot's cache is replaced by one of the latest (lazily)."""
    entry = session.cached_tables.get(_key(table))
    if entry is None or table.dynamic_options:
        return None
    if entry.df.storageLevel == StorageLevel.NONE:  # CLEAR CACHE, or spark.catalog.clearCache()
        del session.cached_tables[_key(table)]
        return None
    if entry.snapshot_id != _latest_id(table):
        entry.df.unpersist()
        entry = _persist(session, table, entry.level, lazy=True)
    return entry.df


def cache_table(session, node: exp.Cache, text: str):
    """CACHE [LAZY] TABLE of a Paimon table, or AS a query reading Paimon tables."""
    lazy, level = bool(node.args.get("lazy")), _storage_level(node)
    if node.args.get("expression") is not None:
        source = node.args["expression"]
        body = parse.query_text(text, source)
        if not views.reads_paimon(session, body):
            return session.passthrough()
        prepared = parse.prepare(body)
        view = views.View(node.this.name, False, views.qualified(session, parse.parse(prepared), prepared), None)
        views.register(session, view)  # a view of the session: cached anew when its tables change
        session.spark.catalog.cacheTable(node.this.name, getattr(StorageLevel, level))
        if not lazy:
            session.spark.table(node.this.name).count()
        return None
    table = session.find_table(node.this)
    if table is None:
        return session.passthrough()
    _uncache(session, table)
    _persist(session, table, level, lazy)
    return None


def _uncache(session, table) -> Optional[Cached]:
    """Drop a table's cache; its entry, None when it was not cached (no error, as in Spark)."""
    entry = session.cached_tables.pop(_key(table), None)
    if entry is not None:
        entry.df.unpersist()
    return entry


def uncache_table(session, node: exp.Uncache):
    table = session.find_table(node.this)
    if table is None:
        return session.passthrough()
    _uncache(session, table)
    return None


def refresh_table(session, node: exp.Expression):
    """REFRESH TABLE t: a Paimon table is read at its latest snapshot by every query already; a
    cached one is cached anew."""
    table = session.find_table(node.this)
    if table is None:
        return session.passthrough()
    refresh(session, table)
    return None


def refresh(session, table) -> None:
    """A cached table cached anew (lazily): REFRESH TABLE, and a write into a format table (whose
    cache no snapshot dates), as Spark re-caches a file table its own write changed."""
    entry = _uncache(session, table)
    if entry is not None:
        _persist(session, table, entry.level, lazy=True)
