"""64-bit deletion vectors (``deletion-vectors.bitmap64``) against Java Apache Paimon 2.0, both ways: the
bytes of a vector are Java's, Java's vectors (an append table's DELETE, a primary-key table's upserts and
deletes) read as Java reads them, and Java reads the vectors our SQL DELETE and our compaction write.

Java Paimon 1.0 has neither the option nor the 64-bit vector: its DeletionVector.read knows one magic number
and fails on 1681511377, so a 1.0 reader cannot read a table written with the option, and the cases run
against 2.0 only, through tests/interop/java/Bitmap64Driver.java. pypaimon 2.1 cannot read them either (its
deletionvectors package has the 32-bit BitmapDeletionVector only and rejects any other magic number).
"""

from pathlib import Path

import pytest
from java_paimon import Driver, driver_command
from pyroaring import BitMap
from spark.conftest import rows, session, spark  # noqa: F401  (fixtures: one SparkSession per run)

from paimon_sql.index import deletion_vector as dv

pytestmark = pytest.mark.interop

SOURCE = Path(__file__).resolve().parent / "java" / "Bitmap64Driver.java"
BITMAP64 = {"deletion-vectors.bitmap64": "true"}
APPEND = {**BITMAP64, "bucket": "2", "bucket-key": "id"}
PK = {**BITMAP64, "bucket": "2"}


@pytest.fixture(scope="module")
def java():
    """``java(warehouse, commands)``: Bitmap64Driver's results on Java Paimon 2.0, one JVM per module."""
    with Driver(driver_command(SOURCE, version="2.0")) as driver:
        yield driver.on


def our_vectors(sess, table: str) -> list:
    """The latest snapshot's vectors as we read them: [[data file, positions], ...] by file name."""
    t = sess.catalog.get_table(table)
    snap = t.snapshot_manager.latest()
    found = dv.bucket_vectors(t, t.index_manifest_entries(snap.index_manifest))
    return sorted([name, list(v)] for vectors in found.values() for name, v in vectors.items())


def written_64(java_vectors: list) -> bool:
    return bool(java_vectors) and {v[2] for v in java_vectors} == {"Bitmap64DeletionVector"}


def test_our_vector_bytes_are_javas(java, warehouse):
    cases = [BitMap([5]), BitMap([0, 1, 2, 3, 70000, 2**31 - 1]), BitMap(range(100, 9000)),
             BitMap(range(0, 50000, 7)), BitMap(range(0, 3000, 2)) | BitMap(range(65536, 65600))]
    theirs = java(warehouse, [{"op": "vector", "positions": list(b)} for b in cases])
    assert [dv.serialize(b, bitmap64=True).hex() for b in cases] == theirs


def test_we_read_java_64_bit_vectors(java, session):
    session.sql("CREATE DATABASE IF NOT EXISTS db")
    results = java(session.warehouse, [
        {"op": "create", "table": "db.ja", "pk": False, "options": APPEND},
        {"op": "write", "table": "db.ja", "rows": [[i, f"a{i}", "+I"] for i in range(20)]},
        {"op": "write", "table": "db.ja", "rows": [[i, f"b{i}", "+I"] for i in range(20, 30)]},
        {"op": "delete", "table": "db.ja", "ids": [0, 3, 4, 21, 29]},
        {"op": "delete", "table": "db.ja", "ids": [10, 22]},
        {"op": "create", "table": "db.jp", "pk": True, "options": PK},
        {"op": "write", "table": "db.jp", "rows": [[i, "a", "+I"] for i in range(40)]},
        {"op": "write", "table": "db.jp", "rows": [[i, "b", "+I"] for i in range(0, 40, 3)]},
        {"op": "write", "table": "db.jp", "rows": [[5, "a", "-D"], [7, "c", "+I"], [50, "c", "+I"]]},
        {"op": "read", "table": "db.ja"}, {"op": "vectors", "table": "db.ja"},
        {"op": "read", "table": "db.jp"}, {"op": "vectors", "table": "db.jp"}])
    assert results[3:5] == [5, 2]
    append_rows, append_vectors, pk_rows, pk_vectors = results[9:]
    assert written_64(append_vectors) and written_64(pk_vectors)
    assert [r[0] for r in append_rows] == [i for i in range(30) if i not in (0, 3, 4, 10, 21, 22, 29)]
    assert len(pk_rows) == 40 and dict(pk_rows)[3] == "b" and dict(pk_rows)[7] == "c" and 5 not in dict(pk_rows)
    for table, java_rows, java_vectors in (("db.ja", append_rows, append_vectors), ("db.jp", pk_rows, pk_vectors)):
        assert our_vectors(session, table) == [v[:2] for v in java_vectors]
        assert [list(r) for r in rows(session, f"SELECT id, name FROM {table} ORDER BY id")] == java_rows
    assert rows(session, "SELECT record_count, deleted_record_count FROM db.`ja$partitions`") == [(30, 7)]
    # our writes on Java's tables read its 64-bit vectors and write 64-bit ones; compaction applies them
    session.sql("DELETE FROM db.ja WHERE id IN (1, 25)")
    session.sql("INSERT INTO db.jp VALUES (1, 'd'), (8, 'd'), (60, 'd')")
    check_java_reads_ours(java, session, "db.ja", [i for i in range(30) if i not in (0, 1, 3, 4, 10, 21, 22, 25, 29)])
    check_java_reads_ours(java, session, "db.jp", sorted(set(range(40)) - {5} | {50, 60}), vectors_left=False)
    session.sql("CALL sys.compact(table => 'db.ja')")
    ours = [list(r) for r in rows(session, "SELECT id, name FROM db.ja ORDER BY id")]
    now, vectors = java(session.warehouse, [{"op": "read", "table": "db.ja"}, {"op": "vectors", "table": "db.ja"}])
    assert now == ours and len(ours) == 21 and vectors == []  # the compacted file left no rows to delete


def check_java_reads_ours(java, sess, table: str, expected_ids: list, vectors_left: bool = True) -> None:
    """Java reads our rows of ``table``, and our vectors as Bitmap64DeletionVector with our positions.
    ``vectors_left``: False where our compaction may have rewritten every file that had deleted rows."""
    ours = [list(r) for r in rows(sess, f"SELECT id, name FROM {table} ORDER BY id")]
    theirs, vectors = java(sess.warehouse, [{"op": "read", "table": table}, {"op": "vectors", "table": table}])
    assert theirs == ours and [r[0] for r in ours] == expected_ids
    assert (written_64(vectors) or not vectors_left and not vectors) and \
        [v[:2] for v in vectors] == our_vectors(sess, table)


def test_java_reads_our_64_bit_vectors(java, session):
    session.sql("CREATE DATABASE IF NOT EXISTS db")
    session.sql("CREATE TABLE db.oa (id BIGINT, name STRING) TBLPROPERTIES ('deletion-vectors.enabled' = 'true', "
                "'deletion-vectors.bitmap64' = 'true')")
    session.sql("INSERT INTO db.oa SELECT id, concat('a', id) FROM range(0, 20)")
    session.sql("INSERT INTO db.oa SELECT id, concat('b', id) FROM range(20, 30)")
    session.sql("DELETE FROM db.oa WHERE id < 3 OR id = 25")
    session.sql("UPDATE db.oa SET name = 'u' WHERE id = 10")
    session.sql("CREATE TABLE db.op (id BIGINT NOT NULL, name STRING) TBLPROPERTIES ('primary-key' = 'id', "
                "'bucket' = '2', 'deletion-vectors.enabled' = 'true', 'deletion-vectors.bitmap64' = 'true')")
    session.sql("INSERT INTO db.op SELECT id, 'a' FROM range(0, 40)")
    session.sql("INSERT INTO db.op SELECT id, 'b' FROM range(0, 40, 4)")
    session.sql("DELETE FROM db.op WHERE id = 9")
    session.sql("CALL sys.compact(table => 'db.op')")
    session.sql("INSERT INTO db.op VALUES (2, 'c'), (70, 'c')")
    check_java_reads_ours(java, session, "db.oa", [i for i in range(3, 30) if i != 25])
    check_java_reads_ours(java, session, "db.op", sorted(set(range(40)) - {9} | {70}))
    assert rows(session, "SELECT name FROM db.oa WHERE id = 10") == [("u",)]
