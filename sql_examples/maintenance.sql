-- paimon-sql: table maintenance — compaction, snapshot expiry, tags, rollback, orphan files.
-- run with  paimon-sql -f sql_examples/maintenance.sql   (procedures: docs/procedures.md,
-- expiry / rollback / orphan cleanup: docs/snapshot-lifecycle.md)
CREATE DATABASE IF NOT EXISTS maint;
USE maint;
DROP TABLE IF EXISTS orders;
DROP TABLE IF EXISTS events;

-- A primary-key table: every INSERT / UPDATE is a new snapshot with a new small sorted run.
CREATE TABLE orders (id BIGINT, dt STRING, status STRING, amount DOUBLE, PRIMARY KEY (dt, id) NOT ENFORCED)
PARTITIONED BY (dt) WITH ('bucket' = '1');
INSERT INTO orders VALUES (1, '2024-06-01', 'new', 10.0), (2, '2024-06-01', 'new', 20.0);
INSERT INTO orders VALUES (3, '2024-06-02', 'new', 30.0);
UPDATE orders SET status = 'paid' WHERE id = 2;

-- Three commits, three snapshots; the files table shows the runs piling up at level 0.
SELECT snapshot_id, commit_kind, total_record_count FROM orders$snapshots ORDER BY snapshot_id;
SELECT partition, level, record_count FROM orders$files ORDER BY partition, level;

-- Mark a known-good state: a tag keeps its snapshot's files even after the snapshot expires.
ALTER TABLE orders CREATE TAG `good` AS OF VERSION 3;

-- Full compaction of one partition: its runs merge into one file at the top level, in one
-- COMPACT snapshot. Readers see the same rows, with fewer files to open.
CALL sys.compact(table => 'orders', partitions => 'dt=2024-06-01', compact_strategy => 'full');
SELECT snapshot_id, commit_kind FROM orders$snapshots ORDER BY snapshot_id;
SELECT partition, level, record_count FROM orders$files ORDER BY partition, level;

-- An append table: small files from many small inserts.
CREATE TABLE events (id BIGINT, kind STRING, dt STRING) PARTITIONED BY (dt);
INSERT INTO events VALUES (1, 'click', '2024-06-01');
INSERT INTO events VALUES (2, 'view', '2024-06-01');
INSERT INTO events VALUES (3, 'click', '2024-06-01');
INSERT INTO events VALUES (4, 'view', '2024-06-02');
-- Compaction of an append table merges what Paimon's planner picks: files smaller than
-- target-file-size, in groups of at least compaction.min.file-num (5 by default: options =>
-- applies to this run only), a group closing once it holds twice target-file-size (each file
-- counted with source.split.open-file-cost, 4mb). 2024-06-01's three files merge into one,
-- 2024-06-02's one file stays.
CALL sys.compact(table => 'events', compact_strategy => 'minor',
                 options => 'compaction.min.file-num=3,target-file-size=8mb');
SELECT partition, count(*) AS files, sum(record_count) AS records FROM events$files GROUP BY partition ORDER BY partition;

-- Expire old snapshots: keep only the latest two (retain_min must not exceed retain_max).
-- Snapshots 1 and 2 go, with the files only they read (a tag would keep its snapshot's files).
CALL sys.expire_snapshots(table => 'orders', retain_max => 2, retain_min => 1);
SELECT snapshot_id, commit_kind FROM orders$snapshots ORDER BY snapshot_id;

-- A mistake: an order is deleted by accident.
DELETE FROM orders WHERE id = 1;
SELECT id, status FROM orders ORDER BY id;

-- Roll back to the tag: the later snapshots (and files only they used) go away.
CALL sys.rollback(table => 'orders', tag => 'good');
SELECT id, status FROM orders ORDER BY id;
SELECT snapshot_id, commit_kind FROM orders$snapshots ORDER BY snapshot_id;

-- Files no snapshot or tag names (left by failed writers) are orphans. dry_run only counts them;
-- older_than protects files a writer may still be committing (a fixed date here: none qualify).
CALL sys.remove_orphan_files(table => 'maint.orders', older_than => '2000-01-01 00:00:00', dry_run => true);

-- What can be called, and how.
SHOW PROCEDURES;
DESCRIBE PROCEDURE sys.compact;
