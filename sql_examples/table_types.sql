-- Table types beyond data tables: views, format tables, object tables, materialized tables.
-- Runs end to end with: paimon-sql --warehouse /tmp/wh -f sql_examples/table_types.sql

-- == Views ==
-- A view kept by the catalog: every session reads its query anew, at the tables' latest snapshots.
CREATE TABLE v_orders (id INT, amount DOUBLE) TBLPROPERTIES ('primary-key' = 'id', 'bucket' = '1');
INSERT INTO v_orders VALUES (1, 10.0), (2, 20.0);
CREATE VIEW v_big (order_id COMMENT 'the order', amount) COMMENT 'orders over 15'
AS SELECT id, amount FROM v_orders WHERE amount > 15;
INSERT INTO v_orders VALUES (3, 30.0);
SELECT * FROM v_big ORDER BY order_id;
-- system tables and time travel inside a view
CREATE VIEW v_history AS SELECT snapshot_id, commit_kind FROM v_orders$snapshots;
CREATE VIEW v_first AS SELECT * FROM v_orders VERSION AS OF 1;
SELECT count(*) FROM v_history;
SELECT count(*) FROM v_first;
ALTER VIEW v_big AS SELECT id AS order_id, amount FROM v_orders WHERE amount > 25;
ALTER VIEW v_big RENAME TO v_large;
SHOW VIEWS LIKE 'v_*';
SHOW CREATE TABLE v_large;
DESCRIBE v_large;
SELECT table_name, table_type FROM sys.tables WHERE startswith(table_name, 'v_') ORDER BY table_name;
DROP VIEW v_first;

-- == Format tables ==
-- A directory of plain CSV files: Spark's own reader and writer, Hive-style dt=... directories, no snapshots.
CREATE TABLE fmt_events (id INT, name STRING, dt STRING) PARTITIONED BY (dt)
TBLPROPERTIES ('type' = 'format-table', 'file.format' = 'csv', 'field-delimiter' = '|', 'csv.include-header' = 'true');
INSERT INTO fmt_events VALUES (1, 'a', '2024-01-01'), (2, 'b', '2024-01-02'), (3, NULL, '2024-01-02');
-- replace one partition's files
INSERT OVERWRITE fmt_events PARTITION (dt = '2024-01-01') VALUES (10, 'z');
-- the filter reads the dt=2024-01-02 directory only
SELECT * FROM fmt_events WHERE dt = '2024-01-02' ORDER BY id;
-- the same rows as Parquet files, made by CREATE TABLE AS SELECT
CREATE TABLE fmt_events_parquet TBLPROPERTIES ('type' = 'format-table', 'file.format' = 'parquet')
AS SELECT * FROM fmt_events;
SELECT dt, count(*) AS n FROM fmt_events_parquet GROUP BY dt ORDER BY dt;
SHOW CREATE TABLE fmt_events;

-- == Object tables ==
-- The files under the table's own directory, listed at each read (Paimon 2.0's object table): put files
-- there and query them; nothing to refresh, no snapshots, never written.
CREATE DATABASE IF NOT EXISTS obj_demo;
CREATE TABLE obj_demo.obj_files WITH ('type' = 'object-table');
DESCRIBE obj_demo.obj_files;
-- Empty until files are put under <warehouse>/obj_demo.db/obj_files/ (the table's own schema/ files
-- are not objects); then, e.g.:
SELECT path, name, length FROM obj_demo.obj_files ORDER BY path;
SELECT count(*) AS files, sum(length) AS bytes FROM obj_demo.obj_files WHERE name LIKE '%.png';

-- == Materialized tables ==
-- A table that keeps a query's result (Flink's statements; refreshed by Spark batch runs).
CREATE DATABASE IF NOT EXISTS mt_shop;
USE mt_shop;
CREATE TABLE mt_orders (order_id BIGINT NOT NULL, customer STRING NOT NULL, amount DECIMAL(10, 2), day STRING);
INSERT INTO mt_orders VALUES (1, 'ann', 10.00, '2024-01-01'), (2, 'bob', 25.50, '2024-01-01'),
                             (3, 'ann', 7.25, '2024-01-02');

-- a projection/filter of an append table: refreshed by appending the new snapshots' rows
CREATE MATERIALIZED TABLE mt_big_orders
PARTITIONED BY (day)
FRESHNESS = INTERVAL '10' MINUTE
AS SELECT order_id, customer, amount, day FROM mt_orders WHERE amount >= 10;

-- sum/count/min/max by NOT NULL keys: a primary-key table with the aggregation merge engine,
-- refreshed by appending the partial aggregates of the new rows
CREATE MATERIALIZED TABLE mt_by_customer
FRESHNESS = INTERVAL '1' HOUR
AS SELECT customer, count(*) AS orders, sum(amount) AS total, max(amount) AS biggest
   FROM mt_orders GROUP BY customer;

INSERT INTO mt_orders VALUES (4, 'cid', 99.00, '2024-01-02'), (5, 'ann', 12.00, '2024-01-02');
ALTER MATERIALIZED TABLE mt_big_orders REFRESH;        -- incremental: 2 new rows
ALTER MATERIALIZED TABLE mt_by_customer REFRESH;       -- incremental: 2 groups merged
SELECT * FROM mt_by_customer ORDER BY customer;

-- a delete is not an append: the next refresh recomputes the query (INSERT OVERWRITE)
DELETE FROM mt_orders WHERE order_id = 2;
ALTER MATERIALIZED TABLE mt_by_customer REFRESH;       -- full
ALTER MATERIALIZED TABLE mt_big_orders REFRESH PARTITION (day = '2024-01-01');
SELECT * FROM mt_big_orders ORDER BY order_id;

-- it is a Paimon table: time travel and system tables work on it
SELECT count(*) FROM mt_big_orders VERSION AS OF 1;
SELECT snapshot_id, commit_kind FROM `mt_by_customer$snapshots` ORDER BY snapshot_id;
-- a new query may add columns after the table's (Flink's rule); the table is refreshed fully at once
ALTER MATERIALIZED TABLE mt_by_customer
AS SELECT customer, count(*) AS orders, sum(amount) AS total, max(amount) AS biggest, min(amount) AS smallest
   FROM mt_orders GROUP BY customer;
SHOW CREATE TABLE mt_by_customer;                       -- CREATE MATERIALIZED TABLE ... AS <the new query>

-- SUSPEND: `paimon-sql refresh` and paimon-sql-server skip it until RESUME
ALTER MATERIALIZED TABLE mt_by_customer SUSPEND;
ALTER MATERIALIZED TABLE mt_by_customer RESUME;
DROP MATERIALIZED TABLE mt_big_orders;
DROP MATERIALIZED TABLE IF EXISTS mt_big_orders;
USE default;
