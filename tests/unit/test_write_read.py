"""Writes and reads through the core API: append and primary-key tables, partitions, buckets."""


import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from support import SCHEMA

from paimon_sql.data import predicate as P
from paimon_sql.data import row_kind
from paimon_sql.exceptions import SchemaError


def batch(ids, names=None, values=None, dts=None):
    n = len(ids)
    return pa.table({"id": ids, "name": names or [f"n{i}" for i in ids], "value": values or [float(i) for i in ids],
                     "dt": dts or ["d"] * n}, schema=SCHEMA)


def rows(table, **scan):
    s = table.new_scan()
    for k, v in scan.items():
        s = getattr(s, k)(v)
    return sorted(s.to_arrow().to_pylist(), key=lambda r: (r["id"], r["dt"]))


def test_append_files_and_layout(catalog):
    t = catalog.create_table_from_arrow("db.a", SCHEMA, partition_keys=["dt"])
    assert t.write_arrow(batch([1, 2, 3], dts=["x", "y", "x"])) == 1
    files = {e.file.file_name: e for e in t.new_scan().plan_entries()}
    assert len(files) == 2 and all(n.startswith("data-") and n.endswith(".parquet") for n in files)
    assert sorted(t.io.list_dirs(t.path)) == ["dt=x", "dt=y", "manifest", "schema", "snapshot"]
    data = pq.read_table(f"{t.path}/dt=x/bucket-0/" + t.io.list_names(f"{t.path}/dt=x/bucket-0")[0])
    assert data.column_names == ["id", "name", "value", "dt"]  # append files hold the table columns only
    assert [r["id"] for r in rows(t)] == [1, 2, 3]


def test_primary_key_file_layout(catalog):
    t = catalog.create_table_from_arrow("db.p", SCHEMA, partition_keys=["dt"], primary_keys=["id", "dt"],
                                        options={"bucket": "1"})
    t.write_arrow(batch([3, 1, 2, 1], names=["c", "a", "b", "a2"]))
    [entry] = t.new_scan().plan_entries()
    data = pq.read_table(f"{t.path}/dt=d/bucket-0/{entry.file.file_name}")
    assert data.column_names == ["_KEY_id", "_SEQUENCE_NUMBER", "_VALUE_KIND", "id", "name", "value", "dt"]
    assert data.column("_KEY_id").to_pylist() == [1, 2, 3]  # sorted by key, duplicates folded
    assert data.column("name").to_pylist() == ["a2", "b", "c"]
    assert entry.file.min_sequence_number == 0 and entry.file.max_sequence_number == 3
    t.write_arrow(batch([1]))
    newest = max(t.new_scan().plan_entries(), key=lambda e: e.file.max_sequence_number)
    assert newest.file.min_sequence_number == 4  # sequence numbers continue across commits


def test_upserts_deletes_and_time_travel(catalog):
    t = catalog.create_table_from_arrow("db.p", SCHEMA, primary_keys=["id"], options={"bucket": "4"})
    t.write_arrow(batch(list(range(100))))
    t.write_arrow(batch([5, 6, 7], names=["u5", "u6", "u7"]))
    w = t.new_write()
    w.write_arrow(batch([6, 7, 200]), row_kinds=pa.array([row_kind.DELETE, row_kind.UPDATE_AFTER, row_kind.INSERT],
                                                          pa.int8()))
    t.new_commit().commit(w.prepare_commit())
    latest = {r["id"]: r["name"] for r in rows(t)}
    assert len(latest) == 100 and 6 not in latest and latest[5] == "u5" and latest[7] == "n7" and 200 in latest
    assert {r["id"]: r["name"] for r in rows(t, with_snapshot=2)}[6] == "u6"
    assert len(rows(t, with_snapshot=1)) == 100
    splits = t.new_scan().plan().splits
    assert {s.bucket for s in splits} == {0, 1, 2, 3} and not all(s.raw_convertible for s in splits)


def test_sequence_field_decides_the_winner(catalog):
    t = catalog.create_table_from_arrow("db.p", SCHEMA, primary_keys=["id"],
                                        options={"bucket": "1", "sequence.field": "value"})
    t.write_arrow(batch([1, 1], names=["new", "old"], values=[10.0, 5.0]))
    t.write_arrow(batch([1], names=["older"], values=[1.0]))
    assert rows(t)[0]["name"] == "new"


def test_ignore_delete(catalog):
    t = catalog.create_table_from_arrow("db.p", SCHEMA, primary_keys=["id"], options={"bucket": "1",
                                                                                      "ignore-delete": "true"})
    t.write_arrow(batch([1]))
    t.write_arrow(batch([1]), row_kinds=pa.array([row_kind.DELETE], pa.int8()))
    assert [r["id"] for r in rows(t)] == [1]


def test_overwrite_modes(catalog):
    t = catalog.create_table_from_arrow("db.a", SCHEMA, partition_keys=["dt"])
    t.write_arrow(batch([1, 2, 3], dts=["x", "y", "z"]))

    def overwrite(data, **kw):
        w = t.new_write()
        w.write_arrow(data)
        return t.new_commit().overwrite(w.prepare_commit(), **kw)

    overwrite(batch([10], dts=["x"]), dynamic=True)
    assert [(r["id"], r["dt"]) for r in rows(t)] == [(2, "y"), (3, "z"), (10, "x")]
    overwrite(batch([20], dts=["y"]), partition={"dt": "z"})  # static: z emptied, y gains a row
    assert [(r["id"], r["dt"]) for r in rows(t)] == [(2, "y"), (10, "x"), (20, "y")]
    sid = overwrite(batch([30], dts=["w"]))
    assert [(r["id"], r["dt"]) for r in rows(t)] == [(30, "w")]
    snap = t.snapshot_manager.snapshot(sid)
    assert snap.commit_kind == "OVERWRITE" and snap.total_record_count == 1


def test_rolling_at_target_file_size(catalog):
    t = catalog.create_table_from_arrow("db.a", SCHEMA, options={"target-file-size": "1 kb"})
    t.write_arrow(batch(list(range(1000))))
    sizes = [e.file.row_count for e in t.new_scan().plan_entries()]
    assert len(sizes) >= 4 and sum(sizes) == 1000  # rolled: no file holds everything
    assert [r["id"] for r in rows(t)] == list(range(1000))


@pytest.mark.parametrize("fmt", ["orc", "avro"])
def test_other_file_formats(catalog, fmt):
    t = catalog.create_table_from_arrow("db.p", SCHEMA, primary_keys=["id"], options={"bucket": "2",
                                                                                      "file.format": fmt})
    t.write_arrow(batch([1, 2, 3]))
    t.write_arrow(batch([2], names=["two"]))
    assert {r["id"]: r["name"] for r in rows(t)} == {1: "n1", 2: "two", 3: "n3"}
    assert all(e.file.file_name.endswith("." + fmt) for e in t.new_scan().plan_entries())


def test_filter_prunes_partitions_and_files(catalog):
    t = catalog.create_table_from_arrow("db.a", SCHEMA, partition_keys=["dt"])
    for d in ["a", "b", "c"]:
        t.write_arrow(batch(list(range(10)), dts=[d] * 10))
    t.write_arrow(batch(list(range(100, 110)), dts=["a"] * 10))
    plan = t.new_scan().filter(P.equal("dt", "a")).plan()
    assert plan.stats.manifests_total == 4 and plan.stats.manifests_read == 2  # by manifest partition stats
    assert plan.stats.files_after_partition == 2
    plan = t.new_scan().filter(P.and_(P.equal("dt", "a"), P.greater_than("id", 50))).plan()
    assert plan.stats.files_planned == 1
    got = t.new_scan().filter(P.or_(P.equal("id", 105), P.is_in("id", [1]))).select("id", "dt").to_arrow()
    assert sorted(got.to_pylist(), key=str) == sorted(
        [{"id": 105, "dt": "a"}] + [{"id": 1, "dt": d} for d in "abc"], key=str)


def test_primary_key_filters_apply_after_merge(catalog):
    t = catalog.create_table_from_arrow("db.p", SCHEMA, primary_keys=["id"], options={"bucket": "1"})
    t.write_arrow(batch([1], values=[1.0]))
    t.write_arrow(batch([1], values=[99.0]))
    assert t.new_scan().filter(P.less_than("value", 50.0)).to_arrow().num_rows == 0  # old version must not leak


def test_bad_writes_commit_nothing(catalog):
    t = catalog.create_table_from_arrow("db.p", SCHEMA, primary_keys=["id"], options={"bucket": "2"})
    t.write_arrow(batch([1]))
    before = sorted(t.io.list_names(t.paths.manifest_dir))
    bad = [
        pa.table({"id": [1], "name": ["x"]}),  # missing columns
        pa.table({"id": [None], "name": ["x"], "value": [1.0], "dt": ["d"]}),  # NOT NULL key
        pa.table({"id": ["abc"], "name": ["x"], "value": [1.0], "dt": ["d"]}),  # bad cast
        pa.table({"id": [1], "name": ["x"], "value": [1.0], "dt": ["d"], "extra": [1]}),
    ]
    for data in bad:
        with pytest.raises(SchemaError):
            t.write_arrow(data)
    assert t.snapshot_manager.latest_id() == 1
    assert sorted(t.io.list_names(t.paths.manifest_dir)) == before
    assert len(t.io.list_names(f"{t.path}/bucket-0") + t.io.list_names(f"{t.path}/bucket-1")) == 1


def test_row_kinds_need_a_primary_key(catalog):
    t = catalog.create_table_from_arrow("db.a", SCHEMA)
    with pytest.raises(SchemaError, match="append table"):
        t.new_write().write_arrow(batch([1]), row_kinds=pa.array([0], pa.int8()))


def test_rowkind_field_bad_value(catalog):
    schema = SCHEMA.append(pa.field("op", pa.string()))
    t = catalog.create_table_from_arrow("db.p", schema, primary_keys=["id"],
                                        options={"bucket": "1", "rowkind.field": "op"})
    data = batch([1]).append_column("op", pa.array(["*X"]))
    with pytest.raises(SchemaError, match="rowkind.field 'op'"):
        t.write_arrow(data)
    assert t.snapshot_manager.latest_id() is None


def test_dynamic_bucket_keeps_keys_in_place(catalog):
    t = catalog.create_table_from_arrow("db.p", SCHEMA, primary_keys=["id"],
                                        options={"dynamic-bucket.target-row-num": "10"})
    t.write_arrow(batch(list(range(25))))
    t.write_arrow(batch(list(range(20, 40)), names=[f"u{i}" for i in range(20, 40)]))
    got = {r["id"]: r["name"] for r in rows(t)}
    assert len(got) == 40 and got[22] == "u22" and got[3] == "n3"
    buckets = {}
    for split in t.new_scan().plan().splits:
        for r in t.new_scan().reader().read(split).to_pylist():
            assert buckets.setdefault(r["id"], split.bucket) == split.bucket
    assert max(buckets.values()) == 3  # 40 keys, 10 per bucket


def test_postpone_bucket_writes_real_buckets_and_reads_them_only(catalog):
    t = catalog.create_table_from_arrow("db.p", SCHEMA, primary_keys=["id"], options={"bucket": "-2"})
    t.write_arrow(batch([1, 2, 3]))  # postpone.batch-write-fixed-bucket: real buckets, visible
    t.copy({"postpone.batch-write-fixed-bucket": "false"}).write_arrow(batch([4], ["late"]))
    assert sorted(r["id"] for r in rows(t)) == [1, 2, 3]  # the postpone bucket is invisible
    assert {(e.bucket, e.total_buckets) for e in t.new_scan().plan_entries()} == {(0, 1), (-2, -2)}
    t.compact()
    assert sorted(r["id"] for r in rows(t)) == [1, 2, 3, 4]
    with pytest.raises(SchemaError, match="greater than 0"):
        catalog.create_table_from_arrow("db.a", SCHEMA, options={"bucket": "-2"})


def test_append_fixed_bucket_by_bucket_key(catalog):
    t = catalog.create_table_from_arrow("db.a", SCHEMA, options={"bucket": "3", "bucket-key": "id"})
    t.write_arrow(batch(list(range(30))))
    t.write_arrow(batch(list(range(30))))
    where = {}
    for split in t.new_scan().plan().splits:
        for r in t.new_scan().reader().read(split).to_pylist():
            assert where.setdefault(r["id"], split.bucket) == split.bucket  # one id, one bucket
    assert set(where.values()) == {0, 1, 2} and len(rows(t)) == 60


def test_a_failing_slice_leaves_no_files(catalog, monkeypatch):
    from paimon_sql.format import file_format
    t = catalog.create_table_from_arrow("db.a", SCHEMA, partition_keys=["dt"])
    original = file_format.RollingFileWriter.write

    def flaky(self, table):
        if "dt=bad" in self.path:
            raise OSError("disk full")
        return original(self, table)
    monkeypatch.setattr(file_format.RollingFileWriter, "write", flaky)
    with pytest.raises(OSError, match="disk full"):
        t.write_arrow(batch(list(range(8)), dts=["ok", "bad"] * 4))
    assert t.snapshot_manager.latest_id() is None
    assert t.io.list_names(f"{t.path}/dt=ok/bucket-0") == [] and t.io.list_names(f"{t.path}/dt=bad/bucket-0") == []


def test_not_prunes_partitions(catalog):
    t = catalog.create_table_from_arrow("db.a", SCHEMA, partition_keys=["dt"])
    t.write_arrow(batch([1, 2, 3], dts=["a", "b", "c"]))
    plan = t.new_scan().filter(P.not_(P.or_(P.equal("dt", "a"), P.equal("dt", "b")))).plan()
    assert plan.stats.files_after_partition == 1
    assert [r["dt"] for r in t.new_scan().filter(P.not_(P.equal("dt", "a"))).to_arrow().to_pylist()] in (
        ["b", "c"], ["c", "b"])


def test_table_pickles_for_executors(catalog):
    import pickle
    t = catalog.create_table_from_arrow("db.p", SCHEMA, primary_keys=["id"], options={"bucket": "2"})
    t.write_arrow(batch([1, 2]))
    clone = pickle.loads(pickle.dumps(t))
    assert clone.name == "db.p" and rows(clone) == rows(t)
    w = clone.new_write()
    w.write_arrow(batch([3]))
    messages = pickle.loads(pickle.dumps(w.prepare_commit()))  # messages travel back to the driver
    t.new_commit().commit(messages)
    assert [r["id"] for r in rows(t)] == [1, 2, 3]


def test_a_table_read_is_freed_without_a_full_collection(catalog):
    """A table that read its manifests is freed as soon as it is dropped (no reference cycle): a
    busy server makes one per statement, and cycles left them, with every manifest record they
    read, to Python's full collections, which paused every statement for 100-280 ms."""
    import gc
    import weakref
    catalog.create_table_from_arrow("db.p", SCHEMA, partition_keys=["dt"], primary_keys=["id", "dt"],
                                    options={"bucket": "2"}).write_arrow(batch([1, 2, 3], dts=["x", "y", "x"]))
    gc.collect()
    gc.disable()
    try:
        t = catalog.get_table("db.p")
        assert [r["id"] for r in rows(t)] == [1, 2, 3]
        assert list(t.tag_manager.tags()) == []
        freed = weakref.ref(t)
        entries = weakref.ref(t.new_scan().plan_entries()[0])
        del t
        assert freed() is None and entries() is None
    finally:
        gc.enable()
