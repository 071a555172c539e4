"""Writing, compared with paimon-spark: INSERT (column lists, BY NAME, static and dynamic overwrite,
merge-schema), UPDATE, DELETE, MERGE INTO and TRUNCATE on primary-key tables, on append tables with
and without deletion vectors, on row-tracking and data-evolution tables. After each group of steps
the rows and the snapshots (their kind, record counts and operation) are compared, since the kind
of commit a statement makes is part of its answer. Merge engines: test_merge_engines.py."""

import pytest

SNAPSHOTS = "SELECT snapshot_id, commit_kind, total_record_count, delta_record_count, operation FROM `{}$snapshots`"

CASES = {
    "insert_forms": f"""
        CREATE TABLE t (id INT, v STRING, dt STRING) PARTITIONED BY (dt);
        INSERT INTO t VALUES (1, 'a', 'x'), (2, 'b', 'y');
        INSERT INTO t (dt, id) VALUES ('x', 3);
        INSERT INTO t BY NAME SELECT 'z' AS dt, 4 AS id, 'd' AS v;
        INSERT OVERWRITE t PARTITION (dt = 'x') SELECT 5, 'e';
        SELECT * FROM t;
        INSERT OVERWRITE t SELECT 6, 'f', 'y';
        INSERT INTO t VALUES (7, 'g', 'x'), (8, 'h', 'z');
        SET spark.sql.sources.partitionOverwriteMode = dynamic;
        INSERT OVERWRITE t SELECT 9, 'i', 'x';
        INSERT OVERWRITE t SELECT * FROM t WHERE id < 0;
        SELECT * FROM t;
        SET spark.sql.sources.partitionOverwriteMode = static;
        INSERT OVERWRITE t SELECT * FROM t WHERE id < 0;
        SELECT count(*) FROM t;
        INSERT INTO t VALUES (1, 'a');
        INSERT INTO t BY NAME SELECT 1 AS id, 'q' AS w;
        INSERT INTO t (id, nope) VALUES (1, 'x');
        {SNAPSHOTS.format('t')};
        """,
    "insert_overwrite_primary_key": f"""
        CREATE TABLE t (id INT, v STRING, dt STRING, h INT) PARTITIONED BY (dt, h)
          TBLPROPERTIES ('primary-key' = 'id,dt,h', 'bucket' = '1');
        INSERT INTO t VALUES (1, 'a', 'x', 1), (2, 'b', 'x', 2), (3, 'c', 'y', 1);
        INSERT OVERWRITE t PARTITION (dt = 'x', h) SELECT 4, 'd', 2;
        INSERT OVERWRITE t PARTITION (dt = 'y', h = 1) SELECT 5, 'e';
        SELECT * FROM t;
        INSERT INTO t VALUES (1, 'a', 'x', 1), (1, 'a2', 'x', 1);
        SET spark.sql.sources.partitionOverwriteMode = dynamic;
        INSERT OVERWRITE t VALUES (6, 'f', 'x', 1);
        SELECT * FROM t;
        {SNAPSHOTS.format('t')};
        """,
    "merge_schema": """
        CREATE TABLE o (id INT, v STRING) TBLPROPERTIES ('write.merge-schema' = 'true');
        -- differs: merge-schema-table-option
        INSERT INTO o BY NAME SELECT 2 AS id, 'b' AS v, 3.5 AS w;
        -- differs: merge-schema-table-option
        SELECT * FROM o;
        SET `spark.paimon.write.merge-schema` = true;
        CREATE TABLE m (id INT, v STRING);
        INSERT INTO m VALUES (1, 'a');
        INSERT INTO m BY NAME SELECT 2 AS id, 'b' AS v, 3.5 AS w;
        INSERT INTO m SELECT 3, 'c', 4.5, 'by position';
        REFRESH TABLE m;
        SELECT * FROM m;
        SELECT schema_id, fields FROM `m$schemas`;
        """,
    "not_null": f"""
        CREATE TABLE t (id INT NOT NULL, v STRING NOT NULL, n INT) TBLPROPERTIES ('primary-key' = 'id', 'bucket' = '1');
        INSERT INTO t VALUES (1, 'a', 1);
        INSERT INTO t VALUES (2, NULL, 2);
        INSERT INTO t SELECT CAST(NULL AS INT), 'b', 3;
        INSERT INTO t (id, n) VALUES (3, 3);
        UPDATE t SET v = NULL WHERE id = 1;
        MERGE INTO t USING (SELECT 1 AS id) s ON t.id = s.id WHEN MATCHED THEN UPDATE SET v = NULL;
        MERGE INTO t USING (SELECT 2 AS id) s ON t.id = s.id WHEN NOT MATCHED THEN INSERT (id, n) VALUES (s.id, 5);
        UPDATE t SET n = 2.7 WHERE id = 1;
        SELECT * FROM t;
        {SNAPSHOTS.format('t')};
        """,
    "primary_key_update_delete": f"""
        CREATE TABLE t (id INT, v STRING, n INT, dt STRING) PARTITIONED BY (dt)
          TBLPROPERTIES ('primary-key' = 'id,dt', 'bucket' = '1');
        INSERT INTO t VALUES (1, 'a', 10, 'x'), (2, 'b', 20, 'x'), (3, 'c', 30, 'y'), (4, 'd', 40, 'y');
        UPDATE t SET v = upper(v), n = n + 1 WHERE id < 3;
        UPDATE t SET n = n, v = 'same' WHERE id = 2;
        DELETE FROM t WHERE id = 4;
        DELETE FROM t WHERE id IN (SELECT 99);
        SELECT * FROM t;
        DELETE FROM t WHERE dt = 'y';
        DELETE FROM t WHERE dt = 'nope';
        SELECT * FROM t;
        UPDATE t SET id = 9 WHERE id = 1;
        UPDATE t AS r SET r.dt = 'z' WHERE id = 1;
        UPDATE t SET nope = 1;
        UPDATE t SET id = id, v = 'kept' WHERE id = 1;
        SELECT * FROM t;
        {SNAPSHOTS.format('t')};
        CREATE TABLE c (id INT, v STRING, dt STRING) PARTITIONED BY (dt) TBLPROPERTIES ('primary-key' = 'id');
        INSERT INTO c VALUES (1, 'a', 'x'), (2, 'b', 'y');
        UPDATE c SET dt = 'z' WHERE id = 1;
        MERGE INTO c USING (SELECT 2 AS id, 'q' AS dt) s ON c.id = s.id WHEN MATCHED THEN UPDATE SET dt = s.dt;
        SELECT * FROM c;
        {SNAPSHOTS.format('c')};
        """,
    "primary_key_merge": f"""
        CREATE TABLE t (id INT, v STRING, n INT, dt STRING) PARTITIONED BY (dt)
          TBLPROPERTIES ('primary-key' = 'id,dt', 'bucket' = '1');
        INSERT INTO t VALUES (1, 'a', 10, 'x'), (2, 'b', 20, 'x'), (3, 'c', 30, 'y');
        CREATE TABLE s (id INT, v STRING, n INT, dt STRING, op STRING);
        INSERT INTO s VALUES (1, 'm1', 100, 'x', 'up'), (2, 'm2', 200, 'x', 'del'), (5, 'm5', 500, 'x', 'ins'),
          (6, 'm6', 600, 'y', 'ins');
        MERGE INTO t USING s ON t.id = s.id AND t.dt = s.dt
          WHEN MATCHED AND s.op = 'del' THEN DELETE
          WHEN MATCHED THEN UPDATE SET v = s.v, n = t.n + s.n
          WHEN NOT MATCHED AND s.id < 6 THEN INSERT (id, v, n, dt) VALUES (s.id, s.v, s.n, s.dt);
        SELECT * FROM t;
        MERGE INTO t USING s ON t.id = s.id AND t.dt = s.dt WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *;
        MERGE INTO t USING (SELECT id, v, n, dt FROM s WHERE id = 6) src ON t.id = src.id AND t.dt = src.dt
          WHEN NOT MATCHED BY SOURCE AND t.n > 400 THEN DELETE
          WHEN NOT MATCHED BY SOURCE THEN UPDATE SET v = 'nbs';
        SELECT * FROM t;
        MERGE INTO t USING s ON t.id = s.id AND t.dt = s.dt WHEN MATCHED THEN UPDATE SET id = s.id + 10;
        SELECT * FROM t;
        MERGE INTO t USING s ON t.v = s.v WHEN MATCHED THEN UPDATE SET id = s.id;
        MERGE INTO t USING (SELECT 1 AS id, 'x' AS dt UNION ALL SELECT 1, 'x') d ON t.id = d.id AND t.dt = d.dt
          WHEN MATCHED THEN UPDATE SET n = 0;
        MERGE INTO t USING (SELECT 1 AS id, 'x' AS dt UNION ALL SELECT 1, 'x') d ON t.id = d.id AND t.dt = d.dt
          WHEN NOT MATCHED THEN INSERT (id, v, n, dt) VALUES (d.id, 'dup', 0, d.dt);
        SELECT * FROM t;
        {SNAPSHOTS.format('t')};
        """,
    "append_copy_on_write": f"""
        CREATE TABLE a (id INT, v STRING, dt STRING) PARTITIONED BY (dt);
        INSERT INTO a VALUES (1, 'a', 'x'), (2, 'b', 'x'), (3, 'c', 'y');
        INSERT INTO a VALUES (4, 'd', 'y');
        UPDATE a SET v = 'B' WHERE id = 2;
        DELETE FROM a WHERE id = 3;
        UPDATE a SET v = 'none' WHERE id = 99;
        DELETE FROM a WHERE id = 99;
        SELECT * FROM a;
        DELETE FROM a WHERE dt = 'y';
        CREATE TABLE s (id INT, v STRING, dt STRING);
        INSERT INTO s VALUES (1, 'm1', 'x'), (2, 'm2', 'x'), (7, 'm7', 'y');
        MERGE INTO a USING s ON a.id = s.id
          WHEN MATCHED AND s.id = 2 THEN DELETE WHEN MATCHED THEN UPDATE SET v = s.v WHEN NOT MATCHED THEN INSERT *;
        UPDATE a SET dt = 'z' WHERE id = 1;
        SELECT * FROM a;
        MERGE INTO a USING (SELECT 7 AS id UNION ALL SELECT 7) d ON a.id = d.id WHEN MATCHED THEN DELETE;
        MERGE INTO a USING (SELECT 7 AS id) d ON a.id = d.id WHEN NOT MATCHED BY SOURCE THEN UPDATE SET v = 'nbs';
        SELECT * FROM a;
        DELETE FROM a;
        {SNAPSHOTS.format('a')};
        """,
    "append_deletion_vectors": f"""
        CREATE TABLE d (id INT, v STRING) TBLPROPERTIES ('deletion-vectors.enabled' = 'true');
        INSERT INTO d VALUES (1, 'a'), (2, 'b'), (3, 'c');
        UPDATE d SET v = 'B' WHERE id = 2;
        DELETE FROM d WHERE id = 3;
        MERGE INTO d USING (SELECT 1 AS id, 'm' AS v UNION ALL SELECT 9, 'n') s ON d.id = s.id
          WHEN MATCHED THEN UPDATE SET v = s.v WHEN NOT MATCHED THEN INSERT *;
        SELECT * FROM d;
        MERGE INTO d USING (SELECT 1 AS id) s ON d.id = s.id WHEN NOT MATCHED BY SOURCE THEN DELETE;
        SELECT * FROM d;
        SELECT count(*) FROM `d$files`;
        {SNAPSHOTS.format('d')};
        """,
    "row_tracking": f"""
        CREATE TABLE r (id INT, v STRING) TBLPROPERTIES ('row-tracking.enabled' = 'true');
        INSERT INTO r VALUES (1, 'a'), (2, 'b'), (3, 'c');
        INSERT INTO r VALUES (4, 'd');
        UPDATE r SET v = 'B' WHERE id = 2;
        SELECT id, v, _ROW_ID, _SEQUENCE_NUMBER FROM r;
        DELETE FROM r WHERE id = 3;
        MERGE INTO r USING (SELECT 1 AS id, 'm' AS v UNION ALL SELECT 9, 'n') s ON r.id = s.id
          WHEN MATCHED THEN UPDATE SET v = s.v WHEN NOT MATCHED THEN INSERT *;
        SELECT id, v, _ROW_ID, _SEQUENCE_NUMBER FROM r;
        {SNAPSHOTS.format('r')};
        CREATE TABLE rd (id INT, v STRING) TBLPROPERTIES ('row-tracking.enabled' = 'true', 'deletion-vectors.enabled' = 'true');
        INSERT INTO rd VALUES (1, 'a'), (2, 'b'), (3, 'c');
        UPDATE rd SET v = 'B' WHERE id = 2;
        DELETE FROM rd WHERE id = 3;
        MERGE INTO rd USING (SELECT 1 AS id, 'm' AS v UNION ALL SELECT 9, 'n') s ON rd.id = s.id
          WHEN MATCHED THEN UPDATE SET v = s.v WHEN NOT MATCHED THEN INSERT *;
        SELECT id, v, _ROW_ID, _SEQUENCE_NUMBER FROM rd;
        {SNAPSHOTS.format('rd')};
        """,
    "data_evolution": f"""
        CREATE TABLE de (id INT, v STRING, w INT) TBLPROPERTIES ('row-tracking.enabled' = 'true', 'data-evolution.enabled' = 'true');
        INSERT INTO de VALUES (1, 'a', 10), (2, 'b', 20), (3, 'c', 30);
        UPDATE de SET v = 'B' WHERE id = 2;
        DELETE FROM de WHERE id = 3;
        DELETE FROM de;
        MERGE INTO de USING (SELECT 1 AS id, 100 AS w UNION ALL SELECT 9, 900) s ON de.id = s.id
          WHEN MATCHED THEN UPDATE SET w = s.w WHEN NOT MATCHED THEN INSERT (id, w) VALUES (s.id, s.w);
        SELECT id, v, w, _ROW_ID, _SEQUENCE_NUMBER FROM de;
        {SNAPSHOTS.format('de')};
        CREATE TABLE dd (id INT, v STRING, dt STRING) PARTITIONED BY (dt)
          TBLPROPERTIES ('row-tracking.enabled' = 'true', 'data-evolution.enabled' = 'true', 'deletion-vectors.enabled' = 'true');
        INSERT INTO dd VALUES (1, 'a', 'x'), (2, 'b', 'x');
        INSERT INTO dd VALUES (3, 'c', 'y');
        DELETE FROM dd WHERE id = 3;
        UPDATE dd SET dt = 'q' WHERE id = 1;
        UPDATE dd SET dt = dt, v = 'A' WHERE id = 1;
        MERGE INTO dd USING (SELECT 1 AS id) s ON dd.id = s.id WHEN MATCHED THEN DELETE;
        MERGE INTO dd USING (SELECT 2 AS id, 'z' AS v, 'x' AS dt) s ON dd.id = s.id WHEN MATCHED THEN UPDATE SET *;
        SELECT id, v, dt, _ROW_ID FROM dd;
        {SNAPSHOTS.format('dd')};
        """,
    "truncate": f"""
        CREATE TABLE a (id INT, v STRING);
        TRUNCATE TABLE a;
        DELETE FROM a;
        INSERT INTO a VALUES (1, 'a'), (2, 'b');
        TRUNCATE TABLE a;
        {SNAPSHOTS.format('a')};
        CREATE TABLE p (id INT, dt STRING) PARTITIONED BY (dt) TBLPROPERTIES ('primary-key' = 'id,dt', 'bucket' = '1');
        INSERT INTO p VALUES (1, 'x'), (2, 'y'), (3, 'z'), (4, 'w');
        DELETE FROM p WHERE dt IN ('x', 'y') AND id > 1;
        DELETE FROM p WHERE dt > 'x';
        TRUNCATE TABLE p PARTITION (dt = 'x');
        TRUNCATE TABLE p PARTITION (nope = 'x');
        SELECT * FROM p;
        {SNAPSHOTS.format('p')};
        """,
}


@pytest.mark.parametrize("name", CASES)
def test_case(differential, name):
    differential.check(name)
