"""CALL sys.create_tag / replace_tag / rename_tag / delete_tag / create_tag_from_timestamp /
expire_tags / trigger_tag_automatic_creation: paimon-spark's parameters and outputs, effects seen
in $tags, $snapshots, files on disk and time travel; errors one line, nothing changed."""

import datetime as dt
import json
import os
import time

import pytest

from paimon_sql.procedures import ProcedureError
from tests.spark.conftest import rows


def table_with_snapshots(session, n=3, props=""):
    session.sql("CREATE TABLE t (id INT, v STRING) TBLPROPERTIES ('primary-key'='id', 'bucket'='1'"
                f"{props})")
    for i in range(1, n + 1):
        session.sql(f"INSERT INTO t VALUES ({i}, 'v{i}')")


def tags(session):
    return rows(session, "SELECT tag_name, snapshot_id, time_retained FROM t$tags ORDER BY tag_name")


def ids_at(session, version):
    return [i for (i,) in rows(session, f"SELECT id FROM t VERSION AS OF '{version}' ORDER BY id")]


def _table(session):
    from paimon_sql.sql import parse
    return session.find_table(parse.table_reference("default.t"))


def data_files(table):
    out = set()
    for folder, _, names in os.walk(table.path):
        out |= {os.path.join(folder, n) for n in names if n.startswith("data-")}
    return out


def test_create_replace_rename_tag(session):
    table_with_snapshots(session, 3)
    df = session.sql("CALL sys.create_tag(table => 'default.t', tag => 'two', snapshot => 2)")
    assert df.columns == ["result"] and [tuple(r) for r in df.collect()] == [(True,)]
    assert rows(session, "CALL sys.create_tag(table => 't', tag => 'last', time_retained => '1 d')") == [(True,)]
    assert tags(session) == [("last", 3, "PT24H"), ("two", 2, None)]
    assert ids_at(session, "two") == [1, 2] and ids_at(session, "last") == [1, 2, 3]
    assert rows(session, "CALL sys.replace_tag(table => 't', tag => 'two', snapshot => 1)") == [(True,)]
    assert ids_at(session, "two") == [1]
    assert rows(session, "CALL sys.rename_tag(table => 't', tag => 'two', target_tag => 'first')") == [(True,)]
    assert [n for n, _, _ in tags(session)] == ["first", "last"] and ids_at(session, "first") == [1]


def test_time_retained_is_written_as_java_writes_it(session):
    table_with_snapshots(session, 1)
    session.sql("CALL sys.create_tag('t', 'kept', 1, '12 h')")
    table = _table(session)
    d = json.loads(table.io.read_text(table.paths.tag_path("kept")))
    assert d["tagTimeRetained"] == 43200.0 and len(d["tagCreateTime"]) == 7


def test_delete_tag_removes_files_only_it_kept(session):
    """CALL sys.delete_tag and ALTER TABLE ... DELETE TAG, as Paimon's TagDeletion."""
    table_with_snapshots(session, 2)
    session.sql("CALL sys.create_tag(table => 't', tag => 'old')")
    session.sql("CALL sys.create_tag(table => 't', tag => 'old2')")
    table = _table(session)
    before = data_files(table)
    session.sql("INSERT OVERWRITE t VALUES (7, 'new')")
    session.sql("CALL sys.expire_snapshots(table => 't', retain_max => 1, retain_min => 1)")
    assert data_files(table) >= before and ids_at(session, "old") == [1, 2]  # the tags keep the old files
    assert rows(session, "CALL sys.delete_tag(table => 't', tag => 'old')") == [(True,)]
    assert data_files(table) >= before and ids_at(session, "old2") == [1, 2]  # old2 still keeps them
    session.sql("ALTER TABLE t DELETE TAG IF EXISTS `old2,missing`")  # the SQL form cleans up the same way
    assert tags(session) == []
    assert not data_files(table) & before
    # manifests and manifest lists: exactly those the one snapshot left names
    from paimon_sql.store.references import snapshot_files
    manifest_dir = table.paths.manifest_dir
    on_disk = {f"{manifest_dir}/{n}" for n in os.listdir(manifest_dir)}
    assert on_disk == {p for p in snapshot_files(table, table.snapshot_manager.latest()) if p.startswith(manifest_dir)}
    assert rows(session, "SELECT id FROM t") == [(7,)]
    assert [s for (s,) in rows(session, "SELECT snapshot_id FROM t$snapshots")] == [3]


def test_delete_tag_of_a_live_snapshot_keeps_its_files(session):
    table_with_snapshots(session, 2)
    session.sql("CALL sys.create_tag('t', 'x', 1)")
    before = data_files(_table(session))
    session.sql("CALL sys.delete_tag('t', 'x')")
    assert tags(session) == [] and data_files(_table(session)) == before
    assert rows(session, "SELECT id FROM t VERSION AS OF 1 ORDER BY id") == [(1,)]


def test_create_tag_from_timestamp(session):
    table_with_snapshots(session, 3)
    times = dict(rows(session, "SELECT snapshot_id, unix_millis(commit_time) FROM t$snapshots"))
    df = session.sql(f"CALL sys.create_tag_from_timestamp(table => 't', tag => 'ts', timestamp => {times[2]})")
    assert df.columns == ["tagName", "snapshot", "commit_time", "watermark"]
    assert [tuple(r) for r in df.collect()] == [("ts", 2, times[2], "null")]
    assert ids_at(session, "ts") == [1, 2]
    # the snapshot expired: a tag on it still qualifies
    session.sql("CALL sys.create_tag('t', 'first', 1)")
    session.sql("CALL sys.expire_snapshots(table => 't', retain_max => 1, retain_min => 1)")
    got = rows(session, f"CALL sys.create_tag_from_timestamp('t', 'again', {times[1]}, '1 h')")
    assert got == [("again", 1, times[1], "null")] and ids_at(session, "again") == [1]


def backdate_tag(session, name: str, by: dt.timedelta) -> None:
    """Move tag ``name``'s creation time back by ``by`` (its file, as Java's Tag stores it): time
    passes for it without a test waiting on the clock."""
    path = os.path.join(session.warehouse, "default.db", "t", "tag", f"tag-{name}")
    with open(path) as f:
        tag = json.load(f)
    parts = tag["tagCreateTime"] + [0] * (7 - len(tag["tagCreateTime"]))
    t = dt.datetime(*parts[:6], parts[6] // 1000) - by
    tag["tagCreateTime"] = [t.year, t.month, t.day, t.hour, t.minute, t.second, t.microsecond * 1000]
    with open(path, "w") as f:
        json.dump(tag, f)


def test_expire_tags_by_time_retained_and_older_than(session):
    table_with_snapshots(session, 2)
    session.sql("CALL sys.create_tag('t', 'short', 1, '1 h')")
    session.sql("CALL sys.create_tag('t', 'plain', 2)")
    session.sql("CALL sys.create_tag('t', 'long', 2, '1 d')")
    assert rows(session, "CALL sys.expire_tags('t')") == [("No expired tags.",)]
    backdate_tag(session, "short", dt.timedelta(hours=1, seconds=1))  # its hour has passed
    df = session.sql("CALL sys.expire_tags(table => 't')")
    assert df.columns == ["expired_tags"] and [tuple(r) for r in df.collect()] == [("short",)]
    future = (dt.datetime.now() + dt.timedelta(minutes=1)).strftime("%Y-%m-%d %H:%M:%S")
    assert sorted(rows(session, f"CALL sys.expire_tags('t', '{future}')")) == [("long",), ("plain",)]
    assert tags(session) == []


def test_tag_time_expiry_runs_after_commits(session):
    table_with_snapshots(session, 1)
    session.sql("CALL sys.create_tag('t', 'brief', 1, '1 s')")
    time.sleep(1.1)
    session.sql("INSERT INTO t VALUES (5, 'x')")
    assert tags(session) == []


def test_daily_tags_created_after_commits(session):
    table_with_snapshots(session, 1, ", 'tag.automatic-creation'='process-time', 'tag.creation-period'='daily',"
                                     " 'tag.num-retained-max'='2'")
    first = dt.datetime.fromtimestamp(_table(session).snapshot_manager.snapshot(1).time_millis / 1000)
    yesterday = (first.date() - dt.timedelta(days=1)).isoformat()
    assert [(n, s) for n, s, _ in tags(session)] == [(yesterday, 1)]
    session.sql("INSERT INTO t VALUES (2, 'b')")  # same day: no new tag
    assert [n for n, _, _ in tags(session)] == [yesterday] and ids_at(session, yesterday) == [1]


def test_trigger_tag_automatic_creation(session):
    table_with_snapshots(session, 1, ", 'write-only'='true'")
    session.sql("ALTER TABLE t SET TBLPROPERTIES ('tag.automatic-creation'='process-time', "
                "'tag.creation-period'='hourly', 'tag.default-time-retained'='1 d')")
    assert tags(session) == []
    assert rows(session, "CALL sys.trigger_tag_automatic_creation(table => 't')") == [(True,)]
    snap_time = dt.datetime.fromtimestamp(_table(session).snapshot_manager.latest().time_millis / 1000)
    name = (snap_time.replace(minute=0, second=0, microsecond=0) - dt.timedelta(hours=1)).strftime("%Y-%m-%d %H")
    assert [(n, r) for n, _, r in tags(session)] == [(name, "PT24H")]


def test_batch_tag_replaced_by_each_write(session):
    table_with_snapshots(session, 1, ", 'tag.automatic-creation'='batch'")
    session.sql("INSERT INTO t VALUES (2, 'b')")
    latest = _table(session).snapshot_manager.latest()
    name = "batch-write-" + dt.datetime.fromtimestamp(latest.time_millis / 1000).date().isoformat()
    latest = latest.id
    assert [(n, s) for n, s, _ in tags(session)] == [(name, latest)] and ids_at(session, name) == [1, 2]


@pytest.mark.parametrize("call, message", [
    ("create_tag(table => 't', tag => 'a')", "tag 'a' already exists"),
    ("create_tag(table => 't', tag => 'b', snapshot => 9)", "snapshot 9 of table .* does not exist"),
    ("create_tag(table => 't', tag => ' ')", "tag name must not be blank"),
    ("create_tag(table => 't', tag => 'b', time_retained => 'soon')", "time_retained must be a duration"),
    ("replace_tag(table => 't', tag => 'b')", "tag 'b' does not exist"),
    ("rename_tag(table => 't', tag => 'b', target_tag => 'c')", "tag 'b' does not exist"),
    ("rename_tag(table => 't', tag => 'a', target_tag => 'a')", "tag 'a' already exists"),
    ("delete_tag(table => 't', tag => 'a,,b')", "tag must be tag names separated by commas"),
    ("create_tag_from_timestamp(table => 't', tag => 'b', timestamp => 99999999999999)", "no snapshot"),
    ("create_tag_from_timestamp(table => 't', tag => 'b')", "timestamp .* must be given"),
    ("expire_tags(table => 't', older_than => 'yesterday')", "older_than must be a timestamp"),
])
def test_errors_are_one_line_and_change_nothing(session, call, message):
    table_with_snapshots(session, 2)
    session.sql("CALL sys.create_tag('t', 'a', 1)")
    with pytest.raises(ProcedureError, match=message) as e:
        session.sql(f"CALL sys.{call}")
    assert "\n" not in str(e.value)
    assert tags(session) == [("a", 1, None)]


def test_bad_automatic_creation_options_are_refused_by_the_trigger(session):
    table_with_snapshots(session, 1)
    session.sql("ALTER TABLE t SET TBLPROPERTIES ('tag.automatic-creation'='process-time', "
                "'tag.creation-period'='hourly', 'tag.creation-delay'='2 h')")
    with pytest.raises(ProcedureError, match="tag.creation-delay must be shorter than the tag period") as e:
        session.sql("CALL sys.trigger_tag_automatic_creation('t')")
    assert "\n" not in str(e.value) and tags(session) == []
