"""Cross-partition upsert (``bucket = -1``, a primary key lacking a partition column), against
Paimon's rules: one row per key across partitions, each merge engine's answer to a key arriving in
another partition, Paimon's CREATE/ALTER refusals, and Java Paimon reading what we wrote."""

import time

import pyarrow as pa
import pytest
from oracles.paimon_java import VERSIONS

from paimon_sql.exceptions import PaimonError
from paimon_sql.schema.schema_change import SetOption

KINDS = {"+I": 0, "-U": 1, "+U": 2, "-D": 3}
S = pa.schema([pa.field("id", pa.int64(), False), ("v", pa.int64()), ("s", pa.string()), ("dt", pa.string())])


def make(catalog, options=None, name="db.t"):
    return catalog.create_table_from_arrow(name, S, partition_keys=["dt"], primary_keys=["id"], options=options or {})


def write(catalog, rows, kinds=None, name="db.t"):
    """One write (one commit) of ``rows`` given as (id, v, s, dt) tuples."""
    data = pa.Table.from_pylist([dict(zip(S.names, r)) for r in rows], S)
    catalog.get_table(name).write_arrow(data, row_kinds=[KINDS[k] for k in kinds] if kinds else None)


def read(catalog, name="db.t"):
    return sorted(tuple(r.values()) for r in catalog.get_table(name).to_arrow().to_pylist())


def test_a_key_moving_partition_is_one_row(catalog):
    make(catalog)
    write(catalog, [(1, 1, "a", "x"), (2, 2, "b", "x")])
    write(catalog, [(1, 10, "a2", "y")])
    assert read(catalog) == [(1, 10, "a2", "y"), (2, 2, "b", "x")]


def test_a_key_moving_twice_and_back(catalog):
    make(catalog)
    write(catalog, [(1, 1, "a", "x")])
    write(catalog, [(1, 2, "b", "y")])
    write(catalog, [(1, 3, "c", "z")])
    assert read(catalog) == [(1, 3, "c", "z")]
    write(catalog, [(1, 4, "d", "x")])
    assert read(catalog) == [(1, 4, "d", "x")]


def test_rows_of_one_key_in_one_write_deduplicate(catalog):
    """In arrival order: the last row wins, in its own partition (the moves between are retracted)."""
    make(catalog)
    write(catalog, [(1, 0, "old", "w"), (2, 0, "two", "w")])
    write(catalog, [(1, 1, "a", "x"), (1, 2, "b", "y"), (3, 1, "c", "x"), (1, 3, "c", "x"), (3, 2, "d", "z"),
                    (2, 5, "e", "w")])
    assert read(catalog) == [(1, 3, "c", "x"), (2, 5, "e", "w"), (3, 2, "d", "z")]


def test_partial_update_writes_into_the_old_partition(catalog):
    make(catalog, {"merge-engine": "partial-update"})
    write(catalog, [(1, 1, None, "x")])
    write(catalog, [(1, None, "a", "y")])
    assert read(catalog) == [(1, 1, "a", "x")]
    write(catalog, [(2, 2, None, "y"), (2, None, "b", "z"), (2, 3, None, "x")])  # a new key: its first partition
    assert read(catalog) == [(1, 1, "a", "x"), (2, 3, "b", "y")]


def test_aggregation_writes_into_the_old_partition(catalog):
    make(catalog, {"merge-engine": "aggregation", "fields.v.aggregate-function": "sum"})
    write(catalog, [(1, 1, "a", "x")])
    write(catalog, [(1, 10, "b", "y"), (1, 100, "c", "z")])
    assert read(catalog) == [(1, 111, "c", "x")]


def test_first_row_ignores_a_key_arriving_in_another_partition(catalog):
    make(catalog, {"merge-engine": "first-row"})
    write(catalog, [(1, 1, "a", "x")])
    write(catalog, [(1, 2, "b", "y"), (2, 1, "c", "y"), (2, 2, "d", "x"), (1, 3, "e", "x")])
    assert read(catalog) == [(1, 1, "a", "x"), (2, 1, "c", "y")]


def test_delete_of_a_moved_key(catalog):
    make(catalog)
    write(catalog, [(1, 1, "a", "x"), (2, 2, "b", "x")])
    write(catalog, [(1, 2, "b", "y")])
    write(catalog, [(1, 2, "b", "y")], kinds=["-D"])
    assert read(catalog) == [(2, 2, "b", "x")]
    write(catalog, [(1, 5, "again", "z")])
    assert read(catalog) == [(1, 5, "again", "z"), (2, 2, "b", "x")]


def places(catalog, name="db.t"):
    """id -> (dt, bucket) of every live row, read split by split."""
    scan = catalog.get_table(name).new_scan()
    reader = scan.reader()
    return {r["id"]: (r["dt"], split.bucket) for split in scan.plan().splits for r in reader.read(split).to_pylist()}


def test_buckets_fill_to_the_target_row_number_and_no_hash_index(catalog):
    """Java's cross-partition mode keeps its index in the writer: no HASH index files; buckets take
    up to dynamic-bucket.target-row-num keys, and a key leaving frees its slot."""
    t = make(catalog, {"dynamic-bucket.target-row-num": "2"})
    write(catalog, [(i, i, "a", "x") for i in range(5)])
    assert sorted(places(catalog).values()) == [("x", 0), ("x", 0), ("x", 1), ("x", 1), ("x", 2)]
    write(catalog, [(0, 0, "moved", "y"), (9, 9, "new", "x")])
    where = places(catalog)
    assert where[0] == ("y", 0) and len(where) == 6
    assert sorted(b for dt, b in where.values() if dt == "x") == [0, 0, 1, 1, 2]  # 9 took the slot 0 left
    snap = t.snapshot_manager.latest()
    assert not [e for e in t.index_manifest_entries(snap.index_manifest) if e.index_type == "HASH"]


def test_index_ttl_leaves_old_buckets_out_of_the_bootstrap(catalog):
    """As Paimon documents: keys only in files older than the ttl are not found, so may be duplicated;
    younger ones are."""
    for name, ttl in (("db.short", "1 ms"), ("db.long", "1 d")):
        make(catalog, {"cross-partition-upsert.index-ttl": ttl, "cross-partition-upsert.bootstrap-parallelism": "2"},
             name)
        write(catalog, [(1, 1, "a", "x")], name=name)
    time.sleep(1.1)  # creation times are kept in seconds
    for name in ("db.short", "db.long"):
        write(catalog, [(1, 2, "b", "y")], name=name)
    assert read(catalog, "db.short") == [(1, 1, "a", "x"), (1, 2, "b", "y")]
    assert read(catalog, "db.long") == [(1, 2, "b", "y")]


def test_overwrite_routes_within_its_rows(catalog):
    make(catalog)
    write(catalog, [(1, 1, "a", "x")])
    t = catalog.get_table("db.t")
    t.write_arrow(pa.Table.from_pylist([{"id": 2, "v": 1, "s": "a", "dt": "x"}, {"id": 2, "v": 2, "s": "b", "dt": "y"}],
                                       S), overwrite=True)
    assert read(catalog) == [(2, 2, "b", "y")]


def test_fixed_bucket_refused_at_create(catalog):
    with pytest.raises(PaimonError) as e:
        make(catalog, {"bucket": "2"})
    assert str(e.value) == ("You should use dynamic bucket (bucket = -1) mode in cross partition update case "
                            "(Primary key constraint [id] not include all partition fields [dt]).")
    catalog.create_table_from_arrow("db.ok", S, partition_keys=["dt"], primary_keys=["id", "dt"],
                                    options={"bucket": "2"})  # the key holds the partition: fine


def test_fixed_bucket_refused_at_alter(catalog):
    t = make(catalog)
    with pytest.raises(PaimonError, match=r"You should use dynamic bucket \(bucket = -1\) mode"):
        t.schema_manager.commit_changes([SetOption("bucket", "4")])
    assert catalog.get_table("db.t").options.bucket == -1


def test_sequence_field_refused(catalog):
    with pytest.raises(PaimonError, match="You can not use sequence.field in cross partition update case"):
        make(catalog, {"sequence.field": "v"})


@pytest.mark.parametrize("paimon_version", VERSIONS)
def test_java_paimon_reads_and_compacts_it(catalog, warehouse, paimon_version):
    """Java Paimon 1.0 and 2.0 read our cross-partition table, compact it, and we write on."""
    from interop.java_paimon import started  # the Java interop harness (tests/interop)
    java = started(paimon_version)
    make(catalog)
    write(catalog, [(1, 1, "a", "x"), (2, 2, "b", "x")])
    write(catalog, [(1, 10, "a2", "y"), (3, 3, "c", "z")])
    expected = [[1, 10, "a2", "y"], [2, 2, "b", "x"], [3, 3, "c", "z"]]
    first, _, after = java.run([{"op": "read", "warehouse": warehouse, "table": "db.t"},
                                {"op": "compact", "warehouse": warehouse, "table": "db.t"},
                                {"op": "read", "warehouse": warehouse, "table": "db.t"}])
    assert sorted(first) == expected and sorted(after) == expected
    write(catalog, [(2, 20, "b2", "z")])  # our bootstrap over Java's compacted files
    assert read(catalog) == [(1, 10, "a2", "y"), (2, 20, "b2", "z"), (3, 3, "c", "z")]
