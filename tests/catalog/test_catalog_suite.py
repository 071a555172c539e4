"""One suite, run on every catalog (conftest.py's params: filesystem, sqlite, postgres, hive, s3):
the same statements and the same expected outcomes, so a catalog that keeps or shows anything
differently fails here. Each test also reopens the catalog as a new instance, so what it checks is
what the metastore kept, not what one object remembers."""

import pyarrow as pa
import pytest
from spark.conftest import rows

from catalog.committers import run_together
from catalog.conftest import open_catalog
from paimon_sql.exceptions import PaimonError
from paimon_sql.options.core_options import MASK, SECRET_KEY


def one_line_error(session, text, pattern):
    with pytest.raises(PaimonError, match=pattern) as e:
        session.sql(text)
    assert "\n" not in str(e.value)


def test_databases_create_alter_list_drop(catalog_session, catalog_options):
    s = catalog_session
    s.sql("CREATE DATABASE d1 COMMENT 'first'")
    s.sql("CREATE DATABASE d2 WITH DBPROPERTIES ('team' = 'ann', 'k' = 'v')")
    s.sql("CREATE DATABASE IF NOT EXISTS d1 COMMENT 'ignored'")
    one_line_error(s, "CREATE DATABASE d1", "already exists")
    s.sql("ALTER DATABASE d1 SET DBPROPERTIES ('a' = '1')")
    s.sql("ALTER DATABASE d1 SET DBPROPERTIES ('a' = '2', 'b' = 'x')")
    assert {"default", "d1", "d2"} <= {r[0] for r in rows(s, "SHOW DATABASES")}
    described = dict(rows(s, "DESCRIBE DATABASE EXTENDED d1"))
    assert described["Comment"] == "first" and described["Properties"] == "((a,2), (b,x))"
    again = open_catalog(catalog_options)
    assert again.database_properties("d1") == {"comment": "first", "a": "2", "b": "x"}
    assert {"team": "ann", "k": "v"}.items() <= again.database_properties("d2").items()
    s.sql("CREATE TABLE d2.t (a INT)")
    one_line_error(s, "DROP DATABASE d2", "SCHEMA_NOT_EMPTY")
    s.sql("DROP DATABASE d1")
    s.sql("DROP DATABASE d2 CASCADE")
    s.sql("DROP DATABASE IF EXISTS d2")
    one_line_error(s, "DROP DATABASE d2", "d2")
    again = open_catalog(catalog_options)
    assert not {"d1", "d2"} & set(again.list_databases())
    assert not again.database_exists("d2") and "default" in again.list_databases()
    assert not again.io.exists(again.database_path("d2"))  # CASCADE took its tables' files


def test_tables_create_list_alter_rename_drop(catalog_session, catalog_options):
    s = catalog_session
    s.sql("CREATE DATABASE db")
    s.sql("CREATE TABLE db.a (id INT COMMENT 'the id', v STRING, dt STRING) PARTITIONED BY (dt) COMMENT 'tc' "
          "TBLPROPERTIES ('file.format' = 'orc', 'k1' = 'v1')")
    s.sql("CREATE TABLE db.k (id BIGINT, v STRING, dt STRING, PRIMARY KEY (id, dt) NOT ENFORCED) "
          "PARTITIONED BY (dt) WITH ('bucket' = '2', 'changelog-producer' = 'input')")
    s.sql("CREATE TABLE IF NOT EXISTS db.k (x INT)")
    one_line_error(s, "CREATE TABLE db.k (x INT)", "already exists")
    assert [r[1] for r in rows(s, "SHOW TABLES IN db")] == ["a", "k"]
    path = s.catalog.get_table("db.a").path
    assert rows(s, "SHOW TBLPROPERTIES db.a") == [("file.format", "orc"), ("k1", "v1"), ("path", path)]
    s.sql("ALTER TABLE db.a SET TBLPROPERTIES ('k1' = 'v2', 'snapshot.num-retained.max' = '50')")
    s.sql("ALTER TABLE db.a UNSET TBLPROPERTIES ('file.format')")
    s.sql("ALTER TABLE db.a ADD COLUMN n DOUBLE")
    s.sql("INSERT INTO db.k VALUES (1, 'x', 'p')")
    s.sql("ALTER TABLE db.k RENAME TO db.k2")
    one_line_error(s, "ALTER TABLE db.a RENAME TO db.k2", "already exists")
    one_line_error(s, "SELECT * FROM db.k", "k")

    again = open_catalog(catalog_options)
    assert again.list_tables("db") == ["a", "k2"] and not again.table_exists("db.k")
    a, k = again.get_table("db.a"), again.get_table("db.k2")
    owner = s.spark.sparkContext.sparkUser()  # CREATE TABLE records it, as Spark's does
    assert a.schema.options == {"k1": "v2", "snapshot.num-retained.max": "50", "owner": owner}
    assert [f.name for f in a.schema.fields] == ["id", "v", "dt", "n"] and a.schema.partition_keys == ["dt"]
    assert a.schema.id == 3  # create, SET, UNSET, ADD COLUMN: each one schema
    assert (a.schema.comment, a.schema.fields[0].description) == ("tc", "the id")
    assert (k.schema.primary_keys, k.schema.partition_keys) == (["id", "dt"], ["dt"])
    assert k.schema.options == {"bucket": "2", "changelog-producer": "input", "owner": owner}
    assert k.path.endswith("/db.db/k2") and a.path.endswith("/db.db/a")  # Paimon's layout on every metastore

    s.sql("INSERT INTO db.k2 VALUES (2, 'y', 'p')")  # its rows and snapshots moved with it
    s.sql("ALTER TABLE db.k2 SET TBLPROPERTIES ('k' = 'v')")  # its schema changes follow the new name
    assert open_catalog(catalog_options).get_table("db.k2").schema.options["k"] == "v"
    assert rows(s, "SELECT id, v FROM db.k2 ORDER BY id") == [(1, "x"), (2, "y")]
    assert rows(s, "SELECT id FROM db.k2 VERSION AS OF 1") == [(1,)]
    s.sql("DROP TABLE db.k2")
    assert not again.io.exists(k.path)  # its files went with it
    s.sql("DROP TABLE IF EXISTS db.k2")
    one_line_error(s, "DROP TABLE db.k2", "k2")
    assert [r[1] for r in rows(s, "SHOW TABLES IN db")] == ["a"]
    assert open_catalog(catalog_options).list_tables("db") == ["a"]
    s.sql("CREATE TABLE db.k2 (z STRING)")  # the name is free again, with nothing of the old table
    k2 = open_catalog(catalog_options).get_table("db.k2")
    assert [f.name for f in k2.schema.fields] == ["z"] and k2.snapshot_manager.latest() is None


def test_dml_time_travel_system_tables_procedures_and_branches(catalog_session, catalog_options):
    s = catalog_session
    s.sql("CREATE DATABASE db")
    s.sql("CREATE TABLE db.t (id INT, v STRING, dt STRING) PARTITIONED BY (dt) "
          "TBLPROPERTIES ('primary-key' = 'id,dt', 'bucket' = '1')")
    s.sql("INSERT INTO db.t VALUES (1, 'a', 'x'), (2, 'b', 'x'), (3, 'c', 'y')")
    s.sql("UPDATE db.t SET v = 'B' WHERE id = 2")
    s.sql("DELETE FROM db.t WHERE id = 3")
    s.sql("MERGE INTO db.t t USING (SELECT 1 AS id, 'A' AS v, 'x' AS dt UNION ALL SELECT 4, 'd', 'y') u "
          "ON t.id = u.id AND t.dt = u.dt WHEN MATCHED THEN UPDATE SET v = u.v WHEN NOT MATCHED THEN INSERT *")
    assert rows(s, "SELECT id, v, dt FROM db.t ORDER BY id") == [(1, "A", "x"), (2, "B", "x"), (4, "d", "y")]
    assert rows(s, "SELECT id, v FROM db.t VERSION AS OF 1 ORDER BY id") == [(1, "a"), (2, "b"), (3, "c")]
    assert rows(s, "CALL sys.create_tag(table => 'db.t', tag => 'two', snapshot => 2)") == [(True,)]
    assert rows(s, "SELECT v FROM db.t VERSION AS OF 'two' WHERE id = 2") == [("B",)]
    assert rows(s, "SELECT tag_name, snapshot_id FROM db.t$tags") == [("two", 2)]
    assert rows(s, "CALL sys.compact(table => 'db.t')") == [(True,)]
    assert rows(s, "SELECT snapshot_id, commit_kind FROM db.t$snapshots ORDER BY snapshot_id") == [
        (1, "APPEND"), (2, "APPEND"), (3, "APPEND"), (4, "APPEND"), (5, "COMPACT")]
    assert ("bucket", "1") in rows(s, "SELECT key, value FROM db.t$options")
    assert rows(s, "CALL sys.create_branch(table => 'db.t', branch => 'b1', tag => 'two')") == [(True,)]
    s.sql("INSERT INTO db.t$branch_b1 VALUES (5, 'e', 'y')")
    assert rows(s, "SELECT id, v FROM db.t$branch_b1 ORDER BY id") == [(1, "a"), (2, "B"), (3, "c"), (5, "e")]
    table = open_catalog(catalog_options).get_table("db.t")
    assert sorted((r["id"], r["v"]) for r in table.to_arrow().to_pylist()) == [(1, "A"), (2, "B"), (4, "d")]


def test_append_table_dml_and_compact(catalog_session, catalog_options):
    s = catalog_session
    s.sql("CREATE DATABASE db")
    s.sql("CREATE TABLE db.a (id INT, v STRING) TBLPROPERTIES ('deletion-vectors.enabled' = 'true')")
    for n in range(3):
        s.sql(f"INSERT INTO db.a VALUES ({n}, 'v{n}')")
    s.sql("DELETE FROM db.a WHERE id = 1")
    assert rows(s, "CALL sys.compact(table => 'db.a')") == [(True,)]
    assert rows(s, "SELECT id, v FROM db.a ORDER BY id") == [(0, "v0"), (2, "v2")]
    assert rows(s, "SELECT count(*) FROM db.a VERSION AS OF 3") == [(3,)]
    table = open_catalog(catalog_options).get_table("db.a")
    assert table.snapshot_manager.latest().commit_kind == "COMPACT"
    assert sorted(r["id"] for r in table.to_arrow().to_pylist()) == [0, 2]


def test_catalog_options_shown_with_secrets_masked(spark, catalog_options):
    """Each catalog's options as ``sys.catalog_options`` shows them, secret values (``jdbc.password``,
    ``s3.secret-key``, ...) masked; the table is served where the catalog option
    ``catalog-options-table.enabled`` asks for it, as Paimon's catalogs serve it."""
    import paimon_sql
    from spark.conftest import release
    catalog_options = {**catalog_options, "catalog-options-table.enabled": "true"}
    rest = dict(catalog_options)
    session = paimon_sql.connect(rest.pop("warehouse"), spark=spark, catalog_options=rest)
    try:
        shown = dict(rows(session, "SELECT key, value FROM sys.catalog_options"))
    finally:
        release(session)
    assert shown == {k: MASK if SECRET_KEY.search(k) else v for k, v in catalog_options.items()}
    secrets = {v for k, v in catalog_options.items() if SECRET_KEY.search(k)}
    assert not secrets & set(shown.values())


def _run_together(catalog_options, tmp_path, op, procs=2, **extra):
    """Start ``procs`` worker processes doing ``op`` at the same moment; their JSON answers."""
    rest = dict(catalog_options)
    return run_together(rest.pop("warehouse"), rest, tmp_path / f"barrier-{op}", op, procs, **extra)


def test_concurrent_creates_of_one_name_exactly_one_wins(catalog_options, tmp_path):
    """Two processes race to create each of ten names: one wins each, the other is told as any
    create finding the table is (TableAlreadyExistsError, which IF NOT EXISTS passes over)."""
    names = 10
    open_catalog(catalog_options).create_database("db")
    answers = _run_together(catalog_options, tmp_path, "create", names=names)
    catalog = open_catalog(catalog_options)
    assert catalog.list_tables("db") == [f"t{n}" for n in range(names)]
    for name in answers[0]:
        results = [a[name] for a in answers]
        winners = [p for p, r in enumerate(results) if r == "ok"]
        assert len(winners) == 1, (name, results)
        error, message = results[1 - winners[0]]
        assert (error, message.split(" (")[0]) == ("TableAlreadyExistsError", f"table db.{name} already exists")
        assert "\n" not in message
        table = catalog.get_table(f"db.{name}")
        assert [f.name for f in table.schema.fields] == [f"c{winners[0]}"] and table.schema.id == 0


def test_two_concurrent_committers_lose_nothing(catalog_options, tmp_path):
    commits = 4
    open_catalog(catalog_options).create_database("db")
    open_catalog(catalog_options).create_table_from_arrow("db.t", pa.schema([("id", pa.int64())]))
    assert _run_together(catalog_options, tmp_path, "commit", commits=commits) == ["ok", "ok"]
    table = open_catalog(catalog_options).get_table("db.t")
    snapshots = [table.snapshot_manager.snapshot(i) for i in range(1, 2 * commits + 1)]
    assert table.snapshot_manager.latest().id == 2 * commits
    assert sorted(s.commit_user for s in snapshots) == ["p0"] * commits + ["p1"] * commits
    assert [s.total_record_count for s in snapshots] == list(range(1, 2 * commits + 1))
    ids = sorted(r["id"] for r in table.to_arrow().to_pylist())
    assert ids == sorted(p * 1000 + n for p in range(2) for n in range(commits))
