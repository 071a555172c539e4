"""A commit whose snapshot file is written has happened: a hint file (LATEST, EARLIEST) that cannot
be written afterwards is logged, and neither fails the commit nor deletes what the snapshot names."""

import os

import pyarrow as pa

SCHEMA = pa.schema([("id", pa.int64())])


def test_an_unwritable_hint_never_undoes_a_committed_snapshot(catalog, caplog):
    t = catalog.create_table_from_arrow("db.t", SCHEMA)
    os.makedirs(f"{t.paths.snapshot_dir}/EARLIEST")  # a directory: the hint cannot be written
    assert t.write_arrow(pa.table({"id": [1, 2]}, schema=SCHEMA)) == 1
    assert "hint files could not be written" in caplog.text
    assert sorted(t.to_arrow().column("id").to_pylist()) == [1, 2]  # its manifests are all there
    t.write_arrow(pa.table({"id": [3]}, schema=SCHEMA))
    assert t.snapshot_manager.latest_id() == 2 and len(t.to_arrow()) == 3
