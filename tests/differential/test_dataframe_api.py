"""The DataFrame API over Paimon tables as paimon-spark serves it: ``spark.read.format("paimon")``
with options, ``spark.table``, ``df.write.format("paimon")`` in each save mode, ``df.writeTo``,
and the session's ``SET spark.paimon.*`` options reaching them. Operations are ``%`` lines
(engine.dataframe_operation); a table is loaded and saved by its path, as paimon-spark's docs show.
Cases that change a schema turn paimon-spark's table cache off first (its cached table stays at
the old schema after a write by path evolves it)."""

import pytest

_TABLE = """
SET `spark.sql.catalog.paimon.cache-enabled` = false;
CREATE TABLE t (id INT, v STRING, dt STRING) PARTITIONED BY (dt) TBLPROPERTIES ('primary-key' = 'id,dt', 'bucket' = '2');
INSERT INTO t VALUES (1, 'a', 'x'), (2, 'b', 'y');
INSERT INTO t VALUES (1, 'a2', 'x'), (3, 'c', 'z');
CALL sys.create_tag(table => 't', tag => 'one', snapshot => 1);
"""

CASES = {
    "reads": _TABLE + """
% read default.t;
% read t scan.snapshot-id=1;
% read default.t scan.tag-name=one;
% read default.t incremental-between=1,2;
% read default.t scan.snapshot-id=7;
% read default.nope;
% table t;
% table default.t;
% read default.t scan.snapshot-id=1 scan.tag-name=one;
""",
    "save_modes": _TABLE + """
% save default.t append AS SELECT 4 AS id, 'd' AS v, 'x' AS dt;
% save default.t append file.format=orc AS SELECT 5 AS id, 'e' AS v, 'y' AS dt;
% save default.t AS SELECT 6 AS id, 'f' AS v, 'x' AS dt;
% save default.t overwrite AS SELECT 7 AS id, 'g' AS v, 'x' AS dt;
% read default.t;
SET spark.sql.sources.partitionOverwriteMode = dynamic;
% save default.t overwrite AS SELECT 8 AS id, 'h' AS v, 'y' AS dt;
RESET;
% read default.t;
% save default.t append write.merge-schema=true AS SELECT 11 AS id, 'k' AS v, 'x' AS dt, 1 AS extra;
% read default.t;
% save default.t append AS SELECT 12 AS id, 'l' AS v, 'x' AS dt, 2 AS extra;
% read default.t;
""",
    "save_extensions": _TABLE + """
-- differs: dataframe-save-ignore
% save default.t ignore AS SELECT 6 AS id, 'f' AS v, 'x' AS dt;
-- differs: dataframe-save-creates-table
% save default.n primary-key=id bucket=1 AS SELECT 1 AS id, 'a' AS v;
-- differs: dataframe-save-layout-options
% save default.t append bucket=3 AS SELECT 9 AS id, 'i' AS v, 'x' AS dt;
""",
    "save_by_position": _TABLE + """
-- differs: dataframe-save-by-position
% save default.t append AS SELECT 10 AS id, 'j' AS v, 'x' AS dt, 1 AS extra;
-- differs: dataframe-save-by-position
% read default.t;
% save default.t append AS SELECT 12 AS id, 'x' AS dt, 'l' AS v;
-- differs: dataframe-save-by-position
SELECT * FROM t WHERE id = 12;
""",
    "save_dynamic_overwrite_option": _TABLE + """
% save default.t overwrite partitionOverwriteMode=dynamic AS SELECT 8 AS id, 'h' AS v, 'y' AS dt;
-- differs: dataframe-partition-overwrite-option
% read default.t;
""",
    "write_to": _TABLE + """
% writeTo default.t append AS SELECT 4 AS id, 'd' AS v, 'x' AS dt;
% writeTo default.t append AS SELECT 5 AS id, 'y' AS dt;
% writeTo default.t overwritePartitions AS SELECT 6 AS id, 'f' AS v, 'x' AS dt;
SELECT * FROM t;
% writeTo default.t append AS SELECT 7 AS id, 'g' AS v, 'x' AS dt, 1 AS extra;
% writeTo default.t append write.merge-schema=true AS SELECT 8 AS id, 'h' AS v, 'z' AS dt, 1 AS extra;
SELECT * FROM t;
% writeTo default.w create +primary-key=id +bucket=1 +file.format=orc AS SELECT 1 AS id, 'a' AS v;
% writeTo default.w create AS SELECT 1 AS id;
SELECT * FROM w;
SELECT file_format FROM `w$files`;
% writeTo default.w append AS SELECT 1 AS id, 'b' AS v;
SELECT * FROM w;
% writeTo default.w createOrReplace AS SELECT 'x' AS s;
SELECT * FROM w;
% writeTo default.w replace +bucket=2 +bucket-key=s AS SELECT 'y' AS s;
SELECT * FROM w;
% writeTo default.nope replace AS SELECT 1 AS id;
""",
    "session_options": _TABLE + """
SET `spark.paimon.scan.snapshot-id` = 1;
% read default.t;
% table t;
% read default.t scan.snapshot-id=2;
RESET;
SET `spark.paimon.*.default.t.scan.snapshot-id` = 1;
% table t;
% read default.t;
RESET;
CREATE TABLE a (id INT, v STRING) TBLPROPERTIES ('write-only' = 'true');
SET `spark.paimon.file.format` = orc;
% save default.a append AS SELECT 1 AS id, 'a' AS v;
% writeTo default.a append AS SELECT 2 AS id, 'b' AS v;
% save default.a append file.format=avro AS SELECT 3 AS id, 'c' AS v;
RESET;
SET `spark.paimon.*.default.a.file.format` = orc;
% save default.a append AS SELECT 4 AS id, 'd' AS v;
% writeTo default.a append AS SELECT 5 AS id, 'e' AS v;
RESET;
SELECT file_format, count(*) FROM `a$files` GROUP BY 1;
SET `spark.paimon.write.merge-schema` = true;
% save default.t append AS SELECT 9 AS id, 'i' AS v, 'x' AS dt, 1 AS extra;
% writeTo default.t append AS SELECT 10 AS id, 'j' AS v, 'x' AS dt, 2 AS extra, 3 AS extra2;
RESET;
SELECT * FROM t;
""",
}


@pytest.mark.parametrize("name", CASES)
def test_case(differential, name):
    differential.check(name)
