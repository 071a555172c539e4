"""Paimon tables created, described and altered as paimon-spark does it: CREATE TABLE in every form
(TBLPROPERTIES, Flink's WITH and PRIMARY KEY as our other spelling, AS SELECT, LIKE, OR REPLACE),
DESCRIBE, SHOW CREATE TABLE, SHOW TBLPROPERTIES / COLUMNS / PARTITIONS, ALTER TABLE's columns,
properties, name and partitions, TRUNCATE, DROP, and the errors of each. Databases, listings and
views: test_ddl_catalog.py. Deliberate differences: docs/compatibility.md, "Catalog statements and DDL"."""

import pytest

CASES = {
    "create_with_every_clause": """
        -- also: CREATE TABLE t (id INT NOT NULL COMMENT 'the id', v STRING, s STRUCT<a: INT, b: STRING>, dt STRING, PRIMARY KEY (id, dt) NOT ENFORCED) PARTITIONED BY (dt) COMMENT 'the table' WITH ('bucket' = '2', 'file.format' = 'parquet')
        CREATE TABLE t (id INT NOT NULL COMMENT 'the id', v STRING, s STRUCT<a: INT, b: STRING>, dt STRING)
        USING paimon PARTITIONED BY (dt) COMMENT 'the table'
        TBLPROPERTIES ('primary-key' = 'id,dt', 'bucket' = '2', 'file.format' = 'parquet');
        INSERT INTO t VALUES (1, 'a', named_struct('a', 1, 'b', 'x'), 'x'), (2, 'b', NULL, 'y'), (3, 'c', NULL, 'y');
        -- ordered
        DESCRIBE t;
        -- ordered
        DESCRIBE EXTENDED t;
        -- ordered
        DESCRIBE TABLE FORMATTED t;
        SHOW CREATE TABLE t;
        SHOW TBLPROPERTIES t;
        SHOW TBLPROPERTIES t ('bucket');
        SHOW TBLPROPERTIES t ('owner');
        SHOW TBLPROPERTIES t ('nope');
        -- ordered
        SHOW COLUMNS IN t;
        SHOW COLUMNS FROM t IN default;
        SHOW PARTITIONS t;
        SHOW PARTITIONS t PARTITION (dt = 'y');
        -- ordered
        DESCRIBE t id;
        -- ordered
        DESCRIBE EXTENDED t s;
        SELECT * FROM paimon.default.t WHERE dt = 'y';
    """,
    "types_names_and_escapes": """
        CREATE TABLE `my t` (id BIGINT, `my col` STRING COMMENT 'it''s', s STRUCT<`a b`: INT, c: MAP<STRING, ARRAY<DECIMAL(5,2)>>>,
        c3 CHAR(3), v5 VARCHAR(5), ts TIMESTAMP, tn TIMESTAMP_NTZ, bi BINARY, dd DATE, f FLOAT, d DOUBLE, b BOOLEAN,
        ti TINYINT, si SMALLINT, dl DECIMAL(30,2)) COMMENT 'it''s a \\\\ table' TBLPROPERTIES ('k.x' = 'it''s');
        INSERT INTO `my t` (id, c3) VALUES (1, 'abc');
        -- ordered
        DESCRIBE EXTENDED `my t`;
        SHOW CREATE TABLE `my t`;
        SHOW TBLPROPERTIES `my t`;
        CREATE TABLE tracked (id INT, v STRING) TBLPROPERTIES ('row-tracking.enabled' = 'true');
        -- ordered
        DESCRIBE EXTENDED tracked;
        -- ordered
        DESCRIBE EXTENDED tracked _ROW_ID;
    """,
    "as_select_like_and_replace": """
        CREATE TABLE src (id INT, v STRING, dt STRING) PARTITIONED BY (dt) TBLPROPERTIES ('primary-key' = 'id,dt', 'bucket' = '2');
        INSERT INTO src VALUES (1, 'a', 'x'), (2, 'b', 'y');
        -- also: CREATE TABLE c1 PARTITIONED BY (dt) WITH ('file.format' = 'orc') AS SELECT * FROM src
        CREATE TABLE c1 PARTITIONED BY (dt) TBLPROPERTIES ('file.format' = 'orc') AS SELECT * FROM src;
        SHOW CREATE TABLE c1;
        SELECT * FROM c1;
        CREATE TABLE c2 TBLPROPERTIES ('primary-key' = 'id', 'bucket' = '1', 'comment' = 'from props') AS SELECT id, v FROM src;
        SHOW CREATE TABLE c2;
        CREATE TABLE IF NOT EXISTS c1 AS SELECT 1 AS x;
        -- same error
        CREATE TABLE c1 AS SELECT 1 AS x;
        SELECT count(*) FROM c1;
        CREATE TABLE l1 LIKE src;
        SHOW CREATE TABLE l1;
        SELECT count(*) FROM l1;
        CREATE TABLE l2 LIKE src TBLPROPERTIES ('bucket' = '3');
        SHOW TBLPROPERTIES l2;
        -- same error
        CREATE TABLE l1 LIKE src;
        -- same error
        CREATE TABLE l3 LIKE nope;
        CREATE OR REPLACE TABLE c2 (a BIGINT, b STRING) TBLPROPERTIES ('bucket' = '-1');
        SHOW CREATE TABLE c2;
        CREATE OR REPLACE TABLE c2 AS SELECT 7 AS z;
        SELECT * FROM c2;
        CREATE OR REPLACE TABLE c9 (a INT) COMMENT 'new';
        SHOW CREATE TABLE c9;
        DROP TABLE c9;
        DROP TABLE IF EXISTS c9;
        -- same error
        DROP TABLE c9;
        SHOW TABLES;
    """,
    "create_errors": """
        CREATE TABLE t (a INT);
        -- same error
        CREATE TABLE t (b INT);
        CREATE TABLE IF NOT EXISTS t (b INT);
        -- same error
        CREATE TABLE x1 (a INT) TBLPROPERTIES ('owner' = 'bob');
        -- also: CREATE TABLE x1 (a INT) WITH ('location' = '/tmp/x')
        -- same error
        CREATE TABLE x1 (a INT) TBLPROPERTIES ('location' = '/tmp/x');
        -- same error
        CREATE TABLE x1 (a INT) TBLPROPERTIES ('provider' = 'parquet');
        -- same error
        CREATE TABLE x1 (a INT) TBLPROPERTIES ('external' = 'true');
        -- same error
        CREATE TABLE x1 (a INT) TBLPROPERTIES ('is_managed_location' = 'true');
        -- same error
        CREATE TABLE x1 TBLPROPERTIES ('owner' = 'bob') AS SELECT 1 AS a;
        CREATE TABLE x1 (a INT) TBLPROPERTIES ('path' = '/tmp/x');
        CREATE TABLE x1 (a INT) LOCATION '/tmp/x';
        -- same error
        CREATE TABLE x1 (a INT, A STRING);
        CREATE TABLE x1 (a INT) PARTITIONED BY (b);
        CREATE TABLE x1 (a INT) TBLPROPERTIES ('primary-key' = 'b');
        CREATE TABLE x1 (a INT) TBLPROPERTIES ('bucket' = 'abc');
        CREATE TABLE x1 (a INT) TBLPROPERTIES ('file.format' = 'nope');
        -- same error
        CREATE TABLE nodb.x1 (a INT);
        SHOW TABLES;
    """,
    "alter_columns": """
        CREATE TABLE t (id INT, v STRING, s STRUCT<a: INT, b: STRING>, dt STRING) PARTITIONED BY (dt) TBLPROPERTIES ('primary-key' = 'id,dt');
        INSERT INTO t VALUES (1, 'a', named_struct('a', 1, 'b', 'x'), 'x'), (2, 'b', NULL, 'y');
        ALTER TABLE t ADD COLUMN n BIGINT COMMENT 'new';
        ALTER TABLE t ADD COLUMNS (f0 INT FIRST, f1 STRING AFTER id);
        ALTER TABLE t ADD COLUMN s.c DOUBLE AFTER a;
        ALTER TABLE t RENAME COLUMN v TO v2;
        ALTER TABLE t RENAME COLUMN s.b TO bb;
        ALTER TABLE t DROP COLUMN f0;
        ALTER TABLE t DROP COLUMN s.c;
        ALTER TABLE t ALTER COLUMN s.a TYPE BIGINT;
        ALTER TABLE t ALTER COLUMN v2 COMMENT 'vee';
        ALTER TABLE t ALTER COLUMN n FIRST;
        ALTER TABLE t ALTER COLUMN n AFTER id;
        ALTER TABLE t ALTER COLUMN n SET NOT NULL;
        ALTER TABLE t ALTER COLUMN n TYPE INT;
        ALTER TABLE t DROP COLUMN id;
        ALTER TABLE t DROP COLUMN nope;
        ALTER TABLE t ADD COLUMN v2 INT;
        ALTER TABLE nope ADD COLUMN x INT;
        -- ordered
        DESCRIBE EXTENDED t;
        SELECT * FROM t;
        CREATE TABLE nn (id INT NOT NULL, v STRING NOT NULL);
        ALTER TABLE nn ALTER COLUMN v DROP NOT NULL;
        INSERT INTO nn VALUES (1, NULL);
        SHOW CREATE TABLE nn;
        SELECT * FROM nn;
    """,
    "alter_properties_name_and_partitions": """
        CREATE TABLE t (id INT, v STRING, dt STRING, h INT) PARTITIONED BY (dt, h);
        INSERT INTO t VALUES (1, 'a', 'x', 1), (2, 'b', 'y', 1), (3, 'c', 'y', 2), (4, 'd', 'z', 3);
        ALTER TABLE t SET TBLPROPERTIES ('snapshot.num-retained.max' = '20', 'comment' = 'new comment');
        -- same error
        ALTER TABLE t SET TBLPROPERTIES ('owner' = 'bob');
        -- same error
        ALTER TABLE t SET TBLPROPERTIES ('location' = '/x');
        -- same error
        ALTER TABLE t UNSET TBLPROPERTIES ('owner');
        ALTER TABLE t SET TBLPROPERTIES ('bucket' = 'x');
        SHOW TBLPROPERTIES t;
        -- ordered
        DESCRIBE EXTENDED t;
        ALTER TABLE t UNSET TBLPROPERTIES ('snapshot.num-retained.max', 'comment');
        ALTER TABLE t UNSET TBLPROPERTIES IF EXISTS ('nope');
        SHOW CREATE TABLE t;
        ALTER TABLE t RENAME TO t2;
        CREATE TABLE other (a INT);
        -- same error
        ALTER TABLE t2 RENAME TO other;
        SHOW TABLES;
        ALTER TABLE t2 DROP PARTITION (dt = 'x', h = 1);
        ALTER TABLE t2 DROP PARTITION (dt = 'zz', h = 1);
        ALTER TABLE t2 DROP IF EXISTS PARTITION (dt = 'zz', h = 1);
        SHOW TABLE EXTENDED LIKE 't2' PARTITION (dt = 'y', h = 2);
        ALTER TABLE t2 DROP PARTITION (dt = 'z');
        ALTER TABLE t2 DROP PARTITION (dt = 'nope');
        SHOW PARTITIONS t2;
        TRUNCATE TABLE t2 PARTITION (dt = 'q');
        TRUNCATE TABLE t2 PARTITION (h = 2);
        SELECT * FROM t2;
        TRUNCATE TABLE t2;
        SELECT count(*) FROM t2;
        SHOW PARTITIONS t2;
        SELECT snapshot_id, commit_kind FROM `t2$snapshots`;
    """,
}


@pytest.mark.parametrize("name", CASES)
def test_case(differential, name):
    differential.check(name)
