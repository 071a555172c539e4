"""CALL sys.create_branch / delete_branch / rename_branch / fast_forward / merge_branch through SQL:
effects seen in $branches, $snapshots, $tags and the rows read; a branch write never changes main;
every refusal is one line and changes nothing."""

import datetime as dt
import os
import time

import pytest

from paimon_sql.exceptions import PaimonError
from tests.spark.conftest import rows


@pytest.fixture
def tagged(session, warehouse):
    """db.t (primary key id): two commits, tag 'v1' on the first."""
    session.table_dir = os.path.join(str(warehouse), "db.db", "t")
    session.sql("CREATE DATABASE db")
    session.sql("CREATE TABLE db.t (id INT, name STRING) TBLPROPERTIES ('primary-key'='id', 'bucket'='1')")
    session.sql("INSERT INTO db.t VALUES (1, 'a'), (2, 'b')")
    session.sql("ALTER TABLE db.t CREATE TAG v1")
    session.sql("INSERT INTO db.t VALUES (3, 'c')")
    return session


def call(session, text):
    return rows(session, f"CALL sys.{text}")


def branches(session):
    return [r[0] for r in rows(session, "SELECT branch_name FROM db.t$branches")]


def state(session):
    """Everything a procedure could change: branches, main's snapshots, tags and rows, and the
    metadata files on disk."""
    root = session.table_dir
    files = sorted(os.path.relpath(os.path.join(d, f), root) for d, _, fs in os.walk(root) for f in fs
                   if not f.endswith(".crc"))
    return (branches(session), rows(session, "SELECT snapshot_id FROM db.t$snapshots"),
            rows(session, "SELECT tag_name FROM db.t$tags"), rows(session, "SELECT * FROM db.t ORDER BY id"), files)


def test_create_branch_from_a_tag_and_empty(tagged):
    assert call(tagged, "create_branch('db.t', 'b', 'v1')") == [(True,)]
    assert call(tagged, "create_branch(table => 'db.t', branch => 'e')") == [(True,)]
    assert branches(tagged) == ["b", "e"]
    assert rows(tagged, "SELECT * FROM db.t$branch_b ORDER BY id") == [(1, "a"), (2, "b")]
    assert rows(tagged, "SELECT snapshot_id FROM db.t$branch_b$snapshots") == [(1,)]
    assert rows(tagged, "SELECT * FROM db.t$branch_e") == []  # schema only
    assert rows(tagged, "SELECT snapshot_id FROM db.t$branch_e$snapshots") == []
    # ignoreIfExists keeps the existing branch as it is
    assert call(tagged, "create_branch('db.t', 'b', '', 'true')") == [(True,)]
    assert call(tagged, "create_branch('db.t', 'b', 'no-such-tag', 'true')") == [(True,)]
    assert rows(tagged, "SELECT count(*) FROM db.t$branch_b") == [(2,)]


def test_branch_writes_never_change_main(tagged):
    call(tagged, "create_branch('db.t', 'b', 'v1')")
    before = rows(tagged, "SELECT * FROM db.t$snapshots")
    tagged.sql("INSERT INTO db.t$branch_b VALUES (2, 'B'), (9, 'z')")
    tagged.sql("DELETE FROM db.t$branch_b WHERE id = 1")
    assert rows(tagged, "SELECT * FROM db.t$branch_b ORDER BY id") == [(2, "B"), (9, "z")]
    assert rows(tagged, "SELECT * FROM db.t ORDER BY id") == [(1, "a"), (2, "b"), (3, "c")]
    assert rows(tagged, "SELECT * FROM db.t$snapshots") == before


def test_fast_forward_makes_main_read_the_branch(tagged):
    call(tagged, "create_branch('db.t', 'b', 'v1')")
    tagged.sql("INSERT INTO db.t$branch_b VALUES (2, 'B'), (9, 'z')")
    tagged.sql("ALTER TABLE db.t CREATE TAG v2")  # on main's snapshot 2, after the branch's base: removed
    assert call(tagged, "fast_forward('db.t', 'b')") == [(True,)]
    assert rows(tagged, "SELECT * FROM db.t ORDER BY id") == [(1, "a"), (2, "B"), (9, "z")]
    assert rows(tagged, "SELECT snapshot_id FROM db.t$snapshots") == [(1,), (2,)]
    assert rows(tagged, "SELECT tag_name, snapshot_id FROM db.t$tags") == [("v1", 1)]
    snap_dir = os.path.join(tagged.table_dir, "snapshot")
    hints = {h: open(os.path.join(snap_dir, h)).read() for h in ("EARLIEST", "LATEST")}
    assert hints == {"EARLIEST": "1", "LATEST": "2"}
    # main goes on from the branch's state; the branch is untouched
    tagged.sql("INSERT INTO db.t VALUES (4, 'd')")
    assert rows(tagged, "SELECT * FROM db.t ORDER BY id") == [(1, "a"), (2, "B"), (4, "d"), (9, "z")]
    assert rows(tagged, "SELECT * FROM db.t$branch_b ORDER BY id") == [(1, "a"), (2, "B"), (9, "z")]
    # expiry and orphan cleanup on main afterwards keep what main and the branch read
    call(tagged, "expire_snapshots(table => 'db.t', retain_max => 1, retain_min => 1)")
    time.sleep(1.1)
    now = dt.datetime.now().strftime("%Y-%m-%d %H:%M:%S")
    deleted = call(tagged, f"remove_orphan_files(table => 'db.t', older_than => '{now}', mode => 'local')")
    assert deleted[0][0] > 0  # main's replaced snapshot 2 (the plum) left its files behind
    assert rows(tagged, "SELECT * FROM db.t ORDER BY id") == [(1, "a"), (2, "B"), (4, "d"), (9, "z")]
    assert rows(tagged, "SELECT * FROM db.t$branch_b ORDER BY id") == [(1, "a"), (2, "B"), (9, "z")]


def test_fast_forward_of_an_empty_branch_replaces_every_snapshot(tagged):
    call(tagged, "create_branch('db.t', 'e')")
    tagged.sql("INSERT INTO db.t$branch_e VALUES (7, 'x')")
    call(tagged, "fast_forward('db.t', 'e')")
    assert rows(tagged, "SELECT * FROM db.t") == [(7, "x")]
    assert rows(tagged, "SELECT snapshot_id FROM db.t$snapshots") == [(1,)]
    assert rows(tagged, "SELECT tag_name FROM db.t$tags") == []


def test_rename_and_delete_branches(tagged):
    for b in ("b", "c", "d"):
        call(tagged, f"create_branch('db.t', '{b}', 'v1')")
    assert call(tagged, "rename_branch('db.t', 'b', 'b2')") == [(True,)]
    assert branches(tagged) == ["b2", "c", "d"]
    assert rows(tagged, "SELECT count(*) FROM db.t$branch_b2") == [(2,)]
    assert call(tagged, "delete_branch('db.t', 'b2,c')") == [(True,)]
    assert branches(tagged) == ["d"]
    assert rows(tagged, "SELECT count(*) FROM db.t") == [(3,)]


@pytest.mark.parametrize("text, message", [
    ("create_branch('db.t', 'main')", "branch name 'main' is the default branch's"),
    ("create_branch('db.t', '123')", "not only digits: '123'"),
    ("create_branch('db.t', ' ')", "must not be blank"),
    ("create_branch('db.t', 'b')", "branch 'b' already exists"),
    ("create_branch('db.t', 'n', 'nope')", "tag 'nope' of table db.t does not exist"),
    ("create_branch('db.t', 'b', 'v1', 'maybe')", "branch 'b' already exists"),  # as Java: 'maybe' is false
    ("create_branch('db.t', 'n', '')", "tag must not be blank"),
    ("delete_branch('db.t', 'b,nope')", "branch 'nope' does not exist"),
    ("delete_branch('db.t', 'main')", "the main branch cannot be dropped"),
    ("rename_branch('db.t', 'b', 'e')", "branch 'e' already exists"),
    ("rename_branch('db.t', 'nope', 'x')", "branch 'nope' does not exist"),
    ("rename_branch('db.t', 'main', 'x')", "the main branch cannot be renamed"),
    ("rename_branch('db.t', 'b', '42')", "not only digits: '42'"),
    ("fast_forward('db.t', 'main')", "branch 'main' cannot be fast-forwarded from"),
    ("fast_forward('db.t', 'nope')", "branch 'nope' of table db.t does not exist"),
    ("fast_forward('db.t', 'e')", "cannot fast-forward branch 'e': it has no snapshot"),
    ("fast_forward('db.t$branch_b', 'b')", "fast-forward from the current branch 'b' is not allowed"),
    ("merge_branch('db.t', 'b')", "branch merge is for append tables, but branch 'b' has a primary key"),
    ("create_branch('db.nope', 'x')", "table 'db.nope' not found"),
])
def test_refusals_are_one_line_and_change_nothing(tagged, text, message):
    call(tagged, "create_branch('db.t', 'b', 'v1')")
    call(tagged, "create_branch('db.t', 'e')")
    before = state(tagged)
    with pytest.raises(PaimonError) as e:
        call(tagged, text)
    assert message in str(e.value) and "\n" not in str(e.value)
    assert state(tagged) == before


@pytest.fixture
def appended(session, warehouse):
    """db.a: an append table with 'branch-merge.enabled', tag 'v1' on its first commit, branches
    'x' and 'y' from it; (2) appended to branch x, (3) to main."""
    session.table_dir = os.path.join(str(warehouse), "db.db", "a")
    session.sql("CREATE DATABASE db")
    session.sql("CREATE TABLE db.a (id INT, name STRING) TBLPROPERTIES ('branch-merge.enabled'='true')")
    session.sql("INSERT INTO db.a VALUES (1, 'a')")
    session.sql("ALTER TABLE db.a CREATE TAG v1")
    for b in ("x", "y"):
        call(session, f"create_branch('db.a', '{b}', 'v1')")
    session.sql("INSERT INTO db.a$branch_x VALUES (2, 'b')")
    session.sql("INSERT INTO db.a VALUES (3, 'c')")
    return session


def test_merge_branch_adds_the_files_a_branch_has_and_main_lacks(appended):
    assert call(appended, "merge_branch(table => 'db.a', source_branch => 'x')") == [(True,)]
    assert rows(appended, "SELECT * FROM db.a ORDER BY id") == [(1, "a"), (2, "b"), (3, "c")]
    assert rows(appended, "SELECT snapshot_id, commit_kind FROM db.a$snapshots") == \
        [(1, "APPEND"), (2, "APPEND"), (3, "APPEND")]
    call(appended, "merge_branch('db.a', 'x')")  # nothing new: no snapshot
    assert rows(appended, "SELECT count(*) FROM db.a$snapshots") == [(3,)]
    # into another branch; the source is left as it was
    call(appended, "merge_branch(table => 'db.a', source_branch => 'x', target_branch => 'y')")
    assert rows(appended, "SELECT * FROM db.a$branch_y ORDER BY id") == [(1, "a"), (2, "b")]
    assert rows(appended, "SELECT * FROM db.a$branch_x ORDER BY id") == [(1, "a"), (2, "b")]
    # main merged into a branch: the files keep being shared, nothing is copied
    call(appended, "merge_branch('db.a', 'main', 'x')")
    assert rows(appended, "SELECT * FROM db.a$branch_x ORDER BY id") == [(1, "a"), (2, "b"), (3, "c")]
    data = [f for _, _, fs in os.walk(appended.table_dir) for f in fs if f.startswith("data-")]
    assert len(data) == 3


@pytest.mark.parametrize("text, message", [
    ("CALL sys.merge_branch('db.a', 'nope')", "branch 'nope' of table db.a does not exist"),
    ("CALL sys.merge_branch('db.a', 'x', 'x')", "cannot merge branch 'x' into itself"),
    ("INSERT OVERWRITE db.a VALUES (9, 'z')", "has 'branch-merge.enabled': its history stays append-only"),
    ("DELETE FROM db.a WHERE id = 1", "so a commit removing files"),
    ("UPDATE db.a SET name = 'z' WHERE id = 3", "so a commit removing files"),
    ("CALL sys.compact(table => 'db.a', options => 'compaction.min.file-num=2')", "so a commit removing files"),
    ("ALTER TABLE db.a SET TBLPROPERTIES ('deletion-vectors.enabled'='true')",
     "'branch-merge.enabled' cannot be used with 'deletion-vectors.enabled'"),
    ("ALTER TABLE db.a SET TBLPROPERTIES ('partition.expiration-time'='1 d')",
     "'branch-merge.enabled' cannot be used with 'partition.expiration-time'"),
    ("CREATE TABLE db.k (id INT) TBLPROPERTIES ('primary-key'='id', 'branch-merge.enabled'='true')",
     "'branch-merge.enabled' is for append tables"),
])
def test_merge_branch_refusals_change_nothing(appended, text, message):
    before = state_of(appended)
    with pytest.raises(PaimonError) as e:
        appended.sql(text)
    assert message in str(e.value) and "\n" not in str(e.value)
    assert state_of(appended) == before


def test_merge_branch_needs_the_whole_append_history(appended):
    appended.sql("ALTER TABLE db.a$branch_x SET TBLPROPERTIES ('branch-merge.enabled'='false')")
    appended.sql("INSERT OVERWRITE db.a$branch_x VALUES (5, 'e')")
    with pytest.raises(PaimonError, match="branch 'x': snapshot 3 is OVERWRITE"):
        call(appended, "merge_branch('db.a', 'x')")
    call(appended, "expire_snapshots(table => 'db.a', retain_max => 1, retain_min => 1)")
    with pytest.raises(PaimonError, match="branch 'main': its snapshots do not all exist from 1 on"):
        call(appended, "merge_branch('db.a', 'y')")


def state_of(session):
    root = session.table_dir
    files = sorted(os.path.relpath(os.path.join(d, f), root) for d, _, fs in os.walk(root) for f in fs
                   if not f.endswith(".crc"))
    return rows(session, "SELECT * FROM db.a ORDER BY id"), files
