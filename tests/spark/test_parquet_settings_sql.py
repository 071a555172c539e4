"""Parquet written through SQL as Paimon writes it (issue 46): Spark's own Parquet writer (append
tables without buckets) at ``file.compression.zstd-level``, as Paimon sets parquet-mr's level
(parquet-mr's own default is 3); our writer tasks (primary-key tables) with a dictionary only
where it pays."""

import glob
import os

import pyarrow.parquet as pq

ROWS = "SELECT id, id * 0.37 AS e, CAST(id % 100 AS INT) AS c FROM range(50000)"


def _sizes(table) -> list:
    return [os.path.getsize(p) for p in glob.glob(os.path.join(table.path, "**", "data-*.parquet"), recursive=True)]


def test_spark_native_write_takes_the_zstd_level(session):
    """parquet-mr's level key gives the same bytes as Paimon's option; the default (1) others."""
    session.sql("CREATE DATABASE db")
    sizes = {}
    for name, option in {"default": "", "paimon": "'file.compression.zstd-level' = '19'",
                         "parquet-mr": "'parquet.compression.codec.zstd.level' = '19'"}.items():
        table = f"db.t_{name.replace('-', '_')}"
        session.sql(f"CREATE TABLE {table} (id BIGINT, e DOUBLE, c INT)" + (f" TBLPROPERTIES ({option})" if option else ""))
        session.sql(f"INSERT INTO {table} {ROWS}")
        sizes[name] = sorted(_sizes(session.catalog.get_table(table)))
    assert sizes["paimon"] == sizes["parquet-mr"] != sizes["default"]


def test_primary_key_insert_keeps_dictionaries_where_they_pay(session):
    session.sql("CREATE DATABASE db")
    session.sql("CREATE TABLE db.pk (id BIGINT, e DOUBLE, c INT) TBLPROPERTIES ('primary-key' = 'id', 'bucket' = '1')")
    session.sql(f"INSERT INTO db.pk {ROWS}")
    (path,) = glob.glob(os.path.join(session.catalog.get_table("db.pk").path, "**", "data-*.parquet"), recursive=True)
    meta = pq.ParquetFile(path).metadata
    dictionary = {meta.schema.column(i).path for i in range(meta.num_columns)
                  if meta.row_group(0).column(i).has_dictionary_page}
    assert dictionary == {"_VALUE_KIND", "c"}
    assert session.sql("SELECT count(*), sum(c) FROM db.pk").collect()[0] == (50000, 2475000)
