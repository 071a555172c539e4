"""Metadata columns in SELECT (issue 12): ``__paimon_file_path``, ``__paimon_row_index``,
``__paimon_partition``, ``__paimon_bucket``.

Each value is checked against the files themselves: the path is a file ``t$files`` lists, with
that file's bucket and partition, and the row at ``__paimon_row_index`` of the file read with
pyarrow is the row the query returned.
"""

import pyarrow.orc as orc
import pyarrow.parquet as pq
import pytest

from paimon_sql.exceptions import PaimonError
from tests.spark.conftest import rows

META = "__paimon_file_path, __paimon_row_index, __paimon_partition, __paimon_bucket"


def _file_rows(path):
    """A data file's rows as written (system columns too), in file order."""
    return (orc.read_table(path) if path.endswith(".orc") else pq.read_table(path)).to_pylist()


def _check_located(session, table, got, key="id"):
    """Each (row dict, path, index, partition, bucket) matches ``t$files`` and the file itself."""
    files = {r[0]: (r[1], r[2]) for r in rows(session, f"SELECT file_path, partition, bucket FROM {table}$files")}
    for row, path, index, partition, bucket in got:
        assert path in files, path
        assert bucket == files[path][1]
        physical = _file_rows(path)[index]
        for name, value in row.items():
            assert physical.get(name, physical.get(f"_KEY_{name}")) == value, (name, physical, row)
        if partition is not None:
            assert files[path][0] == "{" + ", ".join(str(v) for v in partition) + "}"


@pytest.mark.parametrize("file_format", ["parquet", "orc"])  # Spark's Parquet reader / the paimon source
def test_append_table_rows_located_in_their_files(session, file_format):
    session.sql("CREATE TABLE t (id INT, v STRING, p STRING) PARTITIONED BY (p) "
                f"TBLPROPERTIES ('bucket'='2', 'bucket-key'='id', 'file.format'='{file_format}')")
    session.sql("INSERT INTO t VALUES (1,'a','x'), (2,'b','x'), (3,'c','y'), (4,'d','y'), (5,'e','x')")
    session.sql("INSERT INTO t VALUES (6,'f','x'), (7,'g','y')")
    got = rows(session, f"SELECT id, v, {META} FROM t ORDER BY id")
    assert [r[0] for r in got] == [1, 2, 3, 4, 5, 6, 7]
    _check_located(session, "t", [({"id": r[0], "v": r[1]}, r[2], r[3], tuple(r[4]), r[5]) for r in got])
    assert all(r[4].p == ("x" if r[0] in (1, 2, 5, 6) else "y") for r in got)
    # Paimon's own check: per file, as many rows as distinct row indexes and as t$files counts
    per_file = rows(session, "SELECT __paimon_file_path, count(*), count(DISTINCT __paimon_row_index) "
                             "FROM t GROUP BY __paimon_file_path")
    counts = dict(rows(session, "SELECT file_path, record_count FROM t$files"))
    assert sorted((p, n) for p, n, _ in per_file) == sorted(counts.items())
    assert all(n == d for _, n, d in per_file)


def test_star_leaves_metadata_columns_out(session):
    session.sql("CREATE TABLE t (id INT, v STRING) TBLPROPERTIES ('bucket'='2', 'bucket-key'='id')")
    session.sql("CREATE TABLE u (id INT, w STRING)")
    session.sql("INSERT INTO t VALUES (1,'a'), (2,'b'), (3,'c')")
    session.sql("INSERT INTO u VALUES (1,'x'), (3,'z')")
    assert session.sql("SELECT *, __paimon_bucket FROM t").columns == ["id", "v", "__paimon_bucket"]
    assert session.sql("SELECT * FROM t WHERE __paimon_bucket >= 0").columns == ["id", "v"]
    joined = session.sql("SELECT *, t.__paimon_bucket AS b FROM t JOIN u ON t.id = u.id ORDER BY t.id")
    assert joined.columns == ["id", "v", "id", "w", "b"]
    buckets = dict(rows(session, "SELECT id, __paimon_bucket FROM t"))
    assert [tuple(r) for r in joined.collect()] == [(1, "a", 1, "x", buckets[1]), (3, "c", 3, "z", buckets[3])]
    aliased = session.sql("SELECT x.*, y.__paimon_bucket FROM t x JOIN t y ON x.id = y.id")
    assert aliased.columns == ["id", "v", "__paimon_bucket"]
    lateral = session.sql("SELECT * FROM t LATERAL VIEW explode(array(1, 2)) l AS e WHERE __paimon_bucket >= 0")
    assert lateral.columns == ["id", "v", "e"] and lateral.count() == 6
    # case as the user writes it; a subquery's own column list passes through its star
    assert session.sql("SELECT __PAIMON_BUCKET FROM t").columns == ["__PAIMON_BUCKET"]
    sub = session.sql("SELECT * FROM (SELECT *, __paimon_bucket AS b FROM t) s WHERE b = 0")
    assert sub.columns == ["id", "v", "b"]
    assert sorted(r[0] for r in sub.collect()) == sorted(k for k, b in buckets.items() if b == 0)


def test_bucket_filter_and_unpartitioned_partition(session):
    session.sql("CREATE TABLE t (id INT, v STRING) TBLPROPERTIES ('bucket'='3', 'bucket-key'='id')")
    session.sql("INSERT INTO t SELECT id, CAST(id AS STRING) FROM range(30)")
    by_bucket = rows(session, "SELECT __paimon_bucket, count(*) FROM t GROUP BY 1 ORDER BY 1")
    from_files = rows(session, "SELECT bucket, sum(record_count) FROM t$files GROUP BY 1 ORDER BY 1")
    assert by_bucket == from_files and len(by_bucket) == 3
    assert rows(session, "SELECT count(*) FROM t WHERE __paimon_bucket = 1")[0][0] == dict(from_files)[1]
    assert rows(session, "SELECT DISTINCT __paimon_partition FROM t") == [(tuple(),)]  # no partition keys


@pytest.mark.parametrize("file_format", ["parquet", "orc"])
def test_primary_key_table_with_deletion_vectors(session, file_format):
    session.sql("CREATE TABLE k (id INT, v STRING) TBLPROPERTIES ('primary-key'='id', 'bucket'='1', "
                f"'deletion-vectors.enabled'='true', 'file.format'='{file_format}')")
    session.sql("INSERT INTO k VALUES (1,'a'), (2,'b'), (3,'c'), (4,'d')")
    session.sql("INSERT INTO k VALUES (2,'bb')")
    session.sql("DELETE FROM k WHERE id = 3")
    got = rows(session, f"SELECT id, v, {META} FROM k ORDER BY id")
    assert [(r[0], r[1]) for r in got] == [(1, "a"), (2, "bb"), (4, "d")]
    _check_located(session, "k", [({"id": r[0], "v": r[1]}, r[2], r[3], None, r[5]) for r in got])


def test_merging_read_refuses_file_and_row_index(session):
    session.sql("CREATE TABLE k (id INT, v STRING) TBLPROPERTIES ('primary-key'='id', 'bucket'='1')")
    session.sql("INSERT INTO k VALUES (1,'a'), (2,'b')")
    session.sql("INSERT INTO k VALUES (2,'bb')")
    # partition and bucket are known for merged rows too
    assert rows(session, "SELECT id, v, __paimon_bucket FROM k ORDER BY id") == [(1, "a", 0), (2, "bb", 0)]
    with pytest.raises(PaimonError, match="__paimon_file_path and __paimon_row_index need rows read as they lie"):
        session.sql("SELECT id, __paimon_row_index FROM k").collect()
    session.catalog.get_table("default.k").compact(full=True)  # one file per bucket: read as it lies
    got = rows(session, "SELECT id, v, __paimon_file_path, __paimon_row_index, __paimon_bucket FROM k ORDER BY id")
    assert [(r[0], r[1]) for r in got] == [(1, "a"), (2, "bb")]
    _check_located(session, "k", [({"id": r[0], "v": r[1]}, r[2], r[3], None, r[4]) for r in got])


def test_cached_table_and_temp_view(session):
    session.sql("CREATE TABLE t (id INT, p INT) PARTITIONED BY (p)")
    session.sql("INSERT INTO t VALUES (1, 10), (2, 20)")
    session.sql("CACHE TABLE t")
    assert rows(session, "SELECT id, __paimon_partition.p FROM t ORDER BY id") == [(1, 10), (2, 20)]
    session.sql("CREATE TEMP VIEW located AS SELECT *, __paimon_row_index AS i FROM t")
    session.sql("INSERT INTO t VALUES (3, 30)")  # the view reads the table as of each query
    assert rows(session, "SELECT * FROM located ORDER BY id") == [(1, 10, 0), (2, 20, 0), (3, 30, 0)]


def test_wrapping_statements_and_refused_star(session):
    session.sql("CREATE TABLE t (id INT, v STRING) TBLPROPERTIES ('bucket'='2', 'bucket-key'='id')")
    session.sql("INSERT INTO t VALUES (1,'a'), (2,'b'), (3,'c'), (4,'d')")
    zero = sorted(k for k, b in rows(session, "SELECT id, __paimon_bucket FROM t") if b == 0)
    session.sql("CREATE TABLE u (id INT, v STRING)")
    session.sql("INSERT INTO u SELECT * FROM t WHERE __paimon_bucket = 0")  # the star: t's own columns
    assert sorted(r[0] for r in rows(session, "SELECT id FROM u")) == zero
    session.sql("CREATE TABLE c AS SELECT *, __paimon_row_index AS ri FROM t")
    assert session.sql("SELECT * FROM c").columns == ["id", "v", "ri"]
    with pytest.raises(PaimonError, match="USING or NATURAL join"):
        session.sql("SELECT * FROM t JOIN t x USING (id) WHERE t.__paimon_bucket = 0")
    with pytest.raises(PaimonError, match="a PIVOT"):  # its columns are not the table's
        session.sql("SELECT * FROM t PIVOT (count(*) FOR v IN ('a', 'b')) WHERE __paimon_bucket = 0")
