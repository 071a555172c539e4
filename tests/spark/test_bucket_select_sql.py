"""A point query on the bucket key plans the one bucket its key hashes to (EXPLAIN counts the files)."""

import re

import pytest

from tests.spark.conftest import rows


def explained(session, query):
    """(pushed filter, files in the selected buckets, files planned, splits) of EXPLAIN ``query``."""
    plan = [r[0] for r in session.sql(f"EXPLAIN {query}").collect()]
    pushed = next(line for line in plan if line.startswith("  pushed filter:"))
    files = next(line for line in plan if line.startswith("  files:"))
    splits = next(line for line in plan if line.startswith("  splits:"))
    selected = int(re.search(r"(\d+) in the selected buckets", files).group(1))
    planned = int(re.search(r"files: (\d+) planned", files).group(1))
    return pushed, selected, planned, sum(int(n) for n in re.findall(r"(\d+) (?:read|merged)", splits))


@pytest.mark.parametrize("where, keys, pushed", [
    ("id = 13", [13], "id = 13"), ("id IN (1, 2)", [1, 2], "id IN (1, 2)"),
    ("id = 13 OR id = 14", [13, 14], "(id = 13 OR id = 14)"),
    ("id = 13 AND c > 0 AND dt = 'd1'", [13], "id = 13")])
def test_a_point_query_reads_the_bucket_of_its_key(session, where, keys, pushed):
    session.sql("CREATE TABLE t (id BIGINT, b DOUBLE, c INT, s STRING, dt STRING) PARTITIONED BY (dt) "
                "TBLPROPERTIES ('primary-key' = 'dt,id', 'bucket' = '4')")
    session.sql("INSERT INTO t SELECT id, id * 1.5, CAST(id % 7 AS INT), CONCAT('s', id), CONCAT('d', id % 2) "
                "FROM range(200)")
    session.sql("INSERT INTO t SELECT id, id * 2.5, 1, CONCAT('u', id), CONCAT('d', id % 2) FROM range(0, 200, 3)")
    holding = {b for (b,) in rows(session, f"SELECT DISTINCT __paimon_bucket FROM t WHERE id IN "
                                           f"({', '.join(map(str, keys))})")}
    files = rows(session, "SELECT partition, bucket FROM t$files")
    text, selected, planned, splits = explained(session, f"SELECT * FROM t WHERE {where}")
    assert pushed in text
    wanted = [f for f in files if f[1] in holding and (" dt = " not in text or f[0] == "{d1}")]
    assert selected == len(wanted) < len(files) and planned <= selected
    assert splits <= len(set(wanted))  # at most one split per (partition, bucket)
    got = rows(session, f"SELECT id, s FROM t WHERE {where} ORDER BY id")
    assert got == [(k, ("u" if k % 3 == 0 else "s") + str(k)) for k in keys
                   if "dt" not in where or k % 2 == 1]
