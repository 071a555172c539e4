"""Runs inside .venv-paimon-spark (PySpark 4.1.2 with Apache Paimon 2.0's Spark connector): Spark SQL
on a catalog ``paimon`` of ``metastore=rest``, for tests/e2e/test_rest_server.py.

Usage: python paimon_spark_rest.py '<json>' with {"jar": J, "uri": U, "warehouse": W, "token": T,
"statements": [...]} -> one JSON line on stdout: for each statement its rows (lists of values as
strings, None as null), or {"error": "<one line>"} for the first that failed (the rest not run).
"""

import json
import sys

from pyspark.sql import SparkSession


def main():
    cmd = json.loads(sys.argv[1])
    conf = {"spark.jars": cmd["jar"], "spark.ui.enabled": "false", "spark.sql.shuffle.partitions": "2",
            "spark.sql.extensions": "org.apache.paimon.spark.extensions.PaimonSparkSessionExtensions",
            "spark.sql.catalog.paimon": "org.apache.paimon.spark.SparkCatalog",
            "spark.sql.catalog.paimon.metastore": "rest", "spark.sql.catalog.paimon.uri": cmd["uri"],
            "spark.sql.catalog.paimon.warehouse": cmd["warehouse"],
            "spark.sql.catalog.paimon.token.provider": "bear", "spark.sql.catalog.paimon.token": cmd["token"],
            "spark.sql.defaultCatalog": "paimon"}
    builder = SparkSession.builder.master("local[2]")
    for k, v in conf.items():
        builder = builder.config(k, v)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    answers = []
    for text in cmd["statements"]:
        try:
            rows = spark.sql(text).collect()
        except Exception as e:  # the test names the statement and Spark's message
            answers.append({"error": f"{text}: {' '.join(str(e).split())[:2000]}"})
            break
        answers.append([[None if v is None else str(v) for v in r] for r in rows])
    sys.stdout.write(json.dumps(answers) + "\n")
    spark.stop()


if __name__ == "__main__":
    main()
