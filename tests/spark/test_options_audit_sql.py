"""Through SQL and the DataFrame API: an option paimon-sql refuses (option_support.tsv) fails every
statement that sets it to a value other than its default, with one line naming it; a table that
carries one (written by Java or Flink) is refused where it matters (reads or writes). The same for
the keys of Paimon's other option classes, by their scope: table options, Spark read/write options,
catalog options (``connect(catalog_options=...)``, as ``--catalog`` gives them, and DataFrame options)."""

import gzip
import json
import os

import pytest

from paimon_sql.exceptions import InvalidOptionError
from paimon_sql.options.core_options import REFUSED, catalog_registry, registry
from spark.conftest import rows

REFUSED_KEYS = [k for k, s in registry().items() if s.support.status == REFUSED]
TABLE = "CREATE TABLE db.t (id INT, v STRING) TBLPROPERTIES ('primary-key' = 'id'{})"


def other_value(spec) -> str:
    """A value of the option's type that is not its default."""
    by_type = {"Boolean": str(not spec.default).lower(), "MemorySize": "3 mb", "Duration": "7 min",
               "Map<String, String>": "0:avro", "Integer": "7", "Long": "7", "Double": "0.5", "Float": "0.5"}
    value = by_type.get(spec.java_type, "something-else")
    return "9" if spec.parse(value) == spec.default else value


def refusal(key):
    return f"^option '{key}' is not supported by paimon-sql \\(.+\\)$"


@pytest.fixture
def db(session):
    session.sql("CREATE DATABASE db")
    return session


def test_every_refused_option_is_refused_at_create_and_by_hints(db):
    db.sql(TABLE.format(""))
    db.sql("INSERT INTO db.t VALUES (1, 'a')")
    for key in REFUSED_KEYS:
        prop = f"'{key}' = '{other_value(registry()[key])}'"
        hint = [] if key == "branch" else [f"SELECT * FROM db.t /*+ OPTIONS({prop}) */"]  # a hint picks a branch
        for statement in [TABLE.replace("db.t", "db.u").format(", " + prop)] + hint:
            with pytest.raises(InvalidOptionError, match=refusal(key)):
                db.sql(statement)
    assert not db.catalog.table_exists("db.u")
    assert rows(db, "SELECT * FROM db.t") == [(1, "a")]


@pytest.mark.parametrize("statement", [
    "CREATE TABLE db.u TBLPROPERTIES ({prop}) AS SELECT * FROM db.t",
    "CREATE TABLE db.u LIKE db.t TBLPROPERTIES ({prop})",
    "ALTER TABLE db.t SET TBLPROPERTIES ({prop})",
    "SELECT * FROM db.t /*+ OPTIONS({prop}) */",
])
def test_ctas_like_alter_and_hints_refuse(db, statement):
    db.sql(TABLE.format(""))
    db.sql("INSERT INTO db.t VALUES (1, 'a')")
    with pytest.raises(InvalidOptionError, match=refusal("snapshot.clean-empty-directories")):
        db.sql(statement.format(prop="'snapshot.clean-empty-directories' = 'true'"))
    assert not db.catalog.table_exists("db.u")
    assert "snapshot.clean-empty-directories" not in db.catalog.get_table("db.t").schema.options


def _refused_as_session_option(db, key: str, value: str) -> None:
    """``SET spark.paimon.<key>`` refuses the next read of db.t in one line; unset, the read works."""
    db.spark.conf.set(f"spark.paimon.{key}", value)
    try:
        with pytest.raises(InvalidOptionError, match=refusal(key)):
            db.sql("SELECT * FROM db.t")
    finally:
        db.spark.conf.unset(f"spark.paimon.{key}")
    assert rows(db, "SELECT * FROM db.t") == [(1, "a")]


def test_session_options_are_judged_like_hints(db):
    db.sql(TABLE.format(""))
    db.sql("INSERT INTO db.t VALUES (1, 'a')")
    _refused_as_session_option(db, "scan.bucket", "0")


def test_dataframe_options_refuse(db):
    db.sql(TABLE.format(""))
    db.sql("INSERT INTO db.t VALUES (1, 'a')")
    def reader():
        return db.spark.read.format("paimon").option("warehouse", db.warehouse)
    # Spark's Python data source wraps our one line in its own error
    with pytest.raises(Exception, match="'scan.ignore-corrupt-files' is not supported by paimon-sql"):
        reader().option("scan.ignore-corrupt-files", "true").load("db.t").collect()
    df = db.spark.createDataFrame([(2, "b")], "id INT, v STRING")
    with pytest.raises(Exception, match="'commit.force-compact' is not supported by paimon-sql"):
        df.write.format("paimon").option("warehouse", db.warehouse).option("commit.force-compact", "true") \
            .mode("append").save("db.t")
    assert sorted(r.id for r in reader().load("db.t").collect()) == [1]


def test_path_and_branch_are_no_table_options(db):
    """They choose where a DataFrame reads (source options); stored in a table they would be ignored."""
    for key, value in [("path", "/elsewhere"), ("branch", "b1")]:
        with pytest.raises(InvalidOptionError, match=refusal(key)):
            db.sql(TABLE.format(f", '{key}' = '{value}'"))


def _as_java_wrote(session, **options):
    table = session.catalog.get_table("db.t")
    path = os.path.join(table.path, "schema", f"schema-{table.schema.id}")
    with open(path) as f:
        d = json.load(f)
    d["options"].update(options)
    with open(path, "w") as f:
        json.dump(d, f)


def test_a_java_table_with_a_read_scope_option_is_not_read(db):
    db.sql(TABLE.format(""))
    db.sql("INSERT INTO db.t VALUES (1, 'a')")
    _as_java_wrote(db, **{"scan.ignore-corrupt-files": "true"})
    for statement in ["SELECT * FROM db.t", "INSERT INTO db.t VALUES (2, 'b')"]:
        with pytest.raises(InvalidOptionError, match="^option 'scan.ignore-corrupt-files' is not supported by "
                                                     r"paimon-sql \(.+\): the table cannot be (read|written) here$"):
            db.sql(statement)
    db.sql("ALTER TABLE db.t UNSET TBLPROPERTIES ('scan.ignore-corrupt-files')")
    assert rows(db, "SELECT * FROM db.t") == [(1, "a")]


def test_a_java_table_with_a_write_scope_option_is_read_not_written(db):
    db.sql(TABLE.format(""))
    db.sql("INSERT INTO db.t VALUES (1, 'a')")
    _as_java_wrote(db, **{"tag.create-success-file": "true"})
    assert rows(db, "SELECT * FROM db.t") == [(1, "a")]
    with pytest.raises(InvalidOptionError, match="'tag.create-success-file' is not supported by paimon-sql.*"
                                                 "cannot be written here$"):
        db.sql("INSERT INTO db.t VALUES (2, 'b')")
    assert rows(db, "SELECT * FROM db.t") == [(1, "a")]


# -- the other option classes' keys ----------------------------------------------------------------

def test_refused_keys_of_the_other_classes_are_refused_through_sql(db):
    db.sql(TABLE.format(""))
    db.sql("INSERT INTO db.t VALUES (1, 'a')")
    for key, value in [("metadata.iceberg.hadoop-conf-dir", "/etc/hadoop"), ("orc.timestamp-ltz.legacy.type", "false"),
                       ("write.merge-schema.type-widening", "true")]:
        with pytest.raises(InvalidOptionError, match=refusal(key)):
            db.sql(f"ALTER TABLE db.t SET TBLPROPERTIES ('{key}' = '{value}')")
    with pytest.raises(InvalidOptionError, match=refusal("read.changelog")):
        db.sql("SELECT * FROM db.t /*+ OPTIONS('read.changelog' = 'true') */")
    _refused_as_session_option(db, "read.allow.fullScan", "false")
    assert not any(k.startswith(("metadata.", "orc.", "write.")) for k in db.catalog.get_table("db.t").schema.options)


def test_a_refused_catalog_option_is_refused_by_connect(spark, warehouse):
    """``paimon-sql --catalog lock.type=zookeeper`` hands its options to connect() as these."""
    import paimon_sql
    with pytest.raises(InvalidOptionError) as e:
        paimon_sql.connect(warehouse, spark=spark, catalog_options={"lock.type": "zookeeper"})
    assert str(e.value) == ("catalog option 'lock.type' is not supported by paimon-sql "
                            f"({catalog_registry()['lock.type'].support.note})")


def test_dataframe_options_of_other_classes_refuse(db):
    db.sql(TABLE.format(""))
    db.sql("INSERT INTO db.t VALUES (1, 'a')")
    def reader():
        return db.spark.read.format("paimon").option("warehouse", db.warehouse)
    # Spark lower-cases a DataFrame option's key: read.allow.fullScan is still known
    with pytest.raises(Exception, match="option 'read.allow.fullScan' is not supported by paimon-sql"):
        reader().option("read.allow.fullScan", "false").load("db.t").collect()
    with pytest.raises(Exception, match="catalog option 'case-sensitive' is not supported by paimon-sql"):
        reader().option("case-sensitive", "false").load("db.t").collect()
    df = db.spark.createDataFrame([(2, "b")], "id INT, v STRING")
    with pytest.raises(Exception, match="option 'write.merge-schema.type-widening' is not supported by paimon-sql"):
        df.write.format("paimon").option("warehouse", db.warehouse) \
            .option("write.merge-schema.type-widening", "true").mode("append").save("db.t")
    with pytest.raises(Exception, match="catalog option 'defaultDatabase' is not supported by paimon-sql"):
        df.write.format("paimon").option("warehouse", db.warehouse).option("defaultDatabase", "other") \
            .mode("append").save("db.t")
    assert sorted(r.id for r in reader().option("cache-enabled", "false").load("db.t").collect()) == [1]


def test_csv_delimiters_escape_character_and_compression_shape_the_files(db):
    db.sql("CREATE TABLE db.c (id INT, v STRING) TBLPROPERTIES ('type' = 'format-table', 'file.format' = 'csv', "
           "'csv.field-delimiter' = ';', 'csv.line-delimiter' = '#', 'csv.escape-character' = '!', "
           "'format-table.file.compression' = 'gzip')")
    db.sql("""INSERT INTO db.c VALUES (1, 'a"b'), (2, 'c')""")
    table = db.catalog.get_table("db.c")
    names = [name for name in sorted(os.listdir(table.path)) if not name.startswith((".", "_"))]
    assert names and all(name.endswith(".csv.gz") for name in names)
    text = "".join(gzip.open(os.path.join(table.path, name), "rt").read() for name in names)
    assert sorted(filter(None, text.split("#"))) == ['1;"a!"b"', "2;c"]
    assert sorted(rows(db, "SELECT * FROM db.c")) == [(1, 'a"b'), (2, "c")]
