"""The LSM tree: levels, universal and full compaction, COMPACT snapshots, conflicts, changelog."""

import dataclasses
import random

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from paimon_sql.compact.merge_tree_compact import BucketCompactor
from paimon_sql.exceptions import CommitConflictError
from paimon_sql.write.commit_message import CommitMessage

KV = pa.schema([pa.field("id", pa.int64(), False), ("v", pa.string())])
INSERT, UPDATE_BEFORE, UPDATE_AFTER, DELETE = 0, 1, 2, 3


def kv(ids, v):
    return pa.table({"id": ids, "v": [v if isinstance(v, str) else v(i) for i in ids]}, schema=KV)


def table(catalog, name="db.t", **options):
    return catalog.create_table_from_arrow(name, KV, primary_keys=["id"], options={"bucket": "1", **options})


def live(t):
    return t.new_scan().plan_entries()


def read(t, **kw):
    return sorted((r["id"], r["v"]) for r in t.new_scan().with_snapshot(kw.get("snapshot")).to_arrow().to_pylist())


def move_to_level(t, files_by_level):
    """Commit a COMPACT snapshot that only changes files' levels (an upgrade)."""
    msg = CommitMessage(live(t)[0].partition, 0, 1)
    for f, level in files_by_level:
        msg.compact_before.append(f)
        msg.compact_after.append(dataclasses.replace(f, level=level))
    return t.new_commit().commit([msg])


def test_seed_001_example_across_three_levels(catalog):
    t = table(catalog, **{"write-only": "true", "num-levels": "3"})
    t.write_arrow(pa.table({"id": [1, 2], "v": ["old", "a"]}, schema=KV))      # file5, file6 → level 2
    t.write_arrow(pa.table({"id": [1, 2], "v": ["mid", "b"]}, schema=KV))      # file3, file4 → level 1
    t.write_arrow(pa.table({"id": [1, 3], "v": ["new", "c"]}, schema=KV))      # file1, file2 → level 0
    first, second, _ = sorted(live(t), key=lambda e: e.file.min_sequence_number)
    move_to_level(t, [(first.file, 2), (second.file, 1)])
    assert sorted(e.file.level for e in live(t)) == [0, 1, 2]
    split, = t.new_scan().plan().splits
    assert not split.raw_convertible  # all three overlap: one section, merged
    assert read(t) == [(1, "new"), (2, "b"), (3, "c")]


def test_writer_compacts_at_the_sorted_run_trigger(catalog):
    t = table(catalog)
    for i in range(4):
        t.write_arrow(kv(range(i, i + 10), f"w{i}"))
    assert [s.commit_kind for s in t.snapshot_manager.snapshots()] == ["APPEND"] * 4
    t.write_arrow(kv(range(4, 14), "w4"))  # the 5th sorted run triggers compaction in the writer
    kinds = [s.commit_kind for s in t.snapshot_manager.snapshots()]
    assert kinds == ["APPEND"] * 5 + ["COMPACT"]
    assert len(live(t)) < 5 and all(e.file.level > 0 for e in live(t))
    expect = {i: f"w{min(i, 4) if i >= 4 else i}" for i in range(14)}
    assert read(t) == sorted(expect.items())
    assert read(t, snapshot=5) == read(t)  # the COMPACT snapshot changes files, not rows


def test_write_only_then_full_compaction_drops_deletes(catalog):
    t = table(catalog, **{"write-only": "true"})
    for i in range(7):
        t.write_arrow(kv(range(10), f"w{i}"))
    t.write_arrow(kv([3, 4], "x"), row_kinds=[DELETE, DELETE])
    assert all(s.commit_kind == "APPEND" for s in t.snapshot_manager.snapshots())
    before = read(t)
    sid = t.compact(full=True)
    snap = t.snapshot_manager.snapshot(sid)
    assert snap.commit_kind == "COMPACT" and snap.total_record_count == 8
    files = live(t)
    assert {e.file.level for e in files} == {5} and sum(e.file.row_count for e in files) == 8
    assert all(e.file.delete_row_count == 0 for e in files)
    assert read(t) == before == [(i, "w6") for i in range(10) if i not in (3, 4)]
    split, = t.new_scan().plan().splits
    assert split.raw_convertible
    assert t.compact(full=True) is None  # already one run at the max level


def test_large_non_overlapping_file_is_upgraded_not_rewritten(catalog):
    t = table(catalog, **{"write-only": "true", "target-file-size": "1 kb"})
    t.copy({"target-file-size": "1 mb"}).write_arrow(kv(range(0, 200), "a"))  # one file, over the target
    (f,) = [e.file for e in live(t)]
    assert f.file_size > 700  # larger than the compaction file size (70% of target)
    t.compact(full=True)
    (e,) = live(t)
    assert e.file.file_name == f.file_name and e.file.level == 5


def test_compaction_conflict_fails_the_compact_job_cleanly(catalog):
    t = table(catalog, **{"write-only": "true"})
    for i in range(3):
        t.write_arrow(kv(range(5), f"w{i}"))
    files, part = [e.file for e in live(t)], live(t)[0].partition
    mine = BucketCompactor(t, part, 0, files, t.snapshot_manager.latest_id()).compact(full=True)
    t.compact(full=True)  # someone else compacted the same files first
    with pytest.raises(CommitConflictError, match="already removed"):
        t.new_commit().commit([CommitMessage(part, 0, 1, compact_before=mine.before, compact_after=mine.after)])
    assert read(t) == [(i, "w2") for i in range(5)]


def test_writer_keeps_its_data_when_its_compaction_loses_a_conflict(catalog):
    t = table(catalog, **{"num-sorted-run.compaction-trigger": "2"})
    t.write_arrow(kv(range(5), "a"))
    write = t.new_write()
    write.write_arrow(kv(range(3), "b"))
    messages = write.prepare_commit()  # compacts with the file from snapshot 1
    assert any(m.compact_before for m in messages)
    t.compact(full=True)  # a concurrent compaction removes that file first
    sid = t.new_commit().commit(messages)
    assert t.snapshot_manager.snapshot(sid).commit_kind == "APPEND"
    assert read(t) == [(0, "b"), (1, "b"), (2, "b"), (3, "a"), (4, "a")]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.sampled_from(["upsert", "delete", "compact", "full"]),
                          st.lists(st.integers(0, 30), min_size=1, max_size=12), st.integers(0, 99)),
                min_size=1, max_size=14))
def test_compaction_never_changes_results(tmp_path_factory, ops):
    from paimon_sql.catalog import load_catalog
    catalog = load_catalog(str(tmp_path_factory.mktemp("wh")))
    catalog.create_database("db")
    t = table(catalog, **{"bucket": "2", "num-sorted-run.compaction-trigger": "3", "target-file-size": "2 kb"})
    model = {}
    for op, keys, salt in ops:
        if op == "upsert":
            t.write_arrow(kv(keys, lambda i: f"{i}-{salt}"))
            model.update({k: f"{k}-{salt}" for k in keys})
        elif op == "delete":
            t.write_arrow(kv(keys, "x"), row_kinds=[DELETE] * len(keys))
            for k in keys:
                model.pop(k, None)
        else:
            t.compact(full=op == "full")
        assert read(t) == sorted(model.items())


def changelog(t, sid):
    rows = t.new_scan().with_snapshot(sid).changelog().to_pylist()
    return [(("+I", "-U", "+U", "-D")[r["_VALUE_KIND"]], r["id"], r["v"]) for r in rows]


def test_changelog_producer_input(catalog):
    t = table(catalog, **{"changelog-producer": "input"})
    sid = t.write_arrow(kv([1, 2], "a"))
    assert changelog(t, sid) == [("+I", 1, "a"), ("+I", 2, "a")]
    sid = t.write_arrow(pa.table({"id": [1, 1, 2], "v": ["a", "b", "a"]}, schema=KV),
                        row_kinds=[UPDATE_BEFORE, UPDATE_AFTER, DELETE])
    assert changelog(t, sid) == [("-U", 1, "a"), ("+U", 1, "b"), ("-D", 2, "a")]
    assert t.snapshot_manager.snapshot(sid).changelog_record_count == 3


def test_changelog_producer_full_compaction(catalog):
    t = table(catalog, **{"changelog-producer": "full-compaction", "full-compaction.delta-commits": "1"})
    t.write_arrow(kv([1, 2, 3], "a"))
    snaps = list(t.snapshot_manager.snapshots())
    assert [s.commit_kind for s in snaps] == ["APPEND", "COMPACT"]
    assert changelog(t, 2) == [("+I", 1, "a"), ("+I", 2, "a"), ("+I", 3, "a")]
    t.write_arrow(pa.table({"id": [1, 2, 4], "v": ["b", "a", "n"]}, schema=KV),
                  row_kinds=[UPDATE_AFTER, DELETE, INSERT])
    assert changelog(t, 4) == [("-U", 1, "a"), ("+U", 1, "b"), ("-D", 2, "a"), ("+I", 4, "n")]
    assert read(t) == [(1, "b"), (3, "a"), (4, "n")]


def test_changelog_producer_full_compaction_row_deduplicate(catalog):
    t = table(catalog, **{"changelog-producer": "full-compaction", "full-compaction.delta-commits": "1",
                          "changelog-producer.row-deduplicate": "true"})
    t.write_arrow(kv([1, 2], "a"))
    t.write_arrow(pa.table({"id": [1, 2], "v": ["a", "z"]}, schema=KV))
    assert changelog(t, 4) == [("-U", 2, "a"), ("+U", 2, "z")]


def test_changelog_producer_lookup(catalog):
    t = table(catalog, **{"changelog-producer": "lookup"})
    t.write_arrow(kv([1, 2], "a"))
    assert [s.commit_kind for s in t.snapshot_manager.snapshots()] == ["APPEND", "COMPACT"]
    assert all(e.file.level > 0 for e in live(t))  # level 0 is compacted away at every commit
    assert changelog(t, 2) == [("+I", 1, "a"), ("+I", 2, "a")]
    t.write_arrow(kv([2, 3], "b"))
    assert changelog(t, 4) == [("-U", 2, "a"), ("+U", 2, "b"), ("+I", 3, "b")]
    t.write_arrow(kv([1], "x"), row_kinds=[DELETE])
    assert changelog(t, 6) == [("-D", 1, "a")]
    assert read(t) == [(2, "b"), (3, "b")]


def test_lookup_changelog_with_aggregation_reports_the_aggregated_value(catalog):
    schema = pa.schema([pa.field("id", pa.int64(), False), ("s", pa.int64())])
    t = catalog.create_table_from_arrow("db.agg", schema, primary_keys=["id"], options={
        "bucket": "1", "merge-engine": "aggregation", "fields.s.aggregate-function": "sum",
        "changelog-producer": "lookup"})
    t.write_arrow(pa.table({"id": [1], "s": [5]}, schema=schema))
    t.write_arrow(pa.table({"id": [1], "s": [2]}, schema=schema))
    rows = t.new_scan().with_snapshot(4).changelog().to_pylist()
    assert [(r["_VALUE_KIND"], r["s"]) for r in rows] == [(UPDATE_BEFORE, 5), (UPDATE_AFTER, 7)]


def test_random_order_of_flushes_in_one_write(catalog):
    """Several flushes in one write make several level-0 runs; compaction between them is exact."""
    t = table(catalog, **{"write-buffer-size": "1 kb", "write-buffer-spillable": "false",
                          "num-sorted-run.compaction-trigger": "2"})
    write = t.new_write()
    model = {}
    rnd = random.Random(7)
    for i in range(12):
        keys = rnd.sample(range(40), 15)
        write.write_arrow(kv(keys, f"r{i}"))
        model.update({k: f"r{i}" for k in keys})
    t.new_commit().commit(write.prepare_commit())
    assert read(t) == sorted(model.items())


def test_first_row_keeps_each_key_once_across_levels(catalog):
    t = table(catalog, **{"merge-engine": "first-row", "changelog-producer": "lookup"})
    t.write_arrow(kv([1, 2], "a"))
    t.write_arrow(kv([2, 3], "b"))
    files = live(t)
    assert all(e.file.level > 0 for e in files) and sum(e.file.row_count for e in files) == 3
    assert changelog(t, 4) == [("+I", 3, "b")]  # key 2 already existed: no change to report
    assert read(t) == [(1, "a"), (2, "a"), (3, "b")]
