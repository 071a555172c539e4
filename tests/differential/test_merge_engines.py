"""Merge engines and changelog producers, compared with paimon-spark: what each engine makes of
rows written over each other (with ``sequence.field``, sequence groups, aggregate functions), which
of UPDATE, DELETE and MERGE INTO it takes and how DELETE writes (``-D`` rows, or the files holding
the rows rewritten), and the changelog each producer writes, read as ``$audit_log`` rows between
snapshots. Rows and snapshots are compared after each group of steps.

The lookup producer compacts by file size (Paimon's universal compaction): its cases start from a
large first file, so that later small files are compacted alike whatever the bytes of each writer."""

import pytest

SNAPSHOTS = "SELECT snapshot_id, commit_kind, total_record_count, delta_record_count, operation FROM `{}$snapshots`"
CHANGELOG = ("SELECT snapshot_id, commit_kind, total_record_count, delta_record_count, changelog_record_count "
             "FROM `{}$snapshots`")

CASES = {
    "deduplicate_sequence_field": f"""
        CREATE TABLE t (id INT, v STRING, ts INT) TBLPROPERTIES ('primary-key' = 'id', 'bucket' = '1', 'sequence.field' = 'ts');
        INSERT INTO t VALUES (1, 'a', 5), (2, 'b', 5);
        INSERT INTO t VALUES (1, 'old', 3), (2, 'new', 7);
        INSERT INTO t VALUES (1, 'x', 1), (1, 'y', 9), (3, 'z', NULL);
        SELECT * FROM t;
        UPDATE t SET v = 'u' WHERE id = 1;
        DELETE FROM t WHERE id = 2;
        MERGE INTO t USING (SELECT 3 AS id, 'm' AS v, 0 AS ts) s ON t.id = s.id WHEN MATCHED THEN UPDATE SET *;
        SELECT * FROM t;
        {SNAPSHOTS.format('t')};
        """,
    "partial_update": f"""
        CREATE TABLE t (id INT, a STRING, b STRING) TBLPROPERTIES ('primary-key' = 'id', 'bucket' = '1', 'merge-engine' = 'partial-update');
        INSERT INTO t VALUES (1, 'a', NULL), (2, 'x', 'y');
        INSERT INTO t VALUES (1, NULL, 'b');
        UPDATE t SET a = 'A' WHERE id = 1;
        MERGE INTO t USING (SELECT 3 AS id, 'q' AS a) s ON t.id = s.id
          WHEN MATCHED THEN UPDATE SET a = s.a WHEN NOT MATCHED THEN INSERT (id, a) VALUES (s.id, s.a);
        SELECT * FROM t;
        DELETE FROM t WHERE id = 1;
        DELETE FROM t WHERE id = 2;
        -- differs: pk-delete-rewrite
        SELECT * FROM t;
        {SNAPSHOTS.format('t')};
        CREATE TABLE x (id INT, a STRING) TBLPROPERTIES ('primary-key' = 'id', 'bucket' = '1', 'merge-engine' = 'partial-update');
        INSERT INTO x VALUES (1, 'a'), (2, 'b');
        -- differs: merge-delete-partial-update
        MERGE INTO x USING (SELECT 2 AS id) s ON x.id = s.id WHEN MATCHED THEN DELETE;
        -- differs: merge-delete-partial-update
        SELECT * FROM x;
        CREATE TABLE r (id INT, a STRING, b STRING)
          TBLPROPERTIES ('primary-key' = 'id', 'bucket' = '1', 'merge-engine' = 'partial-update', 'partial-update.remove-record-on-delete' = 'true');
        INSERT INTO r VALUES (1, 'a', NULL), (2, 'b', 'x');
        INSERT INTO r VALUES (1, NULL, 'c');
        DELETE FROM r WHERE id = 1;
        MERGE INTO r USING (SELECT 2 AS id) s ON r.id = s.id WHEN MATCHED THEN DELETE WHEN NOT MATCHED THEN INSERT (id, a) VALUES (s.id, 'n');
        MERGE INTO r USING (SELECT 5 AS id) s ON r.id = s.id WHEN NOT MATCHED THEN INSERT (id, a) VALUES (s.id, 'n');
        SELECT * FROM r;
        {SNAPSHOTS.format('r')};
        """,
    "partial_update_sequence_groups": f"""
        CREATE TABLE t (id INT, a STRING, b STRING, g1 INT, c STRING, g2 INT)
          TBLPROPERTIES ('primary-key' = 'id', 'bucket' = '1', 'merge-engine' = 'partial-update',
                         'fields.g1.sequence-group' = 'a,b', 'fields.g2.sequence-group' = 'c');
        INSERT INTO t VALUES (1, 'a1', 'b1', 1, 'c1', 1), (2, 'a', 'b', 1, 'c', 1);
        INSERT INTO t VALUES (1, 'a0', NULL, 0, 'c2', 2);
        INSERT INTO t VALUES (1, NULL, 'b3', 3, NULL, 1);
        SELECT * FROM t;
        UPDATE t SET c = 'cu' WHERE id = 1;
        SELECT * FROM t;
        DELETE FROM t WHERE id = 1;
        {SNAPSHOTS.format('t')};
        """,
    "aggregation": f"""
        CREATE TABLE t (id INT, s BIGINT, p DOUBLE, mx INT, mn INT, lv STRING, lnn STRING, fv STRING, fnn STRING,
                        la STRING, ba BOOLEAN, bo BOOLEAN)
          TBLPROPERTIES ('primary-key' = 'id', 'bucket' = '1', 'merge-engine' = 'aggregation',
            'fields.s.aggregate-function' = 'sum', 'fields.p.aggregate-function' = 'product',
            'fields.mx.aggregate-function' = 'max', 'fields.mn.aggregate-function' = 'min',
            'fields.lv.aggregate-function' = 'last_value', 'fields.lnn.aggregate-function' = 'last_non_null_value',
            'fields.fv.aggregate-function' = 'first_value', 'fields.fnn.aggregate-function' = 'first_non_null_value',
            'fields.la.aggregate-function' = 'listagg', 'fields.la.list-agg-delimiter' = '|',
            'fields.ba.aggregate-function' = 'bool_and', 'fields.bo.aggregate-function' = 'bool_or',
            'aggregation.remove-record-on-delete' = 'true');
        INSERT INTO t VALUES (1, 1, 2.0, 1, 1, 'a', 'a', NULL, NULL, 'a', true, false), (2, 5, 1.0, 5, 5, 'z', 'z', 'z', 'z', 'z', true, true);
        INSERT INTO t VALUES (1, 2, 3.0, 5, 0, NULL, NULL, 'f', 'f', 'b', false, false);
        INSERT INTO t VALUES (1, 3, 0.5, 2, 7, 'c', NULL, 'g', 'g', NULL, true, true);
        SELECT * FROM t;
        DELETE FROM t WHERE id = 2;
        UPDATE t SET s = 0;
        MERGE INTO t USING (SELECT 1 AS id) src ON t.id = src.id WHEN MATCHED THEN DELETE;
        SELECT * FROM t;
        {SNAPSHOTS.format('t')};
        CREATE TABLE c (id INT, s BIGINT, l STRING, arr ARRAY<INT>)
          TBLPROPERTIES ('primary-key' = 'id', 'bucket' = '1', 'merge-engine' = 'aggregation',
            'fields.default-aggregate-function' = 'sum', 'fields.l.aggregate-function' = 'listagg',
            'fields.arr.aggregate-function' = 'collect', 'fields.arr.distinct' = 'true');
        INSERT INTO c VALUES (1, 1, 'a', array(1, 2)), (1, 2, 'b', array(2, 3)), (2, 7, 'x', NULL);
        INSERT INTO c VALUES (1, 10, 'c', array(4));
        INSERT INTO c VALUES (3, 1, 'y', NULL);
        SELECT id, s, l, array_sort(arr) FROM c;
        DELETE FROM c WHERE id = 2;
        DELETE FROM c WHERE id = 1;
        -- differs: pk-delete-rewrite
        SELECT id, s, l, array_sort(arr) FROM c;
        {SNAPSHOTS.format('c')};
        CREATE TABLE q (id INT, v STRING, n BIGINT, ts INT)
          TBLPROPERTIES ('primary-key' = 'id', 'bucket' = '1', 'merge-engine' = 'aggregation', 'sequence.field' = 'ts',
            'fields.v.aggregate-function' = 'last_value', 'fields.n.aggregate-function' = 'sum');
        INSERT INTO q VALUES (1, 'late', 1, 9), (2, 'x', 1, 1);
        INSERT INTO q VALUES (1, 'early', 10, 3), (2, 'y', 10, 2);
        SELECT * FROM q;
        """,
    "first_row": f"""
        CREATE TABLE t (id INT, v STRING) TBLPROPERTIES ('primary-key' = 'id', 'bucket' = '1', 'merge-engine' = 'first-row');
        INSERT INTO t VALUES (1, 'a'), (2, 'b'), (3, 'c');
        INSERT INTO t VALUES (1, 'z'), (4, 'd');
        SELECT * FROM t;
        UPDATE t SET v = 'u' WHERE id = 2;
        MERGE INTO t USING (SELECT 5 AS id, 'm' AS v) s ON t.id = s.id WHEN NOT MATCHED THEN INSERT *;
        DELETE FROM t WHERE id = 1;
        -- differs: pk-delete-rewrite
        SELECT * FROM t;
        INSERT INTO t VALUES (6, 'f');
        SELECT * FROM t;
        DELETE FROM t;
        {SNAPSHOTS.format('t')};
        CREATE TABLE p (id INT, v STRING, dt STRING) PARTITIONED BY (dt)
          TBLPROPERTIES ('primary-key' = 'id,dt', 'bucket' = '1', 'merge-engine' = 'first-row');
        INSERT INTO p VALUES (1, 'a', 'x'), (2, 'b', 'y');
        INSERT INTO p VALUES (1, 'b', 'x'), (3, 'c', 'x');
        DELETE FROM p WHERE dt = 'y';
        SELECT * FROM p;
        {SNAPSHOTS.format('p')};
        CREATE TABLE s (id INT, v STRING, ts INT) TBLPROPERTIES ('primary-key' = 'id', 'merge-engine' = 'first-row', 'sequence.field' = 'ts');
        CREATE TABLE d (id INT, v STRING) TBLPROPERTIES ('primary-key' = 'id', 'merge-engine' = 'first-row', 'deletion-vectors.enabled' = 'true');
        """,
    "changelog_input": f"""
        CREATE TABLE t (id INT, v STRING) TBLPROPERTIES ('primary-key' = 'id', 'bucket' = '1', 'changelog-producer' = 'input');
        INSERT INTO t VALUES (1, 'a'), (2, 'b');
        INSERT INTO t VALUES (1, 'a2');
        UPDATE t SET v = 'u' WHERE id = 2;
        DELETE FROM t WHERE id = 1;
        SELECT * FROM `t$audit_log`;
        SELECT * FROM paimon_incremental_query('`t$audit_log`', 1, 4);
        {CHANGELOG.format('t')};
        """,
    "changelog_lookup": f"""
        CREATE TABLE t (id INT, v STRING) TBLPROPERTIES ('primary-key' = 'id', 'bucket' = '1', 'changelog-producer' = 'lookup');
        INSERT INTO t SELECT id, 'v' FROM range(50);
        INSERT INTO t VALUES (1, 'a2');
        UPDATE t SET v = 'u' WHERE id = 2;
        DELETE FROM t WHERE id = 3;
        SELECT * FROM `t$audit_log` WHERE id < 5;
        SELECT * FROM paimon_incremental_query('`t$audit_log`', 2, 8);
        {CHANGELOG.format('t')};
        CREATE TABLE f (id INT, v STRING) TBLPROPERTIES ('primary-key' = 'id', 'bucket' = '1', 'merge-engine' = 'first-row', 'changelog-producer' = 'lookup');
        INSERT INTO f SELECT id, 'v' FROM range(50);
        INSERT INTO f VALUES (1, 'z'), (60, 'c');
        SELECT * FROM paimon_incremental_query('`f$audit_log`', 2, 4);
        {CHANGELOG.format('f')};
        CREATE TABLE p (id INT, a STRING, b STRING) TBLPROPERTIES ('primary-key' = 'id', 'bucket' = '1', 'merge-engine' = 'partial-update', 'changelog-producer' = 'lookup');
        INSERT INTO p SELECT id, 'a', NULL FROM range(50);
        INSERT INTO p VALUES (1, NULL, 'b');
        SELECT * FROM paimon_incremental_query('`p$audit_log`', 2, 4);
        {CHANGELOG.format('p')};
        """,
    "changelog_full_compaction": f"""
        CREATE TABLE t (id INT, v STRING)
          TBLPROPERTIES ('primary-key' = 'id', 'bucket' = '1', 'changelog-producer' = 'full-compaction', 'full-compaction.delta-commits' = '2');
        INSERT INTO t VALUES (1, 'a'), (2, 'b');
        INSERT INTO t VALUES (1, 'a2');
        UPDATE t SET v = 'u' WHERE id = 2;
        DELETE FROM t WHERE id = 1;
        SELECT * FROM `t$audit_log`;
        SELECT * FROM paimon_incremental_query('`t$audit_log`', 2, 8);
        {CHANGELOG.format('t')};
        """,
}


@pytest.mark.parametrize("name", CASES)
def test_case(differential, name):
    differential.check(name)
