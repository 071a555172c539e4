"""ALTER TABLE through SQL: every change makes schema-(N+1) and old files read through their own
schema by field id; tags in SQL; time travel by id, tag, timestamp and hint."""

import datetime as dt

import pytest

from paimon_sql.exceptions import PaimonError, SchemaError, SnapshotNotFoundError
from spark.conftest import rows


@pytest.fixture
def evolved(session):
    session.sql("CREATE DATABASE db")
    session.sql("CREATE TABLE db.t (id INT, name STRING, n INT, dt STRING) PARTITIONED BY (dt) "
                "TBLPROPERTIES ('primary-key' = 'id,dt', 'bucket' = '1')")
    session.sql("INSERT INTO db.t VALUES (1, 'a', 10, 'x'), (2, 'b', 20, 'x')")
    session.sql("ALTER TABLE db.t ADD COLUMN score DOUBLE AFTER id")
    session.sql("ALTER TABLE db.t RENAME COLUMN name TO label")
    session.sql("ALTER TABLE db.t ALTER COLUMN n TYPE BIGINT")
    session.sql("INSERT INTO db.t VALUES (3, 0.5, 'c', 30000000000, 'x'), (2, 1.5, 'B', 21, 'x')")
    session.sql("ALTER TABLE db.t DROP COLUMN score")
    session.sql("ALTER TABLE db.t ADD COLUMNS (note STRING COMMENT 'free text')")
    session.sql("ALTER TABLE db.t ALTER COLUMN note FIRST")
    return session


def test_schema_evolution_round_trip(evolved):
    t = evolved.catalog.get_table("db.t")
    assert t.schema.id == 6 and t.schema.field_names == ["note", "id", "label", "n", "dt"]
    assert t.schema.field("note").description == "free text" and str(t.schema.field("n").type) == "BIGINT"
    # old rows: renamed column keeps its data, widened one is cast, added one reads NULL
    assert rows(evolved, "SELECT note, id, label, n FROM db.t ORDER BY id") == \
        [(None, 1, "a", 10), (None, 2, "B", 21), (None, 3, "c", 30000000000)]
    evolved.sql("INSERT INTO db.t VALUES ('hi', 4, 'd', 4, 'x')")
    assert rows(evolved, "SELECT note, label FROM db.t WHERE id = 4") == [("hi", "d")]
    assert [r[0] for r in rows(evolved, "SELECT schema_id FROM db.t$schemas ORDER BY 1")] == list(range(7))


def test_time_travel_reads_the_schema_of_its_snapshot(evolved):
    # snapshot 1 was written with schema 0: its columns and names
    assert rows(evolved, "SELECT * FROM db.t VERSION AS OF 1 ORDER BY id") == [(1, "a", 10, "x"), (2, "b", 20, "x")]
    assert rows(evolved, "SELECT id, score FROM db.t /*+ OPTIONS('scan.snapshot-id'='2') */ ORDER BY id") == \
        [(1, None), (2, 1.5), (3, 0.5)]
    snap1 = evolved.catalog.get_table("db.t").snapshot_manager.snapshot(1)
    ms = snap1.time_millis
    stamp = dt.datetime.fromtimestamp(ms // 1000).replace(microsecond=ms % 1000 * 1000).isoformat(sep=" ")
    assert rows(evolved, f"SELECT count(*) FROM db.t TIMESTAMP AS OF '{stamp}'") == [(2,)]
    with pytest.raises(SnapshotNotFoundError, match="no snapshot at or before"):
        evolved.sql("SELECT * FROM db.t TIMESTAMP AS OF '2000-01-01 00:00:00'")
    with pytest.raises(PaimonError, match="conflict"):
        evolved.sql("SELECT * FROM db.t /*+ OPTIONS('scan.snapshot-id'='1', 'scan.tag-name'='x') */")


def test_unsafe_or_key_changes_are_refused(evolved):
    for statement, message in [
            ("ALTER TABLE db.t ALTER COLUMN n TYPE INT", "not a safe widening"),
            ("ALTER TABLE db.t ALTER COLUMN label TYPE INT", "not a safe widening"),
            ("ALTER TABLE db.t DROP COLUMN id", "primary key column 'id'"),
            ("ALTER TABLE db.t RENAME COLUMN dt TO day", "partition key column 'dt'"),
            ("ALTER TABLE db.t ADD COLUMN label STRING", "already exists"),
            ("ALTER TABLE db.t ALTER COLUMN id TYPE BIGINT", "primary key column 'id'"),
            ("ALTER TABLE db.t SET TBLPROPERTIES ('merge-engine' = 'first-row')", "cannot be changed"),
            ("ALTER TABLE db.t SET TBLPROPERTIES ('bucket' = '-1')", "dynamic and fixed"),
            ("ALTER TABLE db.t RENAME COLUMN missing TO other", "does not exist")]:
        before = evolved.catalog.get_table("db.t").schema.id
        with pytest.raises(SchemaError, match=message):
            evolved.sql(statement)
        assert evolved.catalog.get_table("db.t").schema.id == before, statement


def test_options_comment_and_rename_table(evolved):
    evolved.sql("ALTER TABLE db.t SET TBLPROPERTIES ('num-levels' = '17', 'comment' = 'people')")
    t = evolved.catalog.get_table("db.t")
    assert t.schema.options["num-levels"] == "17" and t.schema.comment == "people"
    evolved.sql("ALTER TABLE db.t UNSET TBLPROPERTIES ('num-levels')")
    assert "num-levels" not in evolved.catalog.get_table("db.t").schema.options
    evolved.sql("ALTER TABLE db.t RENAME TO db.people")
    assert rows(evolved, "SELECT count(*) FROM db.people") == [(3,)]
    assert not evolved.catalog.table_exists("db.t")


def test_tags_in_sql(evolved):
    evolved.sql("ALTER TABLE db.t CREATE TAG first AS OF VERSION 1")
    evolved.sql("ALTER TABLE db.t CREATE TAG IF NOT EXISTS first AS OF VERSION 2")  # kept as it is
    evolved.sql("ALTER TABLE db.t CREATE TAG `latest` RETAIN 3 HOURS")
    assert rows(evolved, "SHOW TAGS db.t") == [("first",), ("latest",)]
    assert rows(evolved, "SELECT tag_name, snapshot_id, time_retained FROM db.t$tags") == \
        [("first", 1, None), ("latest", 2, "PT3H")]
    assert rows(evolved, "SELECT count(*) FROM db.t VERSION AS OF 'first'") == [(2,)]
    assert rows(evolved, "SELECT count(*) FROM db.t /*+ OPTIONS('scan.tag-name'='latest') */") == [(3,)]
    evolved.sql("ALTER TABLE db.t REPLACE TAG first AS OF VERSION 2")
    evolved.sql("ALTER TABLE db.t RENAME TAG first TO second")
    assert rows(evolved, "SELECT tag_name, snapshot_id FROM db.t$tags ORDER BY 1") == [("latest", 2), ("second", 2)]
    evolved.sql("ALTER TABLE db.t DELETE TAG second")
    evolved.sql("ALTER TABLE db.t DELETE TAG IF EXISTS second")
    assert rows(evolved, "SHOW TAGS db.t") == [("latest",)]
    for statement, message in [("ALTER TABLE db.t CREATE TAG latest", "already exists"),
                               ("ALTER TABLE db.t CREATE TAG `a`` `", "invalid tag name"),
                               ("SELECT * FROM db.t VERSION AS OF 'nope'", "no tag or snapshot 'nope'")]:
        with pytest.raises(PaimonError, match=message):
            evolved.sql(statement)
