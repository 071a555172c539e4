"""Two writers that prepared their changes from the same snapshot, then commit one after the other:
neither loses the other's work (issue 20: lost deletes, merge-on-write visibility, sequence ties)."""

import pyarrow as pa
import pytest

from paimon_sql.data import predicate as P
from paimon_sql.data import row_kind
from paimon_sql.exceptions import CommitConflictError
from paimon_sql.write import row_delete

APPEND = pa.schema([pa.field("id", pa.int64(), False), ("v", pa.string())])
KV = pa.schema([pa.field("id", pa.int64(), False), ("v", pa.string())])


def rows(ids, v="x"):
    return pa.table({"id": list(ids), "v": [f"{v}{i}" for i in ids]}, schema=APPEND)


def ids(t, snapshot=None):
    return sorted(r["id"] for r in t.new_scan().with_snapshot(snapshot).to_arrow().to_pylist())


def prepared_delete(t, predicate):
    """DELETE's commit messages, prepared now (from the latest snapshot) and committed later."""
    scan = t.new_scan().filter(predicate).select("id")
    reader = scan.reader()
    parts = [reader.read_positions(split) for split in scan.plan().splits]
    return row_delete.delete_messages(t, row_delete.positions_of(t, pa.concat_tables(parts)))


def prepared_write(t, data, kinds=None):
    write = t.new_write()
    write.write_arrow(data, row_kinds=kinds)
    return write.prepare_commit()


@pytest.fixture
def dv_table(catalog):
    t = catalog.create_table_from_arrow("db.a", APPEND, options={"deletion-vectors.enabled": "true"})
    t.write_arrow(rows(range(10)))
    return t


@pytest.mark.parametrize("earlier_delete", [False, True])
def test_concurrent_deletes_both_hold(dv_table, earlier_delete):
    t = dv_table
    if earlier_delete:  # the bucket already has a vector file both writers replace
        t.delete_where(P.equal("id", 9))
    first = prepared_delete(t, P.less_than("id", 3))
    second = prepared_delete(t, P.greater_or_equal("id", 6))
    t.new_commit().commit(first)
    t.new_commit().commit(second)
    assert ids(t) == [3, 4, 5]
    index = t.index_manifest_entries(t.snapshot_manager.latest().index_manifest)
    assert len(index) == 1  # one vector file for the bucket, holding both deletes


def test_delete_of_rows_rewritten_concurrently_conflicts(dv_table):
    t = dv_table
    stale = prepared_delete(t, P.equal("id", 1))
    t.write_arrow(rows(range(10), "y"), overwrite=True)  # the file the delete points into is gone
    with pytest.raises(CommitConflictError, match="rewritten by a concurrent commit"):
        t.new_commit().commit_or_abort(stale)
    assert ids(t) == list(range(10))


def pk_table(catalog, name, **options):
    return catalog.create_table_from_arrow(f"db.{name}", KV, primary_keys=["id"], options={"bucket": "1", **options})


def values(t, snapshot=None):
    return {r["id"]: r["v"] for r in t.new_scan().with_snapshot(snapshot).to_arrow().to_pylist()}


def every_snapshot(t):
    return [s.id for s in t.snapshot_manager.snapshots()]


@pytest.mark.parametrize("options", [{}, {"deletion-vectors.enabled": "true"}], ids=["merge-on-read", "merge-on-write"])
def test_last_committer_wins_and_compaction_keeps_it(catalog, options):
    t = pk_table(catalog, "k", **options)
    t.write_arrow(rows([1, 2], "old"))
    a = prepared_write(t, rows([1, 0], "a"))  # key 1 first: the same sequence number as b's key 1
    b = prepared_write(t, rows([1], "b"))  # prepared from the same snapshot as a
    t.new_commit().commit(b)
    t.new_commit().commit(a)
    assert values(t) == {0: "a0", 1: "a1", 2: "old2"}
    t.compact(full=True)
    assert values(t) == {0: "a0", 1: "a1", 2: "old2"}


def test_merge_on_write_update_is_atomic_for_readers(catalog):
    t = pk_table(catalog, "m", **{"deletion-vectors.enabled": "true"})
    first = t.write_arrow(rows([1, 2], "old"))
    t.write_arrow(rows([1], "new"))
    seen = [values(t, s) for s in every_snapshot(t) if s >= first]
    assert all(set(v) == {1, 2} for v in seen), seen  # key 1 never missing from any snapshot
    assert seen[-1] == {1: "new1", 2: "old2"}


def test_merge_on_write_concurrent_writers_each_key_once(catalog):
    t = pk_table(catalog, "w", **{"deletion-vectors.enabled": "true"})
    t.write_arrow(rows([2], "old"))
    a = prepared_write(t, rows([1], "a"))
    b = prepared_write(t, rows([1], "b"))
    assert t.new_commit().commit(a)
    assert values(t) == {1: "a1", 2: "old2"}  # acknowledged: visible
    assert t.new_commit().commit(b)
    assert values(t) == {1: "b1", 2: "old2"}
    for s in every_snapshot(t):
        got = t.new_scan().with_snapshot(s).to_arrow().column("id").to_pylist()
        assert len(got) == len(set(got)), (s, got)


def test_merge_on_write_concurrent_delete_and_update(catalog):
    t = pk_table(catalog, "d", **{"deletion-vectors.enabled": "true"})
    t.write_arrow(rows([1, 2, 3], "old"))
    gone = prepared_write(t, rows([1]), pa.array([row_kind.DELETE], pa.int8()))
    upd = prepared_write(t, rows([3], "u"))
    t.new_commit().commit(gone)
    t.new_commit().commit(upd)
    assert values(t) == {2: "old2", 3: "u3"}


def test_concurrent_dynamic_bucket_index_change_conflicts(catalog):
    t = pk_table(catalog, "h", bucket="-1")
    t.write_arrow(rows([1]))
    a = prepared_write(t, rows([2], "a"))
    b = prepared_write(t, rows([3], "b"))
    t.new_commit().commit(a)
    with pytest.raises(CommitConflictError, match="HASH index of bucket 0 was changed"):
        t.new_commit().commit_or_abort(b)
    assert values(t) == {1: "x1", 2: "a2"}
