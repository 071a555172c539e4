"""Errors through ``Session.sql`` (issue 12): one line, in the user's words, whichever part of Spark
raised them; errors raised later, while rows are collected, convert the same way (``spark_error``)."""

import glob
import os
import re

import pytest

from paimon_sql.exceptions import CorruptDataFileError, SparkSqlError, SqlSyntaxError, UnsupportedStatementError
from paimon_sql.session import spark_error, user_names


@pytest.fixture
def t(session, spark):
    """Table t (a INT, b STRING) holding (1, 'x'), under ANSI mode, with a Python UDF that fails."""
    spark.conf.set("spark.sql.ansi.enabled", "true")
    spark.udf.register("failing_udf", lambda a: a // 0, "int")
    session.sql("CREATE TABLE t (a INT, b STRING)")
    session.sql("INSERT INTO t VALUES (1, 'x')")
    yield session
    spark.conf.unset("spark.sql.ansi.enabled")


def collect_error(session, text):
    """The error ``collect()`` raises for ``text``, converted as the shell converts it."""
    df = session.sql(text)
    with pytest.raises(Exception) as info:
        df.collect()
    return spark_error(info.value, text)


def test_errors_while_rows_are_computed_are_one_line(t):
    cases = {"SELECT a / 0 FROM t": r"\[DIVIDE_BY_ZERO\] Division by zero\. .* SQLSTATE: 22012",
             "SELECT CAST(b AS INT) FROM t": r"\[CAST_INVALID_INPUT\] The value 'x' .* SQLSTATE: 22018",
             "SELECT failing_udf(a) FROM t": r"ZeroDivisionError: integer division or modulo by zero"}
    for text, message in cases.items():
        error = collect_error(t, text)
        assert isinstance(error, SparkSqlError)
        assert "\n" not in str(error) and "__paimon_" not in str(error)
        assert re.fullmatch(message, str(error)), str(error)


def test_a_failed_write_job_is_its_tasks_error(t):
    with pytest.raises(SparkSqlError) as info:
        t.sql("INSERT INTO t SELECT failing_udf(a), b FROM t")
    assert str(info.value) == "ZeroDivisionError: integer division or modulo by zero"


def test_a_paimon_scan_failing_in_a_task_raises_our_error(session, warehouse):
    session.sql("CREATE TABLE t (id BIGINT, s STRING, PRIMARY KEY (id) NOT ENFORCED) "
                "TBLPROPERTIES ('bucket' = '1', 'merge-engine' = 'partial-update')")
    session.sql("INSERT INTO t VALUES (1, 'a'), (2, 'a')")
    session.sql("INSERT INTO t VALUES (2, 'b'), (3, 'b')")  # overlapping files: the paimon source merges them
    path = sorted(glob.glob(f"{warehouse}/default.db/t/bucket-0/data-*"))[0]
    open(path, "wb").close()
    error = collect_error(session, "SELECT count(*) FROM t")
    assert isinstance(error, CorruptDataFileError)
    assert str(error).startswith("data file ") and os.path.basename(path) in str(error) and "\n" not in str(error)


def test_analysis_errors_carry_no_position_in_the_rewritten_text(t):
    with pytest.raises(SparkSqlError) as info:
        t.sql("SELECT nosuch FROM t")
    assert str(info.value).startswith("[UNRESOLVED_COLUMN.WITH_SUGGESTION]")
    assert str(info.value).endswith("SQLSTATE: 42703")  # Spark's "; line 1 pos 7" counts in our rewrite


def test_syntax_errors_name_the_token_where_the_user_wrote_it(session):
    session.sql("CREATE TABLE t (a INT)")
    cases = {"SELECT * FROM t WHERE a = = 1": "syntax error at or near '=' (line 1, column 27)",
             "\n  SELECT * FROM t$snapshots\n  WHERE a = = 1": "syntax error at or near '=' (line 3, column 13)",
             "SELECT 'abc": "syntax error at or near ''abc' (line 1, column 8)",
             "SELECT 1 /* open": "syntax error at or near end of input",
             "SELEC oops": "syntax error at or near 'SELEC' (line 1, column 1)"}  # found by Spark's parser
    for text, message in cases.items():
        with pytest.raises(SqlSyntaxError) as info:
            session.sql(text)
        assert str(info.value) == message


def test_unsupported_statement_on_a_paimon_table_says_so(session):
    session.sql("CREATE TABLE t (a INT)")
    for text in ["MSCK REPAIR TABLE default.t", "LOAD DATA LOCAL INPATH '/nowhere' INTO TABLE t"]:
        with pytest.raises(UnsupportedStatementError) as info:
            session.sql(text)
        assert str(info.value) == f"unsupported statement on Paimon table default.t: {text}"
    with pytest.raises(SparkSqlError, match=r"^\[TABLE_OR_VIEW_NOT_FOUND\] The table or view `nosuch` cannot be found"):
        session.sql("CACHE TABLE nosuch")


def test_scan_view_names_map_back_to_the_users_tables():
    text = "SELECT * FROM db.orders o JOIN `t$snapshots` s ON o.id = s.snapshot_id"
    assert user_names("[`__paimon_orders_12`.`id`, `__paimon_t_snapshots_3`.`x`] __paimon_rows_4", text) == \
        "[`orders`.`id`, `t$snapshots`.`x`] rows"
