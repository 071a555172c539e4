"""pypaimon reads what our LSM tree made: compacted levels, upgraded files, other merge engines."""

import dataclasses

import pyarrow as pa
import pytest
from support import SCHEMA

from paimon_sql.write.commit_message import CommitMessage

pytestmark = pytest.mark.interop
DELETE = 3


def _batch(ids, tag, dt="d"):
    return pa.table({"id": ids, "name": [f"{tag}{i}" for i in ids], "value": [float(i) for i in ids],
                     "dt": [dt] * len(ids)}, schema=SCHEMA)


def _sorted(rows):
    return sorted(rows, key=lambda r: r["id"])


def test_compacted_table_reads_the_same_at_every_snapshot(pypaimon, catalog, warehouse):
    t = catalog.create_table_from_arrow("db.lsm", SCHEMA, partition_keys=["dt"], primary_keys=["id", "dt"],
                                        options={"bucket": "2", "num-sorted-run.compaction-trigger": "2"})
    t.write_arrow(_batch(list(range(20)), "a"))
    t.write_arrow(_batch(list(range(10, 30)), "b"))
    t.write_arrow(_batch([1, 2, 15], "x"), row_kinds=[DELETE] * 3)
    t.write_arrow(_batch(list(range(5)), "c"))
    t.compact(full=True)
    snaps = list(t.snapshot_manager.snapshots())
    assert "COMPACT" in {s.commit_kind for s in snaps} and any(e.file.level > 0 for e in t.new_scan().plan_entries())
    for s in snaps:
        ours = t.new_scan().with_snapshot(s.id).to_arrow().to_pylist()
        assert _sorted(pypaimon(op="read", warehouse=warehouse, table="db.lsm", snapshot=s.id)) == _sorted(ours)


def test_seed_001_levels_read_by_pypaimon(pypaimon, catalog, warehouse):
    t = catalog.create_table_from_arrow("db.seed", SCHEMA, partition_keys=["dt"], primary_keys=["id", "dt"],
                                        options={"bucket": "1", "write-only": "true", "num-levels": "3"})
    for tag, ids in (("old", [1, 2]), ("mid", [1, 2]), ("new", [1, 3])):
        t.write_arrow(_batch(ids, tag))
    first, second, _ = sorted(t.new_scan().plan_entries(), key=lambda e: e.file.min_sequence_number)
    msg = CommitMessage(first.partition, 0, 1, compact_before=[first.file, second.file],
                        compact_after=[dataclasses.replace(first.file, level=2),
                                       dataclasses.replace(second.file, level=1)])
    t.new_commit().commit([msg])
    theirs = pypaimon(op="read", warehouse=warehouse, table="db.seed")
    assert [(r["id"], r["name"]) for r in _sorted(theirs)] == [(1, "new1"), (2, "mid2"), (3, "new3")]


@pytest.mark.parametrize("options", [
    {"merge-engine": "partial-update"},
    {"merge-engine": "aggregation", "fields.value.aggregate-function": "sum"},
    {"merge-engine": "first-row", "write-only": "false"},  # first-row reads level 0 only once compacted
])
def test_other_merge_engines_read_the_same(pypaimon, catalog, warehouse, options):
    t = catalog.create_table_from_arrow("db.eng", SCHEMA, partition_keys=["dt"], primary_keys=["id", "dt"],
                                        options={"bucket": "1", "write-only": "true", **options})
    t.write_arrow(_batch([1, 2, 3], "a"))
    t.write_arrow(pa.table({"id": [1, 2], "name": [None, "b"], "value": [10.0, None], "dt": ["d", "d"]},
                           schema=SCHEMA))
    ours = t.to_arrow().to_pylist()
    assert _sorted(pypaimon(op="read", warehouse=warehouse, table="db.eng")) == _sorted(ours)
