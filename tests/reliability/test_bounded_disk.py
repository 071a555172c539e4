"""Bounded disk (issue 19): many small commits, with compaction and expiry as the table's options
configure them, leave at most ``snapshot.num-retained.max`` snapshots and data + metadata bytes
within 3x the live data.

*Live data* is the bytes of the data files the latest snapshot reads (``DataFileMeta.file_size`` of
its live manifest entries: what a fresh copy of the table would need). *On disk* is every file under
the table directory except ``schema/`` (constant): data files, changelog files, manifests, manifest
lists, index files, snapshot files and hints. Before comparing the two, the directory must hold
exactly the files something kept references (``referenced_files``): an expired snapshot's files
are gone, not merely outweighed.

Two tables, one bound each:

- an append table with the default ``snapshot.time-retained`` (1 h): ``num-retained.max`` binds
  (exactly ``max`` snapshots stay); a full compaction runs every ``COMPACT_EVERY`` commits, as a
  scheduled ``CALL sys.compact`` would (append writes do not compact on their own);
- a primary-key table (2 buckets, random keys, ``changelog-producer`` input, a full compaction
  every ``FULL_EVERY`` commits, minor ones at ``MINOR_TRIGGER`` sorted runs) with
  ``snapshot.time-retained`` shortened to 1 ms: ``num-retained.min`` binds. Both compaction
  intervals are longer than the snapshots kept, so the writer's "commits since the last COMPACT"
  runs into expired snapshots (it once failed every write there with "snapshot N does not exist").

CI makes 80 commits per table; ``scripts/reliability.sh`` 1,000.
"""

import os
import time

import numpy as np
import pyarrow as pa

from paimon_sql.store.references import referenced_files
from reliability.conftest import record, size

COMMITS = size(80, 1000)
# per commit: ~3 KB of Parquet, a small commit. Metadata costs the same bytes per commit whatever the
# data (~1.4 KB of manifests and snapshot here), so the bound needs commits of some size: 500 rows
# made ~7 KB while every Parquet column had a dictionary, ~2 KB since (PLAIN where a dictionary does
# not pay, no ARROW:schema footer), which put the metadata alone at 1.7x the live data
ROWS = 1500
COMPACT_EVERY = 25  # append: a full compaction every 25 commits
FULL_EVERY, MINOR_TRIGGER = 10, 8  # primary key: full-compaction.delta-commits, num-sorted-run.compaction-trigger
RETAIN_MIN, RETAIN_MAX = 5, 20
SCHEMA = pa.schema([("id", pa.int64()), ("v", pa.string()), ("x", pa.float64())])


def _batch(ids: np.ndarray, commit: int) -> pa.Table:
    return pa.table({"id": pa.array(ids, pa.int64()),
                     "v": pa.array(np.char.add(f"c{commit}-", ids.astype(str))),
                     "x": pa.array(np.full(len(ids), float(commit)))}, schema=SCHEMA)


def _disk(table) -> dict:
    """Relative path -> bytes of every file under the table directory but ``schema/``."""
    out = {}
    for root, dirs, files in os.walk(table.path):
        dirs[:] = [d for d in dirs if os.path.relpath(os.path.join(root, d), table.path) != "schema"]
        for f in files:
            p = os.path.join(root, f)
            out[os.path.relpath(p, table.path)] = os.path.getsize(p)
    return out


def _check_bounds(table, kind: str, retained_expected: int, seconds: float) -> None:
    sm = table.snapshot_manager
    listed = sm.listed_ids()
    disk = _disk(table)
    referenced = {os.path.relpath(p, table.path) for p in referenced_files(table)}
    leftovers = sorted(set(disk) - referenced - {"snapshot/EARLIEST", "snapshot/LATEST"})
    live = sum(e.file.file_size for e in table.new_scan().plan_entries())
    on_disk = sum(disk.values())
    manifests = sum(1 for p in disk if p.startswith("manifest/"))
    compactions = sm.latest_id() - COMMITS  # one snapshot per write, plus one per compaction
    record("bounded_disk", table=kind, commits=COMMITS, compactions=compactions, snapshots=len(listed),
           manifest_files=manifests, data_files=sum(1 for p in disk if "bucket-" in p),
           live_bytes=live, disk_bytes=on_disk, ratio=round(on_disk / live, 2), seconds=round(seconds, 1))
    assert compactions > 0
    assert not leftovers, f"{kind}: {len(leftovers)} unreferenced files left, e.g. {leftovers[:5]}"
    assert RETAIN_MIN <= len(listed) <= RETAIN_MAX and len(listed) == retained_expected, listed
    assert listed == list(range(listed[0], listed[0] + len(listed)))
    assert on_disk <= 3 * live, f"{kind}: {on_disk} bytes on disk for {live} live ({on_disk / live:.2f}x)"


def test_append_table_keeps_num_retained_max_snapshots_and_bounded_bytes(catalog):
    t = catalog.create_table_from_arrow("db.events", SCHEMA, options={
        "snapshot.num-retained.min": str(RETAIN_MIN), "snapshot.num-retained.max": str(RETAIN_MAX)})
    start = time.monotonic()
    for c in range(COMMITS):
        t.write_arrow(_batch(np.arange(c * ROWS, (c + 1) * ROWS), c))
        if (c + 1) % COMPACT_EVERY == 0:
            t.compact(full=True)
    seconds = time.monotonic() - start
    ids = t.to_arrow().column("id").to_numpy()
    assert len(ids) == COMMITS * ROWS and np.array_equal(np.sort(ids), np.arange(COMMITS * ROWS))
    _check_bounds(t, "append", RETAIN_MAX, seconds)


def test_primary_key_table_keeps_num_retained_min_snapshots_and_bounded_bytes(catalog):
    t = catalog.create_table_from_arrow("db.accounts", SCHEMA, primary_keys=["id"], options={
        "bucket": "2", "changelog-producer": "input", "full-compaction.delta-commits": str(FULL_EVERY),
        "num-sorted-run.compaction-trigger": str(MINOR_TRIGGER),
        "snapshot.num-retained.min": str(RETAIN_MIN), "snapshot.num-retained.max": str(RETAIN_MAX),
        "snapshot.time-retained": "1 ms"})
    rng = np.random.default_rng(19)
    keys = 20 * ROWS
    latest = np.full(keys, -1)  # the commit that last wrote each key
    start = time.monotonic()
    for c in range(COMMITS):
        ids = np.unique(rng.integers(0, keys, ROWS))
        latest[ids] = c
        t.write_arrow(_batch(ids, c))
    seconds = time.monotonic() - start
    got = t.to_arrow().sort_by("id")
    written = np.flatnonzero(latest >= 0)
    assert np.array_equal(got.column("id").to_numpy(), written)
    assert np.array_equal(got.column("x").to_numpy(), latest[written].astype(float))
    _check_bounds(t, "primary-key", RETAIN_MIN, seconds)
