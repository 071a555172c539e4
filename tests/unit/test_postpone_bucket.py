"""Postpone bucket tables (``bucket = -2``) without Spark: how a partition's bucket count is chosen
(paimon-spark 2.0's PaimonSparkWriter and SparkPostponeCompactProcedure), what a postpone file
records (as Java Paimon 2.0's postpone writer), and that postpone rows stay invisible until a
compaction assigns them buckets, which keeps the order they were written in."""

import pyarrow as pa
import pytest

from paimon_sql.data.types import AtomicType, DataField
from paimon_sql.options.core_options import CoreOptions
from paimon_sql.schema.table_schema import TableSchema
from paimon_sql.write import postpone

SCHEMA = pa.schema([pa.field("k", pa.int64(), nullable=False), ("v", pa.string()),
                    pa.field("pt", pa.int32(), nullable=False)])
POSTPONED = {"postpone.batch-write-fixed-bucket": "false"}


def data(keys, pt=0, v="v"):
    return pa.table({"k": keys, "v": [f"{v}{k}" for k in keys], "pt": [pt] * len(keys)}, schema=SCHEMA)


def table(catalog, **options):
    return catalog.create_table_from_arrow("db.t", SCHEMA, primary_keys=["k", "pt"], partition_keys=["pt"],
                                           options={"bucket": "-2", **options})


def totals(t):
    return {(e.bucket, e.total_buckets) for e in t.new_scan().plan_entries()}


@pytest.mark.parametrize("options, rows, size, postponed, expected", [
    ({}, 1000, 10 ** 6, 0, 1),  # 1 GB per bucket
    ({"postpone.target-size-per-bucket": "32 kb"}, 100, 100 * 1024, 0, 4),
    ({"postpone.target-size-per-bucket": "32 kb"}, 100, 100 * 1024, 100, 7),  # postpone rows at the same size
    ({"postpone.target-row-num-per-bucket": "200"}, 450, 0, 0, 3),
    ({"postpone.target-row-num-per-bucket": "200"}, 100, 0, 250, 2),
    ({"postpone.target-row-num-per-bucket": "1", "postpone.batch-write-fixed-bucket.max-parallelism": "5"},
     100, 0, 0, 5),
    ({"postpone.target-row-num-per-bucket": "1", "postpone.batch-write-fixed-bucket.max-parallelism": "1"},
     100, 0, 0, 1),
])
def test_a_new_partition_bucket_count_as_paimon_spark_infers_it(options, rows, size, postponed, expected):
    assert postpone.infer_write_buckets(CoreOptions(options), rows, size, postponed) == expected


def test_compaction_bucket_count():
    assert postpone.compaction_buckets(CoreOptions({}), 10, 4) == 4  # Spark's default parallelism
    assert postpone.compaction_buckets(CoreOptions({"postpone.default-bucket-num": "3"}), 10, 4) == 3
    assert postpone.compaction_buckets(CoreOptions({"postpone.target-row-num-per-bucket": "4"}), 10, 4) == 3


def test_row_sizes_are_binary_row_sizes():
    schema = TableSchema(0, [DataField(0, "k", AtomicType("BIGINT")), DataField(1, "s", AtomicType("VARCHAR", (10,)))],
                         [], [], {}, 1)
    got = postpone.row_sizes(pa.table({"k": [1, 2, 3], "s": ["short", "exactly8", None]}), schema)
    assert list(got) == [24, 32, 24]  # 8 bytes of null bits, 8 per field, strings over 7 bytes in 8-byte words


def test_target_row_num_per_bucket_and_a_partition_keeps_its_count(catalog):
    t = table(catalog, **{"postpone.target-row-num-per-bucket": "4"})
    t.write_arrow(data(list(range(10))))
    assert totals(t) == {(0, 3), (1, 3), (2, 3)}
    t.write_arrow(data(list(range(100, 200))))
    assert totals(t) == {(0, 3), (1, 3), (2, 3)}
    t.copy({"postpone.batch-write-fixed-bucket.max-parallelism": "2"}).write_arrow(data(list(range(30)), pt=1))
    assert {(b, n) for b, n in totals(t)} >= {(0, 2), (1, 2)}


def test_target_size_per_bucket(catalog):
    t = table(catalog, **{"postpone.target-size-per-bucket": "1 kb"})
    t.write_arrow(data(list(range(100)), v="x" * 40))  # 100 rows of 72 bytes: 7200 bytes → 8 buckets
    assert {n for _, n in totals(t)} == {8}


def test_postpone_files_as_java_writes_them(catalog):
    t = table(catalog)
    t.copy(POSTPONED).write_arrow(data([3, 1, 3]))
    (entry,) = t.new_scan().plan_entries()
    f = entry.file
    assert (entry.bucket, entry.total_buckets, f.level, f.row_count) == (-2, -2, 0, 3)
    assert (f.min_sequence_number, f.max_sequence_number, f.value_stats_cols) == (-1, -1, ())
    assert f.file_name.startswith("data--u-") and "-s-" in f.file_name and f.file_name.endswith(".avro")
    assert "/pt=0/bucket-postpone/" in t.paths.data_file_path([0], -2, f.file_name)
    assert t.to_arrow().num_rows == 0


def test_compaction_keeps_write_order_and_deletes(catalog):
    t = table(catalog, **{"postpone.default-bucket-num": "2"})
    late = t.copy(POSTPONED)
    late.write_arrow(data([1, 2, 3], v="a"))
    late.write_arrow(data([1], v="b"))
    late.write_arrow(data([2], v="c"), row_kinds=pa.array([3], pa.int8()))
    before = t.snapshot_manager.latest_id()
    assert t.compact() == before + 1
    assert t.snapshot_manager.snapshot(before + 1).commit_kind == "COMPACT"
    assert sorted((r["k"], r["v"]) for r in t.to_arrow().to_pylist()) == [(1, "b1"), (3, "a3")]
    assert {n for _, n in totals(t)} == {2} and min(b for b, _ in totals(t)) == 0
    assert t.compact() is None  # nothing postponed, no level-0 file left that a compaction would take


def test_a_second_compaction_continues_the_real_buckets_sequences(catalog):
    """Rows compacted later win over rows compacted before: the compaction's writer restores the
    real buckets it writes into (their highest sequence number) from the snapshot it compacts, as
    Paimon's merge-tree writer does; numbering them from 0 again let the older row win."""
    t = table(catalog, **{"postpone.default-bucket-num": "1"})
    late = t.copy(POSTPONED)
    late.write_arrow(data([1, 2], v="n"))
    t.compact()
    late.write_arrow(data([1], v="late"))
    t.compact()
    assert sorted((r["k"], r["v"]) for r in t.to_arrow().to_pylist()) == [(1, "late1"), (2, "n2")]
    files = [e.file for e in t.new_scan().plan_entries()]
    assert len({(f.min_sequence_number, f.max_sequence_number) for f in files}) == len(files)
