"""Cross-partition upsert through SQL: INSERT (the Spark write planner), DELETE, UPDATE and MERGE
INTO, the DataFrame API, Paimon's refusals at CREATE and ALTER, and pypaimon reading the result."""

import pytest

from paimon_sql.exceptions import PaimonError
from spark.conftest import rows

CREATE = ("CREATE TABLE db.t (id BIGINT, v BIGINT, s STRING, dt STRING, PRIMARY KEY (id) NOT ENFORCED) "
          "PARTITIONED BY (dt)")


@pytest.fixture
def db(session):
    session.sql("CREATE DATABASE db")
    return session


def all_rows(session):
    return rows(session, "SELECT id, v, s, dt FROM db.t ORDER BY id")


def test_insert_moves_a_key_between_partitions(db):
    db.sql(CREATE)
    db.sql("INSERT INTO db.t VALUES (1, 1, 'a', 'x'), (2, 2, 'b', 'x'), (3, 3, 'c', 'y')")
    db.sql("INSERT INTO db.t VALUES (1, 10, 'a2', 'y'), (3, 30, 'c2', 'z')")
    assert all_rows(db) == [(1, 10, "a2", "y"), (2, 2, "b", "x"), (3, 30, "c2", "z")]
    assert rows(db, "SELECT count(*) FROM db.t WHERE dt = 'x'") == [(1,)]
    db.sql("INSERT INTO db.t VALUES (1, 100, 'a3', 'x')")  # and back again
    assert all_rows(db) == [(1, 100, "a3", "x"), (2, 2, "b", "x"), (3, 30, "c2", "z")]


def test_several_rows_of_one_key_in_one_insert(db):
    """Spark's INSERT has no row order; one key given twice in one partition and once elsewhere
    still leaves exactly one row of it."""
    db.sql(CREATE)
    db.sql("INSERT INTO db.t VALUES (1, 1, 'a', 'w')")
    db.sql("INSERT INTO db.t SELECT id, v, s, dt FROM VALUES (1, 2, 'b', 'x'), (2, 1, 'c', 'y'), (2, 2, 'd', 'y') "
           "AS src(id, v, s, dt)")
    got = all_rows(db)
    assert [(r[0], r[3]) for r in got] == [(1, "x"), (2, "y")]


def test_each_merge_engine_through_sql(db):
    db.sql("CREATE TABLE db.p (id BIGINT, v BIGINT, s STRING, dt STRING, PRIMARY KEY (id) NOT ENFORCED) "
           "PARTITIONED BY (dt) TBLPROPERTIES ('merge-engine' = 'partial-update')")
    db.sql("CREATE TABLE db.a (id BIGINT, v BIGINT, s STRING, dt STRING, PRIMARY KEY (id) NOT ENFORCED) "
           "PARTITIONED BY (dt) TBLPROPERTIES ('merge-engine' = 'aggregation', 'fields.v.aggregate-function' = 'sum')")
    db.sql("CREATE TABLE db.f (id BIGINT, v BIGINT, s STRING, dt STRING, PRIMARY KEY (id) NOT ENFORCED) "
           "PARTITIONED BY (dt) TBLPROPERTIES ('merge-engine' = 'first-row')")
    for t in ("p", "a", "f"):
        db.sql(f"INSERT INTO db.{t} VALUES (1, 1, NULL, 'x')")
        db.sql(f"INSERT INTO db.{t} VALUES (1, 5, 'new', 'y')")
    assert rows(db, "SELECT id, v, s, dt FROM db.p") == [(1, 5, "new", "x")]
    assert rows(db, "SELECT id, v, s, dt FROM db.a") == [(1, 6, "new", "x")]
    assert rows(db, "SELECT id, v, s, dt FROM db.f") == [(1, 1, None, "x")]


def test_delete_and_update_of_a_moved_key(db):
    db.sql(CREATE)
    db.sql("INSERT INTO db.t VALUES (1, 1, 'a', 'x'), (2, 2, 'b', 'x')")
    db.sql("INSERT INTO db.t VALUES (1, 10, 'a2', 'y')")
    db.sql("UPDATE db.t SET v = v + 1 WHERE id = 1")
    assert all_rows(db) == [(1, 11, "a2", "y"), (2, 2, "b", "x")]
    db.sql("DELETE FROM db.t WHERE id = 1")
    assert all_rows(db) == [(2, 2, "b", "x")]
    db.sql("INSERT INTO db.t VALUES (1, 7, 'back', 'x')")
    assert all_rows(db) == [(1, 7, "back", "x"), (2, 2, "b", "x")]


def test_merge_into(db):
    db.sql(CREATE)
    db.sql("INSERT INTO db.t VALUES (1, 1, 'a', 'x'), (2, 2, 'b', 'x')")
    db.sql("CREATE TABLE db.src (id BIGINT, v BIGINT, s STRING, dt STRING)")
    db.sql("INSERT INTO db.src VALUES (2, 20, 'b2', 'y'), (3, 3, 'c', 'z')")
    db.sql("MERGE INTO db.t USING db.src ON db.t.id = db.src.id "
           "WHEN MATCHED THEN UPDATE SET v = db.src.v WHEN NOT MATCHED THEN INSERT *")
    assert all_rows(db) == [(1, 1, "a", "x"), (2, 20, "b", "x"), (3, 3, "c", "z")]
    db.sql("INSERT INTO db.t SELECT * FROM db.src")  # now key 2 moves to 'y'
    assert all_rows(db) == [(1, 1, "a", "x"), (2, 20, "b2", "y"), (3, 3, "c", "z")]


def test_dataframe_api_write(db, warehouse):
    db.sql(CREATE)
    db.sql("INSERT INTO db.t VALUES (1, 1, 'a', 'x')")
    df = db.spark.createDataFrame([(1, 2, "b", "y"), (4, 4, "d", "y")], "id BIGINT, v BIGINT, s STRING, dt STRING")
    df.write.format("paimon").option("warehouse", warehouse).mode("append").save("db.t")
    assert all_rows(db) == [(1, 2, "b", "y"), (4, 4, "d", "y")]


def test_fixed_bucket_refused_at_create_and_alter(db):
    with pytest.raises(PaimonError, match=r"^You should use dynamic bucket \(bucket = -1\) mode in cross partition "
                                          r"update case \(Primary key constraint \[id\] not include all partition "
                                          r"fields \[dt\]\)\.$"):
        db.sql(CREATE + " TBLPROPERTIES ('bucket' = '4')")
    db.sql(CREATE)
    with pytest.raises(PaimonError, match="You should use dynamic bucket"):
        db.sql("ALTER TABLE db.t SET TBLPROPERTIES ('bucket' = '4')")
    assert db.catalog.get_table("db.t").options.bucket == -1


def test_pypaimon_reads_the_result(db, warehouse, pypaimon):
    db.sql(CREATE)
    db.sql("INSERT INTO db.t VALUES (1, 1, 'a', 'x'), (2, 2, 'b', 'x')")
    db.sql("INSERT INTO db.t VALUES (1, 10, 'a2', 'y')")
    got = sorted(tuple(r.values()) for r in pypaimon(op="read", warehouse=warehouse, table="db.t"))
    assert got == [(1, 10, "a2", "y"), (2, 2, "b", "x")]
