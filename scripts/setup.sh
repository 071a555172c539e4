#!/usr/bin/env bash
# Create .venv with paimon-sql (editable) and its test extra. Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-python3}"
[ -x .venv/bin/python ] || "$PY" -m venv .venv
.venv/bin/python -m pip install -q --disable-pip-version-check --upgrade pip
.venv/bin/python -m pip install -q --disable-pip-version-check -e '.[test]'
# PostgreSQL, MariaDB and Debian's JDBC drivers for the JDBC catalog's tests (tests/catalog, tests/interop)
need=()
ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1 || need+=(postgresql)
[ -x /usr/sbin/mariadbd ] || need+=(mariadb-server)
[ -f /usr/share/java/sqlite-jdbc.jar ] || need+=(libxerial-sqlite-jdbc-java)
[ -f /usr/share/java/postgresql.jar ] || need+=(libpostgresql-jdbc-java)
if [ ${#need[@]} -gt 0 ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
# Azurite (Microsoft's Azure Storage emulator, from npm) for the Azure warehouse tests (tests/unit/test_azure.py)
[ -x .venv/azurite/node_modules/.bin/azurite-blob ] || \
  npm install -s --prefix .venv/azurite --no-audit --no-fund azurite@3.37.0 >/dev/null
