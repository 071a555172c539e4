"""The bucket of a key equals Paimon's: int, bigint, string and composite keys."""

import json

import pytest

from paimon_sql.catalog import load_catalog
from paimon_sql.format import binary_row

pytestmark = pytest.mark.interop


@pytest.mark.parametrize("table", ["int_key", "bigint_key", "string_key", "composite_key"])
def test_bucket_equals_paimon(pypaimon, warehouse, table):
    pypaimon(op="scenario", warehouse=warehouse, name="bucket_keys")
    theirs = pypaimon(op="bucket_of", warehouse=warehouse, table=f"db.{table}")
    t = load_catalog(warehouse).get_table(f"db.{table}")
    keys = t.schema.bucket_keys
    data = t.new_scan().to_arrow()
    ours = binary_row.bucket_of(binary_row.hash_rows([data.column(k) for k in keys],
                                                     [f.type for f in t.schema.fields_of(keys)]),
                                t.options.bucket)
    assert len(theirs) == data.num_rows == 100
    for row, bucket in zip(data.select(keys).to_pylist(), ours):
        assert theirs[json.dumps([row[k] for k in keys])] == bucket
    # and the files we plan sit in the bucket the hash names
    assert len({b for b in theirs.values()}) > 1
