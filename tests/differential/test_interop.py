"""The interop area's cases of the differential suite: what tables written by one engine and read by the
other (tests/interop/relay.py) cannot hold, a statement where paimon-sql deliberately answers otherwise
(docs/compatibility.md, "Tables written by one, read by the other"), and nested column types written
and read on each engine, PySpark 4.1.2's paimon-sql included ("Spark versions")."""

import pytest

CASES = {
    "data_evolution_update_added_column": """
CREATE TABLE de (id BIGINT, name STRING) TBLPROPERTIES ('row-tracking.enabled' = 'true',
  'data-evolution.enabled' = 'true');
INSERT INTO de VALUES (1, 'a'), (2, 'b');
ALTER TABLE de ADD COLUMNS (note STRING);
-- differs: data-evolution-update-added-column
UPDATE de SET note = concat('n', id) WHERE id = 1;
-- differs: data-evolution-update-added-column
SELECT id, name, note, _ROW_ID FROM de;
INSERT INTO de VALUES (3, 'c', 'x');
UPDATE de SET note = 'y', name = 'C' WHERE id = 3;
UPDATE de SET name = upper(name) WHERE id = 2;
SELECT id, name, note FROM de WHERE id >= 2;
""",
    "nested_types": """
CREATE TABLE t (id INT, m MAP<STRING, ARRAY<STRING>>, a ARRAY<MAP<INT, STRING>>,
  s STRUCT<x: MAP<STRING, ARRAY<STRING>>, y: ARRAY<STRUCT<z: DECIMAL(10, 2)>>>) TBLPROPERTIES ('primary-key' = 'id',
  'bucket' = '1');
INSERT INTO t VALUES (1, map('k', array('a', 'b'), 'n', NULL, 'e', array()), array(map(1, 'x'), NULL),
  named_struct('x', map('k', array('v', NULL)), 'y', array(named_struct('z', 1.25)))), (2, NULL, NULL, NULL);
INSERT INTO t VALUES (2, map('j', array('c')), array(), named_struct('x', map(), 'y', NULL));
SELECT * FROM t;
UPDATE t SET m = map_concat(m, map('u', array('w'))) WHERE id = 1;
MERGE INTO t USING (SELECT 3 AS id, map('q', array('r')) AS m) s ON t.id = s.id
  WHEN NOT MATCHED THEN INSERT (id, m) VALUES (s.id, s.m);
SELECT id, m, m['k'], size(a), s.x FROM t;
CREATE TABLE ap (id INT, m MAP<STRING, ARRAY<STRING>>) TBLPROPERTIES ('bucket' = '2', 'bucket-key' = 'id');
INSERT INTO ap SELECT id, m FROM t;
DELETE FROM ap WHERE id = 2;
SELECT * FROM ap;
SELECT key, value FROM ap LATERAL VIEW explode(m) AS key, value;
""",
}


@pytest.mark.parametrize("name", CASES)
def test_case(differential, name):
    differential.check(name)
