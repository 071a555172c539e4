"""A write restores only the partitions it writes, a commit reads only the partitions it changes (issue 46).

A one-row INSERT into a table of 20,000 files cost seconds because the writer planned every file to
restore sequence numbers, and a compaction's commit read every live file to check its deletes.
Paimon restores each (partition, bucket) it writes (``FileSystemWriteRestore``) and checks the
changed partitions only. Measured here by the manifests read: each partition below is committed
on its own, so its files live in manifests whose partition stats name it alone.
"""

import pyarrow as pa
import pytest

from paimon_sql.data import binary_row
from paimon_sql.manifest.manifest_file import ManifestFileMeta

SCHEMA = pa.schema([pa.field("id", pa.int64(), False), ("v", pa.string()), pa.field("dt", pa.int32(), False)])
PARTITIONS = 8


def rows(ids, dt, v="x"):
    return pa.table({"id": ids, "v": [v] * len(ids), "dt": [dt] * len(ids)}, schema=SCHEMA)


def commit(table, *batches):
    w = table.new_write()
    for b in batches:
        w.write_arrow(b)
    return table.new_commit().commit(w.prepare_commit())


def manifests_read(table) -> list:
    """The manifests ``table`` reads from now on, by name (the scan and the restore both read through it)."""
    names = []
    read = table.manifest_entries

    def recording(name):
        names.append(name)
        return read(name)
    table.manifest_entries = recording
    return names


def holders(table, dt: int) -> set:
    """The manifests of the latest snapshot whose partition stats admit ``dt``."""
    snap = table.snapshot_manager.latest()
    metas = table.manifest_list(snap.base_manifest_list) + table.manifest_list(snap.delta_manifest_list)
    types = [f.type for f in table.schema.fields_of(["dt"])]

    def admits(m: ManifestFileMeta) -> bool:
        s = m.partition_stats.decode(types)
        return s.mins[0] <= dt <= s.maxs[0]
    return {m.file_name for m in metas if admits(m)}


def table_with_partitions(catalog, name, primary_keys=("id", "dt"), **options):
    t = catalog.create_table_from_arrow(f"db.{name}", SCHEMA, ["dt"], list(primary_keys), options)
    for dt in range(PARTITIONS):
        commit(t, rows(list(range(10)), dt))
    return catalog.get_table(f"db.{name}")


def test_a_one_row_write_reads_the_manifests_of_its_partition_only(catalog):
    t = table_with_partitions(catalog, "pk", bucket="2")
    expected = holders(t, 3)
    assert len(expected) == 1
    read = manifests_read(t)
    w = t.new_write()
    w.write_arrow(rows([9], 3, "new"))
    (msg,) = w.prepare_commit()
    assert set(read) == expected
    # the bucket's sequence numbers continue: the new row is newer than the one it replaces
    assert msg.new_files[0].min_sequence_number > 0
    t.new_commit().commit([msg])
    out = catalog.get_table("db.pk").new_scan().to_arrow().to_pylist()
    assert {(r["id"], r["dt"]): r["v"] for r in out}[(9, 3)] == "new"
    assert len(out) == 10 * PARTITIONS


def test_an_unaware_bucket_append_write_reads_no_manifest(catalog):
    t = table_with_partitions(catalog, "events", primary_keys=(), bucket="-1", **{"file.format": "orc"})
    read = manifests_read(t)
    w = t.new_write()
    w.write_arrow(rows([100], 3))
    msgs = w.prepare_commit()
    t.new_commit().commit(msgs)
    assert read == []  # Java's unaware-bucket writer ignores earlier files; an APPEND checks no deletes
    assert catalog.get_table("db.events").new_scan().to_arrow().num_rows == 10 * PARTITIONS + 1


def test_a_compaction_commit_reads_the_manifests_of_its_partition_only(catalog):
    t = table_with_partitions(catalog, "kv", bucket="1", **{"full-compaction.delta-commits": "1"})
    w = t.new_write()
    w.write_arrow(rows([1], 3, "new"))
    msgs = w.prepare_commit()
    assert any(m.compact_before for m in msgs)
    committing = catalog.get_table("db.kv")
    read = manifests_read(committing)
    committing.new_commit().commit(msgs)
    # the COMPACT snapshot checks its deletes in dt=3's manifests (the data snapshot's own among them)
    assert read and set(read) <= holders(catalog.get_table("db.kv"), 3)
    out = {(r["id"], r["dt"]): r["v"] for r in catalog.get_table("db.kv").new_scan().to_arrow().to_pylist()}
    assert out[(1, 3)] == "new" and len(out) == 10 * PARTITIONS


def test_partitions_restored_at_a_later_flush_continue_their_buckets(catalog):
    """Each flush restores the partitions it sees first, from the snapshot the write pinned."""
    t = table_with_partitions(catalog, "late", bucket="1", **{"write-buffer-size": "1 b", "write-only": "true"})
    w = t.new_write()
    w.write_arrow(rows([0], 1, "first"))   # flushed alone: restores dt=1
    w.write_arrow(rows([9], 5, "second"))  # a later flush: restores dt=5 then
    msgs = {binary_row.from_bytes(m.partition, [t.schema.fields_of(["dt"])[0].type])[0]: m for m in w.prepare_commit()}
    assert msgs[5].new_files[0].min_sequence_number == 10  # after dt=5's rows 0..9
    assert msgs[1].new_files[0].min_sequence_number == 10
    t.new_commit().commit(list(msgs.values()))
    out = {(r["id"], r["dt"]): r["v"] for r in catalog.get_table("db.late").new_scan().to_arrow().to_pylist()}
    assert out[(0, 1)] == "first" and out[(9, 5)] == "second"


@pytest.mark.parametrize("bucket", ["1", "-1"])
def test_a_partition_restored_after_a_concurrent_commit_to_it_still_wins(catalog, bucket):
    """The restore of a later flush reads the pinned snapshot, not the concurrent commit since: the
    commit rebases the sequence numbers above it, so the last committer wins."""
    t = table_with_partitions(catalog, f"race{bucket.replace('-', 'm')}", bucket=bucket,
                              **{"write-buffer-size": "1 b", "write-only": "true"})
    w = t.new_write()
    w.write_arrow(rows([0], 1, "ours"))  # pins the snapshot
    for _ in range(3):  # another writer updates dt=5's key 9 meanwhile (its sequence numbers climb)
        commit(catalog.get_table(t.name), rows(list(range(10)), 5, "theirs"))
    w.write_arrow(rows([9], 5, "ours"))
    t.new_commit().commit(w.prepare_commit())
    out = {(r["id"], r["dt"]): r["v"] for r in catalog.get_table(t.name).new_scan().to_arrow().to_pylist()}
    assert out[(9, 5)] == "ours" and out[(8, 5)] == "theirs" and out[(0, 1)] == "ours"
