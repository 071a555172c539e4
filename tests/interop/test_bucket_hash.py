"""The bucket of a key equals Paimon's: int, bigint, string and composite keys (against pypaimon), and
DECIMAL(38) keys (against Java Paimon 1.0 and 2.0). A point query on such a table plans the one
bucket its key hashes to and finds the key's row there (:mod:`paimon_sql.read.bucket_select`)."""

import json
from pathlib import Path

import pytest
from java_paimon import java, ok, paimon_version  # noqa: F401  (fixtures: a JVM per Java version)

from paimon_sql.catalog import load_catalog
from paimon_sql.data import binary_row
from paimon_sql.data import predicate as P
from paimon_sql.data.types import parse_type

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
    for row, bucket in zip(data.to_pylist()[::9], ours[::9]):
        assert point_query(t, {k: row[k] for k in keys}) == (int(bucket), [row])


def point_query(table, key: dict):
    """(the one bucket planned, the rows read) of a point query on ``key``."""
    scan = table.new_scan().filter(P.and_(*(P.equal(k, v) for k, v in key.items())))
    buckets = {s.bucket for s in scan.plan().splits}
    assert len(buckets) == 1
    return buckets.pop(), scan.to_arrow().to_pylist()


DECIMAL_KEYS = ["0", "1", "-1", "-0.128", "0.128", "-0.129", "-32.768", "32.767", "1234567890123456789.012",
                "-99999999999999999999999999999999999.999", "99999999999999999999999999999999999.999",
                "-9223372036854775.808", "12.34"]


def test_decimal_38_key_buckets_equal_java(warehouse, java):
    """DECIMAL(38, 3) primary key (non-compact in BinaryRow): Java writes, each of its files sits in
    the bucket our hash names; we then update every key, and Java reads one row per key — ours."""
    import decimal

    import pyarrow as pa
    import pyarrow.parquet as pq
    table = {"warehouse": warehouse, "table": "db.dec"}
    ok(java.run([dict(op="create", fields=[["id", "DECIMAL(38, 3) NOT NULL"], ["v", "INT"]], primary_keys=["id"],
                      options={"bucket": "5"}, **table),
                 dict(op="write", rows=[[k, 1] for k in DECIMAL_KEYS], **table)])[1])
    key_type = [parse_type("DECIMAL(38, 3)")]
    t = load_catalog(warehouse).get_table("db.dec")
    for k in DECIMAL_KEYS:  # Java's file of each key sits in the one bucket planned (the literal of its own scale)
        assert point_query(t, {"id": decimal.Decimal(k)})[1] == [{"id": decimal.Decimal(k), "v": 1}]
    buckets = set()
    for path in (Path(warehouse) / "db.db" / "dec").glob("bucket-*/*.parquet"):
        keys = pq.read_table(path, columns=["_KEY_id"]).column(0).cast(pa.decimal128(38, 3))
        ours = binary_row.bucket_of(binary_row.hash_rows([keys], key_type), 5)
        assert set(ours.tolist()) == {int(path.parent.name.split("-")[1])}
        buckets |= set(ours.tolist())
    assert len(buckets) > 1
    t = load_catalog(warehouse).get_table("db.dec")
    t.write_arrow(pa.table({"id": pa.array([decimal.Decimal(k) for k in DECIMAL_KEYS], pa.decimal128(38, 3)),
                            "v": pa.array([2] * len(DECIMAL_KEYS), pa.int32())}))
    rows = ok(java.run([dict(op="read", **table)])[0])
    assert sorted((decimal.Decimal(k), v) for k, v in rows) == sorted((decimal.Decimal(k), 2) for k in DECIMAL_KEYS)
