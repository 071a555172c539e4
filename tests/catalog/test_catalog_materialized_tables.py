"""Materialized tables on every catalog: created, refreshed (incrementally), suspended, found by the
refresh runner, given a new query, read back by a new catalog instance, dropped."""

from catalog.conftest import open_catalog

from paimon_sql.sql.materialized_table import refresh_lapsed

QUERY = "SELECT k, sum(v) AS s FROM mt_db.src GROUP BY k"


def test_create_refresh_suspend_drop(catalog_session, catalog_options):
    s = catalog_session
    s.sql("CREATE DATABASE IF NOT EXISTS mt_db")
    s.sql("CREATE TABLE mt_db.src (k INT NOT NULL, v INT)")
    s.sql("INSERT INTO mt_db.src VALUES (1, 1), (2, 2)")
    s.sql(f"CREATE MATERIALIZED TABLE mt_db.m FRESHNESS = INTERVAL '1' SECOND AS {QUERY}")
    s.sql("INSERT INTO mt_db.src VALUES (1, 10)")
    assert [tuple(r) for r in s.sql("ALTER MATERIALIZED TABLE mt_db.m REFRESH").collect()][0][0] == "incremental"
    assert sorted(tuple(r) for r in s.sql("SELECT * FROM mt_db.m").collect()) == [(1, 11), (2, 2)]
    stored = open_catalog(catalog_options).get_table("mt_db.m").schema
    assert stored.options["type"] == "materialized-table" and stored.options["merge-engine"] == "aggregation"
    s.sql("ALTER MATERIALIZED TABLE mt_db.m SUSPEND")
    assert open_catalog(catalog_options).get_table("mt_db.m").schema.options[
        "materialized-table.refresh-status"] == "SUSPENDED"
    assert ("mt_db.m", "skipped", "suspended") in refresh_lapsed(s)
    s.sql("ALTER MATERIALIZED TABLE mt_db.m RESUME")
    s.sql("INSERT INTO mt_db.src VALUES (3, 3)")
    later = open_catalog(catalog_options).get_table("mt_db.m").snapshot_manager.latest().time_millis + 5_000
    assert ("mt_db.m", "refreshed", "incremental, 1 row(s) added") in refresh_lapsed(s, later)
    s.sql(f"ALTER MATERIALIZED TABLE mt_db.m AS {QUERY.replace(' FROM', ', max(v) AS top FROM')}")
    stored = open_catalog(catalog_options).get_table("mt_db.m").schema
    assert stored.field_names == ["k", "s", "top"] and "max(v) AS top" in stored.options[
        "materialized-table.definition-query"]
    assert sorted(tuple(r) for r in s.sql("SELECT * FROM mt_db.m").collect()) == [(1, 11, 10), (2, 2, 2), (3, 3, 3)]
    assert s.sql("SHOW CREATE TABLE mt_db.m").first()[0].startswith("CREATE MATERIALIZED TABLE mt_db.m\n")
    s.sql("DROP MATERIALIZED TABLE mt_db.m")
    assert "m" not in open_catalog(catalog_options).list_tables("mt_db")
