-- paimon-sql: tags, branches and consumers — a branch from a tag, written apart from main, then
-- fast-forwarded into main; consumers moved and cleared.
-- run with  paimon-sql -f sql_examples/branches_and_tags.sql   (docs/branches.md, docs/procedures.md)
CREATE DATABASE IF NOT EXISTS shop;
USE shop;
DROP TABLE IF EXISTS items;

CREATE TABLE items (id BIGINT, name STRING, price DOUBLE, PRIMARY KEY (id) NOT ENFORCED) WITH ('bucket' = '1');
INSERT INTO items VALUES (1, 'apple', 1.0), (2, 'pear', 2.0);

-- Tag the first snapshot, then go on writing main.
CALL sys.create_tag(table => 'items', tag => 'v1');
INSERT INTO items VALUES (3, 'plum', 3.0);

-- A branch holding the tag's snapshot: it has its own snapshots from there on.
CALL sys.create_branch(table => 'items', branch => 'dev', tag => 'v1');
SELECT branch_name FROM items$branches;

-- Writes to the branch (t$branch_<name>) never change main.
INSERT INTO `items$branch_dev` VALUES (2, 'pear', 2.5), (4, 'kiwi', 4.0);
SELECT * FROM `items$branch_dev` ORDER BY id;
SELECT * FROM items ORDER BY id;

-- Main takes the branch's state: its snapshots after the branch's base (the plum) are replaced by
-- the branch's; the branch stays as it is.
CALL sys.fast_forward(table => 'items', branch => 'dev');
SELECT * FROM items ORDER BY id;
SELECT snapshot_id FROM items$snapshots ORDER BY snapshot_id;

-- Consumers: where a streaming read with that consumer-id resumes; expiry keeps what they have not read.
CALL sys.reset_consumer(table => 'items', consumerId => 'job1', nextSnapshotId => 2);
CALL sys.reset_consumer(table => 'items', consumerId => 'audit', nextSnapshotId => 1);
SELECT * FROM items$consumers ORDER BY consumer_id;
CALL sys.clear_consumers(table => 'items', includingConsumers => 'job.*');
SELECT consumer_id FROM items$consumers;

-- A branch no longer needed: its files are kept while anything else reads them.
CALL sys.delete_branch(table => 'items', branch => 'dev');
SELECT count(*) AS branches FROM items$branches;

-- An append-only log whose history stays append-only, so branches can be merged file by file.
CREATE TABLE events (id INT, day STRING) PARTITIONED BY (day) TBLPROPERTIES ('branch-merge.enabled' = 'true');
INSERT INTO events VALUES (1, '2024-05-01');
CALL sys.create_branch(table => 'events', branch => 'backfill');
INSERT INTO events /*+ OPTIONS('branch' = 'backfill') */ VALUES (2, '2024-05-02');

-- Partitions main lacks are read from the fallback branch.
ALTER TABLE events SET TBLPROPERTIES ('scan.fallback-branch' = 'backfill');
SELECT * FROM events ORDER BY id;

-- Merge the branch's files into main (nothing is copied), then read main alone.
CALL sys.merge_branch(table => 'events', source_branch => 'backfill');
ALTER TABLE events UNSET TBLPROPERTIES ('scan.fallback-branch');
SELECT * FROM events ORDER BY id;
