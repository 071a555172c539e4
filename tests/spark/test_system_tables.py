"""System tables after a known history: two appends, a full compaction, a tag and a branch.

History of ``db.t`` (primary key (id, dt), partitioned by dt, 2 buckets):
  snapshot 1 APPEND   +(1,a,x) +(2,b,x) +(3,c,y)
  snapshot 2 APPEND   +(1,A,x)                      -> tag 'v2'
  snapshot 3 COMPACT  full compaction: every bucket one file at the max level
  snapshot 4 APPEND   +(4,d,y)                      (level 0: not in $ro)
  branch 'b1' created from tag 'v2'
"""

import json

import pytest

from paimon_sql.exceptions import PaimonError
from spark.conftest import rows

DDL = ("CREATE TABLE db.t (id INT, name STRING, dt STRING) PARTITIONED BY (dt) "
       "TBLPROPERTIES ('primary-key' = 'id,dt', 'bucket' = '2', 'fields.name.aggregate-function' = 'max')")


@pytest.fixture
def history(session):
    session.sql("CREATE DATABASE db")
    session.sql(DDL)
    session.sql("INSERT INTO db.t VALUES (1, 'a', 'x'), (2, 'b', 'x'), (3, 'c', 'y')")
    session.sql("INSERT INTO db.t VALUES (1, 'A', 'x')")
    session.sql("ALTER TABLE db.t CREATE TAG v2")
    table = session.catalog.get_table("db.t")
    assert table.compact(full=True) == 3
    session.sql("INSERT INTO db.t VALUES (4, 'd', 'y')")
    table.branch_manager.create("b1", table, tag="v2")
    return session


def test_snapshots_and_pushed_snapshot_id_filter(history):
    got = rows(history, "SELECT snapshot_id, schema_id, commit_kind, total_record_count, delta_record_count "
                        "FROM db.t$snapshots ORDER BY snapshot_id")
    assert got == [(1, 0, "APPEND", 3, 3), (2, 0, "APPEND", 4, 1), (3, 0, "COMPACT", 3, -1), (4, 0, "APPEND", 4, 1)]
    assert rows(history, "SELECT snapshot_id FROM `db.t$snapshots` WHERE snapshot_id >= 3 ORDER BY 1") == [(3,), (4,)]
    # joined with $schemas, as seed 003 shows
    joined = rows(history, "SELECT s.snapshot_id, sc.primary_keys FROM db.t$snapshots s "
                           "JOIN db.t$schemas sc ON s.schema_id = sc.schema_id WHERE s.snapshot_id = 2")
    assert joined == [(2, '["id","dt"]')]


def test_schemas_options_and_aggregation_fields(history):
    (sid, fields, parts, pks, options, comment), = rows(
        history, "SELECT schema_id, fields, partition_keys, primary_keys, options, comment FROM db.t$schemas")
    assert sid == 0 and [f["name"] for f in json.loads(fields)] == ["id", "name", "dt"]
    assert json.loads(parts) == ["dt"] and json.loads(pks) == ["id", "dt"] and comment is None
    assert json.loads(options)["bucket"] == "2"
    assert ("bucket", "2") in rows(history, "SELECT * FROM db.t$options")
    agg = rows(history, "SELECT field_name, function FROM db.t$aggregation_fields ORDER BY field_name")
    assert ("name", "[max]") in agg and ("id", "[]") in agg


def test_files_buckets_partitions_and_key_ranges(history):
    files = rows(history, "SELECT partition, level, record_count, min_key, max_key, file_source "
                          "FROM db.t$files ORDER BY partition, level, min_key")
    top = 5  # num-sorted-run.compaction-trigger (5) + 1 levels: max level 5
    assert files == [("{x}", top, 2, "[1]", "[2]", "COMPACT"), ("{y}", 0, 1, "[4]", "[4]", "APPEND"),
                     ("{y}", top, 1, "[3]", "[3]", "APPEND")]  # upgraded in place, as Paimon keeps its source
    by_bucket = rows(history, "SELECT partition, bucket, count(*) FROM db.t$files GROUP BY partition, bucket")
    stats, = rows(history, "SELECT min_value_stats, max_value_stats, null_value_counts FROM db.t$files "
                           "WHERE partition = '{x}'")
    assert stats == ("{dt=x, id=1, name=A}", "{dt=x, id=2, name=b}", "{dt=0, id=0, name=0}")
    # pushed filters: partition / bucket / level
    assert {r[0] for r in rows(history, "SELECT level FROM db.t$files WHERE level = 0")} == {0}
    assert rows(history, "SELECT count(*) FROM db.t$files WHERE bucket = 0 AND partition = '{x}'") == [(1,)]
    assert rows(history, "SELECT partition, record_count, file_count, total_buckets FROM db.t$partitions "
                         "ORDER BY partition") == [("dt=x", 2, 1, 2), ("dt=y", 2, 2, 2)]
    assert sorted(rows(history, "SELECT partition, bucket, file_count FROM db.t$buckets")) == sorted(by_bucket)
    assert sorted(rows(history, "SELECT '{x}', bucket, file_count FROM db.t$buckets WHERE partition = '{x}'")) == \
        sorted(r for r in by_bucket if r[0] == "{x}")
    assert rows(history, "SELECT count(*) FROM db.t$file_key_ranges") == [(3,)]


def test_system_tables_travel_in_time(history):
    # $files at snapshot 2: the three level-0 files of the two appends
    assert rows(history, "SELECT count(*), max(level) FROM db.t$files /*+ OPTIONS('scan.snapshot-id'='2') */") == \
        [(3, 0)]
    assert rows(history, "SELECT count(*) FROM db.t$files VERSION AS OF 'v2'") == [(3,)]
    assert rows(history, "SELECT count(*) FROM db.t$manifests VERSION AS OF 1") == [(1,)]
    assert rows(history, "SELECT num_added_files, min_partition_stats, max_partition_stats FROM db.t$manifests "
                         "/*+ OPTIONS('scan.tag-name'='v2') */ ORDER BY num_added_files") == \
        [(1, "{x}", "{x}"), (2, "{x}", "{y}")]


def test_tags_branches_and_branch_reads(history):
    assert rows(history, "SELECT tag_name, snapshot_id, record_count FROM db.t$tags") == [("v2", 2, 4)]
    assert [r[0] for r in rows(history, "SELECT branch_name FROM db.t$branches")] == ["b1"]
    # the branch holds the tagged data: the upsert of id 1 but not id 4
    assert rows(history, "SELECT id, name FROM db.t$branch_b1 ORDER BY id") == [(1, "A"), (2, "b"), (3, "c")]
    assert rows(history, "SELECT snapshot_id FROM db.t$branch_b1$snapshots") == [(2,)]
    with pytest.raises(PaimonError, match="branch 'nope'"):
        history.sql("SELECT * FROM db.t$branch_nope")


def test_read_optimized_audit_log_and_binlog(history):
    # $ro: only the compacted files; row 4 sits at level 0
    assert rows(history, "SELECT id, name FROM db.t$ro ORDER BY id") == [(1, "A"), (2, "b"), (3, "c")]
    assert rows(history, "SELECT rowkind, id, name FROM db.t$audit_log WHERE dt = 'y' ORDER BY id") == \
        [("+I", 3, "c"), ("+I", 4, "d")]
    assert rows(history, "SELECT rowkind, id, name FROM db.t$binlog WHERE array_contains(id, 4)") == \
        [("+I", [4], ["d"])]


def test_audit_log_keeps_deletes_until_compacted(session):
    session.sql("CREATE DATABASE db")
    session.sql("CREATE TABLE db.k (id INT, v STRING) TBLPROPERTIES ('primary-key' = 'id', 'bucket' = '1', "
                "'table-read.sequence-number.enabled' = 'true')")
    session.sql("INSERT INTO db.k VALUES (1, 'a'), (2, 'b')")
    session.sql("DELETE FROM db.k WHERE id = 2")
    got = rows(session, "SELECT rowkind, _SEQUENCE_NUMBER, id, v FROM db.k$audit_log ORDER BY id")
    assert [(k, i, v) for k, _, i, v in got] == [("+I", 1, "a"), ("-D", 2, "b")]
    assert got[1][1] > got[0][1]
    assert rows(session, "SELECT id FROM db.k") == [(1,)]


def test_append_table_audit_log_and_table_indexes_with_deletion_vectors(session):
    session.sql("CREATE DATABASE db")
    session.sql("CREATE TABLE db.a (id INT, v STRING) TBLPROPERTIES ('deletion-vectors.enabled' = 'true')")
    session.sql("INSERT INTO db.a VALUES (1, 'a'), (2, 'b'), (3, 'c')")
    session.sql("DELETE FROM db.a WHERE id = 2")
    assert rows(session, "SELECT rowkind, id FROM db.a$audit_log ORDER BY id") == [("+I", 1), ("+I", 3)]
    (kind, count, ranges), = rows(session, "SELECT index_type, row_count, dv_ranges FROM db.a$table_indexes")
    assert kind == "DELETION_VECTORS" and count == 1 and ranges[0]["_CARDINALITY"] == 1
    assert rows(session, "SELECT deleted_record_count FROM db.a$partitions") == [(1,)]


def test_global_system_tables(history, spark):
    # sizes come from a catalog's snapshot records, which the filesystem catalog keeps none of (as Java's)
    assert rows(history, "SELECT database_name, table_name, table_type, partitioned, primary_key, owner, "
                         "created_at, record_count FROM sys.tables WHERE table_name = 't'") == \
        [("db", "t", "table", True, True, spark.sparkContext.sparkUser(), None, None)]
    assert rows(history, "SELECT partition_name, file_count FROM sys.partitions WHERE table_name = 't' "
                         "ORDER BY 1") == [("dt=x", 1), ("dt=y", 2)]
    table_options = rows(history, "SELECT * FROM sys.all_table_options WHERE table_name = 't'")
    assert ("db", "t", "bucket", "2") in table_options
    assert ("db", "t", "path", history.catalog.get_table("db.t").path) in table_options
    with pytest.raises(PaimonError, match="needs the catalog option 'catalog-options-table.enabled'"):
        history.sql("SELECT * FROM sys.catalog_options")
    import paimon_sql
    enabled = paimon_sql.connect(history.warehouse, spark=spark.newSession(),
                                 catalog_options={"catalog-options-table.enabled": "true"})
    assert rows(enabled, "SELECT * FROM sys.catalog_options ORDER BY key") == \
        [("catalog-options-table.enabled", "true"), ("warehouse", history.warehouse)]


def test_system_table_errors(history):
    with pytest.raises(PaimonError, match=r"unknown system table 'db.t\$nope'"):
        history.sql("SELECT * FROM db.t$nope")
    with pytest.raises(PaimonError, match="does not exist"):
        history.sql("SELECT * FROM db.missing$files")
    with pytest.raises(PaimonError, match="read-only"):
        history.sql("INSERT INTO db.t$files VALUES (1)")
    with pytest.raises(PaimonError, match="snapshot 9 does not exist"):
        history.sql("SELECT * FROM db.t$files /*+ OPTIONS('scan.snapshot-id'='9') */")


def test_filters_are_pushed_into_the_metadata_scan(session):
    """Metadata a pushed filter rules out is never read: corrupting it breaks only unfiltered queries."""
    session.sql("CREATE DATABASE db")
    session.sql("CREATE TABLE db.p (id INT, dt STRING) PARTITIONED BY (dt)")
    session.sql("INSERT INTO db.p VALUES (1, 'x')")
    session.sql("INSERT INTO db.p VALUES (2, 'y')")
    table = session.catalog.get_table("db.p")
    # the manifest holding partition y, and snapshot 1's file
    snap2 = table.snapshot_manager.snapshot(2)
    y_manifest = table.manifest_list(snap2.delta_manifest_list)[0].file_name
    table.io.write_bytes(table.paths.manifest_path(y_manifest), b"not avro")
    table.io.write_bytes(table.paths.snapshot_path(1), b"{not json")
    assert rows(session, "SELECT record_count FROM db.p$files WHERE partition = '{x}'") == [(1,)]
    assert rows(session, "SELECT snapshot_id FROM db.p$snapshots WHERE snapshot_id = 2") == [(2,)]
    with pytest.raises(PaimonError):
        session.sql("SELECT * FROM db.p$files").collect()
    with pytest.raises(PaimonError):
        session.sql("SELECT * FROM db.p$snapshots").collect()


def test_batch_scan_modes(history):
    # compacted-full: the latest COMPACT snapshot (3), before row 4 was added
    assert rows(history, "SELECT id FROM db.t /*+ OPTIONS('scan.mode' = 'compacted-full') */ ORDER BY id") == \
        [(1,), (2,), (3,)]
    assert rows(history, "SELECT count(*) FROM db.t /*+ OPTIONS('scan.mode' = 'latest-full') */") == [(4,)]
    assert rows(history, "SELECT count(*) FROM db.t /*+ OPTIONS('scan.mode' = 'from-snapshot', "
                         "'scan.snapshot-id' = '1') */") == [(3,)]
    with pytest.raises(PaimonError, match="needs option 'scan.timestamp-millis'"):
        history.sql("SELECT * FROM db.t /*+ OPTIONS('scan.mode' = 'from-timestamp') */")


def test_branch_writes_stay_on_the_branch_and_describe(history):
    history.sql("INSERT INTO db.t$branch_b1 VALUES (9, 'z', 'x')")
    assert rows(history, "SELECT id FROM db.t$branch_b1 ORDER BY id") == [(1,), (2,), (3,), (9,)]
    assert rows(history, "SELECT id FROM db.t ORDER BY id") == [(1,), (2,), (3,), (4,)]
    assert rows(history, "SELECT snapshot_id FROM db.t$branch_b1$snapshots ORDER BY 1") == [(2,), (3,)]
    described = rows(history, "DESCRIBE db.t$snapshots")
    assert described[0] == ("snapshot_id", "bigint", None)  # as Spark describes its own tables
    assert [r[0] for r in rows(history, "DESCRIBE db.t$branch_b1")][:3] == ["id", "name", "dt"]


def test_row_level_changes_on_a_branch(session):
    session.sql("CREATE DATABASE db")
    session.sql("CREATE TABLE db.a (id INT, v STRING)")
    session.sql("INSERT INTO db.a VALUES (1, 'a'), (2, 'b')")
    table = session.catalog.get_table("db.a")
    table.branch_manager.create("dev", table)
    session.sql("INSERT INTO db.a$branch_dev VALUES (3, 'c'), (4, 'd')")
    session.sql("DELETE FROM db.a$branch_dev WHERE id = 3")
    session.sql("UPDATE db.a$branch_dev SET v = 'D' WHERE id = 4")
    assert rows(session, "SELECT * FROM db.a$branch_dev ORDER BY id") == [(4, "D")]
    assert rows(session, "SELECT * FROM db.a ORDER BY id") == [(1, "a"), (2, "b")]


def test_file_indexes(session):
    session.sql("CREATE DATABASE db")
    session.sql("CREATE TABLE db.ix (id INT, c STRING, s STRING) TBLPROPERTIES ("
                "'file-index.bitmap.columns' = 'c', 'file-index.bloom-filter.columns' = 's', "
                "'file-index.in-manifest-threshold' = '1 b')")  # every index in its own .index file
    session.sql("INSERT INTO db.ix VALUES (1, 'a', 'x'), (2, 'b', 'y')")
    got = rows(session, "SELECT column_name, index_type, storage_type, index_file_path LIKE '%.index', is_empty "
                        "FROM db.ix$file_indexes ORDER BY column_name")
    assert {g[:4] for g in got} == {("c", "bitmap", "FILE", True), ("s", "bloom-filter", "FILE", True)}
    assert not any(g[4] for g in got)


def test_analyze_and_statistics(session):
    session.sql("CREATE DATABASE db")
    session.sql("CREATE TABLE db.s (id INT, name STRING, v DOUBLE) TBLPROPERTIES ('primary-key' = 'id', "
                "'bucket' = '1')")
    session.sql("INSERT INTO db.s VALUES (1, 'ann', 1.5), (2, 'bo', NULL), (3, 'cyd', 3.5)")
    session.sql("INSERT INTO db.s VALUES (2, 'bob', 2.5)")  # an upsert: 4 stored rows, 3 merged
    assert rows(session, "SELECT * FROM db.s$statistics") == []
    session.sql("ANALYZE TABLE db.s COMPUTE STATISTICS FOR COLUMNS id, name")
    (sid, schema_id, count, size, colstat), = rows(session, "SELECT * FROM db.s$statistics")
    # the size as paimon-spark computes it: the files' size times (merged / stored rows) truncated, here 0
    assert (sid, schema_id, count, size) == (2, 0, 3, 0)
    stats = json.loads(colstat)  # Spark's ANALYZE: lengths for every type, no min or max for strings
    assert stats["id"] == {"colId": 0, "distinctCount": 3, "min": "1", "max": "3", "nullCount": 0, "avgLen": 4,
                           "maxLen": 4}
    assert stats["name"] == {"colId": 1, "distinctCount": 3, "nullCount": 0, "avgLen": 3, "maxLen": 3}
    assert "v" not in stats and colstat.startswith('{\n  "')  # pretty-printed, as Java prints it
    assert rows(session, "SELECT commit_kind FROM db.s$snapshots WHERE snapshot_id = 3") == [("ANALYZE",)]
    assert rows(session, "SELECT count(*) FROM db.s") == [(3,)]  # an ANALYZE changes no data
    session.sql("INSERT INTO db.s VALUES (4, 'dan', 4.0)")  # later snapshots keep naming the statistics
    assert rows(session, "SELECT snapshot_id FROM db.s$statistics") == [(2,)]
    assert rows(session, "SELECT * FROM db.s$statistics VERSION AS OF 2") == []
    session.sql("ANALYZE TABLE db.s COMPUTE STATISTICS")
    assert rows(session, "SELECT snapshot_id, mergedRecordCount, colstat FROM db.s$statistics") == [(4, 4, "{ }")]
