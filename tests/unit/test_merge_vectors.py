"""A merge split read as deletion vectors (read/merge_vectors.py) gives the rows merging gives.

Each table gets overlapping commits (inserts, updates, deletes, out-of-order sequence fields); every
split is then read twice: merged by the table's merge function, and as its stored rows less the
positions :func:`as_vectors` marks (with the +I/+U filter a native read applies). Both must agree.
"""

import numpy as np
import pyarrow as pa
import pytest

from paimon_sql.data import row_kind
from paimon_sql.read import merge_vectors
from paimon_sql.read.split_read import SplitReader
from paimon_sql.schema.table_schema import VALUE_KIND

SCHEMA = pa.schema([pa.field("id", pa.int64(), False), ("v", pa.string()), ("ts", pa.int64())])


def _write(table, ids, v, kinds=None, ts=None):
    n = len(ids)
    rows = pa.table({"id": pa.array(ids, pa.int64()), "v": pa.array([f"{v}{i}" for i in ids]),
                     "ts": pa.array(ts if ts is not None else np.zeros(n, np.int64), pa.int64())}, schema=SCHEMA)
    table.write_arrow(rows, row_kinds=kinds)


def _stored_less_vectors(table, split) -> list:
    """The split's rows as a native read of its files with their vectors takes them."""
    reader = SplitReader(table)
    out = []
    for f in split.files:
        rows = reader.read_kv(split, f)  # the file's vector applied
        out += rows.filter(row_kind.is_add(rows.column(VALUE_KIND))).select(table.schema.field_names).to_pylist()
    return sorted(out, key=lambda r: r["id"])


def _check(table) -> int:
    """Compares both reads on every split; returns how many splits needed a merge."""
    merges = 0
    for split in table.new_scan().plan().splits:
        vectored = merge_vectors.as_vectors(table, split)
        if vectored is None:
            assert not merge_vectors.applies(table, split)
            continue
        merges += 1
        assert vectored.raw_convertible
        merged = sorted(SplitReader(table).read(split).to_pylist(), key=lambda r: r["id"])
        assert _stored_less_vectors(table, vectored) == merged
        assert merge_vectors.as_vectors(table, split) == vectored  # the second time from the cache
    return merges


@pytest.mark.parametrize("options", [{}, {"sequence.field": "ts"}, {"ignore-delete": "true"},
                                     {"deduplicate.ignore-delete": "true"}],
                         ids=["deduplicate", "sequence-field", "ignore-delete", "deduplicate-ignore-delete"])
def test_vectors_drop_what_merging_drops(catalog, options):
    table = catalog.create_table_from_arrow("db.t", SCHEMA, primary_keys=["id"],
                                            options={"bucket": "2", "write-only": "true", **options})
    _write(table, list(range(0, 400)), "a", ts=np.full(400, 5))
    _write(table, list(range(100, 300, 2)), "b", ts=np.r_[np.full(50, 9), np.full(50, 1)])  # half older by ts
    _write(table, list(range(150, 170)), "d", kinds=[row_kind.DELETE] * 20, ts=np.full(20, 9))
    _write(table, list(range(390, 420)), "c", ts=np.full(30, 7))
    assert _check(table) == 2


def test_first_row_keeps_the_first(catalog):
    """First-row reads no level-0 file; its lookup compaction leaves new keys in an upper level,
    overlapping the max level's range when they interleave."""
    table = catalog.create_table_from_arrow("db.t", SCHEMA, primary_keys=["id"],
                                            options={"bucket": "1", "merge-engine": "first-row"})
    _write(table, list(range(0, 400, 2)), "a")
    _write(table, list(range(1, 400, 4)) + list(range(0, 100, 2)), "b")
    assert _check(table) == 1


def test_partial_update_is_merged_as_before(catalog):
    table = catalog.create_table_from_arrow("db.t", SCHEMA, primary_keys=["id"],
                                            options={"bucket": "1", "merge-engine": "partial-update"})
    _write(table, [1, 2], "a")
    _write(table, [2, 3], "b")
    split = table.new_scan().plan().splits[0]
    assert not split.raw_convertible and merge_vectors.as_vectors(table, split) is None



def test_a_read_with_its_own_options_is_not_served_another_reads_vectors(catalog):
    """``ignore-delete`` given for one read keeps rows a plain read drops: the cache tells them apart."""
    table = catalog.create_table_from_arrow("db.t", SCHEMA, primary_keys=["id"],
                                            options={"bucket": "1", "write-only": "true"})
    _write(table, list(range(10)), "a")
    _write(table, list(range(0, 10, 2)), "d", kinds=[row_kind.DELETE] * 5)
    assert _check(table) == 1
    assert _check(table.copy({"ignore-delete": "true"})) == 1
