"""Stats pruning answers 'may this file hold a match?' for every operator, never dropping a match."""

import pytest

from paimon_sql.data import predicate as P
from paimon_sql.data.predicate import FieldStats

# a file whose column x spans 10..20 with 2 nulls out of 10 rows; y is all NULL
STATS = {"x": FieldStats(10, 20, 2, 10), "y": FieldStats(None, None, 10, 10)}


@pytest.mark.parametrize("pred, may", [
    (P.equal("x", 15), True), (P.equal("x", 25), False), (P.equal("x", 5), False),
    (P.less_than("x", 10), False), (P.less_than("x", 11), True), (P.less_or_equal("x", 10), True),
    (P.greater_than("x", 20), False), (P.greater_or_equal("x", 20), True),
    (P.is_in("x", [1, 2, 30]), False), (P.is_in("x", [1, 12]), True),
    (P.is_null("x"), True), (P.is_null("y"), True), (P.is_not_null("y"), False), (P.equal("y", 1), False),
    (P.and_(P.equal("x", 15), P.is_not_null("y")), False), (P.or_(P.equal("x", 99), P.is_null("y")), True),
    (P.not_(P.less_than("x", 30)), False), (P.not_(P.equal("x", 15)), True),
    (P.equal("unknown", 1), True),  # no stats: keep the file
])
def test_may_match(pred, may):
    assert pred.may_match(STATS.get) is may


def test_is_null_prunes_files_without_nulls(catalog):
    import pyarrow as pa
    from support import SCHEMA
    t = catalog.create_table_from_arrow("db.a", SCHEMA)
    t.write_arrow(pa.table({"id": [1], "name": ["x"], "value": [1.0], "dt": ["d"]}, schema=SCHEMA))
    t.write_arrow(pa.table({"id": [2], "name": [None], "value": [2.0], "dt": ["d"]}, schema=SCHEMA))
    plan = t.new_scan().filter(P.is_null("name")).plan()
    assert plan.stats.files_planned == 1 and t.new_scan().filter(P.is_null("name")).to_arrow().num_rows == 1
    assert t.new_scan().filter(P.less_than("id", 2)).plan().stats.files_planned == 1
