"""Tags and branches against paimon-spark: the tag and branch procedures, Paimon's ALTER TABLE ...
TAG statements and SHOW TAGS, and reading and writing tags and branches (``VERSION AS OF``,
``t$branch_b``, ``spark.paimon.branch``), with their effects read back from ``$tags``,
``$branches``, ``$snapshots`` and the rows."""

import pytest

THREE_SNAPSHOTS = """
CREATE TABLE t (id INT, v STRING) TBLPROPERTIES ('primary-key' = 'id', 'bucket' = '1');
INSERT INTO t VALUES (1, 'a');
INSERT INTO t VALUES (2, 'b');
INSERT INTO t VALUES (3, 'c');
"""

CASES = {
    "tag_procedures": THREE_SNAPSHOTS + """
CALL sys.create_tag(table => 'default.t', tag => 'v1', snapshot => 1);
CALL sys.create_tag('default.t', 'v2', 2, '1 d');
CALL sys.create_tag(table => 'default.t', tag => 'latest');
CALL sys.create_tag(table => 'default.t', tag => 'v1');
CALL sys.create_tag(table => 'default.t', tag => 'x', snapshot => 99);
CALL sys.create_tag(table => 'default.t', tag => '');
CALL sys.create_tag(table => 'default.t', tag => 'x', time_retained => 'soon');
CALL sys.create_tag(table => 'default.t', tag => 'x', snapshot => 'abc');
CALL sys.create_tag(table => 'default.t');
CALL sys.create_tag(table => 'default.t', tagg => 'x');
CALL sys.create_tag(table => 'default.nope', tag => 'x');
CALL sys.create_tag('default.t', tag => 'x');
SELECT tag_name, snapshot_id, schema_id, record_count, create_time IS NULL, time_retained FROM `t$tags`;
CALL sys.rename_tag(table => 'default.t', tag => 'v1', target_tag => 'first');
CALL sys.rename_tag('default.t', 'nope', 'x');
CALL sys.rename_tag('default.t', 'first', 'v2');
CALL sys.replace_tag(table => 'default.t', tag => 'first', snapshot => 3, time_retained => '2 h');
CALL sys.replace_tag(table => 'default.t', tag => 'nope');
CALL sys.replace_tag('default.t', 'v2');
SELECT tag_name, snapshot_id, create_time IS NULL, time_retained IS NULL FROM `t$tags`;
CALL sys.delete_tag(table => 'default.t', tag => 'first,nope');
CALL sys.delete_tag('default.t', 'latest');
SELECT tag_name, snapshot_id FROM `t$tags`;
SELECT * FROM t VERSION AS OF 'v2';
SELECT * FROM t VERSION AS OF 'first';
""",
    "tag_statements": THREE_SNAPSHOTS + """
ALTER TABLE t CREATE TAG v3 AS OF VERSION 3;
ALTER TABLE t CREATE TAG IF NOT EXISTS v3 AS OF VERSION 2;
ALTER TABLE t CREATE TAG v3;
ALTER TABLE t CREATE OR REPLACE TAG v3 AS OF VERSION 1;
ALTER TABLE t REPLACE TAG fresh AS OF VERSION 2;
ALTER TABLE t CREATE TAG r RETAIN 2 DAYS;
ALTER TABLE t CREATE TAG `r-2` AS OF VERSION 2 RETAIN 12 HOURS;
ALTER TABLE t CREATE TAG r3 RETAIN 1 SECONDS;
ALTER TABLE t CREATE TAG v9 AS OF VERSION 9;
SELECT tag_name, snapshot_id, create_time IS NULL, time_retained FROM `t$tags`;
ALTER TABLE t RENAME TAG r TO r1;
ALTER TABLE t RENAME TAG nope TO r4;
ALTER TABLE t DELETE TAG `r-2`;
ALTER TABLE t DELETE TAG IF EXISTS zz;
ALTER TABLE t DELETE TAG zz;
ALTER TABLE t DELETE TAG `fresh,r1`;
-- ordered
SHOW TAGS t;
ALTER TABLE nope CREATE TAG x;
SHOW TAGS nope;
""",
    "tags_named_by_digits": THREE_SNAPSHOTS + """
CALL sys.create_tag(table => 'default.t', tag => '5', snapshot => 1);
ALTER TABLE t CREATE TAG `2` AS OF VERSION 1;
SHOW TAGS t;
SELECT * FROM t VERSION AS OF 5;
SELECT * FROM t VERSION AS OF '5';
SELECT * FROM t VERSION AS OF 2;
SELECT * FROM t VERSION AS OF 3;
SELECT * FROM t VERSION AS OF 7;
SELECT * FROM t VERSION AS OF 'nope';
CALL sys.rollback(table => 'default.t', version => '2');
SELECT snapshot_id FROM `t$snapshots`;
SELECT tag_name, snapshot_id FROM `t$tags`;
""",
    "tag_expiry_and_timestamps": THREE_SNAPSHOTS + """
CALL sys.create_tag_from_timestamp(table => 'default.t', tag => 'ts', timestamp => 0);
CALL sys.create_tag_from_timestamp(table => 'default.t', tag => 'ts', timestamp => 0);
CALL sys.create_tag_from_timestamp(table => 'default.t', tag => 'late', timestamp => 99999999999999);
CALL sys.create_tag_from_timestamp('default.t', 'kept', 0, '1 d');
CALL sys.create_tag(table => 'default.t', tag => 'short', snapshot => 2, time_retained => '1 ms');
CALL sys.expire_tags(table => 'default.t');
CALL sys.expire_tags(table => 'default.t');
SELECT tag_name, snapshot_id FROM `t$tags`;
CALL sys.expire_tags(table => 'default.t', older_than => 'yesterday');
CALL sys.expire_tags(table => 'default.t', older_than => '2999-01-01 00:00:00');
SELECT tag_name FROM `t$tags`;
CALL sys.create_tag(table => 'default.t', tag => 'keep1', snapshot => 1);
CALL sys.expire_snapshots(table => 'default.t', retain_max => 1, retain_min => 1);
SELECT snapshot_id FROM `t$snapshots`;
SELECT * FROM t VERSION AS OF 'keep1';
SELECT * FROM t VERSION AS OF 1;
CALL sys.create_tag(table => 'default.t', tag => 'again', snapshot => 1);
ALTER TABLE t CREATE TAG again2 AS OF VERSION 1;
SELECT tag_name, snapshot_id FROM `t$tags`;
CALL sys.delete_tag(table => 'default.t', tag => 'keep1,again');
SELECT * FROM t VERSION AS OF 'again2';
CALL sys.delete_tag(table => 'default.t', tag => 'again2');
SELECT tag_name FROM `t$tags`;
SELECT * FROM t VERSION AS OF 1;
SELECT * FROM t;
""",
    "tag_automatic_creation": """
CREATE TABLE t (id INT, v STRING) TBLPROPERTIES ('tag.automatic-creation' = 'batch', 'tag.batch.customized-name' = 'nightly');
INSERT INTO t VALUES (1, 'a');
INSERT INTO t VALUES (2, 'b');
SELECT tag_name, snapshot_id FROM `t$tags`;
CALL sys.trigger_tag_automatic_creation(table => 'default.t');
CALL sys.trigger_tag_automatic_creation(table => 'default.nope');
SELECT tag_name, snapshot_id FROM `t$tags`;
""",
    "branch_procedures": THREE_SNAPSHOTS + """
CALL sys.create_tag(table => 'default.t', tag => 'v1', snapshot => 1);
CALL sys.create_branch(table => 'default.t', branch => 'empty');
CALL sys.create_branch(table => 'default.t', branch => 'b', tag => 'v1');
CALL sys.create_branch('default.t', 'c', 'v1', 'true');
CALL sys.create_branch(table => 'default.t', branch => 'b', tag => 'v1');
CALL sys.create_branch(table => 'default.t', branch => 'b', ignoreIfExists => 'true');
CALL sys.create_branch(table => 'default.t', branch => 'b', ignoreIfExists => 'false');
CALL sys.create_branch(table => 'default.t', branch => 'b', ignoreIfExists => 'TRUE');
CALL sys.create_branch(table => 'default.t', branch => 'b', ignoreIfExists => 'yes');
CALL sys.create_branch(table => 'default.t', branch => 'e', tag => '');
CALL sys.create_branch(table => 'default.t', branch => '123');
CALL sys.create_branch(table => 'default.t', branch => 'main');
CALL sys.create_branch(table => 'default.t', branch => 'd', tag => 'nope');
CALL sys.create_branch(table => 'default.t');
CALL sys.create_branch(table => 'default.nope', branch => 'd');
SELECT branch_name, create_time FROM `t$branches`;
SELECT * FROM `t$branch_b`;
SELECT * FROM `t$branch_empty`;
SELECT * FROM `t$branch_nope`;
INSERT INTO `t$branch_b` VALUES (10, 'x');
SELECT * FROM `t$branch_b`;
SELECT snapshot_id, schema_id, commit_kind, total_record_count FROM `t$branch_b$snapshots`;
SELECT snapshot_id, commit_kind FROM `t$snapshots`;
SELECT * FROM t;
CALL sys.rename_branch(table => 'default.t', from_branch => 'c', to_branch => 'c2');
CALL sys.rename_branch(table => 'default.t', from_branch => 'nope', to_branch => 'x');
CALL sys.rename_branch(table => 'default.t', from_branch => 'b', to_branch => 'main');
CALL sys.rename_branch(table => 'default.t', from_branch => 'b', to_branch => 'c2');
SELECT branch_name FROM `t$branches`;
CALL sys.fast_forward(table => 'default.t', branch => 'b');
SELECT * FROM t;
SELECT snapshot_id, commit_kind FROM `t$snapshots`;
SELECT tag_name, snapshot_id FROM `t$tags`;
CALL sys.fast_forward(table => 'default.t', branch => 'empty');
CALL sys.fast_forward(table => 'default.t', branch => 'nope');
CALL sys.fast_forward(table => 'default.t', branch => 'main');
CALL sys.delete_branch(table => 'default.t', branch => 'c2,nope');
-- differs: delete-branch-all-or-none
SELECT branch_name FROM `t$branches`;
-- theirs: CALL sys.delete_branch(table => 'default.t', branch => 'empty')
CALL sys.delete_branch(table => 'default.t', branch => 'empty,c2');
CALL sys.delete_branch(table => 'default.t', branch => 'nope');
SELECT branch_name FROM `t$branches`;
INSERT INTO t VALUES (4, 'd');
SELECT * FROM t;
-- differs: delete-main-branch
CALL sys.delete_branch(table => 'default.t', branch => 'main');
-- differs: delete-main-branch
SELECT count(*) FROM t;
""",
    "merge_branch": """
CREATE TABLE m (id INT, v STRING);
INSERT INTO m VALUES (1, 'a');
CALL sys.create_tag(table => 'default.m', tag => 't1');
CALL sys.create_branch(table => 'default.m', branch => 'dev', tag => 't1');
INSERT INTO `m$branch_dev` VALUES (2, 'b');
CALL sys.merge_branch(table => 'default.m', source_branch => 'dev');
SELECT * FROM m;
SELECT snapshot_id, commit_kind FROM `m$snapshots`;
INSERT INTO m VALUES (3, 'c');
CALL sys.merge_branch(table => 'default.m', source_branch => 'main', target_branch => 'dev');
SELECT * FROM `m$branch_dev`;
CALL sys.merge_branch(table => 'default.m', source_branch => 'nope');
ALTER TABLE m CREATE BRANCH b9;
ALTER TABLE m DROP BRANCH dev;
SELECT branch_name FROM `m$branches`;
""",
    "branch_reads_and_writes": """
CREATE TABLE t (id INT, v STRING) TBLPROPERTIES ('primary-key' = 'id', 'bucket' = '1');
INSERT INTO t VALUES (1, 'a');
CALL sys.create_tag(table => 'default.t', tag => 'v1');
CALL sys.create_branch(table => 'default.t', branch => 'b1', tag => 'v1');
INSERT INTO `t$branch_b1` VALUES (5, 'x');
INSERT INTO t VALUES (2, 'b');
SET spark.paimon.branch = b1;
SELECT * FROM t;
INSERT INTO t VALUES (6, 'y');
RESET spark.paimon.branch;
SELECT * FROM t;
SELECT * FROM `t$branch_b1`;
SELECT snapshot_id, commit_kind, total_record_count FROM `t$branch_b1$snapshots`;
INSERT INTO `t$branch_nope` VALUES (1, 'z');
CALL sys.create_tag(table => 'default.`t$branch_b1`', tag => 'bt');
ALTER TABLE `t$branch_b1` CREATE TAG bt2 AS OF VERSION 2;
SHOW TAGS `t$branch_b1`;
SELECT tag_name, snapshot_id FROM `t$branch_b1$tags`;
SELECT tag_name, snapshot_id FROM `t$tags`;
-- differs: branch-tag-time-travel
SELECT * FROM `t$branch_b1` VERSION AS OF 'bt2';
SELECT * FROM `t$branch_b1` VERSION AS OF 'v1';
SELECT * FROM `t$branch_b1` VERSION AS OF 1;
CALL sys.compact(table => 'default.`t$branch_b1`');
SELECT snapshot_id, commit_kind FROM `t$branch_b1$snapshots`;
CALL sys.rollback(table => 'default.`t$branch_b1`', snapshot => 2);
SELECT * FROM `t$branch_b1`;
CALL sys.expire_snapshots(table => 'default.`t$branch_b1`', retain_max => 1, retain_min => 1);
SELECT snapshot_id FROM `t$branch_b1$snapshots`;
CALL sys.reset_consumer(table => 'default.`t$branch_b1`', consumerId => 'k', nextSnapshotId => 2);
SELECT * FROM `t$branch_b1$consumers`;
SELECT * FROM `t$consumers`;
-- differs: procedure-branch-without-quotes
CALL sys.create_tag(table => 'default.t$branch_b1', tag => 'bt3', snapshot => 2);
CALL sys.delete_branch(table => 'default.t', branch => 'b1');
SELECT * FROM `t$branches`;
SELECT * FROM t;
""",
}


@pytest.mark.parametrize("name", CASES)
def test_case(differential, name):
    differential.check(name)
