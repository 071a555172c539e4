"""paimon-sql against real Java Apache Paimon 1.0 and 2.0 (each case against each: java_paimon.py's fixtures),
both ways and with both writing one table.

Each scenario is one table and two batches of rows. "Java first": Java creates the table and
writes batch 1 (all Java-first tables in one JVM, at module start), we read it, write batch 2 with
SQL, and Java reads everything. "Ours first": we create it and write batch 1, Java reads it and
writes batch 2 (one JVM), we read everything. Every hand-over compares both readers, and the final
rows are compared with the scenario's expected rows.
"""

import datetime
import decimal
import json

import pytest
from java_paimon import java, ok, paimon_version  # noqa: F401  (fixtures: a JVM per Java version)
from spark.conftest import session, spark  # noqa: F401  (fixtures: one SparkSession per run)

pytestmark = pytest.mark.interop

# Types: Paimon names; ("ARRAY", t), ("MAP", k, v), ("ROW", [(name, t), ...]); " NOT NULL" suffix allowed.
SPARK_NAMES = {"BYTES": "BINARY", "TIMESTAMP(6)": "TIMESTAMP_NTZ"}


def paimon_type(t):
    """The type as Paimon's schema JSON (what the Java driver parses)."""
    if isinstance(t, str):
        return t
    if t[0] == "ARRAY":
        return {"type": "ARRAY", "element": paimon_type(t[1])}
    if t[0] == "MAP":
        return {"type": "MAP", "key": paimon_type(t[1]) + " NOT NULL", "value": paimon_type(t[2])}
    return {"type": "ROW", "fields": [{"id": 1000 + i, "name": n, "type": paimon_type(f)}
                                      for i, (n, f) in enumerate(t[1])]}


def spark_type(t):
    if isinstance(t, str):
        base = t.removesuffix(" NOT NULL")
        return SPARK_NAMES.get(base, base) + t[len(base):]
    if t[0] == "ARRAY":
        return f"ARRAY<{spark_type(t[1])}>"
    if t[0] == "MAP":
        return f"MAP<{spark_type(t[1])}, {spark_type(t[2])}>"
    return "STRUCT<" + ", ".join(f"{n}: {spark_type(f)}" for n, f in t[1]) + ">"


def literal(v, t):
    """A Spark SQL literal of the JSON value ``v`` (the driver's encoding) of type ``t``."""
    if v is None:
        return f"CAST(NULL AS {spark_type(t).removesuffix(' NOT NULL')})"
    if not isinstance(t, str):
        if t[0] == "ARRAY":
            inner = ", ".join(literal(x, t[1]) for x in v)
        elif t[0] == "MAP":
            inner = ", ".join(f"{literal(k, t[1])}, {literal(x, t[2])}" for k, x in v)
        else:
            inner = ", ".join(f"'{n}', {literal(x, f)}" for (n, f), x in zip(t[1], v))
        fn = {"ARRAY": "array", "MAP": "map", "ROW": "named_struct"}[t[0]]
        return f"CAST({fn}({inner}) AS {spark_type(t)})"
    base = t.removesuffix(" NOT NULL")
    if base == "STRING":
        return "'" + v.replace("\\", "\\\\").replace("'", "\\'") + "'"
    if base == "BYTES":
        return f"X'{v}'"
    if base == "DATE":
        return f"DATE'{v}'"
    if base.startswith("TIMESTAMP"):
        return f"TIMESTAMP_NTZ'{v}'"
    if base == "BOOLEAN":
        return "TRUE" if v else "FALSE"
    return f"CAST('{v}' AS {base})" if base.startswith("DECIMAL") else f"CAST({v!r} AS {base})"


def canonical(v):
    """Spark's Python values in the driver's JSON encoding."""
    if isinstance(v, datetime.datetime):
        return v.strftime("%Y-%m-%dT%H:%M:%S.%f")
    if isinstance(v, datetime.date):
        return v.isoformat()
    if isinstance(v, decimal.Decimal):
        return decimal_text(v)
    if isinstance(v, (bytes, bytearray)):
        return bytes(v).hex()
    if isinstance(v, dict):
        return [[canonical(k), canonical(x)] for k, x in v.items()]
    if isinstance(v, (list, tuple)):
        return [canonical(x) for x in v]
    return v


def decimal_text(v) -> str:
    """A decimal without trailing zeros, as the scenarios spell it (Java prints the column's scale)."""
    with decimal.localcontext(decimal.Context(prec=80)):
        return format(decimal.Decimal(v).normalize(), "f")


def from_java(rows):
    """Java's rows with decimals as ``decimal_text`` (the driver prints DECIMAL values as text)."""
    def fix(v):
        if isinstance(v, list):
            return [fix(x) for x in v]
        if isinstance(v, str) and v.lstrip("-").replace(".", "", 1).isdigit() and "." in v:
            return decimal_text(v)
        return v
    return ordered([fix(r) for r in ok(rows)])


def ordered(rows):
    return sorted(rows, key=json.dumps)


class Scenario:
    def __init__(self, name, fields, batch1, batch2, expect, pk=(), partition=(), options=None, kinds2=None,
                 compact=False):
        self.name, self.fields, self.batch1, self.batch2, self.expect = name, fields, batch1, batch2, expect
        self.pk, self.partition, self.options, self.kinds2, self.compact = pk, partition, options or {}, kinds2, compact

    def java_create(self, warehouse, table):
        return {"op": "create", "warehouse": warehouse, "table": table, "primary_keys": list(self.pk),
                "partition_keys": list(self.partition), "options": self.options,
                "fields": [[n, paimon_type(t)] for n, t in self.fields]}

    def sql_create(self, table):
        cols = ", ".join(f"{n} {spark_type(t)}" for n, t in self.fields)
        props = dict(self.options, **({"primary-key": ",".join(self.pk)} if self.pk else {}))
        part = f" PARTITIONED BY ({', '.join(self.partition)})" if self.partition else ""
        tbl = ", ".join(f"'{k}' = '{v}'" for k, v in props.items())
        return f"CREATE TABLE {table} ({cols}){part} TBLPROPERTIES ({tbl})"

    def sql_write(self, session, table, rows, kinds=None):
        """Inserts the rows; a -D row is a DELETE by primary key."""
        types = [t for _, t in self.fields]
        inserts = [r for r, k in zip(rows, kinds or ["+I"] * len(rows)) if k != "-D"]
        if inserts:
            values = ", ".join("(" + ", ".join(literal(v, t) for v, t in zip(r, types)) + ")" for r in inserts)
            session.sql(f"INSERT INTO {table} VALUES {values}").collect()
        for r, k in zip(rows, kinds or []):
            if k == "-D":
                where = " AND ".join(f"{n} = {literal(r[i], t)}" for i, (n, t) in enumerate(self.fields)
                                     if n in self.pk)
                session.sql(f"DELETE FROM {table} WHERE {where}").collect()


ALL_TYPES = [("id", "INT NOT NULL"), ("ti", "TINYINT"), ("si", "SMALLINT"), ("bi", "BIGINT"), ("f", "FLOAT"),
             ("d", "DOUBLE"), ("dec", "DECIMAL(38, 10)"), ("s", "STRING"), ("b", "BYTES"), ("bo", "BOOLEAN"),
             ("dt", "DATE"), ("ts", "TIMESTAMP(6)"), ("arr", ("ARRAY", "INT")), ("m", ("MAP", "STRING", "INT")),
             ("r", ("ROW", [("x", "INT"), ("y", "STRING")]))]
TYPES_1 = [[1, -128, 32767, 9007199254740993, 1.5, -2.25, "12345678901234567890.0123456789", "héllo 'q'", "00ff10",
            True, "2024-05-01", "2024-01-02T03:04:05.123456", [1, None, 3], [["a", 1], ["b", None]], [7, "x"]],
           [2] + [None] * 11 + [[None], [], [None, "only y"]]]
TYPES_2 = [[3, 127, -32768, -1, -0.5, 1e300, "-0.0000000001", "", "", False, "1969-12-31",
            "1900-01-01T00:00:00.000000", [], [["k", -5]], [-1, None]]]

SIMPLE = [("id", "INT NOT NULL"), ("v", "BIGINT"), ("s", "STRING")]
PART = [("p", "STRING NOT NULL"), ("h", "INT NOT NULL"), ("id", "INT NOT NULL"), ("v", "BIGINT")]

SCENARIOS = [
    Scenario("types", ALL_TYPES, TYPES_1, TYPES_2, TYPES_1 + TYPES_2),
    Scenario("partitioned", PART, [["a", 1, 1, 10], ["a", 2, 2, 20], ["b", 1, 3, None]], [["b", 1, 4, 40]],
             [["a", 1, 1, 10], ["a", 2, 2, 20], ["b", 1, 3, None], ["b", 1, 4, 40]], partition=("p", "h")),
    Scenario("fixed_bucket", SIMPLE, [[i, i * 10, f"s{i}"] for i in range(6)], [[9, 90, "s9"]],
             [[i, i * 10, f"s{i}"] for i in range(6)] + [[9, 90, "s9"]],
             options={"bucket": "3", "bucket-key": "id"}),
    Scenario("fixed_bucket_compacted", SIMPLE, [[i, i * 10, f"s{i}"] for i in range(6)], [[9, 90, "s9"]],
             [[i, i * 10, f"s{i}"] for i in range(6)] + [[9, 90, "s9"]],
             options={"bucket": "3", "bucket-key": "id"}, compact=True),
    Scenario("deduplicate", SIMPLE, [[1, 1, "a"], [2, 2, "b"], [3, 3, "c"]], [[2, 20, "B"], [3, 3, "c"], [4, 4, "d"]],
             [[1, 1, "a"], [2, 20, "B"], [4, 4, "d"]], pk=("id",), options={"bucket": "2"},
             kinds2=["+I", "-D", "+I"], compact=True),
    Scenario("dynamic_bucket", SIMPLE, [[i, i, "x"] for i in range(5)], [[1, 100, "y"], [7, 7, "z"]],
             [[0, 0, "x"], [1, 100, "y"], [2, 2, "x"], [3, 3, "x"], [4, 4, "x"], [7, 7, "z"]],
             pk=("id",), options={"bucket": "-1"}, compact=True),
    Scenario("partial_update", SIMPLE, [[1, 1, None], [2, None, "b"]], [[1, None, "a"], [2, 2, None]],
             [[1, 1, "a"], [2, 2, "b"]], pk=("id",), options={"bucket": "1", "merge-engine": "partial-update"},
             compact=True),
    Scenario("aggregation", SIMPLE, [[1, 1, "a"], [2, 5, "b"]], [[1, 10, "c"], [3, 3, None]],
             [[1, 11, "c"], [2, 5, "b"], [3, 3, None]], pk=("id",),
             options={"bucket": "1", "merge-engine": "aggregation", "fields.v.aggregate-function": "sum",
                      "fields.s.aggregate-function": "last_non_null_value"}, compact=True),
    Scenario("first_row", SIMPLE, [[1, 1, "a"], [2, 2, "b"]], [[1, 10, "A"], [3, 3, "c"]],
             [[1, 1, "a"], [2, 2, "b"], [3, 3, "c"]], pk=("id",),
             options={"bucket": "1", "merge-engine": "first-row"}, compact=True),
    Scenario("pk_partitioned", PART, [["a", 1, 1, 1], ["b", 2, 1, 2]], [["a", 1, 1, 10], ["c", 3, 1, 3]],
             [["a", 1, 1, 10], ["b", 2, 1, 2], ["c", 3, 1, 3]], pk=("p", "h", "id"), partition=("p", "h"),
             options={"bucket": "2"}, compact=True),
    Scenario("deletion_vectors", SIMPLE, [[1, 1, "a"], [2, 2, "b"], [3, 3, "c"]],
             [[2, 20, "B"], [3, 3, "c"], [4, 4, "d"]], [[1, 1, "a"], [2, 20, "B"], [4, 4, "d"]], pk=("id",),
             options={"bucket": "1", "deletion-vectors.enabled": "true"}, kinds2=["+I", "-D", "+I"], compact=True),
    Scenario("bitmap_index", SIMPLE, [[i, i % 7, f"g{i % 5}"] for i in range(200)], [[500, 1, "late"]],
             [[i, i % 7, f"g{i % 5}"] for i in range(200)] + [[500, 1, "late"]],
             options={"file-index.bitmap.columns": "s,v"}),
    Scenario("bloom_filter", SIMPLE, [[i, i, f"k{i}"] for i in range(300)], [[1000, 1, "late"]],
             [[i, i, f"k{i}"] for i in range(300)] + [[1000, 1, "late"]],
             options={"file-index.bloom-filter.columns": "s"}),
]
BY_NAME = {s.name: s for s in SCENARIOS}


@pytest.fixture(scope="module")
def java_warehouse(tmp_path_factory, paimon_version):
    """A warehouse per Java version: each makes its Java-first tables anew."""
    return str(tmp_path_factory.mktemp(f"java{paimon_version}") / "warehouse")


@pytest.fixture
def warehouse(java_warehouse):
    """Every test of this module works in one warehouse (the Java-first tables are made once)."""
    return java_warehouse


@pytest.fixture(scope="module")
def java_first(java, java_warehouse):
    """Java makes every Java-first table with its batch 1 in one JVM: name -> rows Java reads back."""
    commands = []
    for s in SCENARIOS:
        table = f"db.j_{s.name}"
        commands += [s.java_create(java_warehouse, table),
                     {"op": "write", "warehouse": java_warehouse, "table": table, "rows": s.batch1}]
        if s.compact:
            commands.append({"op": "compact", "warehouse": java_warehouse, "table": table})
        commands.append({"op": "read", "warehouse": java_warehouse, "table": table})
    results = java.run(commands)
    reads = [r for c, r in zip(commands, results) if c["op"] == "read"]
    return {s.name: r for s, r in zip(SCENARIOS, reads)}


def ours(session, text):
    return ordered([canonical(list(r)) for r in session.sql(text).collect()])


@pytest.mark.parametrize("name", list(BY_NAME))
def test_java_first(name, java, java_first, session, java_warehouse):
    s, table = BY_NAME[name], f"db.j_{name}"
    assert from_java(java_first[name]) == ordered(s.batch1)
    assert ours(session, f"SELECT * FROM {table}") == ordered(s.batch1)
    s.sql_write(session, table, s.batch2, s.kinds2)
    if s.compact:
        session.catalog.get_table(table).compact(full=True)
    theirs = from_java(java("read", java_warehouse, table))
    assert theirs == ours(session, f"SELECT * FROM {table}")
    assert theirs == ordered(s.expect)


@pytest.mark.parametrize("name", list(BY_NAME))
def test_ours_first(name, java, session, java_warehouse):
    s, table = BY_NAME[name], f"db.o_{name}"
    session.sql("CREATE DATABASE IF NOT EXISTS db").collect()
    session.sql(s.sql_create(table)).collect()
    s.sql_write(session, table, s.batch1)
    if s.compact:
        session.catalog.get_table(table).compact(full=True)
    before = ours(session, f"SELECT * FROM {table}")
    w = dict(warehouse=java_warehouse, table=table)
    commands = [dict(op="read", **w), dict(op="write", rows=s.batch2, **w)]
    if s.kinds2:
        commands[-1]["kinds"] = s.kinds2
    if s.compact:
        commands.append(dict(op="compact", **w))
    commands.append(dict(op="read", **w))
    results = java.run(commands)
    assert from_java(results[0]) == before == ordered(s.batch1)
    assert from_java(results[-1]) == ours(session, f"SELECT * FROM {table}") == ordered(s.expect)


@pytest.mark.parametrize("name, hit, where, wanted", [
    ("bloom_filter", "k7", "s = 'k7'", lambda r: r[2] == "k7"),
    ("bitmap_index", "g3", "s = 'g3' AND v = 3", lambda r: r[2] == "g3" and r[1] == 3),
])
def test_file_index_point_queries(java, java_first, session, java_warehouse, name, hit, where, wanted):
    """Java's file indexes (bloom filter, bitmap) answer our point queries, ours answer Java's."""
    s = BY_NAME[name]
    assert ours(session, f"SELECT * FROM db.j_{name} WHERE {where}") == ordered([r for r in s.batch1 if wanted(r)])
    assert ours(session, f"SELECT * FROM db.j_{name} WHERE s = 'absent'") == []
    session.sql(s.sql_create(f"db.o_{name}_points")).collect()
    s.sql_write(session, f"db.o_{name}_points", s.batch1)
    w = dict(warehouse=java_warehouse, table=f"db.o_{name}_points")
    found, miss = java.run([dict(op="read", equal=["s", hit], **w), dict(op="read", equal=["s", "absent"], **w)])
    assert (ordered(ok(found)), ok(miss)) == (ordered([r for r in s.batch1 if r[2] == hit]), [])


def test_tags_and_schema_evolution(java, session, java_warehouse):
    """A tag Java made reads with VERSION AS OF after Java renamed, added and dropped columns; a tag
    we made after our own ALTERs reads in Java."""
    w = dict(warehouse=java_warehouse, table="db.j_evolve")
    s = Scenario("evolve", SIMPLE, [], [], [])
    ok_all = [ok(r) for r in java.run([
        s.java_create(**w), dict(op="write", rows=[[1, 10, "a"]], **w), dict(op="tag", name="t1", **w),
        dict(op="evolve", changes=[["rename", "s", "name"], ["add", "c", "DOUBLE"], ["drop", "v"]], **w),
        dict(op="write", rows=[[2, "b", 2.5]], **w)])]
    assert ok_all[-1] == 2
    assert ours(session, "SELECT * FROM db.j_evolve VERSION AS OF 't1'") == [[1, 10, "a"]]
    assert ours(session, "SELECT * FROM db.j_evolve") == [[1, "a", None], [2, "b", 2.5]]
    session.sql("ALTER TABLE db.j_evolve ADD COLUMN e STRING").collect()
    session.sql("ALTER TABLE db.j_evolve RENAME COLUMN c TO score").collect()
    session.sql("INSERT INTO db.j_evolve VALUES (3, 'c', 3.5, 'e3')").collect()
    session.sql("ALTER TABLE db.j_evolve CREATE TAG t2").collect()
    session.sql("ALTER TABLE db.j_evolve DROP COLUMN name").collect()
    latest, tagged = java.run([dict(op="read", **w), dict(op="read", tag="t2", **w)])
    assert from_java(latest) == ordered([[1, None, None], [2, 2.5, None], [3, 3.5, "e3"]])
    assert from_java(tagged) == ordered([[1, "a", None, None], [2, "b", 2.5, None], [3, "c", 3.5, "e3"]])


def test_date_partitions_java_first(java, session, java_warehouse):
    """Java 1.0 and 2.0 name DATE partition directories by day number (partition.legacy-name, default true)."""
    w = dict(warehouse=java_warehouse, table="db.j_date_part")
    s = Scenario("date_part", [("d", "DATE"), ("id", "INT")], [], [], [], partition=("d",))
    [ok(r) for r in java.run([s.java_create(**w), dict(op="write", rows=[["2024-05-01", 1], [None, 2]], **w)])]
    assert ours(session, "SELECT * FROM db.j_date_part") == ordered([["2024-05-01", 1], [None, 2]])


def test_small_decimal_ours_first(java, session, java_warehouse):
    session.sql("CREATE TABLE db.o_small_dec (id INT, a DECIMAL(9, 2), b DECIMAL(18, 4))").collect()
    session.sql("INSERT INTO db.o_small_dec VALUES (1, 1.25, -123456789.1234), (2, NULL, NULL)").collect()
    assert from_java(java("read", java_warehouse, "db.o_small_dec")) == ordered(
        [[1, "1.25", "-123456789.1234"], [2, None, None]])


def test_small_decimal_java_first(java, session, java_warehouse):
    w = dict(warehouse=java_warehouse, table="db.j_small_dec")
    s = Scenario("small_dec", [("id", "INT"), ("a", "DECIMAL(9, 2)"), ("b", "DECIMAL(18, 4)")], [], [], [])
    [ok(r) for r in java.run([s.java_create(**w), dict(op="write", rows=[[1, "1.25", "-123456789.1234"],
                                                                           [2, None, None]], **w)])]
    assert ours(session, "SELECT * FROM db.j_small_dec") == ordered([[1, "1.25", "-123456789.1234"], [2, None, None]])


def test_cross_partition_upsert_ours_first(java, session, java_warehouse):
    session.sql("CREATE TABLE db.o_cross (id INT NOT NULL, v STRING, p STRING) PARTITIONED BY (p) "
                "TBLPROPERTIES ('primary-key' = 'id')").collect()
    session.sql("INSERT INTO db.o_cross VALUES (1, 'a', 'x'), (2, 'b', 'x')").collect()
    session.sql("INSERT INTO db.o_cross VALUES (1, 'a2', 'y')").collect()
    assert from_java(java("read", java_warehouse, "db.o_cross")) == ordered([[1, "a2", "y"], [2, "b", "x"]])


def test_our_schema_evolution_read_by_java(java, session, java_warehouse):
    """A table we created, wrote and evolved (nested column added, renamed, dropped, widened) reads in
    Java with each file's rows under the current schema, and Java's write after it reads in ours."""
    session.sql("CREATE DATABASE IF NOT EXISTS db").collect()
    session.sql("CREATE TABLE db.o_evolve (id INT NOT NULL, v INT, s STRING) TBLPROPERTIES ('primary-key' = 'id', "
                "'bucket' = '1')").collect()
    session.sql("INSERT INTO db.o_evolve VALUES (1, 10, 'a'), (2, 20, 'b')").collect()
    session.sql("ALTER TABLE db.o_evolve ADD COLUMN r STRUCT<x: INT, y: STRING>").collect()
    session.sql("ALTER TABLE db.o_evolve RENAME COLUMN s TO name").collect()
    session.sql("ALTER TABLE db.o_evolve ALTER COLUMN v TYPE BIGINT").collect()
    session.sql("INSERT INTO db.o_evolve VALUES (3, 30, 'c', named_struct('x', 7, 'y', 'q'))").collect()
    session.sql("ALTER TABLE db.o_evolve DROP COLUMN name").collect()
    w = dict(warehouse=java_warehouse, table="db.o_evolve")
    first, _, last = java.run([dict(op="read", **w), dict(op="write", rows=[[4, 40, [8, "z"]]], **w),
                               dict(op="read", **w)])
    assert from_java(first) == ordered([[1, 10, None], [2, 20, None], [3, 30, [7, "q"]]])
    assert from_java(last) == ours(session, "SELECT * FROM db.o_evolve") == \
        ordered([[1, 10, None], [2, 20, None], [3, 30, [7, "q"]], [4, 40, [8, "z"]]])


def test_java_compacts_our_append_table(java, session, java_warehouse):
    """Java's compaction coordinator for unaware-bucket append tables (a class of its own in 1.0 and
    2.0, PaimonDriver.compactUnaware) rewrites our three small files into one, which we read."""
    session.sql("CREATE DATABASE IF NOT EXISTS db").collect()
    # three files pack however small they are: 1.0's coordinator packs max-file-num files, 2.0's
    # packs min-file-num (it has no maximum)
    session.sql("CREATE TABLE db.o_append (id INT, s STRING) TBLPROPERTIES ('compaction.max.file-num' = '3', "
                "'compaction.min.file-num' = '3')").collect()
    for i in range(3):  # a file each
        session.sql(f"INSERT INTO db.o_append VALUES ({i}, 's{i}')").collect()
    w = dict(warehouse=java_warehouse, table="db.o_append")
    compacted, listed, read = [ok(r) for r in java.run([dict(op="compact", **w), dict(op="snapshots", **w),
                                                         dict(op="read", **w)])]
    assert (compacted, listed["kinds"]) == (4, ["APPEND"] * 3 + ["COMPACT"])
    expected = [[i, f"s{i}"] for i in range(3)]
    assert ordered(read) == ours(session, "SELECT * FROM db.o_append") == expected
    assert len(session.catalog.get_table("db.o_append").new_scan().plan_entries()) == 1
