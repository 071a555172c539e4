"""Reading Paimon tables as paimon-spark reads them: time travel, incremental reads, Paimon's Spark
functions, metadata columns, temporary views, and statements only Spark's parser reads
(``DESCRIBE QUERY``, table options ``WITH (...)``, ``FOR SYSTEM_VERSION AS OF``)."""

import pytest

# three snapshots of a partitioned primary-key table, a tag on the second
_HISTORY = """
CREATE TABLE t (id INT, v STRING, dt STRING) PARTITIONED BY (dt)
  TBLPROPERTIES ('primary-key' = 'id,dt', 'bucket' = '2');
INSERT INTO t VALUES (1, 'a', 'x'), (2, 'b', 'y');
INSERT INTO t VALUES (1, 'a2', 'x'), (3, 'c', 'z');
DELETE FROM t WHERE id = 2;
CALL sys.create_tag(table => 't', tag => 'two', snapshot => 2);
"""

CASES = {
    "time_travel": _HISTORY + """
SELECT * FROM t VERSION AS OF 1;
SELECT * FROM t VERSION AS OF '2';
SELECT * FROM t VERSION AS OF 'two';
SELECT * FROM t FOR SYSTEM_VERSION AS OF 1;
SELECT * FROM t FOR SYSTEM_TIME AS OF '2999-01-01 00:00:00';
SELECT * FROM t TIMESTAMP AS OF 99999999999;
SELECT * FROM t TIMESTAMP AS OF '2000-01-01 00:00:00';
SELECT * FROM t VERSION AS OF 9;
SELECT * FROM t VERSION AS OF 'nine';
SELECT a.id, a.v, b.v FROM t VERSION AS OF 1 a JOIN t b ON a.id = b.id AND a.dt = b.dt;
-- also: SELECT * FROM t /*+ OPTIONS('scan.snapshot-id' = '1') */
SELECT * FROM t WITH ('scan.snapshot-id' = '1');
-- also: SELECT count(*) FROM t /*+ OPTIONS('scan.tag-name' = 'two') */ WHERE dt <> 'z'
SELECT count(*) FROM t WITH ('scan.tag-name' = 'two') WHERE dt <> 'z';
SELECT * FROM t WITH ('scan.snapshot-id' = '1') AS s WHERE s.dt = 'y';
SELECT * FROM t WITH ('scan.snapshot-id' = '1', 'scan.tag-name' = 'two');
SELECT snapshot_id FROM `t$snapshots` VERSION AS OF 2;
SELECT * FROM `t$files` VERSION AS OF 'two';
""",
    "incremental": _HISTORY + """
UPDATE t SET v = 'c2' WHERE id = 3;
SELECT * FROM paimon_incremental_query('t', 1, 4);
SELECT * FROM paimon_incremental_query('t', 0, 2);
SELECT * FROM paimon_incremental_query('t', 2, 2);
SELECT * FROM paimon_incremental_query('t', 3, 1);
SELECT * FROM paimon_incremental_query('t', 'two', 4);
SELECT rowkind, * FROM paimon_incremental_query('`t$audit_log`', 1, 4);
SELECT * FROM t WITH ('incremental-between' = '1,4', 'incremental-between-scan-mode' = 'diff');
CALL sys.create_tag(table => 't', tag => 'four', snapshot => 4);
SELECT * FROM paimon_incremental_query('t', 'two', 'four');
SELECT * FROM t WITH ('incremental-between' = 'two,four', 'incremental-between-scan-mode' = 'delta');
SELECT * FROM t WITH ('incremental-between' = 'two,four', 'incremental-between-tag-to-snapshot' = 'true');
SELECT * FROM paimon_incremental_between_timestamp('t', 0, 99999999999999);
SELECT * FROM paimon_incremental_between_timestamp('t', '1970-01-01 00:00:00', '2999-01-01 00:00:00');
SELECT * FROM paimon_incremental_between_timestamp('t', 99999999999998, 99999999999999);
CREATE TABLE c (id INT, v STRING) TBLPROPERTIES ('primary-key' = 'id', 'bucket' = '1', 'changelog-producer' = 'input');
INSERT INTO c VALUES (1, 'a'), (2, 'b');
INSERT INTO c VALUES (1, 'a2');
DELETE FROM c WHERE id = 2;
SELECT * FROM paimon_incremental_query('c', 0, 3);
SELECT rowkind, * FROM `c$audit_log` WITH ('incremental-between' = '1,3');
CREATE TABLE a (id INT, v STRING);
INSERT INTO a VALUES (1, 'a');
INSERT INTO a VALUES (2, 'b');
INSERT OVERWRITE a VALUES (5, 'e');
INSERT INTO a VALUES (6, 'f');
SELECT * FROM paimon_incremental_query('a', 0, 4);
SELECT * FROM a WITH ('incremental-between' = '1,4', 'incremental-between-scan-mode' = 'diff');
CALL sys.create_tag(table => 'a', tag => '2024-12-02', snapshot => 1);
CALL sys.create_tag(table => 'a', tag => '2024-12-03', snapshot => 2);
CALL sys.create_tag(table => 'a', tag => '2024-12-04', snapshot => 4);
SELECT * FROM paimon_incremental_to_auto_tag('a', '2024-12-04');
SELECT * FROM paimon_incremental_to_auto_tag('a', '2024-12-03');
SELECT * FROM paimon_incremental_to_auto_tag('a', '2024-12-02');
SELECT * FROM paimon_incremental_to_auto_tag('a', '2024-12-09');
SELECT * FROM paimon_incremental_to_auto_tag('a', 'latest');
SELECT * FROM a WITH ('incremental-to-auto-tag' = '2024-12-04');
""",
    "spark_parser_statements": _HISTORY + """
DESCRIBE QUERY SELECT * FROM t;
DESC QUERY SELECT id, count(*) AS n FROM t VERSION AS OF 1 GROUP BY id;
SELECT * FROM t WHERE;
SELECT where.id FROM t where ORDER BY 1;
WITH q AS (SELECT * FROM t WITH ('scan.snapshot-id' = '1')) SELECT count(*) FROM q;
SELECT count(*) FROM t WITH ('scan.snapshot-id' = '1') a JOIN t FOR SYSTEM_VERSION AS OF 2 b ON a.id = b.id;
SELECT * FROM t WHERE id IN (SELECT id FROM t FOR SYSTEM_VERSION AS OF 1 WHERE v = 'b');
SELECT * FROM nope WHERE;
SELECT * FROM t WHERE AND;
""",
    "functions": """
CREATE TABLE p (id INT, v STRING, dt STRING, h INT) PARTITIONED BY (dt, h);
INSERT INTO p VALUES (1, 'a', '2024-01-01', 3), (2, 'b', '2024-01-02', 1), (3, 'c', '2023-12-31', 9);
CREATE TABLE q (id INT, d DATE) PARTITIONED BY (d);
INSERT INTO q VALUES (1, DATE '2024-05-01'), (2, DATE '2024-12-01');
CREATE TABLE u (id INT);
CREATE TABLE e (id INT, dt STRING) PARTITIONED BY (dt);
SELECT sys.max_pt('p');
SELECT sys.max_pt('default.p') AS m, sys.max_pt('q') AS d;
SELECT * FROM p WHERE dt = sys.max_pt('p');
SELECT sys.max_pt('u');
SELECT sys.max_pt('e');
SELECT sys.max_pt('nope');
SELECT sys.bucket(2, 1), sys.bucket(4, 'a', 7);
SELECT id, sys.bucket(3, id) AS b, sys.mod_bucket(3, id) AS m, sys.hive_bucket(3, id) AS h,
       sys.hive_bucket(5, v, dt) AS hs, sys.bucket(5, v, h) AS bs FROM p;
SELECT sys.mod_bucket(4, -7), sys.mod_bucket(4, CAST(9 AS BIGINT)), sys.hive_bucket(8, CAST(-3 AS BIGINT));
SELECT sys.hive_bucket(16, 1.5D, true, CAST(2 AS SMALLINT), DATE '2024-01-01') AS h,
       sys.bucket(16, 1.5D, true, CAST(2 AS SMALLINT), DATE '2024-01-01') AS b;
SELECT sys.hive_bucket(97, CAST(12.50 AS DECIMAL(10, 2)), 'héllo', X'FF01', CAST(NULL AS INT)) AS h,
       sys.hive_bucket(97, CAST(-3 AS DECIMAL(10, 2)), '', -0.0D, 2.5F) AS h2,
       sys.bucket(97, CAST(12.50 AS DECIMAL(10, 2)), 'héllo', X'FF01', CAST(NULL AS INT)) AS b;
SELECT sys.mod_bucket(4, 'a');
SELECT hex(sys.path_to_descriptor('file:///x/y')) AS d;
SELECT sys.descriptor_to_string(sys.path_to_descriptor('/data/blob-1')) AS s;
SELECT sys.no_such_function(1);
""",
    "metadata_columns": """
CREATE TABLE m (id INT, v STRING, dt STRING) PARTITIONED BY (dt) TBLPROPERTIES ('bucket' = '2', 'bucket-key' = 'id');
INSERT INTO m VALUES (1, 'a', 'x'), (2, 'b', 'x'), (3, 'c', 'y');
SELECT id, __paimon_bucket, __paimon_partition, __paimon_row_index FROM m;
SELECT *, __paimon_partition.dt AS pdt FROM m WHERE __paimon_bucket = 0;
SELECT count(DISTINCT __paimon_file_path) FROM m;
SELECT m.__paimon_row_index, f.record_count FROM m JOIN `m$files` f ON m.__paimon_file_path = f.file_path;
CREATE TABLE k (id INT, v STRING) TBLPROPERTIES ('primary-key' = 'id', 'bucket' = '1');
INSERT INTO k VALUES (1, 'a');
SELECT id, __paimon_bucket, __paimon_partition, __paimon_row_index FROM k;
INSERT INTO k VALUES (1, 'b');
SELECT id, __paimon_row_index FROM k;
-- differs: metadata-columns-merged-buckets
SELECT id, __paimon_bucket FROM k;
""",
    "temp_views": _HISTORY + """
CREATE TEMPORARY VIEW v AS SELECT id, v FROM t WHERE dt <> 'z';
SELECT * FROM v;
INSERT INTO t VALUES (5, 'e', 'x');
SELECT * FROM v;
CREATE OR REPLACE TEMPORARY VIEW v AS SELECT * FROM t VERSION AS OF 1;
SELECT * FROM v;
DESCRIBE v;
CREATE TEMPORARY VIEW w (a, b) AS SELECT id, count(*) FROM t GROUP BY id;
SELECT * FROM w JOIN v ON w.a = v.id;
CREATE GLOBAL TEMPORARY VIEW g AS SELECT max(id) AS m FROM t;
SELECT * FROM global_temp.g;
DROP VIEW v;
SELECT * FROM v;
""",
}


@pytest.mark.parametrize("name", CASES)
def test_case(differential, name):
    differential.check(name)
