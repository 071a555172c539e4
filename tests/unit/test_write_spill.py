"""A primary-key writer's full buffer spills to local disk and is merged into one run per bucket at
the commit (``write-buffer-spillable``, Paimon's default), instead of a level-0 file per buffer."""

import os

import pyarrow as pa

KV = pa.schema([pa.field("id", pa.int64(), False), ("v", pa.string()), ("n", pa.int64())])
BUCKETS = 16


def batches(rounds=4, keys=400):
    """Overlapping keys in every batch: each key's last batch wins (deduplicate)."""
    for r in range(rounds):
        ids = [(k * 7 + r) % keys for k in range(keys // 2 + 10 * r)]
        yield pa.table({"id": ids, "v": [f"r{r}-{i}" for i in ids], "n": [r] * len(ids)}, schema=KV), ids, r


# each batch fills the buffer (so each is spilled), while a bucket's share of all of them (1/16th
# of each, with its sequence and kind columns) stays well within it: one run per bucket
BUFFER = f"{min(b.nbytes for b, _, _ in batches())} b"


def table(catalog, name, **options):
    opts = {"bucket": str(BUCKETS), "write-buffer-size": BUFFER, "write-only": "true", **options}
    return catalog.create_table_from_arrow(f"db.{name}", KV, primary_keys=["id"], options=opts)


def spill_dirs(path):
    return [d for d in os.listdir(path) if d.startswith("paimon-spill-")]


def write_all(t, spills_under=None):
    w = t.new_write()
    model, seen = {}, False
    for data, ids, r in batches():
        w.write_arrow(data)
        model.update({i: (f"r{r}-{i}", r) for i in ids})
        seen = seen or bool(spills_under and spill_dirs(spills_under))
    messages = w.prepare_commit()
    t.new_commit().commit(messages)
    return messages, model, seen


def rows(t):
    return sorted((r["id"], (r["v"], r["n"])) for r in t.new_scan().to_arrow().to_pylist())


def test_a_spilled_write_makes_one_file_per_bucket(catalog, tmp_path, monkeypatch):
    monkeypatch.setenv("SPARK_LOCAL_DIRS", str(tmp_path))  # spills go under Spark's local directories
    t = table(catalog, "spilled")
    messages, model, seen = write_all(t, tmp_path)
    assert seen, "the buffer never spilled"
    assert spill_dirs(tmp_path) == []  # removed at the flush
    assert len(messages) == BUCKETS and {len(m.new_files) for m in messages} == {1}
    files = [f for m in messages for f in m.new_files]
    assert sum(f.row_count for f in files) == len(model)  # each key once: folded across the spills
    assert rows(t) == sorted(model.items())
    # sequence numbers count every row written, in arrival order, across the spills
    total = sum(len(ids) for _, ids, _ in batches())
    assert sum(f.max_sequence_number + 1 for f in files) == total


def test_without_spilling_each_full_buffer_is_a_file(catalog):
    t = table(catalog, "unspilled", **{"write-buffer-spillable": "false"})
    messages, model, _ = write_all(t)
    assert sum(len(m.new_files) for m in messages) > 2 * BUCKETS
    assert rows(t) == sorted(model.items())


def test_the_spill_disk_limit_writes_files_instead(catalog):
    t = table(catalog, "limited", **{"write-buffer-spill.max-disk-size": "1 b"})
    messages, model, _ = write_all(t)
    assert sum(len(m.new_files) for m in messages) > 2 * BUCKETS
    assert rows(t) == sorted(model.items())


def test_a_bucket_that_outgrows_the_buffer_gets_a_run_per_buffer(catalog):
    """Merging a bucket's spills holds at most a write buffer of rows (as a flush did): one bucket
    spilled four times over a buffer the size of one batch makes four runs."""
    t = table(catalog, "outgrown", bucket="1")
    messages, model, _ = write_all(t)
    assert [len(m.new_files) for m in messages] == [4]
    assert rows(t) == sorted(model.items())


def test_partial_update_folds_across_spills(catalog):
    """The final fold sees every row of a key: fields set in an earlier spill survive later ones."""
    schema = pa.schema([pa.field("id", pa.int64(), False), ("a", pa.string()), ("b", pa.string())])
    ids = list(range(100))
    writes = [pa.table({"id": ids, "a": [f"a{i}" for i in ids], "b": [None] * 100}, schema=schema),
              pa.table({"id": ids, "a": [None] * 100, "b": [f"b{i}" for i in ids]}, schema=schema),
              pa.table({"id": ids, "a": [None] * 100, "b": [None] * 100}, schema=schema)]
    t = catalog.create_table_from_arrow("db.pu", schema, primary_keys=["id"], options={
        "bucket": str(BUCKETS), "write-buffer-size": f"{min(w.nbytes for w in writes)} b",
        "merge-engine": "partial-update"})
    w = t.new_write()
    for data in writes:
        w.write_arrow(data)
        assert not w._buffer  # each write spilled
    messages = w.prepare_commit()
    assert {len(m.new_files) for m in messages} == {1}
    assert sum(f.row_count for m in messages for f in m.new_files) == 100
    t.new_commit().commit(messages)
    assert sorted(t.new_scan().to_arrow().to_pylist(), key=lambda r: r["id"]) == [
        {"id": i, "a": f"a{i}", "b": f"b{i}"} for i in ids]


def test_an_aborted_write_removes_its_spills(catalog, tmp_path, monkeypatch):
    monkeypatch.setenv("SPARK_LOCAL_DIRS", str(tmp_path))
    t = table(catalog, "aborted")
    w = t.new_write()
    for data, _, _ in batches(rounds=3):
        w.write_arrow(data)
    assert spill_dirs(tmp_path)
    w.abort()
    assert spill_dirs(tmp_path) == []
    assert t.snapshot_manager.latest() is None


def test_append_tables_do_not_spill(catalog):
    t = catalog.create_table_from_arrow("db.append", KV, options={"bucket": "1", "bucket-key": "id",
                                                                    "write-buffer-size": "1 b"})
    w = t.new_write()
    w.write_arrow(pa.table({"id": [1], "v": ["x"], "n": [0]}, schema=KV))
    w.write_arrow(pa.table({"id": [2], "v": ["y"], "n": [0]}, schema=KV))
    assert w._spills is None
    assert len(w.prepare_commit()[0].new_files) == 2

