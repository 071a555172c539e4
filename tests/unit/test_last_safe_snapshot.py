"""An overwrite that rewrites what it read (rescale, sort compaction) names the snapshot it read
(``commit.strict-mode.last-safe-snapshot``); a file another writer committed into the replaced
partitions after it is never deleted by it: the commit fails, and nothing changes."""

import pyarrow as pa
import pytest

from paimon_sql.commit.table_commit import LAST_SAFE_SNAPSHOT
from paimon_sql.exceptions import CommitConflictError

SCHEMA = pa.schema([("id", pa.int64()), ("p", pa.string())])


def rows(ids, p):
    return pa.table({"id": ids, "p": [p] * len(ids)}, schema=SCHEMA)


@pytest.mark.parametrize("other_partition, conflict", [(False, True), (True, False)])
def test_an_overwrite_never_replaces_rows_it_did_not_read(catalog, other_partition, conflict):
    t = catalog.create_table_from_arrow("db.t", SCHEMA, partition_keys=["p"])
    t.write_arrow(rows([1, 2], "a"))
    read = t.snapshot_manager.latest_id()
    rewrite = t.copy({LAST_SAFE_SNAPSHOT: str(read)}).new_write(overwrite=True)
    rewrite.write_arrow(rows([1, 2], "a"))  # what the rewrite read, rewritten
    messages = rewrite.prepare_commit()
    t.write_arrow(rows([3], "b" if other_partition else "a"))  # another writer, after the read
    commit = t.copy({LAST_SAFE_SNAPSHOT: str(read)}).new_commit()
    if conflict:
        with pytest.raises(CommitConflictError, match=r"snapshot 2 \(APPEND\) of another writer changed the "
                                                      r"partitions this overwrite replaces after snapshot 1"):
            commit.overwrite(messages, dynamic=True)
        assert t.snapshot_manager.latest_id() == 2
    else:
        commit.overwrite(messages, dynamic=True)
    assert sorted(t.to_arrow().column("id").to_pylist()) == [1, 2, 3]
