"""Through SQL: option values that break a table are refused with one line naming the option and
what is allowed (CREATE, ALTER TABLE SET TBLPROPERTIES, hints, column changes); secret option
values are masked wherever options are shown."""

import json

import pytest

from paimon_sql.exceptions import InvalidOptionError, PaimonError, SchemaError
from spark.conftest import rows

PK = "CREATE TABLE db.t (id INT, v STRING, ts BIGINT) TBLPROPERTIES ('primary-key' = 'id'{})"


@pytest.fixture
def db(session):
    session.sql("CREATE DATABASE db")
    return session


@pytest.mark.parametrize("props, match", [
    ("'dynamic-bucket.target-row-num' = '0'", "'dynamic-bucket.target-row-num' must be at least 1, got '0'"),
    ("'num-sorted-run.compaction-trigger' = '-1'", "'num-sorted-run.compaction-trigger' must be at least 1"),
    ("'bucket' = '-3'", "'bucket' must be between -2 and -1 or between 1 and 2147483647.*-2 .postpone bucket."),
    ("'bucket' = '99999999999'", "'bucket' expects a Integer value.*out of the 32-bit range"),
    ("'commit.max-retries' = '-1'", "'commit.max-retries' must be at least 0"),
    ("'sequence.field' = 'nope'", "'sequence.field' names unknown column.s. nope"),
    ("'rowkind.field' = 'nope'", "'rowkind.field' names unknown column.s. nope"),
    ("'file.compression' = 'bogus'", "'file.compression' must be one of the parquet codecs"),
    ("'target-file-size' = '0'", "'target-file-size' must be at least 1"),
])
def test_create_refuses_values_that_break_the_table(db, props, match):
    with pytest.raises(InvalidOptionError, match=match) as e:
        db.sql(PK.format(", " + props))
    assert "\n" not in str(e.value)
    assert not db.catalog.table_exists("db.t")


def test_a_refused_target_row_num_never_reaches_insert(db):
    """Before the rule, ``dynamic-bucket.target-row-num = 0`` was accepted and INSERT spun forever."""
    db.sql(PK.format(""))
    with pytest.raises(InvalidOptionError, match="target-row-num"):
        db.sql("ALTER TABLE db.t SET TBLPROPERTIES ('dynamic-bucket.target-row-num' = '0')")
    db.sql("INSERT INTO db.t VALUES (1, 'a', 1), (2, 'b', 2)")
    assert rows(db, "SELECT count(*) FROM db.t") == [(2,)]


def test_alter_and_column_changes_keep_options_sound(db):
    db.sql(PK.format(", 'sequence.field' = 'ts', 'file.compression' = 'gzip'"))
    for statement, error, match in [
            ("ALTER TABLE db.t SET TBLPROPERTIES ('commit.max-retries' = '-1')", InvalidOptionError,
             "'commit.max-retries' must be at least 0"),
            ("ALTER TABLE db.t SET TBLPROPERTIES ('file.format' = 'orc')", InvalidOptionError,
             "'file.compression' must be one of the orc codecs"),
            ("ALTER TABLE db.t SET TBLPROPERTIES ('fields.nope.aggregate-function' = 'sum')", InvalidOptionError,
             "'fields.nope.aggregate-function' names unknown column"),
            ("ALTER TABLE db.t DROP COLUMN ts", SchemaError, "cannot drop column 'ts': option.s. sequence.field"),
    ]:
        with pytest.raises(error, match=match):
            db.sql(statement)
        assert db.catalog.get_table("db.t").schema.id == 0, statement
    db.sql("ALTER TABLE db.t RENAME COLUMN ts TO version")
    assert db.catalog.get_table("db.t").schema.options["sequence.field"] == "version"
    db.sql("INSERT INTO db.t VALUES (1, 'new', 2), (1, 'old', 1)")
    assert rows(db, "SELECT v FROM db.t") == [("new",)]


def test_hints_are_validated(db):
    db.sql(PK.format(""))
    db.sql("INSERT INTO db.t VALUES (1, 'a', 1)")
    for hint, match in [("'commit.max-retries' = '-1'", "'commit.max-retries' must be at least 0"),
                        ("'sequence.field' = 'v'", "'sequence.field' cannot be changed"),
                        ("'scan.mode' = 'sideways'", "'scan.mode' must be one of")]:
        with pytest.raises(PaimonError, match=match):
            db.sql(f"SELECT * FROM db.t /*+ OPTIONS({hint}) */")
    assert rows(db, "SELECT v FROM db.t /*+ OPTIONS('scan.snapshot-id' = '1') */") == [("a",)]


def test_secret_values_are_masked_everywhere(spark, warehouse):
    from paimon_sql.session import Session
    secrets = {"s3.secret-key": "SECRET1", "s3.access-key": "ACCESS1", "s3.endpoint": "http://e"}
    s = Session(spark, warehouse, {**secrets, "catalog-options-table.enabled": "true"})
    s.sql("CREATE DATABASE db")
    s.sql("CREATE TABLE db.t (id INT) TBLPROPERTIES ('fs.oss.accessKeySecret' = 'SECRET2', "
          "'jdbc.password' = 'SECRET3', 'my.token' = 'SECRET4', 'bucket' = '-1')")
    shown = [
        rows(s, "SELECT * FROM db.t$options"),
        rows(s, "SELECT options FROM db.t$schemas"),
        rows(s, "SELECT * FROM sys.all_table_options"),
        rows(s, "SELECT * FROM sys.catalog_options"),
        rows(s, "SHOW CREATE TABLE db.t"),
        rows(s, "SHOW TBLPROPERTIES db.t"),
        rows(s, "SHOW TBLPROPERTIES db.t ('jdbc.password')"),
        rows(s, "DESCRIBE EXTENDED db.t"),
        rows(s, "DESCRIBE FORMATTED db.t"),
    ]
    text = json.dumps(shown)
    assert "SECRET" not in text and "ACCESS1" not in text
    assert ("jdbc.password", "******") in shown[0] and ("bucket", "-1") in shown[0]
    assert json.loads(shown[1][0][0])["my.token"] == "******"
    assert ("s3.secret-key", "******") in shown[3] and ("s3.endpoint", "http://e") in shown[3]
    assert "'fs.oss.accessKeySecret' = '******'" in shown[4][0][0]
    assert shown[6] == [("jdbc.password", "******")]
    properties = [dict((r[0], r[1]) for r in shown[i])["Table Properties"] for i in (7, 8)]
    assert all("my.token=******" in p and "jdbc.password=******" in p for p in properties)
