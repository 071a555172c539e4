-- Spark's statements that wrap a query, over Paimon tables: temporary views, CACHE TABLE, EXPLAIN.
-- Run with  paimon-sql -f sql_examples/views_cache_explain.sql
CREATE DATABASE IF NOT EXISTS wrapped;
USE wrapped;
DROP TABLE IF EXISTS events;

CREATE TABLE events (id BIGINT, kind STRING, amount DOUBLE, dt STRING)
PARTITIONED BY (dt) TBLPROPERTIES ('primary-key' = 'id, dt', 'bucket' = '1');
INSERT INTO events VALUES (1, 'buy', 10.0, '2024-06-01'), (2, 'view', 0.0, '2024-06-01'),
                          (3, 'buy', 30.0, '2024-06-02');

-- a temporary view reads the table as of each query, not as of its creation
CREATE OR REPLACE TEMPORARY VIEW purchases (id, spent, day) AS
  SELECT id, amount, dt FROM events WHERE kind = 'buy';
SELECT count(*) AS purchases_before FROM purchases;
INSERT INTO events VALUES (4, 'buy', 40.0, '2024-06-02');
SELECT count(*) AS purchases_after FROM purchases;
SELECT day, sum(spent) AS total FROM purchases GROUP BY day ORDER BY day;

-- the table's rows cached in Spark; a commit after CACHE is never answered from the old cache
CACHE TABLE events;
INSERT INTO events VALUES (1, 'buy', 11.0, '2024-06-01');
SELECT id, amount FROM events WHERE id = 1;
UNCACHE TABLE events;

-- a query's rows cached under a name, as Spark caches them: fixed when CACHE ran
CACHE TABLE daily AS SELECT dt, count(*) AS n FROM events GROUP BY dt;
SELECT * FROM daily ORDER BY dt;

-- EXPLAIN of a query and of an INSERT: what each Paimon scan reads, then Spark's plan; nothing written
EXPLAIN SELECT kind, sum(amount) FROM events WHERE dt = '2024-06-02' GROUP BY kind;
EXPLAIN INSERT INTO events SELECT id + 100, kind, amount, dt FROM events WHERE dt = '2024-06-01';
SELECT count(*) AS rows_after_explain FROM events;

DROP VIEW purchases;
