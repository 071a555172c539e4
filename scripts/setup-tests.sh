#!/usr/bin/env bash
# Install everything the tests need, beside paimon-sql itself (scripts/install.sh). Idempotent.
# Needs root for apt-get (Debian), npm and Maven Central.
#   .venv                 paimon-sql with its test extra (pytest, hypothesis, moto, BI clients, ...)
#   apt-get               PostgreSQL and MariaDB servers and JDBC drivers (catalog tests), Maven,
#                         OpenLDAP's slapd (--auth ldap tests)
#   .venv/azurite         Azurite, Azure Storage's emulator, from npm (Azure warehouse tests)
#   .venv-pypaimon        pypaimon 2.1 in its own venv (the Python oracle)
#   .venv-paimon-spark    PySpark 4.1.2 and paimon-sql (editable): paimon-spark's Spark, and ours on it; the jar
#                         from Maven Central, else $PAIMON_SPARK_JAR (.ci/run: ../shared/oracles/)
#   ~/.cache/paimon-sql   Java Paimon 1.0 (PyPI wheel) and 2.0 (Maven Central), Iceberg Java 1.10 and 1.8 (Maven
#                         Central), drivers compiled, the Spark JVMs' class archive (tests/jvm_archive.py)
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
.venv/bin/python -m pip install -q --disable-pip-version-check -e '.[test]'
need=()
ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1 || need+=(postgresql)
[ -x /usr/sbin/mariadbd ] || need+=(mariadb-server)
[ -f /usr/share/java/sqlite-jdbc.jar ] || need+=(libxerial-sqlite-jdbc-java)
[ -f /usr/share/java/postgresql.jar ] || need+=(libpostgresql-jdbc-java)
command -v mvn >/dev/null || need+=(maven)
command -v javac >/dev/null || need+=(openjdk-17-jdk-headless)
command -v npm >/dev/null || need+=(npm)
[ -x /usr/sbin/slapd ] && command -v ldapsearch >/dev/null || need+=(slapd ldap-utils)  # --auth ldap's tests
if [ ${#need[@]} -gt 0 ]; then
  [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null || {
    echo "the tests need Debian's ${need[*]}: run this script as root on Debian (apt-get), or install them" >&2
    exit 1; }
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
[ -x .venv/azurite/node_modules/.bin/azurite-blob ] || \
  npm install -s --prefix .venv/azurite --no-audit --no-fund azurite@3.37.0 >/dev/null
PY="${PYTHON:-python3}"
[ -x .venv-pypaimon/bin/python ] || "$PY" -m venv .venv-pypaimon
.venv-pypaimon/bin/python -c "import pypaimon" 2>/dev/null || \
  .venv-pypaimon/bin/python -m pip install -q --disable-pip-version-check 'pypaimon==2.1.0'
# an oracle that cannot be had is named here and fails the tests that need it; the others still run
(cd tests && ../.venv/bin/python -m oracles >/dev/null) || echo "setup-tests: see above; the tests that need it will fail" >&2
# the class archive every Spark JVM of the tests maps (tests/jvm_archive.py): written once, about a minute;
# without it the tests run as they are, slower
(cd tests && ../.venv/bin/python jvm_archive.py) || echo "setup-tests: no Spark class archive; the tests run slower" >&2
