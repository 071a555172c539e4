"""UPDATE, DELETE, MERGE INTO and TRUNCATE through Session.sql, compared with expected rows."""

import re

import pytest

from paimon_sql.exceptions import PaimonError, SchemaError
from paimon_sql.sql import merge_into, parse
from spark.conftest import rows

PK = ("CREATE TABLE db.t (id BIGINT, name STRING, v DOUBLE, dt STRING, PRIMARY KEY (id, dt) NOT ENFORCED) "
      "PARTITIONED BY (dt) WITH ('bucket' = '2')")


@pytest.fixture
def t(session):
    session.sql("CREATE DATABASE db")
    session.sql(PK)
    session.sql("INSERT INTO db.t VALUES (1, 'a', 1.0, 'x'), (2, 'b', 2.0, 'x'), (3, 'c', 3.0, 'y'), "
                "(4, 'd', 4.0, 'y')")
    return session.catalog.get_table("db.t")


def all_rows(session):
    return rows(session, "SELECT id, name, v, dt FROM db.t ORDER BY id")


def test_update_with_where_writes_only_the_changed_rows(session, t):
    session.sql("UPDATE db.t SET name = upper(name), v = v * 10 WHERE v >= 2 AND dt = 'x'")
    assert all_rows(session) == [(1, "a", 1.0, "x"), (2, "B", 20.0, "x"), (3, "c", 3.0, "y"), (4, "d", 4.0, "y")]
    snap = t.snapshot_manager.latest()
    assert snap.commit_kind == "APPEND" and snap.delta_record_count == 1  # one +U row, no rewrite


def test_update_without_where_and_errors(session, t):
    session.sql("UPDATE db.t AS x SET name = concat(x.name, '!')")
    assert [r[1] for r in all_rows(session)] == ["a!", "b!", "c!", "d!"]
    before = t.snapshot_manager.latest_id()
    with pytest.raises(SchemaError, match="Can't update the primary key column"):
        session.sql("UPDATE db.t SET id = 9")
    with pytest.raises(SchemaError, match="no column"):
        session.sql("UPDATE db.t SET nope = 1")
    assert t.snapshot_manager.latest_id() == before


def test_delete_where_and_delete_all(session, t):
    session.sql("DELETE FROM db.t WHERE id IN (1, 3)")
    assert all_rows(session) == [(2, "b", 2.0, "x"), (4, "d", 4.0, "y")]
    assert t.snapshot_manager.latest().commit_kind == "APPEND"
    session.sql("DELETE FROM db.t")
    assert all_rows(session) == []
    assert t.snapshot_manager.latest().commit_kind == "OVERWRITE"


def test_truncate(session, t):
    session.sql("TRUNCATE TABLE db.t")
    assert all_rows(session) == [] and t.snapshot_manager.latest().commit_kind == "OVERWRITE"
    session.sql("INSERT INTO db.t VALUES (9, 'z', 9.0, 'x')")
    assert all_rows(session) == [(9, "z", 9.0, "x")]



def test_truncate_partition_removes_only_that_partition(session):
    session.sql("CREATE DATABASE IF NOT EXISTS db")
    session.sql("CREATE TABLE db.tp (id INT, dt STRING) PARTITIONED BY (dt)")
    session.sql("INSERT INTO db.tp VALUES (1, 'x'), (2, 'y')")
    session.sql("TRUNCATE TABLE db.tp PARTITION (dt = 'x')")
    assert rows(session, "SELECT * FROM db.tp") == [(2, "y")]
    with pytest.raises(PaimonError, match="id is not a partition column"):
        session.sql("TRUNCATE TABLE db.tp PARTITION (id = 2)")
    session.sql("CREATE TABLE db.np (id INT)")
    session.sql("INSERT INTO db.np VALUES (1)")
    with pytest.raises(PaimonError, match="not a partition column"):
        session.sql("TRUNCATE TABLE db.np PARTITION (id = 1)")
    assert rows(session, "SELECT * FROM db.np") == [(1,)]

def test_merge_into_all_clause_kinds(session, t):
    session.sql("CREATE TABLE db.s (id BIGINT, name STRING, v DOUBLE, dt STRING, op STRING) "
                "TBLPROPERTIES ('primary-key' = 'id,dt', 'bucket' = '1')")
    session.sql("INSERT INTO db.s VALUES (1, 'A', 100.0, 'x', 'upd'), (2, NULL, 0.0, 'x', 'del'), "
                "(5, 'e', 5.0, 'y', 'ins'), (6, 'f', 6.0, 'y', 'skip')")
    session.sql("""
        MERGE INTO db.t AS tgt USING db.s AS src ON tgt.id = src.id AND tgt.dt = src.dt
        WHEN MATCHED AND src.op = 'del' THEN DELETE
        WHEN MATCHED THEN UPDATE SET name = src.name, v = tgt.v + src.v
        WHEN NOT MATCHED AND src.op = 'ins' THEN INSERT (id, name, v, dt) VALUES (src.id, src.name, src.v, src.dt)
    """)
    assert all_rows(session) == [(1, "A", 101.0, "x"), (3, "c", 3.0, "y"), (4, "d", 4.0, "y"), (5, "e", 5.0, "y")]


def test_merge_into_star_actions_and_not_matched_by_source(session, t):
    session.sql("""
        MERGE INTO db.t USING (SELECT 2 AS id, 'two' AS name, 2.5 AS v, 'x' AS dt
                               UNION ALL SELECT 7, 'seven', 7.0, 'y') AS s
        ON db.t.id = s.id AND db.t.dt = s.dt
        WHEN MATCHED THEN UPDATE SET *
        WHEN NOT MATCHED THEN INSERT *
        WHEN NOT MATCHED BY SOURCE AND db.t.v > 3 THEN DELETE
    """)
    assert all_rows(session) == [(1, "a", 1.0, "x"), (2, "two", 2.5, "x"), (3, "c", 3.0, "y"),
                                 (7, "seven", 7.0, "y")]


def test_row_level_changes_follow_the_merge_engine(session):
    """partial-update takes UPDATE; without remove-record-on-delete its DELETE rewrites the files
    holding the rows (paimon-spark's way), which needs buckets read without merging."""
    session.sql("CREATE DATABASE db")
    session.sql("CREATE TABLE db.p (id BIGINT, a STRING, b STRING) TBLPROPERTIES ('primary-key'='id', "
                "'bucket'='1', 'merge-engine'='partial-update')")
    session.sql("INSERT INTO db.p VALUES (1, 'a', NULL), (2, 'x', 'y')")
    session.sql("UPDATE db.p SET b = 'b' WHERE id = 1")
    assert rows(session, "SELECT * FROM db.p ORDER BY id") == [(1, "a", "b"), (2, "x", "y")]
    p = session.catalog.get_table("db.p")
    before = p.snapshot_manager.latest_id()
    with pytest.raises(PaimonError, match="Only compacted table can generate touched files"):
        session.sql("DELETE FROM db.p WHERE id = 1")  # its files overlap: they need merging
    session.sql("DELETE FROM db.p WHERE id = 2")  # only the first file may hold it
    assert rows(session, "SELECT * FROM db.p ORDER BY id") == [(1, "a", "b")]  # the kept row keeps its place
    assert [p.snapshot_manager.snapshot(i).commit_kind for i in (before, before + 1)] == ["APPEND", "OVERWRITE"]
    session.sql("CREATE TABLE db.g (id BIGINT, s BIGINT) TBLPROPERTIES ('primary-key'='id', 'merge-engine'='aggregation')")
    with pytest.raises(PaimonError, match="merge engine aggregation can not support Update"):
        session.sql("UPDATE db.g SET s = 1")


def test_compaction_keeps_dml_results(session, t):
    for i in range(3):
        session.sql(f"UPDATE db.t SET v = v + 1 WHERE id = {i + 1}")
    session.sql("DELETE FROM db.t WHERE id = 4")
    t.compact(full=True)
    assert all_rows(session) == [(1, "a", 2.0, "x"), (2, "b", 3.0, "x"), (3, "c", 4.0, "y")]


def test_merge_into_a_partial_update_table_needs_no_delete_option(session):
    session.sql("CREATE DATABASE db")
    session.sql("CREATE TABLE db.p (id BIGINT, a STRING, b STRING) TBLPROPERTIES ('primary-key'='id', "
                "'bucket'='1', 'merge-engine'='partial-update')")
    session.sql("INSERT INTO db.p VALUES (1, 'a', NULL)")
    session.sql("MERGE INTO db.p t USING (SELECT 1 AS id, 'b' AS b UNION ALL SELECT 2, 'x') s ON t.id = s.id "
                "WHEN MATCHED THEN UPDATE SET b = s.b WHEN NOT MATCHED THEN INSERT (id, b) VALUES (s.id, s.b)")
    assert rows(session, "SELECT * FROM db.p ORDER BY id") == [(1, "a", "b"), (2, None, "x")]
    with pytest.raises(PaimonError, match="partial-update.remove-record-on-delete"):
        session.sql("MERGE INTO db.p t USING (SELECT 1 AS id) s ON t.id = s.id WHEN MATCHED THEN DELETE")


@pytest.mark.parametrize("options", ["'deletion-vectors.enabled' = 'true'", "'bucket' = '-1'"],
                         ids=["deletion-vectors", "copy-on-write"])
def test_update_and_delete_on_append_tables(session, options):
    session.sql("CREATE DATABASE db")
    session.sql(f"CREATE TABLE db.a (id BIGINT, v STRING, dt STRING) PARTITIONED BY (dt) TBLPROPERTIES ({options})")
    session.sql("INSERT INTO db.a VALUES (1, 'a', 'x'), (2, 'b', 'x'), (3, 'c', 'y'), (4, 'd', 'y')")
    session.sql("INSERT INTO db.a VALUES (5, 'e', 'x')")
    t = session.catalog.get_table("db.a")
    files = {e.file.file_name for e in t.new_scan().plan_entries()}
    session.sql("DELETE FROM db.a WHERE id IN (2, 5) OR v = 'd'")
    assert rows(session, "SELECT id, v, dt FROM db.a ORDER BY id") == [(1, "a", "x"), (3, "c", "y")]
    session.sql("UPDATE db.a SET v = upper(v) WHERE id = 3")
    assert rows(session, "SELECT id, v, dt FROM db.a ORDER BY id") == [(1, "a", "x"), (3, "C", "y")]
    kept = {e.file.file_name for e in t.new_scan().plan_entries()} & files
    if "deletion" in options:
        assert kept == files  # deletion vectors: no data file was rewritten
        plan = [r[0] for r in session.sql("EXPLAIN SELECT id FROM db.a").collect()]
        assert any("read by Spark's Parquet reader, 0 merged" in line for line in plan)  # vectors: anti-join
    else:
        assert len(kept) < len(files)  # copy-on-write replaced the touched files
    assert t.snapshot_manager.latest_id() == 4  # one snapshot per statement
    session.sql("""MERGE INTO db.a t USING (SELECT 1 AS id, 'A' AS v UNION ALL SELECT 3, NULL
                                            UNION ALL SELECT 9, 'i') s ON t.id = s.id
                   WHEN MATCHED AND s.v IS NULL THEN DELETE
                   WHEN MATCHED THEN UPDATE SET v = s.v
                   WHEN NOT MATCHED THEN INSERT (id, v, dt) VALUES (s.id, s.v, 'z')""")
    assert rows(session, "SELECT id, v, dt FROM db.a ORDER BY id") == [(1, "A", "x"), (9, "i", "z")]
    assert t.snapshot_manager.latest_id() == 5


def test_merge_on_write_primary_key_table(session):
    session.sql("""CREATE TABLE m (id INT, v STRING) TBLPROPERTIES (
        'primary-key' = 'id', 'bucket' = '2', 'deletion-vectors.enabled' = 'true')""")
    session.sql("INSERT INTO m VALUES " + ", ".join(f"({i}, 'a')" for i in range(20)))
    session.sql("UPDATE m SET v = 'b' WHERE id < 5")
    session.sql("DELETE FROM m WHERE id >= 15")
    session.sql("MERGE INTO m USING (SELECT 3 AS id, 'c' AS v UNION ALL SELECT 30, 'n') s ON m.id = s.id "
                "WHEN MATCHED THEN UPDATE SET v = s.v WHEN NOT MATCHED THEN INSERT *")
    got = dict(tuple(r) for r in session.sql("SELECT id, v FROM m").collect())
    expected = {i: "b" if i < 5 else "a" for i in range(15)}
    expected.update({3: "c", 30: "n"})
    assert got == expected
    plan = [r[0] for r in session.sql("EXPLAIN SELECT * FROM m").collect()]
    assert any("read by Spark's Parquet reader, 0 merged" in line for line in plan)  # no merge needed


def test_many_deleted_positions_are_applied_by_the_arrow_reader(session, monkeypatch):
    """Past the broadcast cap the driver sends deletion-vector splits to the paimon source, which
    skips deleted rows while decoding; both halves agree on which splits each reads."""
    from paimon_sql.spark import scan
    session.sql("CREATE DATABASE IF NOT EXISTS db")
    session.sql("CREATE TABLE db.dv (id INT, v STRING) TBLPROPERTIES ('deletion-vectors.enabled' = 'true', "
                "'source.split.target-size' = '1 b')")  # one split per file
    for start in (0, 100, 200):
        session.sql(f"INSERT INTO db.dv SELECT id, CAST(id AS STRING) AS v FROM range({start}, {start + 100})")
    session.sql("DELETE FROM db.dv WHERE id % 3 = 0 AND id < 250")
    expected = [(i,) for i in range(300) if not (i % 3 == 0 and i < 250)]
    def split_counts():
        plan = "\n".join(r[0] for r in rows(session, "EXPLAIN SELECT id FROM db.dv"))
        native, other = re.search(r"splits: (\d+) read by Spark's Parquet reader, (\d+) merged", plan).groups()
        return int(native), int(other)

    assert rows(session, "SELECT id FROM db.dv ORDER BY id") == expected
    native, other = split_counts()
    assert native >= 3 and other == 0  # the native read applies all 84 positions
    for cap in ("UDF_CAP", "BROADCAST_CAP"):  # room for some files' vectors only
        monkeypatch.setattr(scan, cap, scan.VectorCap(40, 64))
    assert rows(session, "SELECT id FROM db.dv ORDER BY id") == expected
    assert split_counts()[0] > 0 and split_counts()[1] > 0 and sum(split_counts()) == native


def test_merge_of_a_one_row_source_skips_the_single_match_check_and_many_rows_keep_it(session, t):
    """A one-row source cannot match a target row twice: no check's join is run for it. A source of
    more rows by its text alone (VALUES of two rows, a generator with no FROM) is still checked."""
    def one_row(source):
        tree = parse.parse(f"MERGE INTO db.t USING {source} ON t.id = s.id WHEN MATCHED THEN DELETE")
        return merge_into._one_row(session, tree.args["using"])
    assert one_row("(SELECT 1 AS id, 'x' AS dt) s") and one_row("(VALUES (1, 'x')) AS s(id, dt)")
    assert not one_row("(VALUES (1, 'x'), (2, 'y')) AS s(id, dt)")
    assert not one_row("(SELECT explode(array(1, 1)) AS id) s")
    assert not one_row("(SELECT id FROM db.t) s") and not one_row("db.t s")
    session.sql("MERGE INTO db.t USING (SELECT 1 AS id, 'x' AS dt) s ON t.id = s.id AND t.dt = s.dt "
                "WHEN MATCHED THEN UPDATE SET name = 'one'")
    assert all_rows(session)[0] == (1, "one", 1.0, "x")
    for twice in ("(SELECT explode(array(2, 2)) AS id, 'x' AS dt) s", "(VALUES (2, 'x'), (2, 'x')) AS s(id, dt)"):
        with pytest.raises(PaimonError, match="match more than one source rows"):
            session.sql(f"MERGE INTO db.t USING {twice} ON t.id = s.id AND t.dt = s.dt "
                        "WHEN MATCHED THEN UPDATE SET name = 'twice'")
    assert all_rows(session)[1] == (2, "b", 2.0, "x")
    # VALUES named by the alias's columns: the check's join (and the merge) see them by those names
    session.sql("MERGE INTO db.t USING (VALUES (3, 'y', 'c3'), (9, 'z', 'n9')) AS s(id, dt, nm) "
                "ON t.id = s.id AND t.dt = s.dt WHEN MATCHED THEN UPDATE SET name = s.nm "
                "WHEN NOT MATCHED THEN INSERT (id, name, v, dt) VALUES (s.id, s.nm, 0.0, s.dt)")
    assert all_rows(session)[2:] == [(3, "c3", 3.0, "y"), (4, "d", 4.0, "y"), (9, "n9", 0.0, "z")]
