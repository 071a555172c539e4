"""pypaimon reads the deletion vectors we write (append tables), and copy-on-write deletes."""

import pyarrow as pa
import pytest
from support import SCHEMA

from paimon_sql.data import predicate as P

pytestmark = pytest.mark.interop


@pytest.mark.parametrize("options", [{"deletion-vectors.enabled": "true"}, {}], ids=["dv", "cow"])
def test_pypaimon_reads_our_deletes(pypaimon, catalog, warehouse, options):
    t = catalog.create_table_from_arrow("db.dv", SCHEMA, partition_keys=["dt"], options=options)
    for dt in ("x", "y"):
        ids = list(range(20)) if dt == "x" else list(range(20, 30))
        t.write_arrow(pa.table({"id": ids, "name": [f"n{i}" for i in ids], "value": [i * 1.0 for i in ids],
                                "dt": [dt] * len(ids)}, schema=SCHEMA))
    t.delete_where(P.or_(P.less_than("id", 5), P.greater_than("id", 27)))
    t.delete_where(P.equal("id", 10))
    ours = sorted(r["id"] for r in t.to_arrow().to_pylist())
    assert ours == [i for i in range(5, 28) if i != 10]
    theirs = pypaimon(op="read", warehouse=warehouse, table="db.dv")
    assert sorted(r["id"] for r in theirs) == ours


def test_pypaimon_reads_our_merge_on_write_table(pypaimon, catalog, warehouse):
    schema = pa.schema([pa.field("id", pa.int64(), False), ("v", pa.string())])
    t = catalog.create_table_from_arrow("db.mow", schema, primary_keys=["id"],
                                        options={"bucket": "2", "deletion-vectors.enabled": "true"})
    t.write_arrow(pa.table({"id": list(range(50)), "v": ["a"] * 50}, schema=schema))
    t.write_arrow(pa.table({"id": list(range(0, 50, 5)), "v": ["b"] * 10}, schema=schema))
    t.write_arrow(pa.table({"id": [7, 100], "v": ["c", "c"]}, schema=schema))
    snap = t.snapshot_manager.latest()
    assert t.index_manifest_entries(snap.index_manifest)  # old rows deleted by vectors
    ours = sorted((r["id"], r["v"]) for r in t.to_arrow().to_pylist())
    assert len(ours) == 51 and dict(ours)[5] == "b" and dict(ours)[7] == "c"
    theirs = sorted((r["id"], r["v"]) for r in pypaimon(op="read", warehouse=warehouse, table="db.mow"))
    assert theirs == ours
