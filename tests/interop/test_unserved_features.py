"""What Java Apache Paimon 2.0 writes that paimon-sql does not serve (VECTOR and BLOB columns, a btree global
index, a chain table): each read of it and each write of the table fails in one line naming the feature,
before anything is written, and the columns we can serve read the rows Java reads.

Java runs tests/interop/java/UnservedDriver.java (2.0 only: none of these exist in Paimon 1.0). The rules are
paimon_sql/table/unserved_features.py's.
"""

from pathlib import Path

import pytest
from java_paimon import Driver, driver_command
from spark.conftest import rows, session, spark  # noqa: F401  (fixtures: one SparkSession per run)

from paimon_sql.exceptions import InvalidOptionError, UnservedFeatureError

pytestmark = pytest.mark.interop

SOURCE = Path(__file__).resolve().parent / "java" / "UnservedDriver.java"
TRACKED = {"row-tracking.enabled": "true"}
EVOLVING = {"row-tracking.enabled": "true", "data-evolution.enabled": "true"}
# statements writing db.t, each of which must be refused before it writes
WRITES = ["INSERT INTO db.{t} (id, name) VALUES (9, 'z')", "DELETE FROM db.{t} WHERE id = 1",
          "UPDATE db.{t} SET name = 'x' WHERE id = 2", "CALL sys.compact(table => 'db.{t}')",
          "TRUNCATE TABLE db.{t}"]


@pytest.fixture(scope="module")
def java():
    with Driver(driver_command(SOURCE, version="2.0")) as driver:
        yield driver.on


def state(warehouse: str, table: str) -> tuple:
    """The table's latest snapshot id and every file under its directory: what a refused write must not change."""
    root = Path(warehouse.removeprefix("file:")) / "db.db" / table
    latest = (root / "snapshot" / "LATEST").read_text()
    return latest, sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


def refused(session, statement: str) -> str:
    """The one-line error ``statement`` fails with."""
    with pytest.raises((UnservedFeatureError, InvalidOptionError)) as failure:
        session.sql(statement).collect()
    assert "\n" not in str(failure.value)
    return str(failure.value)


def assert_writes_refused(session, table: str, message: str) -> None:
    before = state(session.warehouse, table)
    for statement in WRITES:
        assert refused(session, statement.format(t=table)) == message, statement
    assert state(session.warehouse, table) == before  # nothing written, nothing committed


def served(session, query: str, javas: list) -> None:
    """A data-evolution table's servable columns read Java's rows."""
    assert [list(r) for r in rows(session, query)] == javas


def test_vector_columns(java, session):
    java(session.warehouse, [
        {"op": "create", "table": "db.vecs",
         "columns": [["id", "INT"], ["name", "STRING"], ["embedding", "VECTOR<FLOAT, 3>"]]},
        {"op": "write", "table": "db.vecs", "rows": [[1, "a", [1, 2, 3]], [2, "b", [0.5, 0, -1]], [3, "c", None]]}])
    javas, = java(session.warehouse, [{"op": "read", "table": "db.vecs", "columns": ["id", "name"]}])
    assert [list(r) for r in rows(session, "SELECT id, name FROM db.vecs ORDER BY id")] == javas
    assert rows(session, "SELECT count(*) FROM db.vecs WHERE name <> 'b'") == [(2,)]
    # the table opens and shows the column as paimon-spark's type for it
    assert ("embedding", "array<float>") in [tuple(r[:2]) for r in rows(session, "DESCRIBE db.vecs")]
    read = "table db.vecs: column 'embedding' is VECTOR, which paimon-sql does not read"
    for query in ("SELECT * FROM db.vecs", "SELECT id FROM db.vecs WHERE size(embedding) = 3",
                  "SELECT embedding[0] FROM db.vecs"):
        assert refused(session, query) == read, query
    with pytest.raises(UnservedFeatureError, match=f"^{read}$"):  # the Python API's whole-table read
        session.catalog.get_table("db.vecs").to_arrow()
    assert_writes_refused(session, "vecs", "table db.vecs: column 'embedding' is VECTOR, which paimon-sql does "
                                           "not write: writes to the table are refused")


def test_blob_columns(java, session):
    java(session.warehouse, [
        {"op": "create", "table": "db.blobs", "columns": [["id", "INT"], ["name", "STRING"], ["picture", "BLOB"]],
         "options": EVOLVING},
        {"op": "write", "table": "db.blobs", "rows": [[1, "a", "pic-a"], [2, "b", None], [3, "c", "pic-c"]]}])
    javas, pictures = java(session.warehouse, [{"op": "read", "table": "db.blobs", "columns": ["id", "name"]},
                                               {"op": "read", "table": "db.blobs", "columns": ["picture"]}])
    assert sorted(map(str, pictures)) == ["['pic-a']", "['pic-c']", "[None]"]  # Java keeps them in a .blob file
    assert any(p.suffix == ".blob" for p in (Path(session.warehouse.removeprefix("file:")) / "db.db" / "blobs")
               .rglob("*"))
    served(session, "SELECT id, name FROM db.blobs ORDER BY id", javas)
    read = "table db.blobs: column 'picture' is BLOB, which paimon-sql does not read"
    for query in ("SELECT * FROM db.blobs", "SELECT picture FROM db.blobs", "SELECT id FROM db.blobs WHERE picture "
                                                                             "IS NULL"):
        assert refused(session, query) == read, query
    assert_writes_refused(session, "blobs", "table db.blobs: column 'picture' is BLOB, which paimon-sql does not "
                                            "write: writes to the table are refused")


@pytest.mark.parametrize("options", [TRACKED, EVOLVING], ids=["row-tracking", "data-evolution"])
def test_global_index(java, session, options):
    _, _, built, javas = java(session.warehouse, [
        {"op": "create", "table": "db.indexed", "columns": [["id", "INT"], ["name", "STRING"]], "options": options},
        {"op": "write", "table": "db.indexed", "rows": [[1, "a"], [2, "b"], [3, "c"]]},
        {"op": "index", "table": "db.indexed", "column": "name"},
        {"op": "read", "table": "db.indexed", "columns": ["id", "name"]}])
    assert built >= 1
    query = "SELECT id, name FROM db.indexed ORDER BY id"
    if options is TRACKED:  # a plain read ignores the index, as Java's does when it does not search it
        assert [list(r) for r in rows(session, query)] == javas == [[1, "a"], [2, "b"], [3, "c"]]
    else:
        served(session, query, javas)
    assert_writes_refused(session, "indexed", "table db.indexed has a global index (btree), which paimon-sql does "
                                              "not maintain: writes to the table are refused")
    assert java(session.warehouse, [{"op": "read", "table": "db.indexed", "columns": ["id", "name"]}]) == [javas]


def test_chain_table(java, session):
    java(session.warehouse, [{
        "op": "chain", "table": "db.chain", "primary_keys": ["dt", "id"], "partition_keys": ["dt"],
        "columns": [["id", "BIGINT"], ["seq", "BIGINT"], ["name", "STRING"], ["dt", "STRING"]],
        "options": {"chain-table.enabled": "true", "bucket": "1", "bucket-key": "id", "sequence.field": "seq",
                    "partition.timestamp-pattern": "$dt", "partition.timestamp-formatter": "yyyyMMdd"},
        "rows": [[1, 1, "a", "20250101"], [2, 1, "b", "20250101"]]}])
    javas, = java(session.warehouse, [{"op": "read", "table": "db.chain", "columns": ["id", "name", "dt"]}])
    assert javas == [[1, "a", "20250101"], [2, "b", "20250101"]]  # main has no snapshot: Java reads its branches
    chain = "table db.chain is a chain table ('chain-table.enabled'), which paimon-sql does not read or write"
    for statement in ("SELECT * FROM db.chain", "SELECT count(*) FROM db.chain",
                      "INSERT INTO db.chain VALUES (3, 1, 'c', '20250102')", "CALL sys.compact(table => 'db.chain')"):
        assert refused(session, statement) == chain, statement
    assert not (Path(session.warehouse.removeprefix("file:")) / "db.db" / "chain" / "snapshot").exists()
