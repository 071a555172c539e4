"""Row tracking in SQL: ``_ROW_ID`` and ``_SEQUENCE_NUMBER`` as paimon-spark exposes them (hidden
from ``SELECT *``, readable by name, in WHERE and time travel), ``t$row_tracking``, ids kept through
compaction and DELETE by deletion vectors, and what a row-tracking table refuses."""

import pyarrow as pa
import pytest
from spark.conftest import rows, session, spark  # noqa: F401  (fixtures)


def test_row_ids_in_queries(session):
    session.sql("CREATE DATABASE db")
    session.sql("CREATE TABLE db.t (id BIGINT, name STRING, dt STRING) PARTITIONED BY (dt) "
                "TBLPROPERTIES ('row-tracking.enabled' = 'true', 'deletion-vectors.enabled' = 'true')")
    session.sql("INSERT INTO db.t VALUES (1, 'a', 'x'), (2, 'b', 'x')")
    session.sql("INSERT INTO db.t VALUES (3, 'c', 'y')")
    assert rows(session, "SELECT * FROM db.t ORDER BY id") == [(1, "a", "x"), (2, "b", "x"), (3, "c", "y")]
    assert rows(session, "SELECT id, _ROW_ID, _SEQUENCE_NUMBER FROM db.t ORDER BY id") == \
        [(1, 0, 1), (2, 1, 1), (3, 2, 2)]
    assert rows(session, "SELECT name FROM db.t WHERE _row_id = 1") == [("b",)]
    assert rows(session, "SELECT id, _ROW_ID FROM db.t VERSION AS OF 1 ORDER BY id") == [(1, 0), (2, 1)]
    assert rows(session, "SELECT id, _ROW_ID, _SEQUENCE_NUMBER FROM db.`t$row_tracking` ORDER BY id") == \
        [(1, 0, 1), (2, 1, 1), (3, 2, 2)]
    spans = sorted(rows(session, "SELECT first_row_id, record_count FROM db.`t$files`"))  # a file per Spark task
    assert [first for first, _ in spans] == [sum(n for _, n in spans[:i]) for i in range(len(spans))]

    session.sql("DELETE FROM db.t WHERE id = 1")  # by deletion vector: the others keep their ids
    session.sql("CALL sys.compact(table => 'db.t')")
    session.sql("INSERT INTO db.t VALUES (4, 'd', 'x')")
    assert rows(session, "SELECT id, _ROW_ID, _SEQUENCE_NUMBER FROM db.t ORDER BY id") == \
        [(2, 1, 1), (3, 2, 2), (4, 3, 5)]

    session.sql("UPDATE db.t SET name = 'z' WHERE id = 2")  # by vector, the row written anew with its id
    assert rows(session, "SELECT id, name, _ROW_ID, _SEQUENCE_NUMBER FROM db.t ORDER BY id") == \
        [(2, "z", 1, 6), (3, "c", 2, 2), (4, "d", 3, 5)]
    with pytest.raises(Exception, match="'row-tracking.enabled' cannot be changed"):
        session.sql("ALTER TABLE db.t SET TBLPROPERTIES ('row-tracking.enabled' = 'false')")


def test_tables_without_row_tracking(session):
    session.sql("CREATE DATABASE db")
    session.sql("CREATE TABLE db.p (id BIGINT, v STRING)")
    with pytest.raises(Exception, match="_ROW_ID"):
        session.sql("SELECT _ROW_ID FROM db.p").collect()
    with pytest.raises(Exception, match="does not support row tracking"):
        session.sql("SELECT * FROM db.`p$row_tracking`").collect()
    with pytest.raises(Exception, match="Cannot define primary-key for row tracking table"):
        session.sql("CREATE TABLE db.k (id BIGINT, v STRING) TBLPROPERTIES ('primary-key' = 'id', "
                    "'row-tracking.enabled' = 'true')")


def test_rows_keep_their_ids_through_copy_on_write_and_merge(session):
    session.sql("CREATE DATABASE db")
    session.sql("CREATE TABLE db.t (id BIGINT, name STRING, dt STRING) PARTITIONED BY (dt) "
                "TBLPROPERTIES ('row-tracking.enabled' = 'true')")
    session.catalog.get_table("db.t").write_arrow(pa.table({  # one file a partition: ids 0-2 in x, 3 in y
        "id": pa.array([1, 2, 3, 4], pa.int64()), "name": ["a", "b", "c", "d"], "dt": ["x", "x", "x", "y"]}))
    session.sql("DELETE FROM db.t WHERE id = 1")  # copy-on-write: ids 2 and 3 move to a new file, kept
    assert rows(session, "SELECT id, _ROW_ID, _SEQUENCE_NUMBER FROM db.t ORDER BY id") == \
        [(2, 1, 1), (3, 2, 1), (4, 3, 1)]
    session.sql("UPDATE db.t SET name = upper(name) WHERE id IN (2, 4)")
    assert rows(session, "SELECT id, name, dt, _ROW_ID, _SEQUENCE_NUMBER FROM db.t ORDER BY id") == \
        [(2, "B", "x", 1, 3), (3, "c", "x", 2, 1), (4, "D", "y", 3, 3)]  # a row only moved keeps its number
    session.sql("CREATE TEMPORARY VIEW src AS SELECT * FROM VALUES (3, 'C'), (9, 'i') AS s(id, name)")
    session.sql("MERGE INTO db.t t USING src s ON t.id = s.id WHEN MATCHED THEN UPDATE SET t.name = s.name "
                "WHEN NOT MATCHED THEN INSERT (id, name, dt) VALUES (s.id, s.name, 'y')")
    assert rows(session, "SELECT id, name, _ROW_ID, _SEQUENCE_NUMBER FROM db.t ORDER BY id") == \
        [(2, "B", 1, 3), (3, "C", 2, 4), (4, "D", 3, 3), (9, "i", 4, 4)]  # the new row numbered on
    files = rows(session, "SELECT first_row_id, write_cols FROM db.`t$files`")
    assert any(first is None and cols[-2:] == ["_ROW_ID", "_SEQUENCE_NUMBER"] for first, cols in files)
