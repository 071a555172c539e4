"""Damaged files through SQL: Spark's own Parquet reader (splits needing no merge) and the paimon
source both fail naming the file instead of returning fewer rows; damaged file indexes are read past."""

import glob
import os

import pytest

from paimon_sql.exceptions import CorruptDataFileError
from paimon_sql.index import file_index_format

from spark.conftest import rows


def three_inserts(session, props=""):
    session.sql(f"CREATE TABLE t (id BIGINT, s STRING) {props}")
    for k in range(3):
        session.sql("INSERT INTO t VALUES " + ", ".join(f"({i}, 's{i}')" for i in range(k * 10, k * 10 + 10)))


def data_files(warehouse):
    return sorted((p for p in glob.glob(f"{warehouse}/default.db/t/bucket-*/data-*") if not p.endswith(".index")),
                  key=os.path.getmtime)


@pytest.mark.parametrize("how", ["zero", "cut", "missing"])
def test_damaged_data_file_fails_the_native_read(session, warehouse, how):
    three_inserts(session)
    path = data_files(warehouse)[0]
    if how == "missing":
        os.remove(path)
    else:
        data = open(path, "rb").read()
        open(path, "wb").write(b"" if how == "zero" else data[: len(data) // 2])
    with pytest.raises(CorruptDataFileError, match=os.path.basename(path)):
        rows(session, "SELECT count(*) FROM t")


def test_undecodable_file_fails_even_when_the_session_ignores_corrupt_files(session, spark, warehouse):
    three_inserts(session)
    path = data_files(warehouse)[0]
    data = open(path, "rb").read()
    open(path, "wb").write(data[:-7] + bytes([data[-7] ^ 0x7F]) + data[-6:])  # same size, footer length wrong
    spark.conf.set("spark.sql.files.ignoreCorruptFiles", "true")
    try:
        with pytest.raises(Exception, match=os.path.basename(path)):
            rows(session, "SELECT count(*) FROM t")
    finally:
        spark.conf.unset("spark.sql.files.ignoreCorruptFiles")


def _overlapping_files_one_emptied(session, warehouse, options: str = "") -> str:
    """A primary-key table of two overlapping files, the first emptied; its file name."""
    session.sql("CREATE TABLE t (id BIGINT, s STRING, PRIMARY KEY (id) NOT ENFORCED) "
                f"TBLPROPERTIES ('bucket' = '1'{options})")
    session.sql("INSERT INTO t VALUES " + ", ".join(f"({i}, 'a')" for i in range(10)))
    session.sql("INSERT INTO t VALUES " + ", ".join(f"({i}, 'b')" for i in range(5, 15)))
    path = data_files(warehouse)[0]
    open(path, "wb").close()
    return os.path.basename(path)


def test_damaged_file_fails_the_paimon_source(session, warehouse):
    """Overlapping primary-key files of a partial-update table are merged by the paimon source."""
    name = _overlapping_files_one_emptied(session, warehouse, ", 'merge-engine' = 'partial-update'")
    with pytest.raises(Exception, match=f"CorruptDataFileError.*{name}"):
        rows(session, "SELECT count(*) FROM t")


def test_damaged_file_fails_the_merge_planned_by_the_driver(session, warehouse):
    """Overlapping files of a deduplicate table: the driver reads their keys to find the rows the
    merge drops (read/merge_vectors.py), and a damaged one fails the query there, named."""
    name = _overlapping_files_one_emptied(session, warehouse)
    with pytest.raises(CorruptDataFileError, match=f"{name} has 0 bytes"):
        rows(session, "SELECT count(*) FROM t")


BLOOM = "TBLPROPERTIES ('file-index.bloom-filter.columns' = 's', 'file-index.bloom-filter.s.items' = '1000')"


@pytest.mark.parametrize("how", ["zeroed", "zeroed-bits"])
def test_zeroed_bloom_index_files_are_read_past(session, warehouse, how):
    three_inserts(session, BLOOM)
    for index in glob.glob(f"{warehouse}/default.db/t/bucket-0/*.index"):
        data = bytearray(open(index, "rb").read())
        if how == "zeroed":
            data = bytearray(len(data))
        else:  # keep the container and hash count, clear the bits: "no value is here"
            start, length = file_index_format.read_header(bytes(data), "x")["s"]["bloom-filter"]
            data[start + 4: start + length] = bytes(length - 4)
        open(index, "wb").write(bytes(data))
    assert rows(session, "SELECT id FROM t WHERE s = 's5'") == [(5,)]


def test_garbage_embedded_index_is_read_past(session, warehouse):
    three_inserts(session, BLOOM[:-1] + ", 'file-index.in-manifest-threshold' = '10000', "
                                        "'manifest.compression' = 'none')")
    magic = file_index_format.MAGIC.to_bytes(8, "big")
    for path in glob.glob(f"{warehouse}/default.db/t/manifest/manifest-*"):
        data = open(path, "rb").read()  # embedded indexes sit uncompressed in manifests: garble their heads
        open(path, "wb").write(data.replace(magic, b"\xee" * 8))
    assert rows(session, "SELECT id FROM t WHERE s = 's15'") == [(15,)]
