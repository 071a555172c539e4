"""Tables CALL sys.migrate_table made of Spark's own files read row for row in pypaimon 2.1.0 and in
Java Paimon 1.0 and 2.0 (each in turn), and take a Java write afterwards. Partitioned sources keep
their partition values only in directory names, so this checks that both read them from the
partition, as we do."""

import os
import uuid

import pytest
from java_paimon import ok, paimon_version, started  # noqa: F401  (fixture: each Java version in turn)
from spark.conftest import session, spark  # noqa: F401  (fixtures: one SparkSession per run)

pytestmark = pytest.mark.interop
DATA = [(i, f"s{i}", i / 4, i % 3 if i % 5 else None, "a" if i < 9 else "b") for i in range(24)]
SCHEMA = "id INT, name STRING, v DOUBLE, p INT, q STRING"
COLUMNS = ["id", "name", "v", "p", "q"]


@pytest.fixture(scope="module")
def java(paimon_version):
    """Java Paimon with Spark's snappy-java on its classpath: Spark writes Snappy-compressed files by
    default, and the Paimon bundle leaves that codec to its host (Flink, Spark, Hive ship it)."""
    import pyspark
    jars = os.path.join(os.path.dirname(pyspark.__file__), "jars")
    snappy = [os.path.join(jars, j) for j in os.listdir(jars) if j.startswith("snappy-java")]
    with started(paimon_version, after=snappy) as java:  # one JVM for the module's batches
        yield java


def saved_table(spark, fmt, partitions):
    name = "mig_" + uuid.uuid4().hex[:8]
    spark.createDataFrame(DATA, SCHEMA).write.format(fmt).partitionBy(*partitions).saveAsTable(name)
    return name


def hive_dir(spark, tmp_path):
    path = str(tmp_path / "dir")
    spark.createDataFrame(DATA, SCHEMA).write.partitionBy("q", "p").parquet(path)
    return path


CASES = {
    "parquet_by_q_p": lambda spark, tmp: ("hive", saved_table(spark, "parquet", ("q", "p"))),
    "parquet_unpartitioned": lambda spark, tmp: ("parquet", saved_table(spark, "parquet", ())),
    "orc_by_p": lambda spark, tmp: ("hive", saved_table(spark, "orc", ("p",))),
    "hive_layout_directory": lambda spark, tmp: ("parquet", hive_dir(spark, tmp)),
}


@pytest.mark.parametrize("case", list(CASES))
def test_pypaimon_and_java_read_a_migrated_table(case, session, spark, warehouse, tmp_path, pypaimon, java):
    kind, source = CASES[case](spark, tmp_path)
    expected = sorted(DATA, key=repr)
    session.sql("CREATE DATABASE IF NOT EXISTS db")
    session.sql(f"CALL sys.migrate_table(source_type => '{kind}', table => '{source}', target_table => 'db.m')")
    table = session.catalog.get_table("db.m")
    adopted = [n for _, _, names in os.walk(table.paths.root) for n in names if n.startswith("part-")]
    assert len(adopted) == len(table.new_scan().plan_entries())  # Spark's own files, not rewritten
    ours = sorted((tuple(r) for r in session.sql(f"SELECT {', '.join(COLUMNS)} FROM db.m").collect()), key=repr)
    assert ours == expected
    theirs = pypaimon(op="read", warehouse=warehouse, table="db.m")
    assert sorted((tuple(r[c] for c in COLUMNS) for r in theirs), key=repr) == expected
    order = [f.name for f in table.schema.fields]
    new_row = {"id": 100, "name": "java", "v": 0.5, "p": 7, "q": "c"}
    results = java.run([{"op": "read", "warehouse": warehouse, "table": "db.m"},
                        {"op": "write", "warehouse": warehouse, "table": "db.m",
                         "rows": [[new_row[c] for c in order]]},
                        {"op": "read", "warehouse": warehouse, "table": "db.m"}])
    as_tuples = lambda rs: sorted((tuple(dict(zip(order, r))[c] for c in COLUMNS) for r in rs), key=repr)  # noqa: E731
    assert as_tuples(ok(results[0])) == expected
    assert as_tuples(ok(results[2])) == sorted(expected + [tuple(new_row[c] for c in COLUMNS)], key=repr)
    after = sorted((tuple(r) for r in session.sql(f"SELECT {', '.join(COLUMNS)} FROM db.m").collect()), key=repr)
    assert after == as_tuples(ok(results[2]))
    if kind == "hive" or "/" not in source:
        spark.sql(f"DROP TABLE IF EXISTS {source}")


def test_java_and_pypaimon_read_a_copy(session, warehouse, pypaimon, java):
    """CALL sys.copy of a primary-key table with files of two schema versions and a partition filter."""
    session.sql("CREATE DATABASE IF NOT EXISTS db")
    session.sql("CREATE TABLE db.src (id INT, v STRING, dt STRING) PARTITIONED BY (dt) "
                "TBLPROPERTIES ('primary-key' = 'id,dt', 'bucket' = '2')")
    session.sql("INSERT INTO db.src SELECT id, concat('v', id), IF(id % 3 = 0, 'a', 'b') FROM range(30) AS r(id)")
    session.sql("ALTER TABLE db.src ADD COLUMN w INT")
    session.sql("INSERT INTO db.src SELECT id, 'new', IF(id % 3 = 0, 'a', 'b'), id FROM range(20, 40) AS r(id)")
    session.sql("CALL sys.copy(source_table => 'db.src', target_table => 'db.dst', where => \"dt = 'b'\")")
    expected = sorted(tuple(r) for r in session.sql("SELECT id, v, dt, w FROM db.src WHERE dt = 'b'").collect())
    assert sorted(tuple(r) for r in session.sql("SELECT id, v, dt, w FROM db.dst").collect()) == expected
    theirs = pypaimon(op="read", warehouse=warehouse, table="db.dst")
    assert sorted((r["id"], r["v"], r["dt"], r["w"]) for r in theirs) == expected
    assert sorted(tuple(r) for r in java("read", warehouse, "db.dst")) == expected
