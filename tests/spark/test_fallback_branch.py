"""``scan.fallback-branch`` / ``scan.primary-branch`` (Paimon's FallbackReadFileStoreTable) and the
dynamic ``branch`` option in OPTIONS hints, through SQL: each partition is read from the branch
that wins it; row-level changes, the DataFrame source and dropping the fallback branch refuse in
one line."""

import os

import pytest

from paimon_sql.exceptions import PaimonError
from tests.spark.conftest import rows

OWN = "/*+ OPTIONS('scan.fallback-branch'='') */"


@pytest.fixture
def fallback(session, warehouse):
    """db.p partitioned by dt: main has dt=1; branch b has dt=1 (other values) and dt=2; main
    reads b as its fallback branch."""
    session.table_dir = os.path.join(str(warehouse), "db.db", "p")
    session.sql("CREATE DATABASE db")
    session.sql("CREATE TABLE db.p (v INT, dt STRING) PARTITIONED BY (dt)")
    session.sql("CALL sys.create_branch('db.p', 'b')")
    session.sql("INSERT INTO db.p VALUES (1, '1')")
    session.sql("INSERT INTO db.p$branch_b VALUES (100, '1'), (2, '2')")
    session.sql("ALTER TABLE db.p SET TBLPROPERTIES ('scan.fallback-branch'='b')")
    return session


def test_partitions_main_lacks_come_from_the_fallback_branch(fallback):
    assert rows(fallback, "SELECT * FROM db.p ORDER BY dt") == [(1, "1"), (2, "2")]
    assert rows(fallback, "SELECT v FROM db.p WHERE dt = '2'") == [(2,)]
    assert rows(fallback, "SELECT count(*) FROM db.p") == [(2,)]
    assert rows(fallback, f"SELECT * FROM db.p {OWN}") == [(1, "1")]
    # primary-branch turns the priority around: b's partitions first
    primary = "/*+ OPTIONS('scan.fallback-branch'='', 'scan.primary-branch'='b') */"
    assert rows(fallback, f"SELECT * FROM db.p {primary} ORDER BY dt") == [(100, "1"), (2, "2")]
    # a partition written to main later is main's from then on
    fallback.sql("INSERT INTO db.p VALUES (20, '2')")
    assert rows(fallback, "SELECT * FROM db.p ORDER BY dt") == [(1, "1"), (20, "2")]


def test_branch_option_in_hints_reads_and_writes_that_branch(fallback):
    assert rows(fallback, "SELECT * FROM db.p /*+ OPTIONS('branch'='b') */ ORDER BY dt") == [(100, "1"), (2, "2")]
    fallback.sql("INSERT INTO db.p /*+ OPTIONS('branch'='b') */ VALUES (3, '3')")
    assert rows(fallback, "SELECT * FROM db.p$branch_b ORDER BY dt") == [(100, "1"), (2, "2"), (3, "3")]
    assert rows(fallback, f"SELECT * FROM db.p {OWN}") == [(1, "1")]
    assert rows(fallback, "SELECT * FROM db.p ORDER BY dt") == [(1, "1"), (2, "2"), (3, "3")]
    with pytest.raises(PaimonError, match="branch 'nope' of table db.p does not exist"):
        fallback.sql("SELECT * FROM db.p /*+ OPTIONS('branch'='nope') */")
    with pytest.raises(PaimonError, match="option 'branch' is not supported by paimon-sql"):
        fallback.sql("ALTER TABLE db.p SET TBLPROPERTIES ('branch'='b')")


@pytest.mark.parametrize("fail_fast", ["true", "false"])
def test_a_damaged_fallback_file_fails_the_read(fallback, fail_fast):
    fallback.sql(f"ALTER TABLE db.p SET TBLPROPERTIES ('scan.fallback-branch.read-fail-fast'='{fail_fast}')")
    part = os.path.join(fallback.table_dir, "dt=2", "bucket-0")
    os.remove(os.path.join(part, next(f for f in os.listdir(part) if f.startswith("data-"))))
    with pytest.raises(PaimonError, match="data-"):
        rows(fallback, "SELECT * FROM db.p")
    assert rows(fallback, f"SELECT * FROM db.p {OWN}") == [(1, "1")]


@pytest.mark.parametrize("text, message", [
    ("UPDATE db.p SET v = 0 WHERE dt = '2'", "UPDATE of db.p is refused: it reads partitions of branch 'b'"),
    ("DELETE FROM db.p WHERE dt = '2'", "DELETE of db.p is refused"),
    ("MERGE INTO db.p t USING (SELECT 2 AS v, '2' AS dt) s ON t.dt = s.dt WHEN MATCHED THEN DELETE",
     "MERGE INTO of db.p is refused"),
    ("CALL sys.delete_branch('db.p', 'b')", "branch 'b' is the table's 'scan.fallback-branch': unset the option"),
    ("SELECT * FROM db.p /*+ OPTIONS('scan.primary-branch'='b') */",
     "cannot set both 'scan.fallback-branch' and 'scan.primary-branch'"),
    ("SELECT * FROM db.p /*+ OPTIONS('scan.fallback-branch'='nope') */",
     "option 'scan.fallback-branch' names branch 'nope', which table db.p does not have"),
])
def test_refusals(fallback, text, message):
    with pytest.raises(PaimonError) as e:
        rows(fallback, text)
    assert message in str(e.value) and "\n" not in str(e.value)
    assert rows(fallback, "SELECT * FROM db.p ORDER BY dt") == [(1, "1"), (2, "2")]


def test_the_dataframe_source_reads_one_branch(fallback, warehouse):
    reader = fallback.spark.read.format("paimon").option("warehouse", str(warehouse))
    with pytest.raises(Exception, match="read it with SQL"):
        reader.load("db.p").collect()
    assert [tuple(r) for r in reader.option("scan.fallback-branch", "").load("db.p").collect()] == [(1, "1")]


def test_time_travel_reads_the_fallback_branch_as_it_was_then(fallback):
    """Main's snapshot 2 came after the branch's first commit and before its second: reading main
    as of then takes the branch's first snapshot, as Paimon maps snapshot ids by commit time."""
    fallback.sql("INSERT INTO db.p VALUES (5, '5')")
    fallback.sql("INSERT INTO db.p$branch_b VALUES (3, '3')")
    assert rows(fallback, "SELECT * FROM db.p VERSION AS OF 2 ORDER BY dt") == [(1, "1"), (2, "2"), (5, "5")]
    assert rows(fallback, "SELECT * FROM db.p ORDER BY dt") == [(1, "1"), (2, "2"), (3, "3"), (5, "5")]
