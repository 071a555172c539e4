-- paimon-sql: primary-key tables as an LSM tree — merge engines and row-level changes.
-- run with  paimon-sql -f sql_examples/lsm.sql
CREATE DATABASE IF NOT EXISTS lsm;
USE lsm;
DROP TABLE IF EXISTS stock;
DROP TABLE IF EXISTS profile;
DROP TABLE IF EXISTS orders;

-- aggregation: quantities add up, the price keeps its last non-null value
CREATE TABLE stock (item STRING, qty BIGINT, price DOUBLE, PRIMARY KEY (item) NOT ENFORCED)
WITH ('bucket' = '1', 'merge-engine' = 'aggregation', 'fields.qty.aggregate-function' = 'sum');
INSERT INTO stock VALUES ('apple', 10, 1.0), ('pear', 5, 2.0);
INSERT INTO stock VALUES ('apple', 3, NULL), ('pear', -2, 2.5);
SELECT * FROM stock ORDER BY item;

-- partial-update: each insert fills in the columns it knows
CREATE TABLE profile (id BIGINT, name STRING, city STRING, PRIMARY KEY (id) NOT ENFORCED)
WITH ('bucket' = '1', 'merge-engine' = 'partial-update');
INSERT INTO profile VALUES (1, 'ann', NULL);
INSERT INTO profile VALUES (1, NULL, 'oslo');
SELECT * FROM profile;

-- deduplicate (the default): UPDATE, DELETE and MERGE INTO write changed rows, never rewrite files
CREATE TABLE orders (id BIGINT, status STRING, amount DOUBLE, PRIMARY KEY (id) NOT ENFORCED)
WITH ('bucket' = '2', 'changelog-producer' = 'lookup');
INSERT INTO orders VALUES (1, 'new', 10.0), (2, 'new', 20.0), (3, 'new', 30.0);
UPDATE orders SET status = 'paid' WHERE id = 2;
DELETE FROM orders WHERE id = 3;
MERGE INTO orders t USING (SELECT 1 AS id, 'shipped' AS status, 11.0 AS amount
                           UNION ALL SELECT 4, 'new', 40.0) s ON t.id = s.id
  WHEN MATCHED THEN UPDATE SET status = s.status, amount = s.amount
  WHEN NOT MATCHED THEN INSERT *;
SELECT * FROM orders ORDER BY id;
