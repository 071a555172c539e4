"""Primary-key tables in merge-on-write mode (deletion vectors): each key one live row in levels > 0,
older rows marked deleted by compaction, level 0 unread until compacted."""

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from paimon_sql.data import row_kind
from paimon_sql.format.file_format import read_file
from paimon_sql.schema.table_schema import VALUE_KIND

SCHEMA = pa.schema([pa.field("id", pa.int64(), False), ("v", pa.string()), ("n", pa.int64())])
ENGINES = {
    "deduplicate": {},
    "partial-update": {"merge-engine": "partial-update"},
    "aggregation": {"merge-engine": "aggregation", "fields.n.aggregate-function": "sum"},
}


def mow_table(catalog, name, **options):
    return catalog.create_table_from_arrow(f"db.{name}", SCHEMA, primary_keys=["id"], options={
        "bucket": "2", "deletion-vectors.enabled": "true", **options})


def live(t, snapshot=None):
    return {r["id"]: (r["v"], r["n"]) for r in t.new_scan().with_snapshot(snapshot).to_arrow().to_pylist()}


def apply(model, engine, ids, vs, ns, deleted):
    for i, v, n in zip(ids, vs, ns):
        if i in deleted:
            model.pop(i, None)
        elif engine == "deduplicate":
            model[i] = (v, n)
        elif engine == "partial-update":
            old = model.get(i, (None, None))
            model[i] = (v if v is not None else old[0], n if n is not None else old[1])
        else:
            old = model.get(i, (None, 0))
            model[i] = (v, old[1] + n)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.sampled_from(sorted(ENGINES)), st.lists(st.tuples(
    st.lists(st.integers(0, 60), min_size=1, max_size=25, unique=True), st.booleans()), min_size=1, max_size=6))
def test_random_writes_match_a_model(catalog, engine, commits):
    name = f"m{abs(hash((engine, str(commits)))) % 10**8}"
    t = mow_table(catalog, name, **ENGINES[engine])
    model = {}
    for k, (ids, with_delete) in enumerate(commits):
        deleted = set(ids[:2]) if with_delete and engine == "deduplicate" else set()
        vs = [None if engine == "partial-update" and i % 3 == 0 else f"v{k}-{i}" for i in ids]
        ns = [i + k for i in ids]
        kinds = pa.array([row_kind.DELETE if i in deleted else row_kind.INSERT for i in ids], pa.int8())
        t.write_arrow(pa.table({"id": ids, "v": vs, "n": ns}, schema=SCHEMA), row_kinds=kinds)
        apply(model, engine, ids, vs, ns, deleted)
        assert live(t) == model
    for e in t.new_scan().plan_entries():
        assert e.file.level > 0  # synchronous compaction left nothing in level 0
        # and no delete above it (Java drops them at every level): readers take these files unmerged
        kinds = read_file(t.io, t.paths.data_file_path([], e.bucket, e.file.file_name), "parquet", [VALUE_KIND])
        assert set(kinds.column(0).to_pylist()) <= {row_kind.INSERT, row_kind.UPDATE_AFTER}


def test_old_rows_are_deleted_by_vectors_not_rewritten(catalog):
    t = mow_table(catalog, "t", **{"bucket": "1", "num-sorted-run.compaction-trigger": "10"})
    t.write_arrow(pa.table({"id": list(range(100)), "v": ["a"] * 100, "n": list(range(100))}, schema=SCHEMA))
    t.compact(full=True)  # everything in the max level
    (big,) = [e.file for e in t.new_scan().plan_entries()]
    t.write_arrow(pa.table({"id": [5, 50], "v": ["b", "b"], "n": [0, 0]}, schema=SCHEMA))
    files = {e.file.file_name: e.file for e in t.new_scan().plan_entries()}
    assert big.file_name in files and len(files) == 2  # the big file stays; a small level file joins it
    snap = t.snapshot_manager.latest()
    (index,) = t.index_manifest_entries(snap.index_manifest)
    assert [(r.data_file, r.cardinality) for r in index.dv_ranges] == [(big.file_name, 2)]
    rows = live(t)
    assert rows[5] == ("b", 0) and rows[50] == ("b", 0) and rows[6] == ("a", 6) and len(rows) == 100
    raw = read_file(t.io, t.paths.data_file_path([], 0, big.file_name), "parquet", ["id"])
    assert raw.num_rows == 100  # the old rows are still in the file, only marked deleted


@pytest.mark.parametrize("options", [{"write-only": "true"}, {"lookup-wait": "false"}])
def test_level0_unread_until_compacted(catalog, options):
    t = mow_table(catalog, "t", **{"bucket": "1", **options})
    t.write_arrow(pa.table({"id": [1, 2], "v": ["a", "b"], "n": [1, 2]}, schema=SCHEMA))
    assert live(t) == {}  # in level 0: not visible to batch reads (seed 004)
    t.compact(full=True)
    assert live(t) == {1: ("a", 1), 2: ("b", 2)}
    t.write_arrow(pa.table({"id": [1], "v": ["z"], "n": [9]}, schema=SCHEMA))
    assert live(t)[1] == ("a", 1)
    t.compact(full=True)
    assert live(t)[1] == ("z", 9)


def test_full_scan_needs_no_merge(catalog):
    t = mow_table(catalog, "t")
    rng = np.random.default_rng(3)
    for _ in range(4):
        ids = rng.choice(500, 200, replace=False)
        t.write_arrow(pa.table({"id": ids, "v": ["x"] * 200, "n": ids}, schema=SCHEMA))
    splits = t.new_scan().plan().splits
    assert all(s.raw_convertible for s in splits) and any(s.deletion_vectors for s in splits)
    ids = [r["id"] for r in t.to_arrow().to_pylist()]
    assert len(ids) == len(set(ids))
