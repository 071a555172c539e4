"""Row tracking (``row-tracking.enabled``) in the core API: what a commit assigns (first row ids,
sequence numbers, the snapshot's nextRowId, manifests' row id span) and which tables may track rows."""

import threading

import pyarrow as pa
import pytest
from support import SCHEMA

from paimon_sql.exceptions import SchemaError

TRACKING = {"row-tracking.enabled": "true"}


def batch(ids, dts):
    return pa.table({"id": ids, "name": [f"n{i}" for i in ids], "value": [float(i) for i in ids], "dt": dts},
                    schema=SCHEMA)


def files(table):
    return sorted((e.file for e in table.new_scan().plan_entries()), key=lambda f: (f.first_row_id is None,
                                                                                     f.first_row_id))


@pytest.mark.parametrize("group", ["true", "false"])
def test_a_commit_numbers_new_files_on_from_next_row_id(catalog, group):
    t = catalog.create_table_from_arrow("db.t", SCHEMA, partition_keys=["dt"],
                                        options={**TRACKING, "row-tracking.partition-group-on-commit": group})
    t.write_arrow(batch([1, 2], ["x", "x"]))
    t.write_arrow(batch([3, 4, 5], ["y", "x", "y"]))
    snap = t.snapshot_manager.latest()
    assert snap.next_row_id == 5
    spans = [(f.first_row_id, f.row_count, f.min_sequence_number, f.max_sequence_number) for f in files(t)]
    assert spans[0] == (0, 2, 1, 1)  # the first commit's file: ids 0-1, sequence number = snapshot 1
    assert sorted(s[:2] for s in spans[1:]) in ([(2, 2), (4, 1)], [(2, 1), (3, 2)])  # a partition's ids contiguous
    assert all(s[2:] == (2, 2) for s in spans[1:])
    metas = t.manifest_list(snap.delta_manifest_list)
    assert [(m.min_row_id, m.max_row_id) for m in metas] == [(2, 4)]


def test_concurrent_commits_never_share_row_ids(catalog):
    """Row ids are assigned against the snapshot a commit attempt publishes on: a retry re-assigns."""
    t = catalog.create_table_from_arrow("db.t", SCHEMA, options=TRACKING)
    writes = [catalog.get_table("db.t").new_write() for _ in range(4)]
    messages = []
    for i, w in enumerate(writes):
        w.write_arrow(batch([i * 10, i * 10 + 1, i * 10 + 2], ["d"] * 3))
        messages.append(w.prepare_commit())
    threads = [threading.Thread(target=t.new_commit().commit, args=(m,)) for m in messages]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert sorted(f.first_row_id for f in files(t)) == [0, 3, 6, 9]
    assert t.snapshot_manager.latest().next_row_id == 12


def test_which_tables_may_track_rows(catalog):
    with pytest.raises(SchemaError, match="Cannot define primary-key for row tracking table"):
        catalog.create_table_from_arrow("db.pk", SCHEMA, primary_keys=["id"], options=TRACKING)
    with pytest.raises(SchemaError, match="it only support bucket = -1"):
        catalog.create_table_from_arrow("db.b", SCHEMA, options={**TRACKING, "bucket": "2", "bucket-key": "id"})
    named = pa.schema(list(SCHEMA) + [pa.field("_ROW_ID", pa.int64())])
    with pytest.raises(SchemaError, match="'_ROW_ID' conflicts with existing field names"):
        catalog.create_table_from_arrow("db.n", named, options=TRACKING)
