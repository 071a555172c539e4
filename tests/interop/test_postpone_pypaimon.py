"""Postpone bucket tables (``bucket = -2``) between pypaimon 2.1 and paimon-sql, both ways.

pypaimon writes one with its default batch write (into ``bucket-postpone``: invisible) and its
``new_postpone_fixed_bucket_write_builder`` (into real buckets: visible), deletes included; we read
every snapshot as pypaimon does (never failing on the postpone files), compact it, and both
read the same rows. We write one (fixed-bucket and postpone writes), pypaimon reads it, adds
postpone rows of its own, and our compaction assigns them too."""

import pytest
from spark.conftest import rows, session, spark  # noqa: F401  (fixtures: one SparkSession per run)

from paimon_sql.catalog import load_catalog

pytestmark = pytest.mark.interop

POSTPONE_ROWS_AFTER_COMPACTION = [(1, "a2", "x"), (3, "c", "y"), (4, "d", "x"), (5, "e", "z"), (6, "f", "y")]


def _sorted(rows):
    return sorted(rows, key=lambda r: (r["id"], r["dt"]))


def _ours(table, snapshot=None):
    return _sorted(table.new_scan().with_snapshot(snapshot).to_arrow().to_pylist())


def test_pypaimon_postpone_table_reads_as_pypaimon_then_compacts(pypaimon, warehouse):
    pypaimon(op="scenario", warehouse=warehouse, name="postpone")
    table = load_catalog(warehouse).get_table("db.postpone")
    for sid in pypaimon(op="snapshots", warehouse=warehouse, table="db.postpone"):
        expected = _sorted(pypaimon(op="read", warehouse=warehouse, table="db.postpone", snapshot=sid))
        assert _ours(table, sid) == expected, f"snapshot {sid}"
    assert [(r["id"], r["name"]) for r in _ours(table)] == [(4, "d"), (5, "e")]  # the fixed-bucket write only
    assert table.compact() is not None
    ours = _ours(load_catalog(warehouse).get_table("db.postpone"))
    assert [(r["id"], r["name"], r["dt"]) for r in ours] == POSTPONE_ROWS_AFTER_COMPACTION
    assert _sorted(pypaimon(op="read", warehouse=warehouse, table="db.postpone")) == ours
    files = pypaimon(op="files", warehouse=warehouse, table="db.postpone")
    assert min(b for b, _, _, _ in files) == 0  # the postpone files left in the COMPACT commit
    # partition x kept the count of its fixed-bucket files; y got the machine's parallelism, as on Spark
    assert {t for _, t, _, name in files if name in {f.file_name for f in _files(table, "x")}} == {1}


def _files(table, dt):
    from paimon_sql.data import binary_row
    types = [f.type for f in table.schema.fields_of(["dt"])]
    table = load_catalog(table.path.rsplit("/db.db/", 1)[0]).get_table("db.postpone")
    return [e.file for e in table.new_scan().plan_entries() if binary_row.from_bytes(e.partition, types) == [dt]]


def test_pypaimon_reads_our_postpone_table_and_we_compact_its_rows(pypaimon, warehouse):
    catalog = load_catalog(warehouse)
    catalog.create_database("db", ignore_if_exists=True)
    import pyarrow as pa
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), ("name", pa.string()),
                        pa.field("dt", pa.string(), nullable=False)])
    t = catalog.create_table_from_arrow("db.ours", schema, primary_keys=["id", "dt"], partition_keys=["dt"],
                                        options={"bucket": "-2", "postpone.target-row-num-per-bucket": "4"})
    t.write_arrow(pa.table({"id": list(range(10)), "name": [f"n{i}" for i in range(10)], "dt": ["a"] * 10},
                           schema=schema))
    t.copy({"postpone.batch-write-fixed-bucket": "false"}).write_arrow(
        pa.table({"id": [1, 20], "name": ["late", "p20"], "dt": ["a", "b"]}, schema=schema))
    read = lambda: _sorted(pypaimon(op="read", warehouse=warehouse, table="db.ours"))  # noqa: E731
    assert read() == _ours(catalog.get_table("db.ours"))
    assert len(read()) == 10 and {r["name"] for r in read() if r["id"] == 1} == {"n1"}
    files = pypaimon(op="files", warehouse=warehouse, table="db.ours")
    assert sorted({(b, n) for b, n, _, _ in files}) == [(-2, -2), (0, 3), (1, 3), (2, 3)]
    pypaimon(op="append", warehouse=warehouse, table="db.ours", rows=[{"id": 21, "name": "p21", "dt": "b"}])
    assert catalog.get_table("db.ours").compact() is not None
    rows = read()
    assert rows == _ours(catalog.get_table("db.ours"))
    assert len(rows) == 12 and {r["name"] for r in rows if r["id"] == 1} == {"late"}
    # partition b had no real buckets: 2 postpone rows / 4 per bucket → 1 bucket
    files = pypaimon(op="files", warehouse=warehouse, table="db.ours")
    assert sorted({(b, n) for b, n, _, _ in files}) == [(0, 1), (0, 3), (1, 3), (2, 3)]
    pypaimon(op="append", warehouse=warehouse, table="db.ours", rows=[{"id": 22, "name": "p22", "dt": "b"}],
             fixed=True)
    assert read() == _ours(catalog.get_table("db.ours")) and len(read()) == 13


def test_sql_select_on_a_pypaimon_postpone_table(pypaimon, warehouse, session):  # noqa: F811
    """The issue's case: SELECT in Spark's Python workers on pypaimon's postpone table gives
    pypaimon's answer (no false 'data file .../bucket--2/... is missing'), then CALL sys.compact."""
    pypaimon(op="scenario", warehouse=warehouse, name="postpone")
    select = "SELECT id, name, dt FROM db.postpone ORDER BY id, dt"
    expected = [(r["id"], r["name"], r["dt"]) for r in
                _sorted(pypaimon(op="read", warehouse=warehouse, table="db.postpone"))]
    assert rows(session, select) == expected == [(4, "d", "x"), (5, "e", "z")]
    assert -2 in {b for (b,) in rows(session, "SELECT bucket FROM db.`postpone$buckets`")}
    session.sql("CALL sys.compact(table => 'db.postpone')")
    assert rows(session, select) == POSTPONE_ROWS_AFTER_COMPACTION
    assert [(r["id"], r["name"], r["dt"]) for r in
            _sorted(pypaimon(op="read", warehouse=warehouse, table="db.postpone"))] == POSTPONE_ROWS_AFTER_COMPACTION
