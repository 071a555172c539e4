"""SQL front layer benchmark (issue: SQL front layer over Spark), side by side in one run.

- N-row append table, ``SELECT sum(value), count(*)``: paimon-sql vs Spark reading the same
  Parquet data files natively (target <= 1.15).
- Primary-key table written in one INSERT and fully compacted (one sorted run per bucket at the max
  level): the same query vs native (target <= 1.3).
- INSERT of M rows: paimon-sql vs ``df.write.parquet`` of the same DataFrame (target <= 1.5).
- Planning cost per query: the DataFrame of a filtered aggregate, not run, vs Spark's over a view
  of the same Parquet files (no target: what splicing and planning over stand-ins costs).

    .venv/bin/python bench/spark_sql.py [N=10_000_000] [M=5_000_000]
"""

import os
import shutil
import sys
import tempfile

from dataset import best

import paimon_sql
from paimon_sql.data import binary_row

N = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000_000
M = int(sys.argv[2]) if len(sys.argv) > 2 else 5_000_000
SOURCE = ("SELECT id, concat('name-', id) AS name, id * 0.5 AS value, "
          "element_at(array('2024-01-01','2024-01-02','2024-01-03','2024-01-04'), CAST(id % 4 AS INT) + 1) AS dt "
          "FROM range({n})")


def live_files(table):
    """Paths of the data files the latest snapshot holds (compaction leaves replaced files on disk)."""
    types = [f.type for f in table.schema.fields_of(table.schema.partition_keys)]
    return [table.paths.data_file_path(binary_row.from_bytes(e.partition, types), e.bucket, e.file.file_name)
            for e in table.new_scan().plan_entries()]



def main():
    tmp = tempfile.mkdtemp(prefix="paimon-spark-bench-")
    s = paimon_sql.connect(os.path.join(tmp, "wh"), conf={"spark.master": "local[2]",
                                                          "spark.ui.showConsoleProgress": "false",
                                                          "spark.driver.memory": "4g"})
    s.spark.sparkContext.setLogLevel("ERROR")
    spark = s.spark
    try:
        s.sql("CREATE TABLE a (id BIGINT, name STRING, value DOUBLE, dt STRING) PARTITIONED BY (dt)")
        s.sql(f"INSERT INTO a {SOURCE.format(n=N)}")
        s.sql("CREATE TABLE p (id BIGINT, name STRING, value DOUBLE, dt STRING) "
              "TBLPROPERTIES ('primary-key' = 'id', 'bucket' = '4')")
        s.sql(f"INSERT INTO p {SOURCE.format(n=N)}")
        s.catalog.get_table("default.p").compact(full=True)
        results = {}
        for name in ("a", "p"):
            files = live_files(s.catalog.get_table(f"default.{name}"))
            ours = best(lambda: s.sql(f"SELECT sum(value), count(*) FROM {name}").collect())
            native = best(lambda: spark.read.parquet(*files).selectExpr("sum(value)", "count(*)").collect())
            results[name] = (ours, native)
        # planning alone: the DataFrame of a filtered query, not run (ours: stand-ins, then the scans)
        spark.read.parquet(*live_files(s.catalog.get_table("default.a"))).createOrReplaceTempView("native_a")
        query = "SELECT dt, sum(value) FROM {t} WHERE id > 5 AND dt = '2024-01-02' GROUP BY dt"
        results["plan"] = (best(lambda: s.sql(query.format(t="a"))),
                           best(lambda: s.spark_sql(query.format(t="native_a"))))
        df = spark.sql(SOURCE.format(n=M))
        df.cache().count()
        out = os.path.join(tmp, "native-out")
        native_write = best(lambda: df.write.mode("overwrite").parquet(out), repeat=2)
        s.sql("CREATE TABLE w (id BIGINT, name STRING, value DOUBLE, dt STRING) PARTITIONED BY (dt)")
        df.createOrReplaceTempView("src")
        ours_write = best(lambda: s.sql("INSERT OVERWRITE w SELECT * FROM src"), repeat=2)
    finally:
        s.close()
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"rows: scans {N:,}, insert {M:,}; 2 cores, local[2]; seconds, best of runs")
    print(f"{'measure':<44}{'paimon-sql':>11}{'native':>9}{'ratio':>8}{'target':>8}")
    for label, (o, n), target in (("append table: SELECT sum(value), count(*)", results["a"], 1.15),
                                  ("pk table, one sorted run: same query", results["p"], 1.3),
                                  ("INSERT vs df.write.parquet", (ours_write, native_write), 1.5),
                                  ("planning one filtered query (not run)", results["plan"], float("nan"))):
        print(f"{label:<44}{o:>11.2f}{n:>9.2f}{o / n:>7.2f}x{target:>7.2f}x")


if __name__ == "__main__":
    main()
