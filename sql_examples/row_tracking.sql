-- paimon-sql: row tracking and data evolution — rows keep their ids; an update of one column writes that column.
-- run with  paimon-sql -f sql_examples/row_tracking.sql
CREATE DATABASE IF NOT EXISTS tracking;
USE tracking;
DROP TABLE IF EXISTS wide;

-- each row gets a _ROW_ID once; data evolution merges files by it, column by column
CREATE TABLE wide (id BIGINT, name STRING, score DOUBLE, note STRING)
TBLPROPERTIES ('row-tracking.enabled' = 'true', 'data-evolution.enabled' = 'true',
               'deletion-vectors.enabled' = 'true');
INSERT INTO wide VALUES (1, 'ann', 1.0, 'a'), (2, 'bob', 2.0, 'b'), (3, 'cy', 3.0, 'c');

-- writes a file of `score` alone beside the rows; no other file changes
UPDATE wide SET score = score * 10 WHERE id >= 2;
SELECT id, name, score, _ROW_ID FROM wide ORDER BY id;
SELECT record_count, write_cols FROM `wide$files` ORDER BY write_cols NULLS FIRST;

-- deletes go by deletion vectors; MERGE INTO updates columns and appends new rows (new ids)
DELETE FROM wide WHERE id = 1;
MERGE INTO wide t USING (SELECT 3 AS id, 'CY' AS name UNION ALL SELECT 4, 'dee') s ON t.id = s.id
WHEN MATCHED THEN UPDATE SET t.name = s.name
WHEN NOT MATCHED THEN INSERT (id, name, score, note) VALUES (s.id, s.name, 0.0, 'new');

-- compaction folds each row's files back into one; ids stay
CALL sys.compact(table => 'tracking.wide');
SELECT id, name, score, note, _ROW_ID FROM wide ORDER BY id;
