"""The hole a fast-forward leaves in main's snapshot ids, and what each reader does with it.

Main is rolled back below the first snapshot of a branch, then fast-forwarded to it: main's own
snapshots below the branch's stay, as Java Paimon's fastForward keeps them, so main ends as
[1, 4, 5, 6]. Snapshots on either side read their rows; readers that need a snapshot in the hole
refuse it in one line; expiry steps over it (docs/branches.md). The same sequence against Java
Paimon 2.0: tests/interop/test_fast_forward_holes.py."""

import datetime as dt
import os

import pyarrow as pa
import pytest

from paimon_sql.catalog import load_catalog
from paimon_sql.exceptions import SnapshotNotFoundError
from paimon_sql.maintenance.expire_snapshots import expire_snapshots
from paimon_sql.maintenance.rollback import rollback_to_snapshot
from paimon_sql.read import incremental
from paimon_sql.store.references import References
from paimon_sql.table.materialized_table import appends_only
from paimon_sql.table.table import table_at

SCHEMA = pa.schema([pa.field("k", pa.int32(), False), ("v", pa.int32())])
# commits that run expiry (which leaves these snapshots) or not; no compaction either way
VARIANTS = {"write-only": {"write-only": "true"}, "expiring": {"num-sorted-run.compaction-trigger": "10"}}
ROWS = {sid: [[i, 10 * i] for i in range(1, sid + 1)] for sid in (4, 5, 6)} | {1: [[1, 10]]}


def build(root: str, options: dict):
    """FastForwardDriver.java's sequence on db.t (k INT primary key, v INT, bucket 1, ``options``) of
    a filesystem warehouse at ``root``: commits 1..4 write (i, 10 i); tag t4 on 4; branch b from it
    commits (5, 50) and (6, 60); main rolls back to 1 and fast-forwards to b. Returns main."""
    catalog = load_catalog(root)
    catalog.create_database("db")
    path = catalog.create_table_from_arrow("db.t", SCHEMA, primary_keys=["k"],
                                           options={"bucket": "1", **options}).path
    for i in range(1, 5):
        commit(table_at(path), i)
    main = table_at(path)
    main.tag_manager.create("t4", main.snapshot_manager.snapshot(4))
    main.branch_manager.create("b", main, tag="t4")
    for i in (5, 6):
        commit(main.switch_to_branch("b"), i)
    rollback_to_snapshot(table_at(path), 1)
    main = table_at(path)
    main.branch_manager.fast_forward(main, "b")
    return table_at(path)


def commit(table, i: int) -> None:
    table.write_arrow(pa.table({"k": [i], "v": [10 * i]}, schema=SCHEMA))


def rows(arrow) -> list:
    return sorted([r["k"], r["v"]] for r in arrow.to_pylist())


@pytest.fixture(params=sorted(VARIANTS))
def main(request, tmp_path):
    return build(str(tmp_path), VARIANTS[request.param])


def test_fast_forward_below_the_branch_leaves_a_hole(main):
    sm = main.snapshot_manager
    assert (sm.listed_ids(), sm.earliest_id(), sm.latest_id()) == ([1, 4, 5, 6], 1, 6)
    for sid, expected in ROWS.items():
        assert rows(main.new_scan().with_snapshot(sid).to_arrow()) == expected, sid
    assert rows(main.to_arrow()) == ROWS[6]
    for sid in (2, 3):
        with pytest.raises(SnapshotNotFoundError, match=f"snapshot {sid} does not exist"):
            main.new_scan().with_snapshot(sid).to_arrow()


def test_reads_of_changes_refuse_the_hole_in_one_line(main):
    with pytest.raises(SnapshotNotFoundError) as refused:
        main.copy({"incremental-between": "1,5"}).to_arrow()
    assert str(refused.value) == ("cannot read the changes of table db.t in (1, 5]: snapshot 2 does not exist "
                                  "(a hole before snapshot 4, as a fast-forward after a rollback leaves)")
    diff = {"incremental-between": "1,5", "incremental-between-scan-mode": "diff"}
    assert rows(main.copy(diff).to_arrow()) == ROWS[5][1:]  # only the two ends are read
    assert rows(main.copy({"incremental-between": "4,6"}).to_arrow()) == [[5, 50], [6, 60]]
    assert rows(main.copy({"scan.mode": "compacted-full"}).to_arrow()) == ROWS[6]  # none compacted: the latest
    # a stream from snapshot 1 reads 1, then stops before 2; one past the hole reads on
    assert [incremental.readable_until(main, start, 6) for start in (0, 1, 3, 4)] == [1, 1, 6, 6]
    assert not appends_only(main, 1, 6)  # a materialized table over it refreshes in full


def test_expiry_steps_over_the_hole(main):
    old = int((dt.datetime.now() + dt.timedelta(days=1)).timestamp() * 1000)  # every snapshot is old enough
    sm = main.snapshot_manager
    # the first id to keep (3 by retain_min 4; 2 by max_deletes 1) is in the hole: none goes, as in Java
    assert expire_snapshots(main, retain_max=4, retain_min=4, older_than=old, max_deletes=100) == 0
    assert expire_snapshots(main, retain_max=2, retain_min=1, older_than=old, max_deletes=1) == 0
    assert sm.listed_ids() == [1, 4, 5, 6]
    assert expire_snapshots(main, retain_max=2, retain_min=1, older_than=old, max_deletes=100) == 3
    assert (sm.listed_ids(), sm.earliest_id(), sm.latest_id()) == ([6], 6, 6)
    assert all(os.path.exists(p) for p in References(main).whole(sm.snapshot(6)))
    assert rows(main.to_arrow()) == ROWS[6]
