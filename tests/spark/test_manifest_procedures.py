"""CALL sys.compact_manifest: the manifests merged into one COMPACT snapshot with ADD entries only,
the data and data files unchanged, and its error paths."""

import pytest

from paimon_sql.exceptions import PaimonError
from tests.spark.conftest import rows


def table_with_manifests(session):
    """Partitioned append table: four INSERTs and an INSERT OVERWRITE (DELETE entries) → five manifests."""
    session.sql("CREATE TABLE t (id INT, v STRING, p INT) PARTITIONED BY (p)")
    for i in range(4):
        session.sql(f"INSERT INTO t VALUES ({i}, 'v{i}', {i % 2})")
    session.sql("INSERT OVERWRITE t PARTITION (p = 0) VALUES (10, 'w')")


def manifests(session):
    return rows(session, "SELECT num_added_files, num_deleted_files FROM t$manifests")


def test_manifests_merge_into_one_and_the_data_stays(session):
    table_with_manifests(session)
    assert len(manifests(session)) == 5 and sum(d for _, d in manifests(session)) == 2
    data = rows(session, "SELECT * FROM t ORDER BY id")
    files = rows(session, "SELECT file_path, record_count FROM t$files ORDER BY file_path")
    df = session.sql("CALL sys.compact_manifest(table => 'default.t')")
    assert df.columns == ["result"]
    assert [tuple(r) for r in df.collect()] == [(True,)]
    assert manifests(session) == [(3, 0)]  # DELETE entries cancelled against their ADDs
    assert rows(session, "SELECT snapshot_id, commit_kind FROM t$snapshots ORDER BY snapshot_id DESC LIMIT 1") \
        == [(6, "COMPACT")]
    assert rows(session, "SELECT * FROM t ORDER BY id") == data == [(1, "v1", 1), (3, "v3", 1), (10, "w", 0)]
    assert rows(session, "SELECT file_path, record_count FROM t$files ORDER BY file_path") == files
    assert rows(session, "SELECT count(*) FROM t VERSION AS OF 4") == [(4,)]  # older snapshots still read
    session.sql("INSERT INTO t VALUES (20, 'x', 1)")  # later commits build on the merged base
    assert rows(session, "SELECT count(*) FROM t") == [(4,)] and len(manifests(session)) == 2


def test_nothing_to_merge_commits_nothing(session):
    session.sql("CREATE TABLE t (id INT, v STRING)")
    assert rows(session, "CALL sys.compact_manifest('t')") == [(True,)]  # no snapshot at all
    session.sql("INSERT INTO t VALUES (1, 'a')")
    assert rows(session, "CALL sys.compact_manifest('t')") == [(True,)]  # one manifest, ADDs only
    assert rows(session, "SELECT count(*) FROM t$snapshots") == [(1,)]


def test_primary_key_table_and_dry_run(session):
    session.sql("CREATE TABLE t (id INT, v STRING) TBLPROPERTIES ('primary-key' = 'id', 'bucket' = '1')")
    for i in range(3):
        session.sql(f"INSERT INTO t VALUES (1, 'v{i}'), ({i + 2}, 'x')")
    session.sql("CALL sys.compact(table => 't')")  # DELETE entries for the compacted files
    assert rows(session, "CALL sys.compact_manifest(table => 't', dry_run => true)") == [(True,)]
    assert len(manifests(session)) == 4 and rows(session, "SELECT count(*) FROM t$snapshots") == [(4,)]
    assert rows(session, "CALL sys.compact_manifest(table => 't', options => 'manifest.merge-min-count=100')") \
        == [(True,)]
    assert manifests(session) == [(1, 0)]
    assert rows(session, "SELECT * FROM t ORDER BY id") == [(1, "v2"), (2, "x"), (3, "x"), (4, "x")]


@pytest.mark.parametrize("call, message", [
    ("table => 't', manifest_sort_enabled => true", "sorted manifest compaction\\) is not supported yet"),
    ("table => 't', manifest_sort_partition_field => 'p'", "is not supported yet"),
    ("table => 't', options => 'nokeyvalue'", "options must be 'key=value,...'"),
    ("table => 'nope'", "not found"),
    ("table => 't', dry_run => 'maybe'", "Cannot cast StringType to BooleanType of dry_run"),
])
def test_bad_arguments_fail_in_one_line_and_change_nothing(session, call, message):
    table_with_manifests(session)
    with pytest.raises(PaimonError, match=message) as e:
        session.sql(f"CALL sys.compact_manifest({call})")
    assert "\n" not in str(e.value)
    assert len(manifests(session)) == 5 and rows(session, "SELECT count(*) FROM t$snapshots") == [(5,)]


def test_remove_unexisting_files_drops_lost_files_in_one_snapshot(session):
    table_with_manifests(session)
    paths = [p for (p,) in rows(session, "SELECT file_path FROM t$files WHERE partition = '{1}' ORDER BY file_path")]
    assert rows(session, "CALL sys.remove_unexisting_files('t')") == []  # nothing lost: no snapshot
    import os
    os.remove(paths[0].removeprefix("file:"))
    df = session.sql("CALL sys.remove_unexisting_files(table => 't', dry_run => true)")
    assert df.columns == ["fileName"]
    assert [r.fileName.endswith(os.path.basename(paths[0])) for r in df.collect()] == [True]
    assert rows(session, "SELECT count(*) FROM t$snapshots") == [(5,)]
    assert len(rows(session, "CALL sys.remove_unexisting_files(table => 't', parallelism => 2)")) == 1
    # a commit that deletes files is an OVERWRITE snapshot (Paimon's shouldBeOverwriteCommit)
    assert rows(session, "SELECT commit_kind FROM t$snapshots ORDER BY snapshot_id DESC LIMIT 1") == [("OVERWRITE",)]
    assert rows(session, "SELECT count(*) FROM t$files") == [(2,)]
    assert len(rows(session, "SELECT * FROM t")) == 2  # the lost file's row is gone, the others read


def test_remove_unexisting_files_bad_parallelism(session):
    session.sql("CREATE TABLE t (id INT)")
    with pytest.raises(PaimonError, match="parallelism must be at least 1, got 0"):
        session.sql("CALL sys.remove_unexisting_files(table => 't', parallelism => 0)")
