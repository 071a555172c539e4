"""A primary-key writer's full buffer spills to local disk and is merged into one run per bucket at
the commit (``write-buffer-spillable``, Paimon's default), instead of a level-0 file per buffer."""

import os

import pyarrow as pa
import pytest

from paimon_sql.write import spill

KV = pa.schema([pa.field("id", pa.int64(), False), ("v", pa.string()), ("n", pa.int64())])


def table(catalog, name, **options):
    opts = {"bucket": "2", "write-buffer-size": "1 kb", "write-only": "true", **options}
    return catalog.create_table_from_arrow(f"db.{name}", KV, primary_keys=["id"], options=opts)


def batches(rounds=6, keys=40):
    """Overlapping keys in every batch: each key's last batch wins (deduplicate)."""
    for r in range(rounds):
        ids = [(k * 7 + r) % keys for k in range(keys // 2 + r)]
        yield pa.table({"id": ids, "v": [f"r{r}-{i}" for i in ids], "n": [r] * len(ids)}, schema=KV), ids, r


def write_all(t, spill_dirs=None):
    w = t.new_write()
    model = {}
    for data, ids, r in batches():
        w.write_arrow(data)
        model.update({i: (f"r{r}-{i}", r) for i in ids})
        if spill_dirs is not None:
            spill_dirs.update(d for d in os.listdir(spill_dirs.base) if d.startswith("paimon-spill-"))
    messages = w.prepare_commit()
    t.new_commit().commit(messages)
    return messages, model


def rows(t):
    return sorted((r["id"], (r["v"], r["n"])) for r in t.new_scan().to_arrow().to_pylist())


class _Seen(set):
    def __init__(self, base):
        super().__init__()
        self.base = base


def test_a_spilled_write_makes_one_file_per_bucket(catalog, tmp_path, monkeypatch):
    monkeypatch.setenv("SPARK_LOCAL_DIRS", str(tmp_path))  # spills go under Spark's local directories
    t = table(catalog, "spilled")
    seen = _Seen(str(tmp_path))
    messages, model = write_all(t, seen)
    assert seen, "the buffer never spilled"
    assert [d for d in os.listdir(tmp_path) if d.startswith("paimon-spill-")] == []  # removed at the flush
    assert sorted(len(m.new_files) for m in messages) == [1, 1]
    files = [f for m in messages for f in m.new_files]
    assert sum(f.row_count for f in files) == len(model)  # each key once: folded across the spills
    assert rows(t) == sorted(model.items())
    # sequence numbers cover every row written, in arrival order, across spills
    total = sum(len(ids) for _, ids, _ in batches())
    assert sum(f.max_sequence_number + 1 for f in files) == total


def test_without_spilling_each_full_buffer_is_a_file(catalog):
    t = table(catalog, "unspilled", **{"write-buffer-spillable": "false"})
    messages, model = write_all(t)
    assert sum(len(m.new_files) for m in messages) > 2
    assert rows(t) == sorted(model.items())


def test_the_spill_disk_limit_writes_files_instead(catalog):
    t = table(catalog, "limited", **{"write-buffer-spill.max-disk-size": "1 b"})
    messages, model = write_all(t)
    assert sum(len(m.new_files) for m in messages) > 2
    assert rows(t) == sorted(model.items())


@pytest.mark.parametrize("codec", ["zstd", "lz4", "lzo", "none"])
def test_partial_update_folds_across_spills(catalog, codec):
    """The final fold sees every row of a key: fields set in an earlier spill survive later ones."""
    schema = pa.schema([pa.field("id", pa.int64(), False), ("a", pa.string()), ("b", pa.string())])
    t = catalog.create_table_from_arrow(f"db.pu_{codec}", schema, primary_keys=["id"], options={
        "bucket": "1", "write-buffer-size": "1 b", "merge-engine": "partial-update", "spill-compression": codec})
    w = t.new_write()
    w.write_arrow(pa.table({"id": [1, 2], "a": ["a1", "a2"], "b": [None, None]}, schema=schema))
    w.write_arrow(pa.table({"id": [1, 2], "a": [None, None], "b": ["b1", None]}, schema=schema))
    w.write_arrow(pa.table({"id": [2], "a": [None], "b": ["b2"]}, schema=schema))
    messages = w.prepare_commit()
    assert [len(m.new_files) for m in messages] == [1]
    t.new_commit().commit(messages)
    assert sorted(t.new_scan().to_arrow().to_pylist(), key=lambda r: r["id"]) == [
        {"id": 1, "a": "a1", "b": "b1"}, {"id": 2, "a": "a2", "b": "b2"}]


def test_an_aborted_write_removes_its_spills(catalog, tmp_path, monkeypatch):
    monkeypatch.setenv("SPARK_LOCAL_DIRS", str(tmp_path))
    t = table(catalog, "aborted")
    w = t.new_write()
    for data, _, _ in batches(rounds=3):
        w.write_arrow(data)
    assert [d for d in os.listdir(tmp_path) if d.startswith("paimon-spill-")]
    w.abort()
    assert [d for d in os.listdir(tmp_path) if d.startswith("paimon-spill-")] == []
    assert t.snapshot_manager.latest() is None


def test_append_tables_do_not_spill(catalog):
    t = catalog.create_table_from_arrow("db.append", KV, options={"bucket": "1", "bucket-key": "id",
                                                                    "write-buffer-size": "1 b"})
    w = t.new_write()
    w.write_arrow(pa.table({"id": [1], "v": ["x"], "n": [0]}, schema=KV))
    w.write_arrow(pa.table({"id": [2], "v": ["y"], "n": [0]}, schema=KV))
    assert w._spills is None
    assert len(w.prepare_commit()[0].new_files) == 2


def test_codec_of_each_spill_compression():
    from paimon_sql.options.core_options import CoreOptions
    assert spill._codec(CoreOptions({})) == ("zstd", 1)
    assert spill._codec(CoreOptions({"spill-compression.zstd-level": "3"})) == ("zstd", 3)
    assert spill._codec(CoreOptions({"spill-compression": "LZO"})) == ("lz4", None)
    assert spill._codec(CoreOptions({"spill-compression": "none"})) == (None, None)
