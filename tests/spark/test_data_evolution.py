"""Data evolution in SQL (``data-evolution.enabled``): UPDATE writes only the assigned columns, as
files beside the rows they update; reads merge each row's columns from the newest file holding them;
rows keep their ``_ROW_ID``; DELETE needs deletion vectors; compaction folds the files of a row id
group into one."""

import glob

import pyarrow as pa
import pytest
from spark.conftest import rows, session, spark  # noqa: F401  (fixtures)

from paimon_sql.exceptions import CommitConflictError, PaimonError
from paimon_sql.read.split_read import FILE_COLUMN, POSITION_COLUMN
from paimon_sql.write.data_evolution_write import update_columns

DE = "'row-tracking.enabled' = 'true', 'data-evolution.enabled' = 'true'"


def _files(session, table):
    return sorted(rows(session, f"SELECT first_row_id, record_count, write_cols FROM db.`{table}$files`"),
                  key=lambda r: (r[0], r[2] is not None))


def test_update_writes_only_the_assigned_columns(session):
    session.sql("CREATE DATABASE db")
    session.sql(f"CREATE TABLE db.t (id BIGINT, name STRING, score DOUBLE, dt STRING) PARTITIONED BY (dt) "
                f"TBLPROPERTIES ({DE})")
    session.sql("INSERT INTO db.t VALUES (1, 'a', 1.0, 'x'), (2, 'b', 2.0, 'x'), (3, 'c', 3.0, 'x')")
    session.sql("INSERT INTO db.t VALUES (4, 'd', 4.0, 'y')")
    before = _files(session, "t")
    session.sql("UPDATE db.t SET name = upper(name), score = score * 10 WHERE id IN (2, 4)")
    assert rows(session, "SELECT id, name, score, dt, _ROW_ID FROM db.t ORDER BY id") == \
        [(1, "a", 1.0, "x", 0), (2, "B", 20.0, "x", 1), (3, "c", 3.0, "x", 2), (4, "D", 40.0, "y", 3)]
    after = _files(session, "t")
    new = [f for f in after if f not in before]
    # one partial file per touched group, over the whole group's rows, only the assigned columns
    touched = [(first, n) for first, n, _ in before if first <= 1 < first + n or first <= 3 < first + n]
    assert sorted(new) == sorted((first, n, ["name", "score"]) for first, n in touched)
    assert all(f in after for f in before)  # nothing rewritten
    session.sql("UPDATE db.t SET score = -1 WHERE id = 1")
    assert rows(session, "SELECT id, name, score FROM db.t ORDER BY id") == \
        [(1, "a", -1.0), (2, "B", 20.0), (3, "c", 3.0), (4, "D", 40.0)]
    assert rows(session, "SELECT id, name FROM db.t VERSION AS OF 2 ORDER BY id") == \
        [(1, "a"), (2, "b"), (3, "c"), (4, "d")]
    # the newest file of the row's group among those the read opens (Java prunes a group's files to
    # those holding a column it reads): the last write of a column the query reads
    seq = {r[0]: r[-1] for r in rows(session, "SELECT id, score, _SEQUENCE_NUMBER FROM db.t")}
    shared = any(first <= 0 and 1 < first + n for first, n, _ in before)  # ids 1 and 2 in one group
    assert (seq[1], seq[2], seq[4]) == (4, 4 if shared else 3, 3)
    seq = dict(rows(session, "SELECT id, _SEQUENCE_NUMBER FROM db.t"))  # only the inserts' files hold id
    assert (seq[1], seq[2], seq[4]) == (1, 1, 2)
    assert rows(session, "SELECT count(*) FROM db.t WHERE name = 'B' AND score > 10") == [(1,)]
    assert rows(session, "SELECT id FROM db.t /*+ OPTIONS('incremental-between' = '1,2') */") == [(4,)]
    with pytest.raises(PaimonError, match="updated columns of existing rows"):
        rows(session, "SELECT id FROM db.t /*+ OPTIONS('incremental-between' = '2,3') */")


def test_refusals(session):
    session.sql("CREATE DATABASE db")
    session.sql(f"CREATE TABLE db.t (id BIGINT, name STRING, dt STRING) PARTITIONED BY (dt) TBLPROPERTIES ({DE})")
    session.sql("INSERT INTO db.t VALUES (1, 'a', 'x')")
    with pytest.raises(PaimonError, match="Update to partition columns is not supported for data evolution"):
        session.sql("UPDATE db.t SET dt = 'y' WHERE id = 1")
    with pytest.raises(PaimonError, match="DeletionVector enabled"):
        session.sql("DELETE FROM db.t WHERE id = 1")
    with pytest.raises(Exception, match="Data evolution config must enabled with row-tracking.enabled"):
        session.sql("CREATE TABLE db.u (id BIGINT) TBLPROPERTIES ('data-evolution.enabled' = 'true')")
    with pytest.raises(Exception, match="'data-evolution.enabled' cannot be changed"):
        session.sql("ALTER TABLE db.t SET TBLPROPERTIES ('data-evolution.enabled' = 'false')")
    assert rows(session, "SELECT id, name, dt FROM db.t") == [(1, "a", "x")]


def test_delete_by_vectors_then_update(session):
    session.sql("CREATE DATABASE db")
    session.sql(f"CREATE TABLE db.t (id BIGINT, name STRING) TBLPROPERTIES ({DE}, 'deletion-vectors.enabled' = "
                "'true')")
    session.sql("INSERT INTO db.t VALUES (1, 'a'), (2, 'b'), (3, 'c')")
    session.sql("DELETE FROM db.t WHERE id = 2")
    session.sql("UPDATE db.t SET name = 'z' WHERE id = 3")
    assert rows(session, "SELECT id, name, _ROW_ID FROM db.t ORDER BY id") == [(1, "a", 0), (3, "z", 2)]
    session.sql("DELETE FROM db.t WHERE name = 'z'")  # the vector belongs to the group's oldest file
    assert rows(session, "SELECT id, name FROM db.t") == [(1, "a")]


def test_merge_into_and_compaction(session):
    session.sql("CREATE DATABASE db")
    session.sql(f"CREATE TABLE db.t (id BIGINT, name STRING, score DOUBLE) TBLPROPERTIES ({DE}, "
                "'deletion-vectors.enabled' = 'true')")
    session.sql("INSERT INTO db.t VALUES (1, 'a', 1.0), (2, 'b', 2.0), (3, 'c', 3.0), (4, 'd', 4.0)")
    session.sql("CREATE TEMPORARY VIEW src AS SELECT * FROM VALUES (2, 'B'), (3, NULL), (9, 'i') AS s(id, name)")
    session.sql("MERGE INTO db.t t USING src s ON t.id = s.id "
                "WHEN MATCHED AND s.name IS NULL THEN DELETE "
                "WHEN MATCHED THEN UPDATE SET t.name = s.name "
                "WHEN NOT MATCHED THEN INSERT (id, name, score) VALUES (s.id, s.name, 0.0)")
    expected = [(1, "a", 1.0, 0), (2, "B", 2.0, 1), (4, "d", 4.0, 3), (9, "i", 0.0, 4)]
    assert rows(session, "SELECT id, name, score, _ROW_ID FROM db.t ORDER BY id") == expected
    assert any(w == ["name"] for _, _, w in _files(session, "t"))  # the update wrote its column only
    session.sql("CALL sys.compact(table => 'db.t')")
    assert rows(session, "SELECT id, name, score, _ROW_ID FROM db.t ORDER BY id") == expected
    files = _files(session, "t")
    assert all(w is None for _, _, w in files)  # each group folded into one file of every column
    spans = sorted((first, n) for first, n, _ in files)
    assert [first for first, _ in spans] == [sum(n for _, n in spans[:i]) for i in range(len(spans))]
    session.sql("UPDATE db.t SET score = 7 WHERE id = 4")  # the moved vector still hides row 2 (id 3)
    assert rows(session, "SELECT id, score FROM db.t ORDER BY id") == [(1, 1.0), (2, 2.0), (4, 7.0), (9, 0.0)]


def test_materialize_deletion_vectors(session):
    session.sql("CREATE DATABASE db")
    session.sql(f"CREATE TABLE db.t (id BIGINT, name STRING, dt STRING) PARTITIONED BY (dt) TBLPROPERTIES ({DE}, "
                "'deletion-vectors.enabled' = 'true')")
    session.catalog.get_table("db.t").write_arrow(pa.table({  # one file a partition: ids 0, 1 in x, 2 in y
        "id": pa.array([1, 2, 3], pa.int64()), "name": ["a", "b", "c"], "dt": ["x", "x", "y"]}))
    session.sql("UPDATE db.t SET name = 'B' WHERE id = 2")
    session.sql("DELETE FROM db.t WHERE id = 1")
    session.sql("CALL sys.materialize_deletion_vectors(table => 'db.t', partitions => 'dt=y')")  # nothing there
    assert rows(session, "SELECT count(*) FROM db.`t$snapshots`") == [(3,)]
    assert rows(session, "CALL sys.materialize_deletion_vectors(table => 'db.t')") == [(True,)]
    assert rows(session, "SELECT commit_kind FROM db.`t$snapshots` ORDER BY snapshot_id DESC LIMIT 1") == \
        [("COMPACT",)]
    now = rows(session, "SELECT id, name, dt, _ROW_ID FROM db.t ORDER BY id")
    assert [r[:3] for r in now] == [(2, "B", "x"), (3, "c", "y")]
    assert [r[3] for r in now if r[0] == 2][0] >= 3  # the rewritten row got a new id, after the table's ids
    assert rows(session, "SELECT count(*) FROM db.`t$table_indexes`") == [(0,)]  # the vector is gone


def test_concurrent_updates_of_a_group_conflict(session):
    session.sql("CREATE DATABASE db")
    session.sql(f"CREATE TABLE db.t (id BIGINT, name STRING) TBLPROPERTIES ({DE})")
    t = session.catalog.get_table("db.t")
    t.write_arrow(pa.table({"id": pa.array([1, 2, 3], pa.int64()), "name": ["a", "b", "c"]}))
    scan = t.new_scan()
    located = scan.reader().read_positions(scan.plan().splits[0]).select(["name", POSITION_COLUMN, FILE_COLUMN])
    base = t.snapshot_manager.latest().id
    first = update_columns(t, located.set_column(0, "name", pa.array(["x", "y", "z"])), ["name"], base)
    second = update_columns(t, located.set_column(0, "name", pa.array(["p", "q", "r"])), ["name"], base)
    t.new_commit().commit_or_abort(first)
    with pytest.raises(CommitConflictError, match="multiple 'MERGE INTO' operations have encountered conflicts"):
        t.new_commit().commit_or_abort(second)
    assert rows(session, "SELECT id, name FROM db.t ORDER BY id") == [(1, "x"), (2, "y"), (3, "z")]
    partial_file = second[0].new_files[0].file_name
    assert not any(partial_file in p for (p,) in rows(session, "SELECT file_path FROM db.`t$files`"))
    assert not glob.glob(f"{session.warehouse}/**/{partial_file}", recursive=True)  # the loser's file is deleted
