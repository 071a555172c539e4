#!/usr/bin/env bash
# Builds paimon_sql/spark/java/paimon-sql-spark.jar from the Java sources beside it (JDK 17's javac,
# against the jars of the venv's pyspark; Java 17 bytecode, which every Spark 4 runs). The jar is
# committed: users need no JDK beyond the JRE Spark runs on. It records the SHA-256 of its sources,
# which tests/spark/test_deleted_rows_jvm.py checks, so a source edited without a rebuild fails the suite.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-.venv/bin/python}
SRC=paimon_sql/spark/java
JARS=$("$PYTHON" -c 'import os, pyspark; print(os.path.join(os.path.dirname(pyspark.__file__), "jars"))')
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
javac --release 17 -Xlint:all,-path -Werror -cp "$JARS/*" -d "$OUT" "$SRC"/*.java
mkdir -p "$OUT/META-INF/paimon-sql"
"$PYTHON" -c 'import sys; from paimon_sql.spark.jvm_classes import sources_digest; print(sources_digest())' \
    > "$OUT/META-INF/paimon-sql/sources.sha256"
rm -f "$SRC/paimon-sql-spark.jar"
(cd "$OUT" && jar --create --date=2026-01-01T00:00:00Z --file "$OLDPWD/$SRC/paimon-sql-spark.jar" META-INF paimon_sql)
echo "built $SRC/paimon-sql-spark.jar"
