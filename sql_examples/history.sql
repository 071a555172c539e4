-- Looking inside a table and back in time: system tables, tags, incremental reads, schema evolution.
-- Run after quickstart.sql:  paimon-sql -f sql_examples/history.sql
USE quickstart;

SELECT snapshot_id, commit_kind, total_record_count, delta_record_count FROM orders$snapshots ORDER BY snapshot_id;
SELECT partition, bucket, level, record_count, min_key, max_key FROM orders$files ORDER BY partition, bucket;
SELECT partition, record_count, file_count FROM orders$partitions ORDER BY partition;

ALTER TABLE orders CREATE TAG IF NOT EXISTS `first_load` AS OF VERSION 1;
SHOW TAGS orders;
SELECT count(*) AS orders_at_first_load FROM orders VERSION AS OF 'first_load';

-- what the upsert changed, with the kind of each change
SELECT * FROM paimon_incremental_query('orders', 1, 2) ORDER BY order_id;
SELECT rowkind, order_id, amount FROM orders$audit_log WHERE dt = '2024-06-01' ORDER BY order_id;

-- schema evolution: old files keep reading, the new column is NULL for them
ALTER TABLE orders ADD COLUMN channel STRING AFTER customer;
INSERT INTO orders VALUES (5, 'eve', 'web', 50.0, '2024-06-02');
SELECT order_id, customer, channel FROM orders ORDER BY order_id;
SELECT schema_id, fields FROM orders$schemas ORDER BY schema_id;
