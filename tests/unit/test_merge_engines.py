"""Merge engines and aggregate functions, against Paimon's documented semantics.

Every scenario is written two ways — each row its own commit (merged on read) and all rows in one
write (folded in the write buffer) — and both must give the expected rows.
"""

import pyarrow as pa
import pytest

from paimon_sql.exceptions import MergeError, SchemaError

KINDS = {"+I": 0, "-U": 1, "+U": 2, "-D": 3}


def make(catalog, schema, options, name="db.t"):
    return catalog.create_table_from_arrow(name, schema, primary_keys=["id"], options={"bucket": "1", **options})


def run(table, rows, kinds=None, one_write=False):
    """Write ``rows`` (dicts) with their kinds, one commit each or all in one write; read sorted by id."""
    kinds = kinds or ["+I"] * len(rows)
    schema = table.schema.arrow_schema()
    if one_write:
        table.write_arrow(pa.Table.from_pylist(rows, schema), row_kinds=[KINDS[k] for k in kinds])
    else:
        for r, k in zip(rows, kinds):
            table.write_arrow(pa.Table.from_pylist([r], schema), row_kinds=[KINDS[k]])
    return sorted(table.to_arrow().to_pylist(), key=lambda r: r["id"])


both = pytest.mark.parametrize("one_write", [False, True], ids=["commits", "one-write"])
ABC = pa.schema([pa.field("id", pa.int64(), False), ("a", pa.string()), ("b", pa.string()), ("c", pa.int64())])


@both
def test_seed_001_example_deduplicate_keeps_latest(catalog, one_write):
    t = make(catalog, pa.schema([pa.field("id", pa.int64(), False), ("v", pa.string())]), {})
    rows = [{"id": 1, "v": "old"}, {"id": 2, "v": "a"}, {"id": 1, "v": "mid"}, {"id": 2, "v": "b"},
            {"id": 1, "v": "new"}, {"id": 3, "v": "c"}]
    assert run(t, rows, one_write=one_write) == [{"id": 1, "v": "new"}, {"id": 2, "v": "b"}, {"id": 3, "v": "c"}]


@both
def test_partial_update_takes_last_non_null_per_field(catalog, one_write):
    t = make(catalog, ABC, {"merge-engine": "partial-update"})
    rows = [{"id": 1, "a": "a1", "b": None, "c": 1}, {"id": 1, "a": None, "b": "b1", "c": None},
            {"id": 2, "a": "x", "b": None, "c": None}, {"id": 1, "a": "a2", "b": None, "c": None}]
    assert run(t, rows, one_write=one_write) == [{"id": 1, "a": "a2", "b": "b1", "c": 1},
                                                 {"id": 2, "a": "x", "b": None, "c": None}]


def test_partial_update_rejects_deletes_by_default(catalog):
    t = make(catalog, ABC, {"merge-engine": "partial-update"})
    with pytest.raises(MergeError, match="partial-update"):
        run(t, [{"id": 1, "a": "a", "b": None, "c": None}] * 2, ["+I", "-D"], one_write=True)
    assert t.snapshot_manager.latest() is None  # a failed write commits nothing


@both
def test_partial_update_ignore_delete(catalog, one_write):
    t = make(catalog, ABC, {"merge-engine": "partial-update", "partial-update.ignore-delete": "true"})
    rows = [{"id": 1, "a": "a", "b": None, "c": None}, {"id": 1, "a": None, "b": None, "c": None},
            {"id": 1, "a": None, "b": "b", "c": None}]
    assert run(t, rows, ["+I", "-D", "+I"], one_write) == [{"id": 1, "a": "a", "b": "b", "c": None}]


@both
def test_partial_update_remove_record_on_delete(catalog, one_write):
    t = make(catalog, ABC, {"merge-engine": "partial-update", "partial-update.remove-record-on-delete": "true"})
    rows = [{"id": 1, "a": "a", "b": None, "c": None}, {"id": 2, "a": "x", "b": None, "c": None},
            {"id": 1, "a": None, "b": None, "c": None}, {"id": 2, "a": None, "b": None, "c": None},
            {"id": 2, "a": None, "b": "y", "c": None}]
    # key 1 is deleted; key 2 is deleted and rebuilt from the rows after the -D only
    assert run(t, rows, ["+I", "+I", "-D", "-D", "+I"], one_write) == [{"id": 2, "a": None, "b": "y", "c": None}]


@both
def test_partial_update_sequence_group(catalog, one_write):
    schema = pa.schema([pa.field("id", pa.int64(), False), ("a", pa.string()), ("g1", pa.int64()),
                        ("b", pa.string()), ("g2", pa.int64())])
    t = make(catalog, schema, {"merge-engine": "partial-update", "fields.g1.sequence-group": "a",
                               "fields.g2.sequence-group": "b"})
    rows = [{"id": 1, "a": "a2", "g1": 2, "b": "b1", "g2": 1},
            {"id": 1, "a": "a1", "g1": 1, "b": "b2", "g2": 2},   # a is older by g1: kept a2; b newer: b2
            {"id": 1, "a": "a3", "g1": None, "b": None, "g2": None},  # null sequence: group not updated
            {"id": 1, "a": None, "g1": 3, "b": None, "g2": None}]  # newer g1 with NULL a: a becomes NULL
    assert run(t, rows, one_write=one_write) == [{"id": 1, "a": None, "g1": 3, "b": "b2", "g2": 2}]


@both
def test_partial_update_sequence_group_retracts_its_fields(catalog, one_write):
    schema = pa.schema([pa.field("id", pa.int64(), False), ("a", pa.string()), ("g1", pa.int64()),
                        ("b", pa.string()), ("g2", pa.int64())])
    t = make(catalog, schema, {"merge-engine": "partial-update", "fields.g1.sequence-group": "a",
                               "fields.g2.sequence-group": "b"})
    rows = [{"id": 1, "a": "a", "g1": 1, "b": "b", "g2": 1}, {"id": 1, "a": "a", "g1": 2, "b": None, "g2": None}]
    assert run(t, rows, ["+I", "-D"], one_write) == [{"id": 1, "a": None, "g1": 2, "b": "b", "g2": 1}]


AGG_SCHEMA = pa.schema([
    pa.field("id", pa.int64(), False), ("s", pa.int64()), ("p", pa.float64()), ("mx", pa.int32()), ("mn", pa.string()),
    ("lv", pa.string()), ("lnn", pa.string()), ("fv", pa.string()), ("fnn", pa.string()), ("la", pa.string()),
    ("band", pa.bool_()), ("bor", pa.bool_()), ("col", pa.list_(pa.int32())),
    ("mm", pa.map_(pa.string(), pa.int32()))])
AGG_OPTIONS = {"merge-engine": "aggregation", "fields.s.aggregate-function": "sum",
               "fields.p.aggregate-function": "product", "fields.mx.aggregate-function": "max",
               "fields.mn.aggregate-function": "min", "fields.lv.aggregate-function": "last_value",
               "fields.fv.aggregate-function": "first_value", "fields.fnn.aggregate-function": "first_non_null_value",
               "fields.la.aggregate-function": "listagg", "fields.band.aggregate-function": "bool_and",
               "fields.bor.aggregate-function": "bool_or", "fields.col.aggregate-function": "collect",
               "fields.mm.aggregate-function": "merge_map"}  # lnn: the default, last_non_null_value


@both
def test_every_aggregate_function(catalog, one_write):
    t = make(catalog, AGG_SCHEMA, AGG_OPTIONS)
    rows = [
        dict(id=1, s=1, p=2.0, mx=5, mn="m", lv="x", lnn="x", fv=None, fnn=None, la="a", band=True, bor=False,
             col=[1, 2], mm=[("k1", 1)]),
        dict(id=1, s=None, p=3.0, mx=9, mn="c", lv=None, lnn=None, fv="late", fnn="f1", la=" ", band=None,
             bor=None, col=None, mm=[("k1", 7), ("k2", 2)]),
        dict(id=1, s=10, p=None, mx=None, mn="z", lv="y", lnn="y", fv="later", fnn="f2", la="b", band=False,
             bor=True, col=[2], mm=None),
    ]
    got = run(t, rows, one_write=one_write)
    assert got == [dict(id=1, s=11, p=6.0, mx=9, mn="c", lv="y", lnn="y", fv=None, fnn="f1", la="a,b", band=False,
                        bor=True, col=[1, 2, 2], mm=[("k1", 7), ("k2", 2)])]


@both
def test_aggregation_retractions(catalog, one_write):
    schema = pa.schema([pa.field("id", pa.int64(), False), ("s", pa.int64()), ("lnn", pa.string()),
                        ("col", pa.list_(pa.string())), ("mm", pa.map_(pa.string(), pa.int32())),
                        ("mx", pa.int64())])
    t = make(catalog, schema, {"merge-engine": "aggregation", "fields.s.aggregate-function": "sum",
                               "fields.col.aggregate-function": "collect", "fields.mm.aggregate-function": "merge_map",
                               "fields.mx.aggregate-function": "max", "fields.mx.ignore-retract": "true"})
    rows = [dict(id=1, s=10, lnn="a", col=["x", "y", "x"], mm=[("k", 1), ("j", 2)], mx=5),
            dict(id=1, s=3, lnn="a", col=["x"], mm=[("k", 0)], mx=100),
            dict(id=2, s=4, lnn="b", col=None, mm=None, mx=1)]
    got = run(t, rows, ["+I", "-U", "+I"], one_write)
    assert got == [dict(id=1, s=7, lnn=None, col=["y", "x"], mm=[("j", 2)], mx=5),
                   dict(id=2, s=4, lnn="b", col=None, mm=None, mx=1)]


def test_aggregate_without_retraction_support_fails_clearly(catalog):
    t = make(catalog, pa.schema([pa.field("id", pa.int64(), False), ("mx", pa.int64())]),
             {"merge-engine": "aggregation", "fields.mx.aggregate-function": "max"})
    with pytest.raises(MergeError, match="'max' of field 'mx'.*ignore-retract"):
        run(t, [dict(id=1, mx=1), dict(id=1, mx=1)], ["+I", "-D"], one_write=True)


@both
def test_aggregation_remove_record_on_delete(catalog, one_write):
    t = make(catalog, pa.schema([pa.field("id", pa.int64(), False), ("s", pa.int64())]),
             {"merge-engine": "aggregation", "fields.s.aggregate-function": "sum",
              "aggregation.remove-record-on-delete": "true"})
    rows = [dict(id=1, s=5), dict(id=1, s=0), dict(id=1, s=2), dict(id=2, s=1), dict(id=2, s=0)]
    assert run(t, rows, ["+I", "-D", "+I", "+I", "-D"], one_write) == [dict(id=1, s=2)]


def test_listagg_delimiter_and_distinct(catalog):
    t = make(catalog, pa.schema([pa.field("id", pa.int64(), False), ("la", pa.string())]),
             {"merge-engine": "aggregation", "fields.la.aggregate-function": "listagg",
              "fields.la.list-agg-delimiter": ";", "fields.la.distinct": "true"})
    assert run(t, [dict(id=1, la="a;b"), dict(id=1, la="b;c"), dict(id=1, la="a")]) == [dict(id=1, la="a;b;c")]


@both
def test_first_row_keeps_the_first(catalog, one_write):
    t = make(catalog, pa.schema([pa.field("id", pa.int64(), False), ("v", pa.string())]), {"merge-engine": "first-row"})
    rows = [dict(id=1, v="first"), dict(id=2, v="x"), dict(id=1, v="second")]
    assert run(t, rows, one_write=one_write) == [dict(id=1, v="first"), dict(id=2, v="x")]


@pytest.mark.parametrize("options, match", [
    ({"merge-engine": "aggregation", "fields.v.aggregate-function": "nope"}, "unknown aggregate function 'nope'"),
    ({"merge-engine": "aggregation", "fields.v.aggregate-function": "sum"}, "'sum' does not accept field 'v'"),
    ({"merge-engine": "aggregation", "fields.v.aggregate-function": "hll_sketch"}, "not supported"),
    ({"merge-engine": "first-row", "sequence.field": "n"}, "sequence.field"),
    ({"merge-engine": "first-row", "changelog-producer": "input"}, "changelog-producer"),
    ({"merge-engine": "partial-update", "fields.n.sequence-group": "zz"}, "unknown column"),
    ({"merge-engine": "nope"}, "merge-engine"),
])
def test_options_an_engine_cannot_honour_fail_at_create(catalog, options, match):
    schema = pa.schema([pa.field("id", pa.int64(), False), ("v", pa.string()), ("n", pa.int64())])
    with pytest.raises((SchemaError, ValueError), match=match):
        make(catalog, schema, options)
    assert not catalog.table_exists("db.t")
