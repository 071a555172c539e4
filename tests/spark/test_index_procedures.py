"""CALL sys.rewrite_file_index and sys.materialize_deletion_vectors through SQL."""

import pytest

from paimon_sql.exceptions import PaimonError, TableNotFoundError
from tests.spark.conftest import rows


def table(session):
    """Files written before the table had a file index: one per partition p=1, p=2."""
    session.sql("CREATE TABLE t (id INT, v STRING, p INT) PARTITIONED BY (p)")
    session.sql("INSERT INTO t VALUES (1, 'a', 1), (2, 'b', 1), (3, 'c', 2)")
    session.sql("ALTER TABLE t SET TBLPROPERTIES ('file-index.bloom-filter.columns'='v')")
    return session.catalog.get_table("default.t")


def indexed(session):
    """{partition: (files with a bloom-filter index on v, files)} as t$file_indexes and t$files show them."""
    files = dict(rows(session, "SELECT partition, count(*) FROM t$files GROUP BY partition"))
    with_index = dict(rows(session, "SELECT partition, count(DISTINCT file_path) FROM t$file_indexes "
                                    "WHERE column_name = 'v' AND index_type = 'bloom-filter' GROUP BY partition"))
    return {p: (with_index.get(p, 0), n) for p, n in files.items()}


def kinds(session):
    return [k for (k,) in rows(session, "SELECT commit_kind FROM t$snapshots ORDER BY snapshot_id")]


def test_rewrite_file_index_indexes_the_chosen_partitions_in_one_compact_snapshot(session):
    table(session)
    files = indexed(session)
    assert len(files) == 2 and {i for i, _ in files.values()} == {0}  # no file indexed yet
    one, two = sorted(files)  # p=1, p=2 as t$files spells them
    before = rows(session, "SELECT file_path FROM t$files ORDER BY file_path")
    assert rows(session, "CALL sys.rewrite_file_index(table => 't', where => 'p = 2')") == [(1, files[two][1])]
    assert indexed(session) == {one: (0, files[one][1]), two: (files[two][1],) * 2}
    assert kinds(session) == ["APPEND", "COMPACT"]
    everything = [(2, files[one][1] + files[two][1])]
    assert rows(session, "CALL sys.rewrite_file_index('t')") == everything
    assert indexed(session) == {one: (files[one][1],) * 2, two: (files[two][1],) * 2}
    # as in Paimon, an index kept in its own file is written anew (data-...-1.index) on every run
    assert rows(session, "CALL sys.rewrite_file_index('t')") == everything
    assert kinds(session) == ["APPEND", "COMPACT", "COMPACT", "COMPACT"]
    # each index file is named after its data file, counting the runs that indexed it: p=2's files one more
    entries = session.catalog.get_table("default.t").new_scan().plan_entries()
    extra = {e.file.file_name: e.file.extra_files for e in entries}
    assert sorted(extra) == sorted(p.rsplit("/", 1)[-1] for (p,) in before)
    runs = sorted(x[len(n) + 1:] for n, (x,) in extra.items())
    assert runs == ["1.index"] * files[one][1] + ["2.index"] * files[two][1]
    assert rows(session, "SELECT id FROM t WHERE v = 'b'") == [(2,)]
    assert rows(session, "SELECT count(*) FROM t") == [(3,)]


def test_a_where_matching_no_partition_writes_nothing(session):
    table(session)
    assert rows(session, "CALL sys.rewrite_file_index('t', 'p > 5')") == [(0, 0)]
    assert kinds(session) == ["APPEND"]


@pytest.mark.parametrize("call, problem", [
    ("'t', 'v = 1'", r"where 'v = 1' may only use partition columns \(p\), not v"),
    ("'u', 'id = 1'", r"table 'default.u' is not partitioned"),
])
def test_rewrite_file_index_bad_where_fails_in_one_line_and_changes_nothing(session, call, problem):
    table(session)
    session.sql("CREATE TABLE u (id INT)")
    with pytest.raises(PaimonError, match=r"^CALL sys\.rewrite_file_index: " + problem + r".*; expected "
                                          r"sys\.rewrite_file_index\(table STRING, \[where STRING\]\)$"):
        session.sql(f"CALL sys.rewrite_file_index({call})")
    assert kinds(session) == ["APPEND"] and {i for i, _ in indexed(session).values()} == {0}


def test_rewrite_file_index_of_a_missing_table(session):
    with pytest.raises(TableNotFoundError, match="^table 'nope' not found$"):
        session.sql("CALL sys.rewrite_file_index('nope')")


@pytest.mark.parametrize("args, problem", [
    ("'t'", r"materializing deletion vectors only supports unaware-bucket data-evolution tables .*table 't' is not "
            r"one \(CALL sys\.compact drops the rows its deletion vectors delete\)"),
    ("'t', 'p=1', '', 'p = 1'", r"partitions and where cannot be used together"),
    ("'t', '', 'a'", r"options must be 'key=value,...', got 'a'"),
])
def test_materialize_deletion_vectors_is_refused_as_paimon_spark_refuses_tables_without_data_evolution(
        session, args, problem):
    session.sql("CREATE TABLE t (id INT, v STRING, p INT) PARTITIONED BY (p) "
                "TBLPROPERTIES ('deletion-vectors.enabled'='true')")
    session.sql("INSERT INTO t VALUES (1, 'a', 1), (2, 'b', 1)")
    session.sql("DELETE FROM t WHERE id = 1")
    before = rows(session, "SELECT file_path FROM t$files")
    with pytest.raises(PaimonError, match=r"^CALL sys\.materialize_deletion_vectors: " + problem + "; expected "):
        session.sql(f"CALL sys.materialize_deletion_vectors({args})")
    assert rows(session, "SELECT file_path FROM t$files") == before
    assert rows(session, "SELECT id FROM t") == [(2,)]
