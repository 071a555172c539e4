"""INSERT on a Paimon table and on a plain Spark table agree (issue 12, Spark SQL fidelity).

Each differential case runs the same statements against a Paimon table (through the paimon-sql
session) and against a ``USING parquet`` table in the same Spark session, then compares, statement
by statement, "ok" or the failure's condition (Spark's error class, e.g.
``INCOMPATIBLE_DATA_FOR_TABLE.CANNOT_SAFELY_CAST``), and finally the rows. Checks that fail during
the write job raise the condition through Spark's ``raise_error``, which wraps it in
USER_RAISED_EXCEPTION: the condition compared is the first one that is not that wrapper.
"""

import re

import pytest

from paimon_sql.exceptions import PaimonError

ABC = "a INT, b STRING, c BIGINT"
STRINGS = "a VARCHAR(3), b CHAR(4)"

CASES = {
    "select-list-expressions": (ABC, ["INSERT INTO {t} SELECT id, CAST(id AS STRING), id FROM range(3)"]),
    "repeated-names": (ABC, ["INSERT INTO {t} SELECT id, id, id FROM range(2)"]),
    "unnamed-expressions": (ABC, ["INSERT INTO {t} SELECT 1 + 1, concat('a', 'b'), 7 * 6"]),
    "values-with-nulls": (ABC, ["INSERT INTO {t} VALUES (1, NULL, NULL), (NULL, 'x', NULL), (NULL, NULL, 3)"]),
    "column-list-any-order": (ABC, ["INSERT INTO {t} (c, a) VALUES (5, 6)", "INSERT INTO {t} (B) SELECT 'z'"]),
    "arity": (ABC, ["INSERT INTO {t} SELECT 8", "INSERT INTO {t} SELECT 1, 'x', 2, 3",
                    "INSERT INTO {t} (a, b) SELECT 1", "INSERT INTO {t} (a) VALUES (1, 2)"]),
    "column-list-errors": (ABC, ["INSERT INTO {t} (a, zz) VALUES (1, 2)", "INSERT INTO {t} (a, a) VALUES (1, 2)"]),
    "replace-where": (ABC, ["INSERT INTO {t} VALUES (1, 'x', 1)", "INSERT INTO {t} REPLACE WHERE a = 1 SELECT 2, 'y', 2"]),
    "by-name": (ABC, ["INSERT INTO {t} BY NAME SELECT 'q' AS B, 3 AS c, 1 AS A",
                      "INSERT INTO {t} BY NAME SELECT 1 AS c, 'r' AS b"]),
    "by-name-errors": (ABC, ["INSERT INTO {t} BY NAME SELECT 1 AS a, 'q' AS b, 3 AS c, 4 AS d",
                             "INSERT INTO {t} BY NAME SELECT 1 AS a, 4 AS d",
                             "INSERT INTO {t} BY NAME SELECT 1 AS a, 2 AS a"]),
    "store-assignment": (ABC, ["INSERT INTO {t} VALUES ('x', 'y', 1)", "INSERT INTO {t} VALUES ('9', 'y', 1)",
                               "INSERT INTO {t} SELECT true, 'x', 1", "INSERT INTO {t} SELECT 1, 'x', DATE'2020-01-01'",
                               "INSERT INTO {t} SELECT 1, array(1), 1", "INSERT INTO {t} VALUES (1.5, 'y', 2.5D)",
                               "INSERT INTO {t} SELECT 1, true, 1", "INSERT INTO {t} SELECT 2, DATE'2020-01-01', 1",
                               "INSERT INTO {t} SELECT 3, X'41', 1"]),
    "datetime": ("d DATE, ts TIMESTAMP, n TIMESTAMP_NTZ",
                 ["INSERT INTO {t} SELECT TIMESTAMP'2020-01-02 03:04:05', DATE'2020-01-01', "
                  "TIMESTAMP'2020-01-02 03:04:05'", "INSERT INTO {t} SELECT '2020-01-01', NULL, NULL"]),
    "decimal": ("x DECIMAL(5,2), f FLOAT",
                ["INSERT INTO {t} SELECT 1.005, 1e300D", "INSERT INTO {t} SELECT 1, 2",
                 "INSERT INTO {t} SELECT 1234.567, 1"]),
    "overwrite": (ABC, ["INSERT INTO {t} VALUES (1, 'a', 1)", "INSERT OVERWRITE {t} SELECT id, id, id FROM range(2)",
                        "INSERT OVERWRITE {t} (c) VALUES (9)"]),
    "char-varchar": (STRINGS, ["INSERT INTO {t} VALUES ('ab', 'ab'), ('abc', 'abcd'), (NULL, NULL)",
                               "INSERT INTO {t} VALUES ('abc   ', 'abcd   ')", "INSERT INTO {t} VALUES ('é€x', 'é')",
                               "INSERT INTO {t} VALUES ('é€xy', 'é')", "INSERT INTO {t} VALUES ('abc', 'abcde')",
                               "INSERT INTO {t} VALUES (12345, 'a')"]),
    "nested-char-varchar": ("s STRUCT<x: INT, y: VARCHAR(2)>, m MAP<STRING, CHAR(2)>, l ARRAY<VARCHAR(2)>",
                            ["INSERT INTO {t} SELECT named_struct('p', 1L, 'q', 'ab'), map('k', 'a'), array('a', NULL)",
                             "INSERT INTO {t} SELECT named_struct('x', 1, 'y', 'abc'), NULL, NULL",
                             "INSERT INTO {t} SELECT NULL, map('k', 'abc'), NULL",
                             "INSERT INTO {t} SELECT NULL, NULL, array('abc')"]),
}

# checks made while the job runs: also through the Python writer (a bucketed table), not only Spark's
RUNTIME_CASES = {
    "overflow": (ABC, ["INSERT INTO {t} VALUES (3000000000, 'y', 1)", "INSERT INTO {t} SELECT 1, 'x', 1e30",
                       "INSERT INTO {t} SELECT 1, 'x', CAST('NaN' AS DOUBLE)", "INSERT INTO {t} VALUES (2, 'z', 3)"]),
    "length": (STRINGS, ["INSERT INTO {t} VALUES ('abcd', 'ab')", "INSERT INTO {t} VALUES ('ab', 'ab')"]),
}


def _condition(error: Exception) -> str:
    found = [c for c in re.findall(r"\[([A-Z][A-Z_.]*)\]", str(error)) if c != "USER_RAISED_EXCEPTION"]
    return found[0] if found else type(error).__name__


def _outcomes(run, table: str, statements):
    """Each statement's outcome ("ok" or its condition), then the table's rows."""
    outcomes = []
    for statement in statements:
        try:
            run(statement.format(t=table)).collect()
            outcomes.append("ok")
        except Exception as e:  # noqa: BLE001 - the failure itself is what is compared
            outcomes.append(_condition(e))
    return outcomes, sorted((tuple(r) for r in run(f"SELECT * FROM {table}").collect()), key=repr)


def _differential(session, tmp_path, columns, statements, properties="", partitioned=""):
    session.sql(f"CREATE TABLE p ({columns}) {partitioned} {properties}")
    session.spark.sql(f"CREATE TABLE s ({columns}) USING parquet {partitioned} LOCATION '{tmp_path}/s'")
    try:
        ours, spark = _outcomes(session.sql, "p", statements), _outcomes(session.spark.sql, "s", statements)
    finally:
        session.spark.sql("DROP TABLE IF EXISTS s")
    assert ours == spark
    return ours


@pytest.mark.parametrize("case", CASES)
def test_insert_agrees_with_spark(session, tmp_path, case):
    _differential(session, tmp_path, *CASES[case])


@pytest.mark.parametrize("bucketed", [False, True], ids=["native-writer", "python-writer"])
@pytest.mark.parametrize("case", RUNTIME_CASES)
def test_job_time_checks_agree_with_spark(session, tmp_path, case, bucketed):
    properties = "TBLPROPERTIES ('bucket' = '2', 'bucket-key' = 'a')" if bucketed else ""
    outcomes, _ = _differential(session, tmp_path, *RUNTIME_CASES[case], properties)
    assert "ok" in outcomes and len(set(outcomes)) > 1  # the case has both a failure and a success


def test_partitioned_insert_agrees_with_spark(session, tmp_path):
    statements = ["INSERT INTO {t} PARTITION (dt = 'x') SELECT 1, 'a'",
                  "INSERT INTO {t} PARTITION (dt = 'y') (b, a) VALUES ('b', 2)",
                  "INSERT INTO {t} SELECT 3, 'c', 'z'", "INSERT INTO {t} PARTITION (dt = 'x') SELECT 1"]
    _differential(session, tmp_path, "a INT, b STRING, dt STRING", statements, partitioned="PARTITIONED BY (dt)")


# -- write.merge-schema: BY NAME and the DataFrame API add the data's new columns (paimon-spark) ------

def _rows(session, text):
    return sorted((tuple(r) for r in session.sql(text).collect()), key=repr)


def test_by_name_extra_column_fails_naming_it(session):
    session.sql("CREATE TABLE m (a INT, b STRING)")
    with pytest.raises(PaimonError, match=r"EXTRA_COLUMNS.*column\(s\) d .*write.merge-schema"):
        session.sql("INSERT INTO m BY NAME SELECT 1 AS a, 4 AS d")


def test_merge_schema_adds_columns(session):
    session.sql("CREATE TABLE m (a INT, b STRING) TBLPROPERTIES ('write.merge-schema' = 'true')")
    session.sql("INSERT INTO m VALUES (1, 'x')")
    session.sql("INSERT INTO m BY NAME SELECT 'y' AS b, 2 AS a, 3L AS d, array('e') AS e")
    assert session.catalog.get_table("default.m").schema.field_names == ["a", "b", "d", "e"]
    assert _rows(session, "SELECT * FROM m") == [(1, "x", None, None), (2, "y", 3, ["e"])]


def test_merge_schema_explicit_cast(session):
    session.sql("CREATE TABLE m (a INT, b STRING) TBLPROPERTIES ('write.merge-schema' = 'true')")
    with pytest.raises(PaimonError, match="CANNOT_SAFELY_CAST"):
        session.sql("INSERT INTO m BY NAME SELECT '5' AS a")
    session.sql("ALTER TABLE m SET TBLPROPERTIES ('write.merge-schema.explicit-cast' = 'true')")
    session.sql("INSERT INTO m BY NAME SELECT '5' AS a, 6 AS c")
    assert _rows(session, "SELECT * FROM m") == [(5, None, 6)]


def test_dataframe_write_merge_schema(session):
    session.sql("CREATE TABLE m (a INT, b STRING)")
    df = session.spark.createDataFrame([(1, "x", 2.5)], "a INT, b STRING, f DOUBLE")
    writer = df.write.format("paimon").option("warehouse", session.warehouse).mode("append")
    with pytest.raises(Exception, match="unknown column"):
        writer.save("default.m")
    writer.option("write.merge-schema", "true").save("default.m")
    assert session.catalog.get_table("default.m").schema.field_names == ["a", "b", "f"]
    assert _rows(session, "SELECT * FROM m") == [(1, "x", 2.5)]


def test_insert_hint_options_apply_to_the_write(session):
    """``INSERT INTO t /*+ OPTIONS(...) */``: the options of that write, judged as hints are (they
    were dropped as a comment before)."""
    session.sql("CREATE TABLE hinted (id INT, v STRING)")
    session.sql("INSERT INTO hinted /*+ OPTIONS('file.format' = 'orc') */ VALUES (1, 'x')")
    session.sql("INSERT INTO hinted VALUES (2, 'y')")
    formats = sorted(r[0].rsplit(".", 1)[1] for r in session.sql("SELECT file_path FROM hinted$files").collect())
    assert formats == ["orc", "parquet"]
    assert sorted(tuple(r) for r in session.sql("SELECT * FROM hinted").collect()) == [(1, "x"), (2, "y")]
    with pytest.raises(PaimonError, match="'snapshot.clean-empty-directories' is not supported"):
        session.sql("INSERT INTO hinted /*+ OPTIONS('snapshot.clean-empty-directories' = 'true') */ VALUES (3, 'z')")
