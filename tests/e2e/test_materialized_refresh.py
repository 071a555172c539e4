"""``paimon-sql refresh`` as cron runs it: refreshes the lapsed materialized tables, skips the rest."""

import os
import subprocess
import sys
import time

from spark.conftest import rows, session, spark  # noqa: F401  (fixtures: one SparkSession per run)
from tests.e2e.test_cli import BIN


def setup(session, *tables):
    """A source with one row, materialized tables ``(name, freshness)`` over it (``paused`` suspended),
    then a second source row: every table but the suspended one is one row behind. The setup runs in
    the test run's Spark; the command and the server under test run in their own processes."""
    session.sql("CREATE TABLE src (k INT, v INT)")
    session.sql("INSERT INTO src VALUES (1, 10)")
    for name, freshness in tables:
        session.sql(f"CREATE MATERIALIZED TABLE {name} FRESHNESS = INTERVAL {freshness} AS SELECT k, v FROM src")
    session.sql("ALTER MATERIALIZED TABLE paused SUSPEND")
    session.sql("INSERT INTO src VALUES (2, 20)")


def test_refresh_command_refreshes_lapsed_and_skips_fresh_and_suspended(session, warehouse):
    setup(session, ("lapsed", "'1' SECOND"), ("fresh", "'1' DAY"), ("paused", "'1' SECOND"))
    time.sleep(1.5)
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable)
    proc = subprocess.run([BIN, "refresh", "--warehouse", warehouse, "--master", "local[2]", "--output", "tsv"],
                          capture_output=True, text=True, timeout=900, env=env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert sorted(proc.stdout.splitlines()[1:]) == ["default.fresh\tskipped\tfresh",
                                                    "default.lapsed\trefreshed\tincremental, 1 row(s) added",
                                                    "default.paused\tskipped\tsuspended"]
    counts = [rows(session, f"SELECT count(*) FROM {t}") for t in ("lapsed", "fresh", "paused")]
    assert counts == [[(2,)], [(1,)], [(1,)]]


def test_server_refreshes_lapsed_tables_in_the_background(session, warehouse):
    from paimon_sql.catalog import Identifier, load_catalog
    from tests.e2e.server_support import start_server
    setup(session, ("lapsed", "'1' SECOND"), ("paused", "'1' SECOND"))
    catalog = load_catalog(warehouse, {})

    def snapshots(name):
        return catalog.get_table(Identifier("default", name)).snapshot_manager.latest_id()
    with start_server(warehouse, "--refresh-interval", "1"):
        deadline = time.monotonic() + 120
        while snapshots("lapsed") == 1 and time.monotonic() < deadline:
            time.sleep(0.5)
    assert snapshots("lapsed") == 2 and snapshots("paused") == 1
    latest = catalog.get_table(Identifier("default", "lapsed")).snapshot_manager.latest()
    assert latest.commit_kind == "APPEND" and latest.delta_record_count == 1
