"""An engine of the differential suite as a child process, in a venv of its own (PySpark 4.1.2):

    python engine_driver.py paimon-spark JAR      Apache Paimon's Spark connector (its jar on spark.jars,
                                                  its session extensions, a ``paimon`` SparkCatalog as
                                                  the default catalog)
    python engine_driver.py paimon-sql            paimon-sql on this PySpark (the oldest Spark it promises)

One Spark session for the process (its start is seconds); each case gets a new session of it
(``newSession()``: its own conf, temporary views and current database) on its own warehouse.
Reads one JSON line per batch, ``{"cases": [{"warehouse": path, "statements": [...], "conf": {...}}]}``,
and answers one line, ``{"answers": [[answer per statement] per case]}`` (engine.py says what an answer is),
or ``{"failed": traceback}``.
"""

import json
import os
import sys
import traceback
from functools import partial

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from engine import dataframe_operation, run  # noqa: E402

PAIMON_SPARK_CONF = {
    "spark.sql.extensions": "org.apache.paimon.spark.extensions.PaimonSparkSessionExtensions",
    "spark.sql.catalog.paimon": "org.apache.paimon.spark.SparkCatalog",
    "spark.sql.defaultCatalog": "paimon",
}


def base_session(engine: str, jar: str = ""):
    from pyspark.sql import SparkSession
    builder = (SparkSession.builder.master("local[2]").appName(f"differential-{engine}")
               .config("spark.sql.shuffle.partitions", "2").config("spark.ui.enabled", "false")
               .config("spark.ui.showConsoleProgress", "false")
               .config("spark.sql.codegen.wholeStage", "false"))
    if engine == "paimon-spark":
        builder = builder.config("spark.jars", jar)
        for key, v in PAIMON_SPARK_CONF.items():
            builder = builder.config(key, v)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("OFF")  # failing statements are answers, not log lines
    return spark


def run_case(engine: str, spark, case: dict) -> list:
    session = spark.newSession()
    for key, v in case.get("conf", {}).items():
        session.conf.set(key, v)
    if engine == "paimon-spark":
        session.conf.set("spark.sql.catalog.paimon.warehouse", "file://" + case["warehouse"])
        return run(session.sql, case["statements"], partial(dataframe_operation, session, session.sql, case["warehouse"]))
    import paimon_sql
    ours = paimon_sql.connect(case["warehouse"], spark=session)
    try:
        return run(ours.sql, case["statements"], partial(dataframe_operation, session, ours.sql, case["warehouse"]))
    finally:
        ours.release()


def main() -> None:
    engine, jar = sys.argv[1], (sys.argv[2] if len(sys.argv) > 2 else "")
    spark = None
    for line in sys.stdin:
        try:
            spark = spark or base_session(engine, jar)
            batch = json.loads(line)
            out = {"answers": [run_case(engine, spark, case) for case in batch["cases"]]}
        except Exception:  # noqa: BLE001 - reported to the test, which fails naming it
            out = {"failed": traceback.format_exc()}
        sys.stdout.write(json.dumps(out) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
