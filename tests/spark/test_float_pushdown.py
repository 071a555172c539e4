"""Filters on the other columns of a table with doubles skip row groups in Spark's Parquet read,
while filters on the doubles themselves are never checked against the file's stats, which leave
NaN out and tell -0.0 from 0.0 where Spark's comparisons do not (NaN above every number, -0.0 =
0.0): a double is read as itself times one, which Spark does not push into the reader."""

import pytest

ROWS = [(1, "1.0D"), (2, "CAST('NaN' AS DOUBLE)"), (3, "-0.0D"), (4, "5.0D")]


@pytest.fixture(params=["append", "primary-key"])
def table(session, request):
    """Spark's Parquet writer (append tables) leaves a double's stats out once it meets a NaN; our
    writer (primary-key tables) writes them without it."""
    session.sql("CREATE DATABASE db")
    options = " TBLPROPERTIES ('primary-key' = 'id', 'bucket' = '1')" if request.param == "primary-key" else ""
    session.sql(f"CREATE TABLE db.t (id BIGINT, b DOUBLE, f FLOAT){options}")
    for rows in (ROWS[:2], ROWS[2:3], ROWS[3:]):  # 1.0 and NaN in one file: its stats' max is 1.0
        session.sql("INSERT INTO db.t VALUES " + ", ".join(f"({i}, {v}, CAST({v} AS FLOAT))" for i, v in rows))
    return session


@pytest.mark.parametrize("where, ids", [("b > 2.0", [2, 4]), ("b = 0.0", [3]), ("b = CAST('NaN' AS DOUBLE)", [2]),
                                        ("f > 2.0", [2, 4]), ("f = 0.0", [3]), ("b <= 1.0", [1, 3])])
def test_filters_on_doubles_answer_as_spark_does(table, where, ids):
    values = ", ".join(f"({i}, {v}, CAST({v} AS FLOAT))" for i, v in ROWS)
    spark = sorted(r[0] for r in table.spark.sql(f"SELECT id FROM VALUES {values} AS v(id, b, f) WHERE {where}").collect())
    assert spark == ids
    assert sorted(r[0] for r in table.sql(f"SELECT id FROM db.t WHERE {where}").collect()) == ids  # on the driver
    table.sql("SET paimon.sql.driverReadBytes = 0")  # and by Spark's readers
    assert sorted(r[0] for r in table.sql(f"SELECT id FROM db.t WHERE {where}").collect()) == ids


def test_filters_on_other_columns_reach_the_reader(table):
    table.sql("SET paimon.sql.driverReadBytes = 0")  # Spark's Parquet reader, not a read on the driver
    plan = table.sql("SELECT * FROM db.t WHERE id = 3 AND b < 1.0")._jdf.queryExecution().executedPlan().toString()
    pushed = plan.split("PushedFilters: [", 1)[1].split("], ReadSchema", 1)[0]
    assert "EqualTo(id,3)" in pushed and "LessThan(b" not in pushed, plan
    assert [tuple(r) for r in table.sql("SELECT id, b FROM db.t WHERE id = 3 AND b < 1.0").collect()] == [(3, -0.0)]
    conf = table.spark._jsparkSession.sessionState().newHadoopConf()
    assert conf.get("parquet.filter.stats.enabled") != "false"
