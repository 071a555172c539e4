"""Deleted rows dropped inside Spark's native Parquet read by paimon-sql's JVM class (issue 46):
``paimon_deleted_row`` in the scan's stage instead of a broadcast anti-join, the same rows either
way; the jar committed is the one its Java sources build."""

import hashlib
import zipfile
from types import SimpleNamespace

import pytest
from pyroaring import BitMap

from paimon_sql.spark import jvm_classes, scan

ROWS = "SELECT id, CAST(id % 7 AS INT) AS c, CAST(id AS STRING) AS s FROM range(3000)"
QUERY = "SELECT count(*), sum(id), sum(c), count(DISTINCT s) FROM db.t"
KINDS = {  # deleted rows as merges the driver makes vectors of, or as deletion vectors
    "primary-key": "'primary-key' = 'id', 'bucket' = '2', 'write-only' = 'true'",
    "append-deletion-vectors": "'deletion-vectors.enabled' = 'true'",
}


def _plan(session, text: str) -> str:
    return session.sql(text)._jdf.queryExecution().executedPlan().toString()


def _setup(session, options: str) -> tuple:
    """The table after a DELETE and an UPDATE; the answer to QUERY, from Spark alone."""
    session.sql("CREATE DATABASE db")
    session.sql(f"CREATE TABLE db.t (id BIGINT, c INT, s STRING) TBLPROPERTIES ({options})")
    session.sql(f"INSERT INTO db.t {ROWS}")
    session.sql("DELETE FROM db.t WHERE c = 3")
    session.sql("UPDATE db.t SET s = 'new' WHERE id % 10 = 1")
    expected = session.spark.sql(f"SELECT count(*), sum(id), sum(c), count(DISTINCT IF(id % 10 = 1, 'new', s)) "
                                 f"FROM ({ROWS}) WHERE c <> 3").collect()[0]
    return tuple(expected)


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_deleted_rows_are_dropped_in_the_scan(session, kind):
    expected = _setup(session, KINDS[kind])
    plan = _plan(session, QUERY)
    assert "paimon_deleted_row" in plan and "LeftAnti" not in plan and "paimon[" not in plan, plan
    assert tuple(session.sql(QUERY).collect()[0]) == expected
    assert [tuple(r) for r in session.sql("SELECT id, s FROM db.t WHERE id IN (21, 23, 24) ORDER BY id").collect()] \
        == [(21, "new"), (23, "23")]  # 24 % 7 == 3: deleted


def test_without_the_class_an_anti_join_gives_the_same_rows(session):
    expected = _setup(session, KINDS["primary-key"])
    loaded = jvm_classes._deleted_row(session.spark)
    assert loaded is not None
    jvm_classes._loaded[session.spark][jvm_classes._DELETED_ROW] = None  # as when the jar cannot be loaded
    try:
        plan = _plan(session, QUERY)
        assert "LeftAnti" in plan and "paimon_deleted_row" not in plan, plan
        assert tuple(session.sql(QUERY).collect()[0]) == expected
    finally:
        jvm_classes._loaded[session.spark][jvm_classes._DELETED_ROW] = loaded


def test_files_of_one_size_are_read_apart(session):
    """The UDF knows a row's file by its size: two files of one size with deleted rows (the same
    rows inserted twice) are read by two reads, each with its own vectors."""
    session.sql("CREATE DATABASE db")
    session.sql("CREATE TABLE db.t (id BIGINT, c INT) TBLPROPERTIES ('deletion-vectors.enabled' = 'true')")
    for _ in range(2):
        session.sql("INSERT INTO db.t SELECT id, CAST(id % 7 AS INT) FROM range(500)")
    table = session.catalog.get_table("db.t")
    sizes = [f.file_size for s in table.new_scan().plan().splits for f in s.files]
    assert len(sizes) == 2 * len(set(sizes))  # each insert's files again, byte for byte
    session.sql("DELETE FROM db.t WHERE c = 3 OR id = 10")
    plan = _plan(session, "SELECT count(*), sum(id) FROM db.t")
    assert plan.count("Filter NOT paimon_deleted_row") == 2 and "LeftAnti" not in plan, plan
    kept = session.spark.sql("SELECT count(*), sum(id) FROM range(500) WHERE id % 7 <> 3 AND id <> 10").collect()[0]
    assert tuple(session.sql("SELECT count(*), sum(id) FROM db.t").collect()[0]) == (2 * kept[0], 2 * kept[1])


def test_files_without_deleted_rows_are_read_apart_when_many():
    """Past ``_JOINED_ROWS`` rows the files without deleted rows keep a read of their own (no row
    locations, no lookups for them); a file of a size a deleted file has never joins."""
    def meta(name, size, rows):
        return "/" + name, SimpleNamespace(file_name=name, file_size=size, row_count=rows)
    deleted, plain, twin = meta("d", 100, 10), meta("p", 200, 10), meta("t", 100, 10)
    marked = {"d": BitMap([1])}
    assert scan._parts([deleted, plain, twin], marked, [[deleted]], True) == [[twin], [deleted, plain]]
    big = meta("big", 300, scan._JOINED_ROWS + 1)
    assert scan._parts([deleted, big], marked, [[deleted]], True) == [[big], [deleted]]
    assert scan._parts([deleted, plain], marked, [[deleted]], False) == [[plain], [deleted]]  # an anti-join
    assert scan._parts([plain], {}, [], True) == [[plain]]


def test_one_read_never_holds_two_files_of_one_size():
    assert jvm_classes.without_deleted(None, None, None, None, [(100, BitMap([1])), (100, BitMap([2]))]) is None


def test_encoded_vectors_layout():
    blob = jvm_classes.encoded_vectors([(300, BitMap([5])), (200, BitMap([1, 2]))])
    first, second = BitMap([1, 2]).serialize(), BitMap([5]).serialize()
    assert blob[:4] == (2).to_bytes(4, "big")
    assert blob[4:16] == (200).to_bytes(8, "big") + len(first).to_bytes(4, "big")  # sorted by size
    assert blob[16:28] == (300).to_bytes(8, "big") + len(second).to_bytes(4, "big")
    assert blob[28:] == first + second


def test_the_committed_jar_is_built_from_the_sources():
    """scripts/build_jvm.sh records the sources' digest in the jar: a Java edit without a rebuild fails here."""
    with zipfile.ZipFile(jvm_classes.JAR) as jar:
        recorded = jar.read("META-INF/paimon-sql/sources.sha256").decode().strip()
        classes = {n for n in jar.namelist() if n.endswith(".class")}
    assert recorded == jvm_classes.sources_digest()
    assert "paimon_sql/spark/DeletedRow.class" in classes
    assert len(recorded) == len(hashlib.sha256().hexdigest())


def test_new_sessions_get_the_jar_beside_the_users():
    conf = jvm_classes.with_jar({"spark.jars": "/x/a.jar", "k": "v"})
    assert conf == {"spark.jars": f"/x/a.jar,{jvm_classes.JAR}", "k": "v"}
    assert jvm_classes.with_jar({})["spark.jars"] == str(jvm_classes.JAR)


def test_a_few_files_without_deleted_rows_join_the_read_of_deleted_ones(session):
    """One Parquet scan where it would be two: the files without deleted rows are read with those
    with some, save one whose size a file with deleted rows has (its rows would be taken for that
    file's). The rows are Spark's answer either way."""
    session.sql("CREATE DATABASE db")
    session.sql("CREATE TABLE db.t (id BIGINT, tag INT) TBLPROPERTIES ('deletion-vectors.enabled' = 'true')")
    for tag in (1, 2):  # files of one size: 500 rows each, a constant tag
        session.sql(f"INSERT INTO db.t SELECT id, {tag} FROM range(0, 500, 1, 1)")
    session.sql("INSERT INTO db.t SELECT id, 3 FROM range(1000, 1100, 1, 1)")  # a file of its own size
    table = session.catalog.get_table("db.t")
    sizes = sorted(f.file_size for s in table.new_scan().plan().splits for f in s.files)
    assert sizes[0] != sizes[1] == sizes[2], sizes  # the two 500-row files are byte for byte alike
    session.sql("DELETE FROM db.t WHERE tag = 1 AND id % 7 = 3")
    plan = _plan(session, "SELECT count(*), sum(id) FROM db.t")
    assert plan.count("FileScan parquet") == 2 and plan.count("Filter NOT paimon_deleted_row") == 1, plan
    located = [x for x in plan.splitlines() if "FileScan parquet" in x and "row_index" in x]
    assert len(located) == 1 and "InMemoryFileIndex(2 paths)" in located[0], plan  # the deleted file and tag 3's
    kept = session.spark.sql("SELECT count(*), sum(id) FROM range(500) WHERE id % 7 <> 3").collect()[0]
    whole = session.spark.sql("SELECT count(*), sum(id) FROM range(500)").collect()[0]
    extra = session.spark.sql("SELECT count(*), sum(id) FROM range(1000, 1100)").collect()[0]
    got = tuple(session.sql("SELECT count(*), sum(id) FROM db.t").collect()[0])
    assert got == (kept[0] + whole[0] + extra[0], kept[1] + whole[1] + extra[1])
    assert session.sql("SELECT count(*) FROM db.t WHERE tag = 2 AND id % 7 = 3").collect()[0][0] == 500 // 7
    session.sql("DELETE FROM db.t WHERE tag = 3 AND id = 1050")  # now every file has deleted rows or a twin
    assert tuple(session.sql("SELECT count(*) FROM db.t WHERE tag = 3").collect()[0]) == (99,)
