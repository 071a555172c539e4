"""Paimon's dynamic options set in Spark's session (``SET spark.paimon.<key>`` and
``spark.paimon.<catalog>.<db>.<table>.<key>``, any part ``*``), for reads and writes, as
paimon-spark reads them. paimon-spark's catalog is named ``paimon`` here, ours is Spark's session
catalog ``spark_catalog``: a per-table key naming the catalog is spelled with each one's name.
Cases that change a schema turn paimon-spark's table cache off first (its cached table stays at
the old schema after a write evolves it)."""

import pytest

_NO_CACHE = "SET `spark.sql.catalog.paimon.cache-enabled` = false;\n"

_THREE = """
CREATE TABLE t (id INT, v STRING) TBLPROPERTIES ('primary-key' = 'id', 'bucket' = '1');
INSERT INTO t VALUES (1, 'a');
INSERT INTO t VALUES (2, 'b');
INSERT INTO t VALUES (3, 'c');
CREATE TABLE u (id INT);
INSERT INTO u VALUES (1);
INSERT INTO u VALUES (2);
"""

CASES = {
    "reads": _THREE + """
SET `spark.paimon.scan.snapshot-id` = 1;
SELECT * FROM t;
SELECT count(*) FROM t JOIN u ON t.id = u.id;
SET `spark.paimon.*.default.t.scan.snapshot-id` = 2;
SELECT * FROM t;
SELECT * FROM u;
SELECT * FROM t VERSION AS OF 3;
SELECT * FROM t WITH ('scan.snapshot-id' = '3');
SELECT * FROM paimon_incremental_query('t', 1, 3);
RESET `spark.paimon.*.default.t.scan.snapshot-id`;
SELECT * FROM t;
RESET;
SET `spark.paimon.*.*.t.scan.snapshot-id` = 1;
SELECT * FROM t;
RESET;
SET `spark.paimon.*.*.*.scan.snapshot-id` = 2;
SELECT count(*) FROM t;
SELECT count(*) FROM u;
RESET;
-- theirs: SET `spark.paimon.paimon.default.t.scan.snapshot-id` = 1
-- differs: session-options-catalog
SET `spark.paimon.spark_catalog.default.t.scan.snapshot-id` = 1;
SELECT * FROM t;
RESET;
SET `spark.paimon.other.default.t.scan.snapshot-id` = 1;
SET `spark.paimon.*.other.t.scan.snapshot-id` = 1;
SET `spark.paimon.*.default.T.scan.snapshot-id` = 1;
SET `spark.paimon.default.t.scan.snapshot-id` = 1;
SET `spark.paimon.SCAN.snapshot-id` = 1;
SET `spark.paimon.no-such-option` = 1;
SELECT * FROM t;
RESET;
SET `spark.paimon.scan.snapshot-id` = 9;
SELECT * FROM t;
RESET;
SET `spark.paimon.scan.snapshot-id` = 1;
SELECT snapshot_id FROM `t$snapshots`;
SELECT count(*) FROM `t$files`;
CREATE TEMPORARY VIEW v AS SELECT * FROM t;
SELECT * FROM v;
""",  # the same options reaching spark.read and spark.table: test_dataframe_api.py::session_options
    "writes": _NO_CACHE + _THREE + """
SET `spark.paimon.file.format` = orc;
INSERT INTO t VALUES (4, 'd');
SET `spark.paimon.*.default.u.file.format` = avro;
INSERT INTO u VALUES (5);
INSERT INTO t VALUES (5, 'e');
UPDATE t SET v = 'x' WHERE id = 1;
RESET;
SELECT file_format, count(*) FROM `t$files` GROUP BY 1;
SELECT file_format, count(*) FROM `u$files` GROUP BY 1;
SET `spark.paimon.bucket` = 3;
INSERT INTO t VALUES (6, 'f');
RESET;
INSERT INTO t BY NAME SELECT 7 AS id, 'g' AS v, 1 AS extra;
SET `spark.paimon.write.merge-schema` = true;
INSERT INTO t BY NAME SELECT 7 AS id, 'g' AS v, 1 AS extra;
RESET;
SET `spark.paimon.*.default.t.write.merge-schema` = true;
INSERT INTO t BY NAME SELECT 8 AS id, 2 AS extra2;
RESET;
SELECT * FROM t;
CREATE TABLE s (id INT, v STRING, extra3 INT);
INSERT INTO s VALUES (1, 'y', 30), (9, 'n', 90);
SET `spark.paimon.write.merge-schema` = true;
MERGE INTO t USING s ON t.id = s.id WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *;
RESET;
SELECT * FROM t;
SELECT max(schema_id) FROM `t$schemas`;
""",
    "create_under_session_options": """
SET `spark.paimon.bucket` = 3;
-- differs: session-options-at-create
CREATE TABLE n (id INT) TBLPROPERTIES ('primary-key' = 'id');
RESET;
SELECT * FROM n;
""",
}


@pytest.mark.parametrize("name", CASES)
def test_case(differential, name):
    differential.check(name)
