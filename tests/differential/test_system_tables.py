"""System tables against paimon-spark: every ``t$<name>`` and ``sys.<name>`` Paimon 2.0 serves, every
column with its type and values, over primary-key and append tables, partitioned or not, after
inserts, row-level changes, deletion vectors, compaction, tags, branches, consumers and schema changes;
time travel, projections and the filters pushed into the metadata scan (docs/system-tables.md).

Compaction that picks files by size ratio is made to pick alike on both sides ('compaction.size-ratio'
= '0' and an upper level that is clearly larger): the two writers' Parquet files differ in size, so a
ratio near 1 could tip either way.
"""

import pytest

# a primary-key table partitioned and bucketed, two writes (one an upsert)
PK = """
CREATE TABLE t (id INT, v STRING, dt STRING) PARTITIONED BY (dt)
TBLPROPERTIES ('primary-key' = 'id,dt', 'bucket' = '2');
INSERT INTO t VALUES (1, 'a', 'x'), (2, 'b', 'y'), (3, 'c', 'x');
INSERT INTO t VALUES (1, 'c', 'x');
"""

CASES = {
    "primary_key_table": PK + """
SELECT * FROM `t$snapshots`;
SELECT snapshot_id, delta_record_count FROM `t$snapshots` WHERE snapshot_id > 1;
SELECT schema_id, fields, partition_keys, primary_keys, from_json(options, 'map<string,string>'), comment, update_time
FROM `t$schemas` WHERE schema_id = 0;
SELECT * FROM `t$options`;
SELECT * FROM `t$files`;
SELECT partition, bucket, level, record_count FROM `t$files` WHERE partition IN ('{x}', '{z}') AND level = 0;
SELECT partition, count(*), sum(record_count) FROM `t$files` GROUP BY partition;
SELECT * FROM `t$file_key_ranges` WHERE bucket = 1;
SELECT * FROM `t$manifests`;
SELECT * FROM `t$partitions`;
SELECT partition, record_count, file_count FROM `t$partitions` WHERE partition = 'dt=y';
SELECT * FROM `t$buckets`;
SELECT * FROM `t$buckets` WHERE partition = '{x}' AND bucket = 1;
SELECT * FROM `t$audit_log`;
SELECT * FROM `t$binlog`;
SELECT * FROM `t$ro`;
SELECT * FROM `t$table_indexes`;
SELECT * FROM `t$consumers`;
SELECT * FROM `t$statistics`;
SELECT * FROM `t$aggregation_fields`;
SELECT * FROM `t$tags`;
SELECT * FROM `t$branches`;
SELECT * FROM `t$row_tracking`;
SELECT * FROM `t$nope`;
""",
    "append_table_unpartitioned": """
CREATE TABLE t (id INT, v STRING);
INSERT INTO t VALUES (1, 'a'), (2, NULL);
INSERT INTO t VALUES (3, 'c');
SELECT * FROM `t$files`;
SELECT * FROM `t$file_key_ranges`;
SELECT * FROM `t$manifests`;
SELECT * FROM `t$partitions`;
SELECT * FROM `t$buckets`;
SELECT * FROM `t$ro`;
DELETE FROM t WHERE id = 1;
UPDATE t SET v = 'z' WHERE id = 2;
MERGE INTO t USING (SELECT 5 AS id, 'e' AS v) s ON t.id = s.id WHEN NOT MATCHED THEN INSERT *;
INSERT OVERWRITE t VALUES (7, 'g');
TRUNCATE TABLE t;
SELECT snapshot_id, schema_id, commit_kind, total_record_count, delta_record_count, changelog_record_count,
next_row_id, operation FROM `t$snapshots`;
""",
    "statements_recorded_as_operations": """
CREATE TABLE p (id INT, v STRING, dt STRING) PARTITIONED BY (dt)
TBLPROPERTIES ('primary-key' = 'id,dt', 'bucket' = '1');
INSERT INTO p VALUES (1, 'a', 'x'), (2, 'b', 'y');
DELETE FROM p WHERE id = 1;
UPDATE p SET v = 'u' WHERE id = 2;
MERGE INTO p USING (SELECT 2 AS id, 'm' AS v, 'y' AS dt) s ON p.id = s.id AND p.dt = s.dt
WHEN MATCHED THEN UPDATE SET *;
INSERT OVERWRITE p PARTITION (dt = 'y') VALUES (3, 'c');
ALTER TABLE p DROP PARTITION (dt = 'y');
SELECT snapshot_id, commit_kind, total_record_count, delta_record_count, operation FROM `p$snapshots`;
CREATE TABLE c AS SELECT 1 AS id;
CREATE OR REPLACE TABLE c AS SELECT 2 AS id;
CREATE OR REPLACE TABLE c2 AS SELECT 3 AS id;
SELECT snapshot_id, commit_kind, total_record_count, operation FROM `c$snapshots`;
SELECT snapshot_id, commit_kind, operation FROM `c2$snapshots`;
""",
    "partition_values_rendered": """
CREATE TABLE t (id INT, d DATE, n INT, b BOOLEAN) PARTITIONED BY (d, n, b);
INSERT INTO t VALUES (1, DATE '2024-01-02', 5, true), (2, NULL, NULL, NULL);
SELECT partition, record_count FROM `t$files`;
SELECT partition, record_count FROM `t$files` WHERE partition = '{2024-01-02, 5, true}';
SELECT partition, record_count FROM `t$partitions`;
SELECT partition, bucket, record_count FROM `t$buckets`;
SELECT min_partition_stats, max_partition_stats FROM `t$manifests`;
SELECT * FROM sys.partitions;
""",
    "deletion_vectors_on_a_primary_key_table": """
CREATE TABLE t (id INT, v STRING) TBLPROPERTIES ('primary-key' = 'id', 'bucket' = '1',
'deletion-vectors.enabled' = 'true', 'compaction.size-ratio' = '0');
INSERT INTO t SELECT CAST(id AS INT), 'v' FROM range(50);
DELETE FROM t WHERE id = 3;
UPDATE t SET v = 'w' WHERE id = 4;
SELECT snapshot_id, commit_kind, total_record_count, delta_record_count, changelog_record_count, operation
FROM `t$snapshots`;
SELECT * FROM `t$table_indexes`;
SELECT partition, bucket, level, record_count, deleteRowCount, file_source, min_sequence_number, max_sequence_number
FROM `t$files`;
SELECT * FROM `t$partitions`;
SELECT * FROM `t$buckets`;
SELECT count(*), min(id), max(id), count_if(v = 'w') FROM `t$ro`;
SELECT * FROM `t$audit_log` WHERE id BETWEEN 2 AND 5;
SELECT * FROM `t$table_indexes` VERSION AS OF 3;
CALL sys.compact(table => 't');
SELECT snapshot_id, commit_kind, total_record_count, delta_record_count, operation FROM `t$snapshots`
WHERE snapshot_id > 5;
SELECT * FROM `t$table_indexes`;
SELECT partition, level, record_count, deleteRowCount, file_source FROM `t$files`;
SELECT count(*), count_if(v = 'w') FROM `t$ro`;
""",
    "deletion_vectors_on_an_append_table": """
CREATE TABLE t (id INT, v STRING, dt STRING) PARTITIONED BY (dt) TBLPROPERTIES ('deletion-vectors.enabled' = 'true',
'bucket' = '1', 'bucket-key' = 'id');
INSERT INTO t VALUES (1, 'a', 'x'), (2, 'b', 'x'), (3, 'c', 'y');
DELETE FROM t WHERE id = 2;
SELECT * FROM `t$table_indexes`;
SELECT partition, record_count, file_count, deleted_record_count FROM `t$partitions`;
SELECT partition, record_count, deleteRowCount FROM `t$files`;
SELECT snapshot_id, commit_kind, delta_record_count, operation FROM `t$snapshots`;
CALL sys.compact(table => 't', options => 'compaction.min.file-num=1');
SELECT * FROM `t$table_indexes`;
SELECT snapshot_id, commit_kind, operation FROM `t$snapshots` WHERE snapshot_id > 2;
""",
    "lookup_changelog": """
CREATE TABLE t (id INT, v STRING) TBLPROPERTIES ('primary-key' = 'id', 'bucket' = '1', 'changelog-producer' = 'lookup',
'compaction.size-ratio' = '0');
INSERT INTO t SELECT CAST(id AS INT), 'v' FROM range(30);
INSERT INTO t VALUES (1, 'c');
SELECT snapshot_id, commit_kind, total_record_count, delta_record_count, changelog_record_count,
changelog_manifest_list IS NULL FROM `t$snapshots`;
SELECT level, record_count, file_source FROM `t$files`;
SELECT * FROM `t$manifests`;
SELECT * FROM `t$audit_log` WHERE id < 3;
SELECT count(*) FROM `t$ro`;
""",
    "tags_branches_and_time_travel": PK + """
CALL sys.create_tag(table => 't', tag => 't1', snapshot => 1, time_retained => '2 d');
CALL sys.create_tag(table => 't', tag => 't2', time_retained => '1 d');
SELECT * FROM `t$tags`;
CALL sys.create_branch(table => 't', branch => 'b1', tag => 't1');
SELECT * FROM `t$branches`;
SELECT * FROM `t$branch_b1$files`;
SELECT * FROM `t$branch_b1$snapshots`;
INSERT INTO `t$branch_b1` VALUES (9, 'z', 'z');
SELECT * FROM `t$branch_b1$partitions`;
SELECT * FROM `t$branch_b1$audit_log`;
SELECT * FROM `t$files` VERSION AS OF 1;
SELECT * FROM `t$manifests` VERSION AS OF 't1';
SELECT * FROM `t$partitions` VERSION AS OF 1;
SELECT * FROM `t$audit_log` VERSION AS OF 1;
SELECT * FROM `t$ro` VERSION AS OF 1;
SELECT snapshot_id FROM `t$snapshots` VERSION AS OF 1;
CALL sys.reset_consumer(table => 't', consumer_id => 'c1', next_snapshot_id => 2);
SELECT * FROM `t$consumers`;
""",
    # our other spellings: unquoted names, a database before the quoted name, Flink's hints for time travel
    "other_spellings": PK + """
CALL sys.create_tag(table => 't', tag => 't1', snapshot => 1, time_retained => '2 d');
-- also: SELECT * FROM t$snapshots
SELECT * FROM `t$snapshots`;
-- also: SELECT * FROM default.t$options
SELECT * FROM `default`.`t$options`;
-- also: SELECT * FROM `t$files` /*+ OPTIONS('scan.snapshot-id' = '1') */
SELECT * FROM `t$files` VERSION AS OF 1;
-- also: SELECT * FROM `t$manifests` /*+ OPTIONS('scan.tag-name' = 't1') */
SELECT * FROM `t$manifests` VERSION AS OF 't1';
""",
    "time_travel_paimon_spark_gets_wrong": PK + """
INSERT OVERWRITE t VALUES (4, 'd', 'x');
-- differs: buckets-time-travel
SELECT * FROM `t$buckets` VERSION AS OF 2;
-- differs: files-time-travel-partitions
SELECT partition, bucket, record_count FROM `t$files` VERSION AS OF 2;
SELECT partition, record_count FROM `t$partitions` VERSION AS OF 2;
""",
    "schema_changes": PK + """
ALTER TABLE t ADD COLUMN w INT COMMENT 'new';
ALTER TABLE t SET TBLPROPERTIES ('snapshot.num-retained.max' = '20');
INSERT INTO t VALUES (5, 'e', 'x', 7);
SELECT schema_id, fields, partition_keys, primary_keys, from_json(options, 'map<string,string>'), comment
FROM `t$schemas`;
SELECT partition, schema_id, null_value_counts, min_value_stats, max_value_stats FROM `t$files`;
SELECT * FROM `t$options`;
SELECT snapshot_id, schema_id FROM `t$snapshots`;
SELECT * FROM `t$manifests` WHERE schema_id = 1;
""",
    "schema_options_order": """
CREATE TABLE t (id INT) TBLPROPERTIES ('bucket' = '1', 'bucket-key' = 'id', 'deletion-vectors.enabled' = 'true');
-- differs: schema-options-order
SELECT options FROM `t$schemas`;
""",
    # the columns' names fall in distinct buckets of Java's HashMap: ties are ordered by the JVM's expression
    # ids in paimon-spark (docs/compatibility.md#statistics-column-order)
    "aggregation_fields_and_statistics": """
CREATE TABLE t (id INT, total BIGINT COMMENT 'sum', m INT, s STRING, d DATE, a DECIMAL(10, 2), f DOUBLE, z BOOLEAN)
TBLPROPERTIES ('primary-key' = 'id', 'bucket' = '1', 'merge-engine' = 'aggregation',
'fields.total.aggregate-function' = 'sum', 'fields.m.aggregate-function' = 'max');
SELECT * FROM `t$aggregation_fields`;
ANALYZE TABLE t COMPUTE STATISTICS;
SELECT * FROM `t$statistics`;
INSERT INTO t VALUES (1, 10, 3, 'abc', DATE '2024-01-02', 1.50, 2.5, true),
(2, NULL, 1, 'de', NULL, -2.25, NULL, false);
INSERT INTO t VALUES (1, 5, 9, 'x', NULL, NULL, NULL, NULL);
ANALYZE TABLE t COMPUTE STATISTICS;
SELECT * FROM `t$statistics`;
ANALYZE TABLE t COMPUTE STATISTICS FOR ALL COLUMNS;
SELECT * FROM `t$statistics`;
SELECT snapshot_id, commit_kind, operation FROM `t$snapshots`;
""",
    "row_tracking": """
CREATE TABLE t (id INT, v STRING) TBLPROPERTIES ('row-tracking.enabled' = 'true');
INSERT INTO t VALUES (1, 'a'), (2, 'b');
INSERT INTO t VALUES (3, 'c');
SELECT * FROM `t$row_tracking`;
SELECT snapshot_id, next_row_id FROM `t$snapshots`;
SELECT first_row_id, record_count, min_sequence_number, max_sequence_number FROM `t$files`;
SELECT * FROM `t$manifests`;
""",
    "catalog_wide_tables": PK + """
CREATE TABLE a (id INT, v STRING);
INSERT INTO a VALUES (1, 'a');
SELECT * FROM sys.tables;
SELECT table_name, table_type FROM sys.tables WHERE table_name = 't';
SELECT * FROM sys.partitions;
SELECT * FROM sys.all_table_options;
SELECT * FROM sys.all_table_options WHERE database_name = 'default' AND table_name = 'a';
SELECT * FROM sys.catalog_options;
""",
    "audit_log_with_sequence_numbers": """
CREATE TABLE t (id INT, v STRING) TBLPROPERTIES ('primary-key' = 'id', 'bucket' = '1',
'table-read.sequence-number.enabled' = 'true');
INSERT INTO t VALUES (1, 'a');
-- differs: audit-log-sequence-number
SELECT * FROM `t$audit_log`;
SELECT rowkind, id, v FROM `t$audit_log`;
""",
    "file_indexes": """
CREATE TABLE t (id INT, v STRING) TBLPROPERTIES ('file-index.bloom-filter.columns' = 'v');
INSERT INTO t VALUES (1, 'a');
-- differs: file-indexes-table
SELECT column_name, index_type, storage_type, record_count FROM `t$file_indexes`;
""",
}


@pytest.mark.parametrize("name", CASES)
def test_case(differential, name):
    differential.check(name)
