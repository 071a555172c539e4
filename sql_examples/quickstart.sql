-- paimon-sql quickstart: run with  paimon-sql -f sql_examples/quickstart.sql
CREATE DATABASE IF NOT EXISTS quickstart;
USE quickstart;
DROP TABLE IF EXISTS orders;

-- a primary-key table, partitioned by day, 2 buckets per partition (Flink-style DDL)
CREATE TABLE orders (
  order_id BIGINT,
  customer STRING,
  amount   DOUBLE,
  dt       STRING,
  PRIMARY KEY (order_id, dt) NOT ENFORCED
) PARTITIONED BY (dt) WITH ('bucket' = '2');

INSERT INTO orders VALUES
  (1, 'ann', 10.0, '2024-06-01'),
  (2, 'bob', 20.0, '2024-06-01'),
  (3, 'cyd', 30.0, '2024-06-02');

-- an upsert: order 2 changes, order 4 is new
INSERT INTO orders VALUES (2, 'bob', 25.0, '2024-06-01'), (4, 'dan', 40.0, '2024-06-02');

SELECT * FROM orders ORDER BY order_id;
SELECT dt, count(*) AS orders, sum(amount) AS total FROM orders GROUP BY dt ORDER BY dt;

-- time travel: the table as the first INSERT left it
SELECT * FROM orders VERSION AS OF 1 ORDER BY order_id;
