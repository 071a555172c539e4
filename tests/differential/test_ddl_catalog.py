"""Databases, listings and views as paimon-spark answers them: CREATE / DROP / USE / SHOW / DESCRIBE
DATABASE, SHOW TABLES / VIEWS / TABLE EXTENDED, catalog views, and the forms only paimon-sql
accepts (docs/compatibility.md, "Our extensions": database comments and properties, views in the
filesystem catalog, USING another format, Spark's session catalog as a table's qualifier)."""

import pytest

CASES = {
    "databases": """
        CREATE DATABASE db1;
        CREATE DATABASE IF NOT EXISTS db1;
        -- same error
        CREATE DATABASE db1;
        CREATE SCHEMA db2;
        CREATE NAMESPACE db3;
        SHOW DATABASES;
        SHOW SCHEMAS;
        -- ordered
        DESCRIBE DATABASE db1;
        -- ordered
        DESCRIBE DATABASE EXTENDED db1;
        -- ordered
        DESCRIBE SCHEMA default;
        USE db1;
        CREATE TABLE s (a INT, b STRING);
        SELECT current_database();
        SHOW TABLES;
        SHOW TABLES IN default;
        USE default;
        SHOW TABLES IN db1;
        SHOW TABLES FROM db1 LIKE 's*|x';
        DROP DATABASE db1;
        DROP DATABASE db1 CASCADE;
        DROP DATABASE IF EXISTS db1;
        DROP DATABASE db1;
        DROP SCHEMA db2;
        DROP NAMESPACE db3 RESTRICT;
        SHOW DATABASES;
        USE nope;
        SELECT current_database();
    """,
    "listings": """
        CREATE TABLE t_1 (a INT);
        CREATE TABLE tx1 (a INT, dt STRING) PARTITIONED BY (dt) COMMENT 'c' TBLPROPERTIES ('primary-key' = 'a,dt');
        CREATE TABLE abc (a INT);
        SHOW TABLES;
        SHOW TABLES LIKE 't*';
        SHOW TABLES IN default 't.1|ABC';
        SHOW TABLES LIKE 'a* | t_1';
        CREATE TEMPORARY VIEW tv AS SELECT 1 AS one;
        SHOW TABLES;
        SHOW VIEWS;
        SHOW VIEWS LIKE 't*';
        -- differs: show-table-extended-properties
        SHOW TABLE EXTENDED LIKE 't_1|tx*';
        SHOW TABLE EXTENDED IN default LIKE 'zzz';
    """,
    "our_extensions": """
        CREATE DATABASE dbc COMMENT 'a db';
        -- differs: database-properties
        ALTER DATABASE dbc SET DBPROPERTIES ('k1' = 'v1');
        -- differs: database-properties
        DESCRIBE DATABASE EXTENDED dbc;
        -- same error
        ALTER DATABASE dbc SET DBPROPERTIES ('owner' = 'x');
        DROP DATABASE dbc;
        -- differs: using-other-format
        CREATE TABLE sp (a INT) USING parquet;
        DROP TABLE IF EXISTS sp;
        CREATE TABLE t (id INT, v STRING);
        INSERT INTO t VALUES (1, 'a'), (2, 'b');
        -- theirs: SELECT paimon.default.t.id, v FROM paimon.default.t
        SELECT spark_catalog.default.t.id, v FROM spark_catalog.default.t;
        -- differs: spark-catalog-qualifier
        SELECT current_catalog();
        CREATE TABLE sec (a INT) TBLPROPERTIES ('my.password' = 'hunter2');
        -- differs: secret-values
        SHOW TBLPROPERTIES sec;
        -- differs: secret-values
        SHOW CREATE TABLE sec;
        -- differs: alter-set-path
        ALTER TABLE t SET TBLPROPERTIES ('path' = '/tmp/elsewhere');
        SHOW TBLPROPERTIES t;
        -- differs: rename-into-missing-database
        ALTER TABLE t RENAME TO nodb.t3;
        -- differs: object-and-format-tables
        CREATE TABLE o TBLPROPERTIES ('type' = 'object-table');
        -- differs: object-and-format-tables
        SELECT count(*) FROM o;
        DROP TABLE IF EXISTS o;
        -- differs: object-and-format-tables
        CREATE TABLE f (a INT, b STRING) TBLPROPERTIES ('type' = 'format-table', 'file.format' = 'csv');
        -- differs: object-and-format-tables
        INSERT INTO f VALUES (1, 'x');
        -- differs: object-and-format-tables
        SELECT * FROM f;
        DROP TABLE IF EXISTS f;
    """,
    "catalog_views": """
        CREATE TABLE t (id INT, v STRING);
        INSERT INTO t VALUES (1, 'a'), (2, 'b');
        -- theirs: CREATE TEMPORARY VIEW v1 AS SELECT id, v FROM t WHERE id > 1
        CREATE VIEW v1 AS SELECT id, v FROM t WHERE id > 1;
        -- theirs: CREATE TEMPORARY VIEW v2 (a COMMENT 'first', b) AS SELECT id, v FROM t
        CREATE VIEW default.v2 (a COMMENT 'first', b) COMMENT 'a view' AS SELECT id, v FROM t;
        SELECT * FROM v1;
        INSERT INTO t VALUES (3, 'c');
        SELECT * FROM v1 JOIN v2 ON v1.id = v2.a;
        -- ordered
        DESCRIBE v2;
        -- differs: catalog-views
        SHOW VIEWS;
        DROP VIEW v1;
        -- theirs: DROP VIEW v2
        DROP VIEW default.v2;
        -- differs: catalog-views
        DROP VIEW IF EXISTS v1;
        DROP VIEW v1;
        DROP VIEW t;
        SHOW VIEWS;
    """,
}


@pytest.mark.parametrize("name", CASES)
def test_case(differential, name):
    differential.check(name)
