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
