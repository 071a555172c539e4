"""Warehouses written by paimon-spark (Apache Paimon 2.0's Spark connector) read by paimon-sql, and the
other way round, through each engine's SQL (relay.py): each relay runs with either engine writing first,
the other reading the same rows as the writer's own queries, then writing more, the first reading again.

Primary-key tables with each merge engine after upserts, deletes and compaction; append tables with and
without buckets; deletion vectors (DELETE and UPDATE on primary-key and append tables); partitions;
tags read by ``VERSION AS OF 'tag'``; branches (``t$branch_b1``); schema evolution; the column types.
"""

import pytest
from relay import ENGINES, Relay, relays  # noqa: F401  (fixture)

pytestmark = pytest.mark.interop

TAGS = """SELECT * FROM t;
          SELECT * FROM t VERSION AS OF 'tag1';
          SELECT * FROM `t$branch_b1`;
          SELECT tag_name, snapshot_id FROM `t$tags`;
          SELECT tag_name, snapshot_id FROM `t$branch_b1$tags`;
          SELECT branch_name FROM `t$branches`;
          """

RELAYS = {
    "primary_key": Relay(steps=[
        """CREATE TABLE t (id INT, name STRING, score DOUBLE, dt STRING) PARTITIONED BY (dt)
           TBLPROPERTIES ('primary-key' = 'dt,id', 'bucket' = '2');
           INSERT INTO t VALUES (1, 'a', 1.0, 'x'), (2, 'b', 2.0, 'x'), (3, 'c', 3.0, 'y');
           INSERT INTO t VALUES (2, 'B', 20.0, 'x'), (4, 'd', 4.0, 'y');
           DELETE FROM t WHERE id = 3;""",
        """INSERT INTO t VALUES (1, 'A', 10.0, 'x'), (5, 'e', 5.0, 'x');
           UPDATE t SET score = score + 100 WHERE id = 4;
           CALL sys.compact(table => 't');""",
        """INSERT INTO t VALUES (6, 'f', 6.0, 'y');
           DELETE FROM t WHERE id = 2;"""],
        reads="""SELECT * FROM t;
                 SELECT * FROM t VERSION AS OF 2;
                 SELECT * FROM t WHERE dt = 'y' AND score > 3;"""),
    "merge_engines": Relay(steps=[
        """CREATE TABLE pu (id INT, a STRING, b STRING) TBLPROPERTIES ('primary-key' = 'id', 'bucket' = '1',
             'merge-engine' = 'partial-update');
           INSERT INTO pu VALUES (1, 'a', NULL), (2, NULL, 'b');
           INSERT INTO pu VALUES (1, NULL, 'x'), (2, 'y', NULL);
           CREATE TABLE agg (id INT, total BIGINT, hi INT, last STRING) TBLPROPERTIES ('primary-key' = 'id',
             'bucket' = '1', 'merge-engine' = 'aggregation', 'fields.total.aggregate-function' = 'sum',
             'fields.hi.aggregate-function' = 'max', 'fields.last.aggregate-function' = 'last_non_null_value');
           INSERT INTO agg VALUES (1, 10, 5, 'a'), (2, 1, 1, 'b');
           INSERT INTO agg VALUES (1, 5, 3, NULL), (2, 2, 9, 'c');
           CREATE TABLE fr (id INT, v STRING) TBLPROPERTIES ('primary-key' = 'id', 'bucket' = '1',
             'merge-engine' = 'first-row', 'changelog-producer' = 'lookup');
           INSERT INTO fr VALUES (1, 'first'), (2, 'first');
           INSERT INTO fr VALUES (1, 'second'), (3, 'first');""",
        """INSERT INTO pu VALUES (1, 'z', NULL), (3, 'c', NULL);
           INSERT INTO agg VALUES (1, 100, 1, 'z'), (3, 7, 7, NULL);
           INSERT INTO fr VALUES (2, 'third'), (4, 'first');
           CALL sys.compact(table => 'pu', compact_strategy => 'full');
           CALL sys.compact(table => 'agg', compact_strategy => 'full');
           CALL sys.compact(table => 'fr', compact_strategy => 'full');""",
        """INSERT INTO pu VALUES (3, NULL, 'C');
           INSERT INTO agg VALUES (3, 1, 8, 'q');
           INSERT INTO fr VALUES (4, 'second');"""],
        reads="""SELECT * FROM pu;
                 SELECT * FROM agg;
                 SELECT * FROM fr;"""),
    "append": Relay(steps=[
        """CREATE TABLE a (id INT, v STRING, dt STRING) PARTITIONED BY (dt);
           INSERT INTO a VALUES (1, 'a', 'x'), (2, 'b', 'y');
           INSERT INTO a VALUES (3, 'c', 'x');
           INSERT OVERWRITE a PARTITION (dt = 'y') VALUES (4, 'd');
           CREATE TABLE ab (id INT, v STRING) TBLPROPERTIES ('bucket' = '2', 'bucket-key' = 'id');
           INSERT INTO ab VALUES (1, 'a'), (2, 'b'), (3, 'c');
           INSERT INTO ab VALUES (4, 'd');""",
        """INSERT INTO a VALUES (5, 'e', 'y'), (6, 'f', 'z');
           INSERT INTO ab VALUES (5, 'e'), (1, 'again');
           CALL sys.compact(table => 'a');
           CALL sys.compact(table => 'ab');""",
        """INSERT INTO a VALUES (7, 'g', 'x');
           INSERT INTO ab VALUES (6, 'f');"""],
        reads="""SELECT * FROM a;
                 SELECT * FROM ab;
                 SELECT dt, count(*) FROM a GROUP BY dt;"""),
    "deletion_vectors": Relay(steps=[
        """CREATE TABLE pk (id INT, v STRING) TBLPROPERTIES ('primary-key' = 'id', 'bucket' = '1',
             'deletion-vectors.enabled' = 'true');
           INSERT INTO pk VALUES (1, 'a'), (2, 'b'), (3, 'c'), (4, 'd');
           DELETE FROM pk WHERE id = 2;
           UPDATE pk SET v = 'C' WHERE id = 3;
           CREATE TABLE ap (id INT, v STRING, dt STRING) PARTITIONED BY (dt)
             TBLPROPERTIES ('deletion-vectors.enabled' = 'true');
           INSERT INTO ap VALUES (1, 'a', 'x'), (2, 'b', 'x'), (3, 'c', 'y'), (4, 'd', 'y');
           DELETE FROM ap WHERE id = 2;
           UPDATE ap SET v = 'C' WHERE id = 3;""",
        """DELETE FROM pk WHERE id = 1;
           UPDATE pk SET v = 'D' WHERE id = 4;
           INSERT INTO pk VALUES (5, 'e');
           DELETE FROM ap WHERE id = 4;
           UPDATE ap SET v = 'A' WHERE id = 1;
           INSERT INTO ap VALUES (5, 'e', 'x');""",
        """DELETE FROM pk WHERE id = 5;
           DELETE FROM ap WHERE v = 'e';
           CALL sys.compact(table => 'pk', compact_strategy => 'full');
           CALL sys.compact(table => 'ap');"""],
        reads="""SELECT * FROM pk;
                 SELECT * FROM ap;"""),
    "tags_and_branches": Relay(steps=[
        """CREATE TABLE t (id INT, v STRING) TBLPROPERTIES ('primary-key' = 'id', 'bucket' = '1');
           INSERT INTO t VALUES (1, 'a'), (2, 'b');
           CALL sys.create_tag(table => 't', tag => 'tag1');
           INSERT INTO t VALUES (2, 'B'), (3, 'c');
           CALL sys.create_branch(table => 't', branch => 'b1', tag => 'tag1');
           INSERT INTO `t$branch_b1` VALUES (1, 'branch'), (9, 'z');""",
        """CALL sys.create_tag(table => 't', tag => 'tag2');
           INSERT INTO t VALUES (4, 'd');
           INSERT INTO `t$branch_b1` VALUES (8, 'y');
           CALL sys.create_tag(table => 'default.`t$branch_b1`', tag => 'btag');
           DELETE FROM `t$branch_b1` WHERE id = 9;""",
        """CALL sys.fast_forward(table => 't', branch => 'b1');
           INSERT INTO t VALUES (5, 'e');"""],
        reads=[TAGS, TAGS + "SELECT * FROM t VERSION AS OF 'tag2';",
               # fast_forward: main's tags of the branch's snapshots go, the branch's come
               TAGS + "SELECT * FROM t VERSION AS OF 'btag';"]),
    "schema_evolution": Relay(steps=[
        """CREATE TABLE t (id INT, a INT, b STRING) TBLPROPERTIES ('primary-key' = 'id', 'bucket' = '1');
           INSERT INTO t VALUES (1, 10, 'x'), (2, 20, 'y');
           ALTER TABLE t ADD COLUMNS (c DOUBLE);
           INSERT INTO t VALUES (3, 30, 'z', 3.5);
           ALTER TABLE t RENAME COLUMN b TO name;
           ALTER TABLE t ALTER COLUMN a TYPE BIGINT;
           CREATE TABLE ap (id INT, a INT, b STRING);
           INSERT INTO ap VALUES (1, 1, 'p');
           ALTER TABLE ap DROP COLUMN b;
           ALTER TABLE ap ADD COLUMNS (s STRUCT<x: INT, y: STRING>);
           INSERT INTO ap VALUES (2, 2, named_struct('x', 1, 'y', 'q'));""",
        """INSERT INTO t VALUES (2, 2000000000000, 'Y', NULL), (4, 40, 'w', 4.5);
           ALTER TABLE t DROP COLUMN c;
           ALTER TABLE t ADD COLUMNS (d STRING);
           INSERT INTO ap VALUES (3, 3, named_struct('x', 3, 'y', 'r'));
           ALTER TABLE ap RENAME COLUMN a TO aa;""",
        """INSERT INTO t VALUES (5, 5, 'v', 'five');
           UPDATE t SET d = 'one' WHERE id = 1;
           CALL sys.compact(table => 't', compact_strategy => 'full');"""],
        reads="""SELECT * FROM t;
                 SELECT * FROM ap;
                 SELECT * FROM t VERSION AS OF 1;"""),
    "types": Relay(steps=[
        """CREATE TABLE t (id INT, b BOOLEAN, ti TINYINT, si SMALLINT, bi BIGINT, f FLOAT, d DOUBLE,
             dec DECIMAL(20, 4), sdec DECIMAL(5, 2), s STRING, vc VARCHAR(5), ch CHAR(3), bin BINARY, dt DATE,
             ts TIMESTAMP, ntz TIMESTAMP_NTZ, arr ARRAY<INT>, m MAP<STRING, ARRAY<STRING>>,
             st STRUCT<x: INT, y: ARRAY<STRUCT<z: STRING>>>)
           TBLPROPERTIES ('primary-key' = 'id', 'bucket' = '1');
           INSERT INTO t VALUES (1, true, 1, 2, 3, 1.5, 2.5, 12345.6789, 1.23, 'str', 'vc', 'ch', X'0102',
             DATE '2024-01-02', TIMESTAMP '2024-01-02 03:04:05.123456', TIMESTAMP_NTZ '2024-01-02 03:04:05.5',
             array(1, NULL, 3), map('k', array('a', 'b'), 'n', NULL), named_struct('x', 1, 'y', array(named_struct('z', 'q')))),
             (2, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
           CREATE TABLE ap (id INT, m MAP<STRING, ARRAY<STRING>>, arr ARRAY<MAP<INT, STRING>>, dec DECIMAL(38, 10));
           INSERT INTO ap VALUES (1, map('k', array('a', 'b')), array(map(1, 'x')), 1.5), (2, NULL, NULL, NULL);""",
        """INSERT INTO t (id, m, dec) VALUES (1, map('j', array('c')), -1.5), (3, map(), 0);
           INSERT INTO ap VALUES (3, map('e', array()), array(), -99999999.0000000001);"""],
        reads="""SELECT * FROM t;
                 SELECT * FROM ap;"""),
}


@pytest.mark.parametrize("first", ENGINES)
@pytest.mark.parametrize("name", RELAYS)
def test_relay(relays, name, first):
    relays.check(name, first)
