"""pypaimon reads the deletion vectors we write (append tables), and copy-on-write deletes."""

import pyarrow as pa
import pytest
from support import SCHEMA

from paimon_sql.format import predicate as P

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
