"""Java Paimon 1.0 and 2.0 (each in turn) read the branches our procedures make and main after our fast_forward.

Two tables built through SQL: on 'br.t' a branch from a tag, written through t$branch_b; on 'br.f'
the same, then CALL sys.fast_forward. Java (one JVM for all commands) reads the branch, main left
as it was, main after the fast-forward, the snapshot directory it resolves there, and writes a row
to the fast-forwarded main that we read back. On 'br.m', an append table, Java reads main after
CALL sys.merge_branch added a branch's files to it.
"""

import pytest
from java_paimon import java, ok, paimon_version  # noqa: F401  (fixtures: a JVM per Java version)
from spark.conftest import spark  # noqa: F401  (fixture: one SparkSession per run)

import paimon_sql

pytestmark = pytest.mark.interop

MAIN = [[1, "a"], [2, "b"], [3, "c"]]
BRANCH = [[1, "a"], [2, "B"], [9, "z"]]


def build(session, name, fast_forward):
    session.sql(f"CREATE TABLE br.{name} (id INT, name STRING) TBLPROPERTIES ('primary-key'='id', 'bucket'='1')")
    session.sql(f"INSERT INTO br.{name} VALUES (1, 'a'), (2, 'b')")
    session.sql(f"CALL sys.create_tag(table => 'br.{name}', tag => 'v1')")
    session.sql(f"INSERT INTO br.{name} VALUES (3, 'c')")
    session.sql(f"CALL sys.create_branch(table => 'br.{name}', branch => 'b', tag => 'v1')")
    session.sql(f"INSERT INTO br.`{name}$branch_b` VALUES (2, 'B'), (9, 'z')")
    if fast_forward:
        session.sql(f"CALL sys.fast_forward(table => 'br.{name}', branch => 'b')")


def test_java_reads_branches_and_a_fast_forwarded_main(spark, tmp_path, java):  # noqa: F811
    warehouse = str(tmp_path / "warehouse")
    session = paimon_sql.connect(warehouse, spark=spark)
    try:
        session.sql("CREATE DATABASE br")
        build(session, "t", fast_forward=False)
        build(session, "f", fast_forward=True)
        session.sql("CREATE TABLE br.m (id INT, name STRING) TBLPROPERTIES ('branch-merge.enabled'='true')")
        session.sql("INSERT INTO br.m VALUES (1, 'a')")
        session.sql("CALL sys.create_branch(table => 'br.m', branch => 'b')")
        session.sql("INSERT INTO br.`m$branch_b` VALUES (2, 'b')")
        session.sql("INSERT INTO br.m VALUES (3, 'c')")
        session.sql("CALL sys.merge_branch(table => 'br.m', source_branch => 'b')")
        w = dict(warehouse=warehouse)
        results = java.run([
            dict(op="read", table="br.m", **w),
            dict(op="read", table="br.t$branch_b", **w), dict(op="read", table="br.t", **w),
            dict(op="read", table="br.f", **w), dict(op="snapshots", table="br.f", **w),
            dict(op="write", table="br.f", rows=[[4, "java"]], **w), dict(op="read", table="br.f", **w)])
        merged, branch, main, forwarded, listed, _, after = [ok(r) for r in results]
        assert sorted(branch) == BRANCH and sorted(main) == MAIN
        assert sorted(merged) == [[1, "a"], [2, "b"], [3, "c"]]
        assert sorted(forwarded) == BRANCH
        assert listed["ids"] == [1, 2] and (listed["earliest"], listed["latest"]) == (1, 2)
        assert listed["latest_hint"] == 2 and listed["earliest_hint"] == 1
        assert sorted(after) == sorted(BRANCH + [[4, "java"]])
        ours = session.sql("SELECT * FROM br.f ORDER BY id").collect()
        assert [list(r) for r in ours] == sorted(BRANCH + [[4, "java"]])
    finally:
        paimon_sql.session.route(spark, None)
        paimon_sql.session.hooks.uninstall(spark)
        spark.sql("DROP DATABASE IF EXISTS br CASCADE")
