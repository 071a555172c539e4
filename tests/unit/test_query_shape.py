"""A query's shape: which literals are masked, and when a shape's predicate becomes a template."""

from paimon_sql.data import predicate as P
from paimon_sql.spark.pushdown import Needs
from paimon_sql.sql import parse, query_shape
from paimon_sql.sql.query import apply_edits


def shape_of(text: str) -> query_shape.Shape:
    tree = parse.parse(text)
    masks = query_shape.masks(tree, text, [])
    return query_shape.Shape(text, apply_edits(text, [(m, "?") for m, _ in masks]), tuple(v for _, v in masks))


def test_masked_literals_are_plain_values_compared_with_a_column_in_a_filter():
    s = shape_of("SELECT a, 7 AS k, a = 8 AS e FROM t JOIN u ON t.k = u.k AND u.x = 'p' "
                 "WHERE id = 5 AND s IN ('a', \"b\") AND c BETWEEN 1 AND 2 AND 3 < d LIMIT 10")
    assert s.masked == ("SELECT a, 7 AS k, a = 8 AS e FROM t JOIN u ON t.k = u.k AND u.x = ? "
                        "WHERE id = ? AND s IN (?, ?) AND c BETWEEN ? AND ? AND ? < d LIMIT 10")
    assert s.values == ("p", 5, "a", "b", 1, 2, 3)


def test_literals_whose_meaning_their_text_decides_stay_in_the_shape():
    text = ("SELECT * FROM t WHERE a = 5L AND b = -5 AND c = 1.5 AND d = 'x\\\\y' AND e LIKE 'ab%' AND 1 = 2 "
            "AND f = 'it''s' AND g = DATE '2024-01-01' AND h = length('abc') AND 4 IN (i, j)")
    s = shape_of(text)
    assert s.masked == text and s.values == ()
    text = "SELECT * FROM t WHERE id = 5 AND s = 'a\1'"  # the mask's own character: nothing masked
    assert shape_of(text).values == ()


def needs(predicate) -> list:
    return [Needs(["id", "v"], predicate)]


def test_a_template_is_verified_by_a_query_with_every_value_different():
    first, second, third = shape_of("SELECT * FROM t WHERE id = 5"), shape_of("SELECT * FROM t WHERE id = 6"), \
        shape_of("SELECT * FROM t WHERE id = 7")
    template = query_shape.learn(None, needs(P.equal("id", 5)), first, parse.parse(first.text))
    assert isinstance(template, query_shape.Template) and not template.verified
    same = query_shape.learn(template, needs(P.equal("id", 5)), first, parse.parse(first.text))
    assert same is template  # the same value proves nothing
    verified = query_shape.learn(template, needs(P.equal("id", 6)), second, parse.parse(second.text))
    assert verified.verified and verified.filled(third.values) == needs(P.equal("id", 7))


def test_a_template_spark_disagrees_with_is_refused_for_good():
    # the filter's 5 came from elsewhere (a constant Spark folded): Spark keeps 5 for the next query
    first, second = shape_of("SELECT * FROM t WHERE ch = '5'"), shape_of("SELECT * FROM t WHERE ch = '7'")
    template = query_shape.learn(None, needs(P.equal("s", "5")), first, parse.parse(first.text))
    refused = query_shape.learn(template, needs(P.equal("s", "5")), second, parse.parse(second.text))
    assert refused == query_shape.REFUSED
    assert query_shape.learn(refused, needs(P.equal("s", "7")), second, parse.parse(second.text)) == query_shape.REFUSED


def test_no_template_where_a_value_is_not_exactly_one_masked_literal():
    cases = [
        ("SELECT * FROM t WHERE id = 5 AND c = 5", P.equal("id", 5)),  # two literals of the value
        ("SELECT * FROM t WHERE id = 5 AND c = id", P.and_(P.equal("id", 5), P.equal("c", 5))),  # used twice
        ("SELECT * FROM t WHERE id = 5 AND c = 6", P.equal("id", 5)),  # c's literal went nowhere
        ("SELECT * FROM t WHERE id = 5", P.equal("id", 5.0)),  # another type: Spark cast it
        ("SELECT * FROM t WHERE id = 5", P.and_(P.equal("id", 5), P.equal("c", 9))),  # 9 from elsewhere
        ("SELECT *, '5' AS k FROM t WHERE s = '5'", P.equal("s", "5")),  # another literal of the text
    ]
    for text, predicate in cases:
        s = shape_of(text)
        assert query_shape.learn(None, needs(predicate), s, parse.parse(text)) == query_shape.REFUSED, text
