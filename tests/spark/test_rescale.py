"""CALL sys.rescale: partitions rewritten with another bucket number in one OVERWRITE snapshot."""

import pytest

from paimon_sql.exceptions import PaimonError
from tests.spark.conftest import rows

RESCALE = "sys.rescale(table STRING, [bucket_num INT], [partitions STRING], [where STRING])"


def kinds(session, name="t"):
    return [k for (k,) in rows(session, f"SELECT commit_kind FROM {name}$snapshots ORDER BY snapshot_id")]


def layout(session, name="t"):
    """{partition: (total buckets, sorted buckets of its live files)}."""
    buckets = {}
    for part, bucket in rows(session, f"SELECT partition, bucket FROM {name}$files"):
        buckets.setdefault(part, set()).add(bucket)
    # $partitions names a partition 'dt=a', $files '{a}'
    totals = {"{%s}" % p.split("=", 1)[1]: n for p, n in rows(session, f"SELECT partition, total_buckets FROM {name}$partitions")}
    return {p: (totals[p], sorted(b)) for p, b in buckets.items()}


def file_names(session, partition, name="t"):
    return sorted(f for (f,) in rows(session, f"SELECT file_path FROM {name}$files WHERE partition = '{partition}'"))


def pk_table(session):
    """Primary-key table, 2 buckets, partitions dt = a / b, two inserts (updates in the second)."""
    session.sql("CREATE TABLE t (id INT, v STRING, dt STRING) PARTITIONED BY (dt) "
                "TBLPROPERTIES ('primary-key' = 'id,dt', 'bucket' = '2')")
    session.sql("INSERT INTO t SELECT id, concat('v', id), IF(id % 2 = 0, 'a', 'b') FROM range(40) AS r(id)")
    session.sql("INSERT INTO t SELECT id, 'new', IF(id % 2 = 0, 'a', 'b') FROM range(30, 50) AS r(id)")


def test_rescale_one_partition_after_alter_keeps_rows_and_other_partitions(session):
    pk_table(session)
    data = rows(session, "SELECT * FROM t ORDER BY dt, id")
    untouched = file_names(session, "{b}")
    session.sql("ALTER TABLE t SET TBLPROPERTIES ('bucket' = '4')")
    assert rows(session, "CALL sys.rescale(table => 't', bucket_num => 4, partitions => 'dt=\"a\"')") == [(True,)]
    assert kinds(session) == ["APPEND", "APPEND", "OVERWRITE"]
    assert layout(session) == {"{a}": (4, [0, 1, 2, 3]), "{b}": (2, [0, 1])}
    assert file_names(session, "{b}") == untouched
    assert rows(session, "SELECT * FROM t ORDER BY dt, id") == data
    # the table's own bucket option is what ALTER set: new rows land in 4 buckets of dt=a
    session.sql("INSERT INTO t VALUES (1000, 'late', 'a'), (0, 'changed', 'a')")
    assert rows(session, "SELECT v FROM t WHERE id IN (0, 1000) ORDER BY id") == [("changed",), ("late",)]
    assert rows(session, "SELECT count(*) FROM t") == [(51,)]
    # dt=b still has 2 buckets: writing it with 4 would put a key in two buckets, refused as in Paimon
    with pytest.raises(PaimonError, match=r"partition dt=b was written with 2 buckets but 'bucket' is 4; "
                                          r"rescale it first") as e:
        session.sql("INSERT INTO t VALUES (1, 'dup', 'b')")
    assert "\n" not in str(e.value) and rows(session, "SELECT v FROM t WHERE id = 1") == [("v1",)]
    assert kinds(session) == ["APPEND", "APPEND", "OVERWRITE", "APPEND"]


def test_without_bucket_num_the_tables_bucket_option_is_used_and_where_selects(session):
    pk_table(session)
    data = rows(session, "SELECT * FROM t ORDER BY dt, id")
    session.sql("ALTER TABLE t SET TBLPROPERTIES ('bucket' = '3')")
    session.sql("CALL sys.rescale(table => 't', where => 'dt <> \"a\"')")
    assert layout(session) == {"{a}": (2, [0, 1]), "{b}": (3, [0, 1, 2])}
    session.sql("CALL sys.rescale(table => 't')")  # every partition
    assert layout(session) == {"{a}": (3, [0, 1, 2]), "{b}": (3, [0, 1, 2])}
    assert kinds(session) == ["APPEND", "APPEND", "OVERWRITE", "OVERWRITE"]
    assert rows(session, "SELECT * FROM t ORDER BY dt, id") == data
    assert dict(rows(session, "SELECT key, value FROM t$options"))["bucket"] == "3"  # rescale leaves it


def test_unpartitioned_append_table_scales_down(session):
    session.sql("CREATE TABLE a (k INT, v STRING) TBLPROPERTIES ('bucket' = '4', 'bucket-key' = 'k')")
    session.sql("INSERT INTO a SELECT id, concat('v', id) FROM range(100) AS r(id)")
    session.sql("INSERT INTO a VALUES (1, 'again')")
    data = rows(session, "SELECT * FROM a ORDER BY k, v")
    session.sql("ALTER TABLE a SET TBLPROPERTIES ('bucket' = '2')")
    session.sql("CALL sys.rescale(table => 'a', bucket_num => 2)")
    assert kinds(session, "a") == ["APPEND", "APPEND", "OVERWRITE"]
    assert sorted({b for (b,) in rows(session, "SELECT bucket FROM a$files")}) == [0, 1]
    assert rows(session, "SELECT DISTINCT total_buckets FROM a$partitions") == [(2,)]
    assert rows(session, "SELECT * FROM a ORDER BY k, v") == data


def test_deletion_vector_level0_rows_are_kept(session):
    session.sql("CREATE TABLE d (id INT, v STRING) TBLPROPERTIES ('primary-key' = 'id', 'bucket' = '1', "
                "'deletion-vectors.enabled' = 'true')")
    session.sql("INSERT INTO d VALUES (1, 'one'), (2, 'two'), (3, 'three')")
    session.sql("INSERT INTO d VALUES (2, 'updated')")
    session.sql("ALTER TABLE d SET TBLPROPERTIES ('write-only' = 'true')")
    session.sql("INSERT INTO d VALUES (4, 'level-zero')")  # not visible until compacted
    assert 0 in {lv for (lv,) in rows(session, "SELECT level FROM d$files")}
    session.sql("ALTER TABLE d SET TBLPROPERTIES ('bucket' = '2', 'write-only' = 'false')")
    session.sql("CALL sys.rescale(table => 'd', bucket_num => 2)")
    # level 0 compacted first; the rewrite's own merge-on-write compaction follows its OVERWRITE
    assert kinds(session, "d")[-3:] == ["COMPACT", "OVERWRITE", "COMPACT"]
    assert rows(session, "SELECT DISTINCT total_buckets FROM d$partitions") == [(2,)]
    assert 0 not in {lv for (lv,) in rows(session, "SELECT level FROM d$files")}
    assert rows(session, "SELECT * FROM d ORDER BY id") == [(1, "one"), (2, "updated"), (3, "three"),
                                                            (4, "level-zero")]


def test_no_matching_partition_or_empty_partition_commits_nothing(session):
    pk_table(session)
    session.sql("CALL sys.rescale(table => 't', bucket_num => 4, partitions => 'dt=c')")
    session.sql("CALL sys.rescale(table => 't', bucket_num => 4, where => 'dt > \"z\"')")
    assert kinds(session) == ["APPEND", "APPEND"]


@pytest.mark.parametrize("call, problem", [
    ("table => 't', bucket_num => 4, partitions => 'dt=a', where => 'dt = \"a\"'",
     "partitions and where cannot be used together"),
    ("table => 't', bucket_num => 0", "bucket_num must be a positive number of buckets, got 0"),
    ("table => 't', bucket_num => 4, where => 'id = 1'", "where 'id = 1' may only use partition columns (dt), not id"),
    ("table => 't', partitions => 'id=1'", "partitions must be 'key=value,...;...' over partition columns (dt)"),
    ("table => 'dyn'", "table 'dyn' has bucket = -1 (dynamic bucket): only a fixed-bucket table can be rescaled"),
    ("table => 'plain', partitions => 'x=1'", "table 'default.plain' is not partitioned"),
    ("table => 'empty', bucket_num => 2", "table 'empty' has no snapshot, no need to rescale"),
])
def test_bad_calls_fail_in_one_line_and_change_nothing(session, call, problem):
    pk_table(session)
    session.sql("CREATE TABLE dyn (id INT, v STRING) TBLPROPERTIES ('primary-key' = 'id')")
    session.sql("INSERT INTO dyn VALUES (1, 'x')")
    session.sql("CREATE TABLE plain (id INT) TBLPROPERTIES ('bucket' = '2', 'bucket-key' = 'id')")
    session.sql("INSERT INTO plain VALUES (1)")
    session.sql("CREATE TABLE empty (id INT) TBLPROPERTIES ('bucket' = '2', 'bucket-key' = 'id')")
    before = {n: (kinds(session, n), rows(session, f"SELECT * FROM {n} ORDER BY 1")) for n in ("t", "dyn", "plain")}
    with pytest.raises(PaimonError) as e:
        session.sql(f"CALL sys.rescale({call})")
    message = str(e.value)
    assert "\n" not in message and message.startswith(f"CALL sys.rescale: {problem}")
    assert message.endswith(f"expected {RESCALE}")
    assert {n: (kinds(session, n), rows(session, f"SELECT * FROM {n} ORDER BY 1")) for n in before} == before


def test_unknown_table(session):
    with pytest.raises(PaimonError, match="^table 'nope' not found$"):
        session.sql("CALL sys.rescale(table => 'nope', bucket_num => 2)")
