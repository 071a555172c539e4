import pyarrow as pa
import pytest
from support import SCHEMA

from paimon_sql.data import stats
from paimon_sql.data.types import fields_from_arrow
from paimon_sql.exceptions import InvalidOptionError

FIELDS = fields_from_arrow(SCHEMA)
DATA = pa.table({"id": [5, 1, 9], "name": ["b" * 20, None, "a"], "value": [0.5, -1.0, None], "dt": ["d"] * 3},
                schema=SCHEMA)


def decoded(mode):
    return stats.collect(DATA, FIELDS, mode).decode([f.type for f in FIELDS])


def test_truncate_16_is_the_default_mode():
    s = decoded("truncate(16)")
    assert s.mins == [1, "a", -1.0, "d"]
    assert s.maxs[1] == "b" * 15 + "c"  # cut to 16 characters and rounded up: still an upper bound
    assert s.null_counts == [0, 1, 1, 0]


def test_full_counts_none():
    assert decoded("full").maxs[1] == "b" * 20
    counts = decoded("counts")
    assert counts.mins == [None] * 4 and counts.null_counts == [0, 1, 1, 0]
    assert decoded("none").null_counts == [None] * 4


def test_bad_mode_names_the_option():
    with pytest.raises(InvalidOptionError, match="metadata.stats-mode"):
        stats.collect(DATA, FIELDS, "truncate(x)")


def test_files_carry_stats_that_prune(catalog):
    t = catalog.create_table_from_arrow("db.a", SCHEMA, options={"metadata.stats-mode": "full"})
    t.write_arrow(DATA)
    [entry] = t.new_scan().plan_entries()
    s = entry.file.value_stats.decode([f.type for f in FIELDS])
    assert s.mins[0] == 1 and s.maxs[0] == 9 and entry.file.value_stats_cols is None
