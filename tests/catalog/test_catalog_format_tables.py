"""Format tables on every catalog: CREATE, INSERT, SELECT, SHOW TABLES, DROP, and the catalog option
``format-table.enabled`` (Paimon's CatalogOptions, default true)."""

import pytest

from paimon_sql.exceptions import PaimonError
from paimon_sql.table.format_table import FormatTable

from catalog.conftest import open_catalog


def _rows(session, text):
    return sorted(tuple(r) for r in session.sql(text).collect())


def _local(options) -> bool:
    return not options["warehouse"].startswith("s3://")  # Spark here has no s3a filesystem (hadoop-aws)


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_create_insert_select_drop(catalog_session, catalog_options, fmt):
    s = catalog_session
    s.sql("CREATE DATABASE fmt_db")
    s.sql(f"CREATE TABLE fmt_db.t (id INT, name STRING, dt STRING) PARTITIONED BY (dt) "
          f"TBLPROPERTIES ('type' = 'format-table', 'file.format' = '{fmt}')")
    catalog = open_catalog(catalog_options)  # a new instance: what the catalog keeps
    assert "t" in catalog.list_tables("fmt_db")
    table = catalog.get_table("fmt_db.t")
    assert isinstance(table, FormatTable) and table.format == fmt and table.schema.partition_keys == ["dt"]
    if not _local(catalog_options):
        with pytest.raises(PaimonError, match="no Hadoop filesystem for 's3a://'"):
            s.sql("INSERT INTO fmt_db.t VALUES (1, 'a', 'd1')")
    else:
        s.sql("INSERT INTO fmt_db.t VALUES (1, 'a', 'd1'), (2, 'b', 'd2')")
        s.sql("INSERT OVERWRITE fmt_db.t PARTITION (dt = 'd1') VALUES (3, 'c')")
        assert _rows(s, "SELECT * FROM fmt_db.t") == [(2, "b", "d2"), (3, "c", "d1")]
        assert _rows(s, "SELECT id FROM fmt_db.t WHERE dt = 'd2'") == [(2,)]
    s.sql("DROP TABLE fmt_db.t")
    assert "t" not in open_catalog(catalog_options).list_tables("fmt_db")
    assert not table.io.exists(table.path)


def test_primary_key_and_data_options_refused(catalog_session):
    s = catalog_session
    with pytest.raises(PaimonError, match="Cannot define primary-key for format table"):
        s.sql("CREATE TABLE pk (a INT, b INT, PRIMARY KEY (a) NOT ENFORCED) TBLPROPERTIES ('type' = 'format-table')")
    with pytest.raises(PaimonError, match="option 'bucket' is not supported by a parquet format table"):
        s.sql("CREATE TABLE b (a INT) TBLPROPERTIES ('type' = 'format-table', 'bucket' = '2')")
    assert s.catalog.list_tables("default") == []


def test_format_tables_disabled(catalog_options, catalog_session):
    catalog_session.sql("CREATE TABLE f (a INT) TBLPROPERTIES ('type' = 'format-table', 'file.format' = 'orc')")
    catalog_session.sql("CREATE TABLE d (a INT)")
    off = open_catalog({**catalog_options, "format-table.enabled": "false"})
    assert off.list_tables("default") == ["d"]
    with pytest.raises(PaimonError, match="does not exist"):
        off.get_table("default.f")
    with pytest.raises(PaimonError, match="format-table.enabled' = 'false'"):
        off.create_table_from_arrow("default.g", __import__("pyarrow").schema([("a", "int32")]),
                                    options={"type": "format-table"})
    assert sorted(open_catalog(catalog_options).list_tables("default")) == ["d", "f"]


def test_rename_and_alter(catalog_session, catalog_options):
    s = catalog_session
    s.sql("CREATE TABLE a (id INT) TBLPROPERTIES ('type' = 'format-table', 'file.format' = 'json')")
    s.sql("ALTER TABLE a RENAME TO b")
    catalog = open_catalog(catalog_options)
    assert "b" in catalog.list_tables("default") and "a" not in catalog.list_tables("default")
    assert catalog.get_table("default.b").format == "json"
    if catalog_options.get("metastore") == "hive":  # the metastore keeps the schema
        with pytest.raises(PaimonError, match="format table default.b: its schema is the metastore's") as e:
            s.sql("ALTER TABLE b SET TBLPROPERTIES ('json.ignore-parse-errors' = 'true')")
        assert "\n" not in str(e.value)
    else:
        s.sql("ALTER TABLE b SET TBLPROPERTIES ('json.ignore-parse-errors' = 'true')")
        assert open_catalog(catalog_options).get_table("default.b").spark_options()["mode"] == "DROPMALFORMED"
