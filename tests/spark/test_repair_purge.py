"""CALL sys.purge_files, sys.repair and sys.repair_earliest_snapshot: paimon-spark's parameters
and outputs, their effects on disk, in $snapshots/$tags/$branches/$consumers and the data, and
one-line errors that change nothing."""

import glob
import os

import pytest

from paimon_sql.exceptions import PaimonError
from paimon_sql.store.references import snapshot_files
from tests.spark.conftest import rows


def _table(session, name="default.t"):
    from paimon_sql.sql import parse
    return session.find_table(parse.table_reference(name))


def with_snapshots(session, n=3, name="t"):
    session.sql(f"CREATE TABLE {name} (id INT, p STRING) PARTITIONED BY (p)")
    for i in range(1, n + 1):
        session.sql(f"INSERT INTO {name} VALUES ({i}, 'p{i % 2}')")
    return _table(session, f"default.{name}")


def hint(table, name):
    path = f"{table.paths.snapshot_dir}/{name}"
    return open(path).read() if os.path.exists(path) else None


# -- purge_files -------------------------------------------------------------------------------------

def test_purge_files_empties_the_table_and_its_history_and_keeps_the_table(session):
    table = with_snapshots(session)
    table.tag_manager.create("keep", table.snapshot_manager.snapshot(2))
    table.branch_manager.create("b", table)
    table.consumer_manager.record("reader", 2)
    data_files = lambda: glob.glob(f"{table.path}/p=*/bucket-*/*")  # noqa: E731
    assert data_files()
    df = session.sql("CALL sys.purge_files(table => 'default.t')")
    assert df.columns == ["result"] and df.schema["result"].dataType.simpleString() == "string"
    assert [tuple(r) for r in df.collect()] == [("Success",)]
    assert rows(session, "SELECT snapshot_id, commit_kind FROM t$snapshots") == [(4, "OVERWRITE")]
    assert rows(session, "SELECT count(*) FROM t") == [(0,)]
    for system_table in ("tags", "branches", "consumers", "partitions"):
        assert rows(session, f"SELECT count(*) FROM t${system_table}") == [(0,)]
    assert data_files() == [] and not os.path.exists(f"{table.path}/branch/branch-b")
    needed = snapshot_files(table, table.snapshot_manager.snapshot(4))
    assert set(glob.glob(f"{table.path}/manifest/*")) == {p for p in needed if "/manifest/" in p}
    assert [c for (c, *_) in rows(session, "DESCRIBE t")][:2] == ["id", "p"]
    session.sql("INSERT INTO t VALUES (7, 'p7')")
    assert rows(session, "SELECT * FROM t") == [(7, "p7")]


def test_purge_files_leaves_no_changelog_of_a_table_keeping_changelog_longer(session):
    session.sql("CREATE TABLE t (id INT, v STRING) TBLPROPERTIES ('primary-key' = 'id', 'bucket' = '1', "
                "'changelog-producer' = 'input', 'snapshot.num-retained.min' = '1', "
                "'snapshot.num-retained.max' = '2', 'changelog.num-retained.max' = '100')")
    for i in range(4):
        session.sql(f"INSERT INTO t VALUES ({i}, 'v')")
    path = _table(session).path
    assert glob.glob(f"{path}/changelog/changelog-*")  # expired snapshots left their changes there
    assert rows(session, "CALL sys.purge_files('t')") == [("Success",)]
    assert not os.path.exists(f"{path}/changelog")
    assert glob.glob(f"{path}/bucket-*/*") == [] and rows(session, "SELECT count(*) FROM t") == [(0,)]


def test_purge_files_of_an_empty_table(session):
    session.sql("CREATE TABLE t (id INT)")
    assert rows(session, "CALL sys.purge_files('t')") == [("Success",)]
    assert rows(session, "SELECT count(*) FROM t") == [(0,)]


@pytest.mark.parametrize("name, problem", [
    ("nope", "table 'nope' not found"),
    ("t$branch_b", "purge_files purges the whole table with all its branches"),
])
def test_purge_files_errors_change_nothing(session, name, problem):
    table = with_snapshots(session, 2)
    table.branch_manager.create("b", table)
    with pytest.raises(PaimonError) as e:
        session.sql(f"CALL sys.purge_files(table => '{name}')")
    assert problem in str(e.value) and "\n" not in str(e.value)
    assert rows(session, "SELECT count(*) FROM t") == [(2,)]
    assert rows(session, "SELECT branch_name FROM t$branches") == [("b",)]


# -- repair -----------------------------------------------------------------------------------------

def test_repair_rewrites_missing_and_wrong_hints_from_the_snapshot_files(session):
    table = with_snapshots(session, 4)
    os.remove(f"{table.paths.snapshot_dir}/LATEST")
    with open(f"{table.paths.snapshot_dir}/EARLIEST", "w") as f:
        f.write("3")  # too high: snapshots 1 and 2 are there
    df = session.sql("CALL sys.repair('default.t')")
    assert df.columns == ["result"] and df.schema["result"].dataType.simpleString() == "boolean"
    assert [tuple(r) for r in df.collect()] == [(True,)]
    assert (hint(table, "EARLIEST"), hint(table, "LATEST")) == ("1", "4")
    os.remove(table.paths.snapshot_path(1))  # an expiry interrupted before its hint
    os.remove(table.paths.snapshot_path(2))
    with open(f"{table.paths.snapshot_dir}/LATEST", "w") as f:
        f.write("junk")
    assert rows(session, "CALL sys.repair(database_or_table => 'default')") == [(True,)]
    assert (hint(table, "EARLIEST"), hint(table, "LATEST")) == ("3", "4")
    assert rows(session, "SELECT count(*) FROM t") == [(4,)]


def test_repair_keeps_an_earliest_hint_past_a_gap_and_repairs_branches_and_every_table(session):
    table = with_snapshots(session, 4)
    other = with_snapshots(session, 2, "u")
    table.branch_manager.create("b", table)
    os.remove(table.paths.snapshot_path(2))
    with open(f"{table.paths.snapshot_dir}/EARLIEST", "w") as f:
        f.write("3")  # set past the gap, as repair_earliest_snapshot does
    branch = table.switch_to_branch("b")
    os.makedirs(branch.paths.snapshot_dir)
    with open(branch.paths.snapshot_path(1), "w") as f:
        f.write(open(table.paths.snapshot_path(1)).read())
    os.remove(f"{other.paths.snapshot_dir}/LATEST")
    assert rows(session, "CALL sys.repair('')") == [(True,)]
    assert (hint(table, "EARLIEST"), hint(table, "LATEST")) == ("3", "4")
    assert (hint(branch, "EARLIEST"), hint(branch, "LATEST")) == ("1", "1")
    assert hint(other, "LATEST") == "2"


@pytest.mark.parametrize("argument, problem", [
    ("default.t,a.b.c", "cannot read a database or db.table from 'a.b.c'"),
    ("default.t,nodb", "database 'nodb' does not exist"),
    ("default.t,default.nope", "table 'default.nope' not found"),
])
def test_repair_errors_change_nothing(session, argument, problem):
    table = with_snapshots(session, 2)
    os.remove(f"{table.paths.snapshot_dir}/LATEST")
    with pytest.raises(PaimonError) as e:
        session.sql(f"CALL sys.repair('{argument}')")
    assert problem in str(e.value) and "\n" not in str(e.value)
    assert hint(table, "LATEST") is None


# -- repair_earliest_snapshot -----------------------------------------------------------------------

def with_gap(session):
    """Snapshots 1, then 4..5: 2 and 3 were lost; EARLIEST still names 1."""
    table = with_snapshots(session, 5)
    for sid in (2, 3):
        os.remove(table.paths.snapshot_path(sid))
    return table


def test_repair_earliest_snapshot_moves_the_hint_past_the_gap(session):
    table = with_gap(session)
    df = session.sql("CALL sys.repair_earliest_snapshot(table => 't', snapshot_id => 4)")
    assert df.columns == ["previous_earliest_snapshot_id", "current_earliest_snapshot_id"]
    assert df.schema["current_earliest_snapshot_id"].dataType.simpleString() == "bigint"
    assert [tuple(r) for r in df.collect()] == [(1, 4)]
    assert hint(table, "EARLIEST") == "4"
    assert table.snapshot_manager.earliest_id() == 4
    assert rows(session, "SELECT count(*) FROM t") == [(5,)]
    assert rows(session, "CALL sys.repair_earliest_snapshot('t', 4)") == [(4, 4)]  # already there


@pytest.mark.parametrize("sid, problem", [
    (0, "snapshot 0 must not be earlier than the current earliest snapshot 1"),
    (9, "snapshot 9 must not be later than the latest snapshot 5"),
    (1, "snapshot 2 does not exist"),
    (5, "snapshot 5 does not immediately follow a snapshot gap"),
])
def test_repair_earliest_snapshot_errors_change_nothing(session, sid, problem):
    table = with_gap(session)
    with pytest.raises(PaimonError) as e:
        session.sql(f"CALL sys.repair_earliest_snapshot('t', {sid})")
    assert problem in str(e.value) and "\n" not in str(e.value)
    assert hint(table, "EARLIEST") == "1"


def test_repair_earliest_snapshot_of_an_empty_table_fails(session):
    session.sql("CREATE TABLE t (id INT)")
    with pytest.raises(PaimonError, match="has no snapshot"):
        session.sql("CALL sys.repair_earliest_snapshot('t', 1)")
