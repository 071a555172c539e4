"""Compaction of append tables (Paimon's BucketedAppendCompactManager): rows, their order and
sequence numbers kept, deleted rows dropped with their deletion vectors, full-size files left."""

import pyarrow as pa

from paimon_sql.compact.append_compact import pick

SCHEMA = pa.schema([("id", pa.int64()), ("v", pa.string())])


def rows(ids):
    return pa.table({"id": ids, "v": [f"v{i}" for i in ids]}, schema=SCHEMA)


def test_full_compaction_of_a_fixed_bucket_append_table(catalog):
    t = catalog.create_table_from_arrow("db.a", SCHEMA, options={"bucket": "2", "bucket-key": "id"})
    for k in range(3):
        t.write_arrow(rows(list(range(k * 10, k * 10 + 10))))
    before = {(e.bucket, e.file.file_name) for e in t.new_scan().plan_entries()}
    snapshot = t.compact(full=True)
    assert t.snapshot_manager.snapshot(snapshot).commit_kind == "COMPACT"
    entries = t.new_scan().plan_entries()
    assert sorted(e.bucket for e in entries) == [0, 1] and not before & {(e.bucket, e.file.file_name) for e in entries}
    assert sorted(r["id"] for r in t.new_scan().to_arrow().to_pylist()) == list(range(30))
    for e in entries:  # one file per bucket, its rows numbered on from the first old file's
        assert e.file.level == 0 and e.file.file_source == 1
        assert e.file.max_sequence_number - e.file.min_sequence_number + 1 == e.file.row_count
    assert t.compact(full=True) is None  # one file per bucket: nothing left to do


def test_compaction_drops_deleted_rows_and_their_vectors(catalog):
    t = catalog.create_table_from_arrow("db.d", SCHEMA, options={"deletion-vectors.enabled": "true"})
    t.write_arrow(rows([1, 2, 3]))
    t.write_arrow(rows([4, 5]))
    from paimon_sql.data import predicate as P
    assert t.delete_where(P.is_in("id", [2, 4])) == 2
    t.compact(full=True)
    assert sorted(r["id"] for r in t.to_arrow().to_pylist()) == [1, 3, 5]
    (entry,) = t.new_scan().plan_entries()
    assert entry.file.row_count == 3
    snap = t.snapshot_manager.latest()
    index = t.index_manifest_entries(snap.index_manifest) if snap.index_manifest else []
    assert not [e for e in index if e.index_type == "DELETION_VECTORS"]


def test_minor_compaction_picks_a_window_of_small_files():
    class F:
        def __init__(self, name, size):
            self.file_name, self.file_size = name, size
    files = [F("big", 100), F("a", 10), F("b", 30), F("c", 40), F("d", 35), F("e", 5)]
    assert [f.file_name for f in pick(files, {}, 100, 3, full=False)] == ["a", "b", "c", "d"]
    assert pick(files, {}, 100, 5, full=False) == []  # never five small files reaching the target
    assert [f.file_name for f in pick(files, {}, 100, 3, full=True)] == ["a", "b", "c", "d", "e"]
    assert [f.file_name for f in pick(files[:2], {"big": 1}, 100, 3, full=True)] == ["big", "a"]


def test_unaware_bucket_compaction_plans_as_paimons_coordinator(catalog):
    """bucket = -1: small files packed smallest first into groups of twice the target size; a last
    group waits for compaction.min.file-num files; big files stay; the strategy does not matter."""
    from paimon_sql.compact.append_compact import pick_unaware

    class F:
        def __init__(self, name, size, rows=10):
            self.file_name, self.file_size, self.row_count = name, size, rows
    options = catalog.create_table_from_arrow("db.u", SCHEMA, options={
        "target-file-size": "100 b", "source.split.open-file-cost": "0 b"}).options
    names = lambda groups: [[f.file_name for f in g] for g in groups]  # noqa: E731
    files = [F("big", 90), F("a", 60), F("b", 10), F("c", 65), F("d", 69), F("e", 66)]
    # big: not below 0.7 of the target; the rest by size until twice the target; d alone waits
    assert names(pick_unaware(files, {}, {}, options)) == [["b", "a", "c", "e"]]
    assert pick_unaware(files[:3], {}, {}, options) == []  # two small files: fewer than five, too small
    assert names(pick_unaware([F(str(i), 1) for i in range(5)], {}, {}, options)) == [["0", "1", "2", "3", "4"]]
    # files with deletion vectors are compacted whatever their number; a big one with many deleted rows too
    vectors = {"big": list(range(5)), "a": [1]}
    assert names(pick_unaware(files, vectors, {"big": "i1", "a": "i1"}, options)) == \
        [["big", "a"], ["b", "c", "e", "d"]]
