"""What a query needs of its relations, read in the JVM (``PlanNeeds``) and from the plans' JSON:
the same columns and predicates for queries of every shape the front layer plans (subqueries,
CTEs, joins, windows, generators, grouping sets, literals of each type)."""

import datetime as dt

import pytest

from paimon_sql.data import predicate as P
from paimon_sql.data.types import DataField, parse_type
from paimon_sql.spark import jvm_classes, pushdown

T = [DataField(0, "id", parse_type("BIGINT")), DataField(1, "name", parse_type("STRING")),
     DataField(2, "v", parse_type("DECIMAL(10, 2)")), DataField(3, "d", parse_type("DATE")),
     DataField(4, "s", parse_type("ROW<a INT, b STRING>")), DataField(5, "xs", parse_type("ARRAY<INT>")),
     DataField(6, "f", parse_type("DOUBLE")), DataField(7, "ok", parse_type("BOOLEAN"))]
U = [DataField(0, "id", parse_type("BIGINT")), DataField(1, "label", parse_type("STRING"))]

QUERIES = [
    "SELECT * FROM t WHERE id = 5",
    "SELECT name FROM t WHERE v > 1.5 AND d = DATE '2024-01-02'",
    "SELECT s.a FROM t WHERE s.b = 'x' OR NOT (f < 2.5)",
    "SELECT id FROM t WHERE name LIKE 'ab%' AND ok AND xs IS NOT NULL",
    "SELECT id FROM t WHERE id IN (1, 2, 3) AND name IS NULL",
    "SELECT id FROM t WHERE f > (SELECT avg(id) FROM u WHERE label = 'a')",
    "SELECT id FROM t WHERE id IN (SELECT id FROM u WHERE label <> 'z')",
    "SELECT name FROM t WHERE EXISTS (SELECT 1 FROM u WHERE u.id = t.id AND u.label = t.name)",
    "WITH c AS (SELECT id, name FROM t WHERE id < 10) SELECT a.name FROM c a JOIN c b ON a.id = b.id",
    "SELECT t.name, u.label FROM t LEFT JOIN u ON t.id = u.id AND u.label = 'q' WHERE t.d >= DATE '2024-01-01'",
    "SELECT id, rank() OVER (PARTITION BY name ORDER BY f) FROM t WHERE ok = true",
    "SELECT id, x FROM t LATERAL VIEW explode(xs) e AS x WHERE id = 3",
    "SELECT name, d, count(*) FROM t GROUP BY ROLLUP (name, d)",
    "SELECT id FROM t WHERE id = 1 UNION ALL SELECT id FROM u WHERE label = 'b'",
    "SELECT * FROM t, LATERAL (SELECT t.id + u.id AS z FROM u WHERE u.label = t.name)",
    "SELECT count(*) FROM t",
    "SELECT CASE WHEN x.ok THEN 'y' WHEN NOT x.ok THEN 'n' END FROM t x JOIN t y ON x.id = y.id",
    "SELECT transform(xs, a -> a + id) FROM t ORDER BY name",
    "SELECT sum(f) OVER (ORDER BY d ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) FROM t WHERE s.a = 1",
    "SELECT coalesce(u.label, t.name) FROM t FULL JOIN u USING (id)",
    "SELECT max(v) FROM t WHERE v BETWEEN 1 AND 3 HAVING max(v) > 2",
]


@pytest.fixture(scope="module")
def stand_ins(spark):
    out = {}
    for name, fields in (("t", T), ("u", U)):
        df = pushdown.stand_in(spark, fields)
        df.createOrReplaceTempView(name)
        out[name] = (pushdown.column_ids(df), fields)
    yield out
    for name in out:
        spark.catalog.dropTempView(name)


@pytest.mark.parametrize("query", QUERIES)
def test_the_jvm_walk_and_the_json_agree(spark, stand_ins, query, monkeypatch):
    df = spark.sql(query)
    jvm = pushdown.needs_of(df, stand_ins)
    with monkeypatch.context() as m:
        m.setattr(jvm_classes, "plan_needs", lambda *a: None)
        m.setattr(jvm_classes, "output_ids", lambda *a: None)
        assert {k: pushdown.column_ids(spark.table(k)) for k in stand_ins} == {k: v[0] for k, v in stand_ins.items()}
        json = pushdown.needs_of(df, stand_ins)
    assert jvm == json


def test_the_jvm_walk_finds_columns_and_filters(spark, stand_ins):
    assert jvm_classes.plan_needs(spark.sql("SELECT 1"), False) is not None  # the class is loaded here
    needs = pushdown.needs_of(spark.sql("SELECT name FROM t WHERE id = 5 AND d = DATE '2024-01-02'"), stand_ins)
    assert needs["t"].columns == ["id", "name", "d"]
    assert needs["t"].predicate == P.and_(P.Predicate("=", "id", (5,)), P.Predicate("=", "d", (dt.date(2024, 1, 2),)))
    assert needs["u"].columns == [] and needs["u"].predicate is None
