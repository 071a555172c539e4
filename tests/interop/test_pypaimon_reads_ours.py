"""Tables written here read identically in pypaimon; pypaimon can append to them and we read that."""

import pyarrow as pa
import pytest
from support import SCHEMA

pytestmark = pytest.mark.interop


def _sorted(rows):
    return sorted(rows, key=lambda r: (r["id"], r["dt"]))


def _batch(ids, names, values, dts):
    return pa.table({"id": ids, "name": names, "value": values, "dt": dts}, schema=SCHEMA)


@pytest.mark.parametrize("options", [{}, {"bucket": "3", "bucket-key": "id"}])
def test_append_partitioned(pypaimon, catalog, warehouse, options):
    t = catalog.create_table_from_arrow("db.ap", SCHEMA, partition_keys=["dt"], options=options)
    t.write_arrow(_batch([1, 2, 3], ["a", None, "a-rather-long-string"], [1.0, 2.0, None], ["x", "x", "y"]))
    t.write_arrow(_batch([4], ["d"], [4.0], ["z"]))
    for sid in (1, 2):
        ours = t.new_scan().with_snapshot(sid).to_arrow().to_pylist()
        assert _sorted(pypaimon(op="read", warehouse=warehouse, table="db.ap", snapshot=sid)) == _sorted(ours)


@pytest.mark.parametrize("options", [{"bucket": "3"}, {"bucket": "-1"}, {"bucket": "2", "file.format": "orc"}])
def test_primary_key_several_commits(pypaimon, catalog, warehouse, options):
    t = catalog.create_table_from_arrow("db.pk", SCHEMA, partition_keys=["dt"], primary_keys=["id", "dt"],
                                        options=options)
    t.write_arrow(_batch(list(range(20)), [f"n{i}" for i in range(20)], [float(i) for i in range(20)],
                         ["x" if i % 2 else "y" for i in range(20)]))
    t.write_arrow(_batch([1, 2, 3, 1], ["u1", "u2", "u3", "u1b"], [10.0, 20.0, 30.0, 11.0], ["x", "y", "x", "x"]))
    t.write_arrow(_batch([100], ["new"], [100.0], ["z"]))
    for sid in (1, 2, 3):
        ours = _sorted(t.new_scan().with_snapshot(sid).to_arrow().to_pylist())
        assert _sorted(pypaimon(op="read", warehouse=warehouse, table="db.pk", snapshot=sid)) == ours
    latest = {(r["id"], r["dt"]): r["name"] for r in t.new_scan().to_arrow().to_pylist()}
    assert latest[(1, "x")] == "u1b" and latest[(2, "y")] == "u2" and latest[(3, "x")] == "u3"
    assert len(latest) == 21


def test_pypaimon_appends_to_our_table(pypaimon, catalog, warehouse):
    t = catalog.create_table_from_arrow("db.pk", SCHEMA, primary_keys=["id"], options={"bucket": "2"})
    t.write_arrow(_batch([1, 2], ["a", "b"], [1.0, 2.0], ["d", "d"]))
    pypaimon(op="append", warehouse=warehouse, table="db.pk",
             rows=[{"id": 2, "name": "B", "value": 2.5, "dt": "d"}, {"id": 3, "name": "c", "value": 3.0, "dt": "d"}])
    t.write_arrow(_batch([3], ["C"], [3.5], ["d"]))
    rows = _sorted(catalog.get_table("db.pk").new_scan().to_arrow().to_pylist())
    assert [(r["id"], r["name"]) for r in rows] == [(1, "a"), (2, "B"), (3, "C")]
    assert _sorted(pypaimon(op="read", warehouse=warehouse, table="db.pk")) == rows


def test_tables_with_file_indexes(pypaimon, catalog, warehouse):
    """Embedded indexes, .index files and Parquet bloom filters leave the table readable by pypaimon;
    files pypaimon adds carry no index and are never skipped by ours."""
    from paimon_sql.data import predicate as P
    options = {"file-index.bloom-filter.columns": "name", "file-index.bitmap.columns": "dt",
               "file-index.bsi.columns": "id", "parquet.bloom.filter.enabled#name": "true"}
    t = catalog.create_table_from_arrow("db.fi", SCHEMA, options=options)
    t.write_arrow(_batch(list(range(300)), [f"n{i}" for i in range(300)], [float(i) for i in range(300)],
                         ["x" if i % 3 else "y" for i in range(300)]))
    t.write_arrow(_batch([1000], ["tiny"], [1.0], ["z"]))
    files = [e.file for e in t.new_scan().plan_entries()]
    assert all(f.extra_files for f in files)  # a 1M-item bloom filter is far above the 500 B threshold
    ours = _sorted(t.to_arrow().to_pylist())
    assert _sorted(pypaimon(op="read", warehouse=warehouse, table="db.fi")) == ours
    pypaimon(op="append", warehouse=warehouse, table="db.fi",
             rows=[{"id": 2000, "name": "from-pypaimon", "value": 1.0, "dt": "q"}])
    t = catalog.get_table("db.fi")
    assert t.new_scan().filter(P.equal("name", "from-pypaimon")).to_arrow().column("id").to_pylist() == [2000]
    assert t.new_scan().filter(P.equal("dt", "q")).to_arrow().column("id").to_pylist() == [2000]


def test_pypaimon_reads_our_evolved_table_and_tags(pypaimon, catalog, warehouse):
    """Schema changes committed here (add / rename / drop / widen) and tags created here read in pypaimon."""
    from paimon_sql.data.types import parse_type
    from paimon_sql.schema import schema_change as sc
    t = catalog.create_table_from_arrow("db.ev", SCHEMA, primary_keys=["id"], options={"bucket": "1"})
    t.write_arrow(_batch([1, 2], ["a", "b"], [1.0, 2.0], ["d", "d"]))
    t.tag_manager.create("before", t.snapshot_manager.latest())
    t.schema_manager.commit_changes([sc.AddColumn("extra", parse_type("INT")), sc.RenameColumn("name", "label"),
                                     sc.DropColumn("value"), sc.UpdateColumnPosition("extra", "AFTER id")])
    t = catalog.get_table("db.ev")
    t.write_arrow(pa.table({"id": [2, 3], "extra": [20, 30], "label": ["B", "c"], "dt": ["d", "d"]},
                           schema=t.schema.arrow_schema()))
    from paimon_sql.table.statistics import write_statistics
    write_statistics(t, 3, 1000, {"id": {"colId": 0, "distinctCount": 3, "min": "1", "max": "3", "nullCount": 0}})
    assert t.snapshot_manager.latest().commit_kind == "ANALYZE"  # pypaimon reads past an ANALYZE snapshot
    theirs = sorted(pypaimon(op="read", warehouse=warehouse, table="db.ev"), key=lambda r: r["id"])
    assert theirs == sorted(t.new_scan().to_arrow().to_pylist(), key=lambda r: r["id"])
    assert [(r["id"], r["extra"], r["label"]) for r in theirs] == [(1, None, "a"), (2, 20, "B"), (3, 30, "c")]
    tagged = sorted(pypaimon(op="read", warehouse=warehouse, table="db.ev", tag="before"), key=lambda r: r["id"])
    assert [(r["id"], r["name"]) for r in tagged] == [(1, "a"), (2, "b")]
