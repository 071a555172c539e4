"""``paimon-sql refresh`` as cron runs it: refreshes the lapsed materialized tables, skips the rest."""

import os
import subprocess
import sys
import time

from tests.e2e.test_cli import BIN, run


def test_refresh_command_refreshes_lapsed_and_skips_fresh_and_suspended(warehouse):
    setup = run(warehouse, "--output", "tsv", "-e", """
        CREATE TABLE src (k INT, v INT);
        INSERT INTO src VALUES (1, 10);
        CREATE MATERIALIZED TABLE lapsed FRESHNESS = INTERVAL '1' SECOND AS SELECT k, v FROM src;
        CREATE MATERIALIZED TABLE fresh FRESHNESS = INTERVAL '1' DAY AS SELECT k, v FROM src;
        CREATE MATERIALIZED TABLE paused FRESHNESS = INTERVAL '1' SECOND AS SELECT k, v FROM src;
        ALTER MATERIALIZED TABLE paused SUSPEND;
        INSERT INTO src VALUES (2, 20)""")
    assert setup.returncode == 0, setup.stderr[-2000:]
    time.sleep(1.5)
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable)
    proc = subprocess.run([BIN, "refresh", "--warehouse", warehouse, "--master", "local[2]", "--output", "tsv"],
                          capture_output=True, text=True, timeout=300, env=env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert sorted(proc.stdout.splitlines()[1:]) == ["default.fresh\tskipped\tfresh",
                                                    "default.lapsed\trefreshed\tincremental, 1 row(s) added",
                                                    "default.paused\tskipped\tsuspended"]
    check = run(warehouse, "--output", "tsv", "-e",
                "SELECT count(*) FROM lapsed; SELECT count(*) FROM fresh; SELECT count(*) FROM paused")
    assert check.stdout.split() == ["count(1)", "2", "count(1)", "1", "count(1)", "1"]


def test_server_refreshes_lapsed_tables_in_the_background(warehouse):
    from paimon_sql.catalog import Identifier, load_catalog
    from tests.e2e.server_support import start_server
    setup = run(warehouse, "-e", """
        CREATE TABLE src (k INT, v INT);
        INSERT INTO src VALUES (1, 10);
        CREATE MATERIALIZED TABLE lapsed FRESHNESS = INTERVAL '1' SECOND AS SELECT k, v FROM src;
        CREATE MATERIALIZED TABLE paused FRESHNESS = INTERVAL '1' SECOND AS SELECT k, v FROM src;
        ALTER MATERIALIZED TABLE paused SUSPEND;
        INSERT INTO src VALUES (2, 20)""")
    assert setup.returncode == 0, setup.stderr[-2000:]
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
