"""Bucket selection: a filter pinning the bucket key plans only the buckets its values hash to,
and never loses a row the full scan would return."""

import datetime as dt
from decimal import Decimal

import pyarrow as pa
import pytest
from support import SCHEMA

from paimon_sql.data import binary_row
from paimon_sql.data import predicate as P
from paimon_sql.data.types import from_arrow
from paimon_sql.schema import schema_change as sc


def batch(ids, dts):
    return pa.table({"id": ids, "name": [f"n{i}" for i in ids], "value": [float(i) for i in ids], "dt": dts},
                    schema=SCHEMA)


@pytest.fixture
def pk(catalog):
    """4 buckets, 2 partitions, two commits (the second upserts): several files in every bucket."""
    t = catalog.create_table_from_arrow("db.p", SCHEMA, partition_keys=["dt"], primary_keys=["id", "dt"],
                                        options={"bucket": "4"})
    t.write_arrow(batch(list(range(400)), ["a" if i % 2 else "b" for i in range(400)]))
    t.write_arrow(batch(list(range(0, 400, 3)), ["a" if i % 2 else "b" for i in range(0, 400, 3)]))
    return t


def bucket(value, arrow_type, total):
    return int(binary_row.bucket_of(binary_row.hash_rows([pa.array([value], arrow_type)],
                                                         [from_arrow(arrow_type)]), total)[0])


def planned(table, predicate):
    plan = table.new_scan().filter(predicate).plan()
    return plan, {(s.partition, s.bucket) for s in plan.splits}


def same_rows(table, predicate):
    """The filtered scan returns what the full scan, filtered in Arrow, returns."""
    key = table.schema.field_names[0]
    got = table.new_scan().filter(predicate).to_arrow().filter(predicate.to_arrow()).sort_by(key)
    assert got.to_pylist() == table.new_scan().to_arrow().filter(predicate.to_arrow()).sort_by(key).to_pylist()
    return got


def test_equality_plans_the_one_bucket_per_partition(pk):
    plan, chosen = planned(pk, P.equal("id", 13))
    assert {b for _, b in chosen} == {bucket(13, pa.int64(), 4)} and len(chosen) == 2
    s = plan.stats
    assert s.files_after_buckets * 4 == s.files_after_partition and s.files_after_stats <= s.files_after_buckets
    assert same_rows(pk, P.equal("id", 13)).column("id").to_pylist() == [13]


@pytest.mark.parametrize("predicate", [
    P.is_in("id", [1, 2, 300]), P.or_(P.equal("id", 1), P.equal("id", 2), P.equal("id", 300)),
    P.or_(P.is_in("id", [1, 2]), P.equal("id", 300)),
    P.and_(P.is_in("id", [1, 2, 300, 7]), P.is_in("id", [300, 2, 1, 8]))])  # conjuncts on one column intersect
def test_in_and_or_plan_the_buckets_of_their_values(pk, predicate):
    _, chosen = planned(pk, predicate)
    assert {b for _, b in chosen} == {bucket(v, pa.int64(), 4) for v in (1, 2, 300)}
    assert same_rows(pk, predicate).column("id").to_pylist() == [1, 2, 300]


def test_other_conjuncts_keep_the_selection_but_an_or_across_columns_does_not(pk):
    _, chosen = planned(pk, P.and_(P.equal("id", 13), P.equal("name", "n13"), P.equal("dt", "a"),
                                   P.greater_than("value", 1.0)))
    assert len(chosen) == 1 and {b for _, b in chosen} == {bucket(13, pa.int64(), 4)}
    for wide in (P.or_(P.equal("id", 13), P.equal("name", "n14")), P.greater_than("id", 13),
                 P.not_(P.equal("id", 13)), P.and_(P.equal("id", 1), P.equal("id", 2))):
        plan, chosen = planned(pk, wide)
        assert plan.stats.files_after_buckets == plan.stats.files_after_partition
        same_rows(pk, wide)


def test_partition_values_bind_into_the_filter(pk):
    a, b = (P.and_(P.equal("dt", "a"), P.equal("id", 13)), P.and_(P.equal("dt", "b"), P.is_in("id", [14, 16])))
    _, chosen = planned(pk, P.or_(a, b))
    by_part = {}
    for p, bk in chosen:
        by_part.setdefault(binary_row.from_bytes(p, [from_arrow(pa.string())])[0], set()).add(bk)
    assert by_part == {"a": {bucket(13, pa.int64(), 4)}, "b": {bucket(14, pa.int64(), 4), bucket(16, pa.int64(), 4)}}
    assert same_rows(pk, P.or_(a, b)).column("id").to_pylist() == [13, 14, 16]
    # a NOT over a partition column is not bound (it cannot be decided safely): no selection there
    wide = P.or_(P.and_(P.not_(P.equal("dt", "a")), P.equal("id", 14)), P.equal("value", 3.0))
    plan, _ = planned(pk, wide)
    assert plan.stats.files_after_buckets == plan.stats.files_after_partition
    same_rows(pk, wide)


def test_too_many_combinations_select_nothing(pk):
    plan, _ = planned(pk, P.is_in("id", list(range(1001))))
    assert plan.stats.files_after_buckets == plan.stats.files_after_partition


@pytest.mark.parametrize("arrow_type, values, literal", [
    (pa.int32(), [-5, 7, 2**31 - 1], -5),  # an INT key, a Python int literal
    (pa.int16(), [-5, 7, 300], 300),
    (pa.int8(), [-5, 7, 100], -5),
    (pa.decimal128(10, 2), [Decimal("1.50"), Decimal("-3.07"), Decimal("12345678.99")], Decimal("1.5")),
    (pa.decimal128(10, 2), [Decimal("1.50"), Decimal("-3.00"), Decimal("0.01")], -3),
    (pa.decimal128(30, 4), [Decimal("1.5"), Decimal("-12345678901234567890.1234"), Decimal(0)],
     Decimal("-12345678901234567890.1234")),
    (pa.string(), ["a", "a longer string", ""], "a longer string"),
    (pa.string(), ["a", "é", ""], ""),
    (pa.binary(), [b"\x00", b"0123456789", b""], b"0123456789"),
    (pa.date32(), [dt.date(2024, 2, 29), dt.date(1969, 12, 31), dt.date(1, 1, 1)], dt.date(1969, 12, 31)),
    (pa.bool_(), [True, False], False)])
def test_literals_hash_as_the_writer_hashes_the_column(catalog, arrow_type, values, literal):
    schema = pa.schema([pa.field("k", arrow_type, False), ("v", pa.int64())])
    t = catalog.create_table_from_arrow("db.k", schema, primary_keys=["k"], options={"bucket": "5"})
    for i, v in enumerate(values):  # one file per row
        t.write_arrow(pa.table({"k": [v], "v": [i]}, schema=schema))
    plan, chosen = planned(t, P.equal("k", literal))
    assert [b for _, b in chosen] == [bucket(literal, arrow_type, 5)]
    mine = bucket(literal, arrow_type, 5)
    assert plan.stats.files_after_buckets == sum(bucket(v, arrow_type, 5) == mine for v in values)
    exact = Decimal(literal) if pa.types.is_decimal(arrow_type) else literal  # Arrow compares no int with a decimal
    assert t.new_scan().filter(P.equal("k", exact)).to_arrow().num_rows == 1


@pytest.mark.parametrize("arrow_type, literal", [
    (pa.int32(), 2**31), (pa.int64(), 13.0), (pa.int64(), True), (pa.int64(), "13"),
    (pa.decimal128(10, 2), Decimal("1.555")), (pa.decimal128(4, 2), Decimal("100")), (pa.decimal128(10, 2), 1.5),
    (pa.float64(), 1.0), (pa.date32(), dt.datetime(2024, 1, 1)), (pa.timestamp("ms"), dt.datetime(2024, 1, 1))])
def test_a_literal_that_is_not_exactly_a_key_value_reads_every_bucket(catalog, arrow_type, literal):
    schema = pa.schema([pa.field("k", arrow_type, False), ("v", pa.int64())])
    t = catalog.create_table_from_arrow("db.k", schema, primary_keys=["k"], options={"bucket": "3"})
    plan, _ = planned(t, P.is_in("k", [literal]))
    assert plan.stats.files_after_buckets == plan.stats.files_after_partition


def test_rescaled_partitions_select_by_their_own_bucket_count(catalog, pk):
    pk.schema_manager.commit_changes([sc.SetOption("bucket", "8")])
    t = catalog.get_table("db.p")
    a = t.new_scan().filter(P.equal("dt", "a")).to_arrow()
    w = t.new_write(overwrite=True)
    w.write_arrow(a)
    t.new_commit().overwrite(w.prepare_commit(), dynamic=True)
    totals = {e.partition: e.total_buckets for e in t.new_scan().plan_entries()}
    assert sorted(totals.values()) == [4, 8]
    for key in (13, 14, 15, 16, 399, 1000):
        plan, chosen = planned(t, P.equal("id", key))
        assert {b for p, b in chosen} <= {bucket(key, pa.int64(), totals[p]) for p in totals}
        assert all(b == bucket(key, pa.int64(), totals[p]) for p, b in chosen)
        assert same_rows(t, P.equal("id", key)).num_rows == (1 if key < 400 else 0)


def test_rows_are_never_lost(pk):
    for predicate in [P.equal("id", k) for k in range(0, 400, 7)] + [
            P.is_in("id", list(range(50, 90))), P.and_(P.is_in("id", [3, 4, 5]), P.equal("dt", "b")),
            P.or_(P.equal("id", 5), P.is_in("id", [6, 401]))]:
        same_rows(pk, predicate)


def test_append_tables_select_by_bucket_key_and_unfixed_buckets_do_not(catalog):
    t = catalog.create_table_from_arrow("db.a", SCHEMA, options={"bucket": "3", "bucket-key": "name"})
    t.write_arrow(batch(list(range(60)), ["d"] * 60))
    _, chosen = planned(t, P.equal("name", "n7"))
    assert {b for _, b in chosen} == {bucket("n7", pa.string(), 3)}
    assert same_rows(t, P.equal("name", "n7")).column("id").to_pylist() == [7]
    dynamic = catalog.create_table_from_arrow("db.d", SCHEMA, primary_keys=["id"], options={"bucket": "-1"})
    dynamic.write_arrow(batch(list(range(60)), ["d"] * 60))
    plan, _ = planned(dynamic, P.equal("id", 7))
    assert plan.stats.files_after_buckets == plan.stats.files_after_partition


def test_a_bucket_key_of_another_type_in_an_old_schema_keeps_its_files(catalog):
    schema = pa.schema([("k", pa.int32()), ("v", pa.int64())])
    t = catalog.create_table_from_arrow("db.a", schema, options={"bucket": "4", "bucket-key": "k"})
    t.write_arrow(pa.table({"k": list(range(-20, 20)), "v": list(range(40))}, schema=schema))
    t.schema_manager.commit_changes([sc.UpdateColumnType("k", from_arrow(pa.int64()))])
    t = catalog.get_table("db.a")
    plan, _ = planned(t, P.equal("k", -3))
    assert plan.stats.files_after_buckets == plan.stats.files_after_partition
    assert same_rows(t, P.equal("k", -3)).column("v").to_pylist() == [17]
