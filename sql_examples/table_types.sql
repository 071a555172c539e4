-- Table types beyond data tables: views, format tables, object tables, materialized tables.
-- Runs end to end with: paimon-sql --warehouse /tmp/wh -f sql_examples/table_types.sql

-- == Views ==

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

-- == Materialized tables ==
