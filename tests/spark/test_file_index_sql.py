"""File indexes through SQL: declared in TBLPROPERTIES, reported by EXPLAIN, never changing results."""

import re

import pytest

from paimon_sql.exceptions import InvalidOptionError


def test_indexes_skip_files_and_explain_counts_them(session):
    session.sql("""CREATE TABLE t (id BIGINT, s STRING, c STRING) TBLPROPERTIES (
        'file-index.bloom-filter.columns' = 's', 'file-index.bloom-filter.s.items' = '1000',
        'file-index.bitmap.columns' = 'c')""")
    for k in range(4):  # every file spans the same s and c ranges: only the indexes can tell them apart
        values = ", ".join(f"({k * 100 + i}, 's{(i * 37 + k) % 100:02d}-{k}', '{'a' if i % 2 else 'z'}')"
                           for i in range(100))
        session.sql(f"INSERT INTO t VALUES {values}, (-1, 'a', 'm{k}'), (-2, 'zz', 'a')")
    got = [tuple(r) for r in session.sql("SELECT id, s FROM t WHERE s = 's37-2'").collect()]
    assert got == [(255, "s37-2")]  # 55 * 37 + 2 = 2037 (read on the driver)
    session.sql("SET paimon.sql.driverReadBytes = 0")  # Spark's reader, whose skipping EXPLAIN counts
    assert [tuple(r) for r in session.sql("SELECT id, s FROM t WHERE s = 's37-2'").collect()] == got
    plan = [r[0] for r in session.sql("EXPLAIN SELECT id FROM t WHERE s = 's37-2'").collect()]
    files = next(line for line in plan if line.startswith("  files:"))
    n = int(re.search(r"(\d+) after stats", files).group(1))
    assert n >= 4 and f"{n - 1} more skipped by index files" in files  # one file holds s37-2
    assert session.sql("SELECT count(*) FROM t WHERE c = 'm3'").collect()[0][0] == 1
    plan = [r[0] for r in session.sql("EXPLAIN SELECT id FROM t WHERE c = 'm3'").collect()]
    files = next(line for line in plan if line.startswith("  files:"))
    assert f"{n - 1} more skipped by index files" in files  # the bitmap shares the bloom filter's .index file


def test_unsupported_index_type_is_a_clear_error(session):
    with pytest.raises(InvalidOptionError, match="bsi file index does not support column s of type STRING"):
        session.sql("CREATE TABLE bad (s STRING) TBLPROPERTIES ('file-index.bsi.columns' = 's')")
