"""Queries differing only in the values they filter by: planned once per shape, answered per value."""

from paimon_sql.data import predicate as P
from paimon_sql.sql import query_shape
from spark.conftest import rows


def pushed(session, text):
    """The rows of ``text`` and the predicate its scan of ``t`` was planned with."""
    session.scan_reports = reports = []
    try:
        got = rows(session, text)
    finally:
        session.scan_reports = None
    (report,) = [r for r in reports if r.table.endswith("t")]
    return got, report.predicate


def templates(session) -> list:
    return [v for k, v in session.planned_needs.items() if k[0] == "masked"]


def test_point_lookups_share_one_plan_and_push_their_own_value(session):
    session.sql("CREATE TABLE t (id BIGINT, v STRING, dt STRING) PARTITIONED BY (dt) "
                "TBLPROPERTIES ('primary-key' = 'id,dt', 'bucket' = '2')")
    session.sql("INSERT INTO t SELECT id, concat('v', id), IF(id % 2 = 0, 'x', 'y') FROM range(40)")
    session.sql("INSERT INTO t VALUES (3, 'new', 'y')")  # a merge on read in one bucket
    for i, key in enumerate([3, 10, 3, 17, 39, 40]):
        got, predicate = pushed(session, f"SELECT id, v FROM t WHERE id = {key}")
        assert got == ([(3, "new")] if key == 3 else [(key, f"v{key}")] if key < 40 else []), key
        assert predicate == P.equal("id", key)
        # learned from 3, verified by 10, used from then on
        assert [t.verified for t in templates(session)] == [i > 0], key
    got, predicate = pushed(session, "SELECT v FROM t WHERE dt = 'x' AND id IN (4, 5, 6)")
    assert sorted(got) == [("v4",), ("v6",)]
    assert predicate == P.and_(P.equal("dt", "x"), P.is_in("id", [4, 5, 6]))


def test_a_value_the_template_cannot_place_is_planned_per_text(session):
    # s's filter value is a constant Spark folds, equal to the CHAR column's literal (never pushed) the
    # first time only: a template would push s = '7' next, and lose the row
    session.sql("CREATE TABLE t (id INT, ch CHAR(1), s STRING)")
    session.sql("INSERT INTO t VALUES (1, '5', '5'), (2, '7', '5'), (3, '9', '5'), (4, '7', '7')")
    for ch, want in [("5", [(1,)]), ("7", [(2,)]), ("9", [(3,)])]:
        got, predicate = pushed(session, f"SELECT id FROM t WHERE ch = '{ch}' AND s = substr('x5', 2)")
        assert got == want and predicate == P.equal("s", "5"), ch
    assert templates(session) == [query_shape.REFUSED]


def test_a_filter_folded_away_is_planned_per_text(session):
    session.sql("CREATE TABLE t (id INT, v STRING)")
    session.sql("INSERT INTO t VALUES (1, 'a'), (2, 'b')")
    assert pushed(session, "SELECT id FROM t WHERE 1 = 2 OR id = 1") == ([(1,)], P.equal("id", 1))
    assert pushed(session, "SELECT id FROM t WHERE 1 = 2 OR id = 2") == ([(2,)], P.equal("id", 2))
    assert pushed(session, "SELECT id FROM t WHERE 1 = 1 OR id = 1 ORDER BY id") == ([(1,), (2,)], None)
