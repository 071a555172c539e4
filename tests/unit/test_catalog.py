import pytest
from support import SCHEMA

from paimon_sql.catalog import Identifier, load_catalog
from paimon_sql.exceptions import (
    DatabaseNotEmptyError,
    DatabaseNotFoundError,
    InvalidIdentifierError,
    InvalidOptionError,
    SchemaError,
    TableAlreadyExistsError,
    TableNotFoundError,
)


def test_databases_and_tables(catalog):
    assert catalog.list_databases() == ["db"]
    catalog.create_table_from_arrow("db.t1", SCHEMA)
    catalog.create_table_from_arrow("db.t2", SCHEMA, primary_keys=["id"], options={"bucket": "2"})
    assert catalog.list_tables("db") == ["t1", "t2"]
    catalog.rename_table("db.t1", "db.t3")
    assert catalog.list_tables("db") == ["t2", "t3"]
    catalog.drop_table("db.t2")
    assert catalog.list_tables("db") == ["t3"]
    with pytest.raises(DatabaseNotEmptyError):
        catalog.drop_database("db")
    catalog.drop_database("db", cascade=True)
    assert catalog.list_databases() == []


def test_unknown_things_are_named(catalog):
    with pytest.raises(TableNotFoundError, match="db.nope"):
        catalog.get_table("db.nope")
    with pytest.raises(DatabaseNotFoundError, match="nodb"):
        catalog.get_table("nodb.t")
    catalog.create_table_from_arrow("db.t", SCHEMA)
    with pytest.raises(TableAlreadyExistsError, match="db.t"):
        catalog.create_table_from_arrow("db.t", SCHEMA)
    assert catalog.create_table_from_arrow("db.t", SCHEMA, ignore_if_exists=True).name == "db.t"


@pytest.mark.parametrize("bad", ["../etc", "a/b", "db..t", "", "a\x00b", ".hidden", "x.y.z", "a\tb"])
def test_bad_identifiers(bad):
    with pytest.raises(InvalidIdentifierError):
        Identifier.parse(bad)


def test_path_traversal_is_refused(warehouse, tmp_path):
    cat = load_catalog(warehouse)
    with pytest.raises(InvalidIdentifierError):
        cat.create_database("..")
    with pytest.raises(InvalidIdentifierError):
        cat.create_table_from_arrow("`..`.x", SCHEMA)
    assert not (tmp_path / "x").exists()


@pytest.mark.parametrize("kwargs, match", [
    ({"primary_keys": ["nope"]}, "nope"),
    ({"partition_keys": ["dt"], "primary_keys": ["dt"]}, "primary key"),
    ({"options": {"bucket": "x"}}, "bucket"),
    ({"options": {"bucket": "4"}}, "bucket-key"),
    ({"options": {"bucket": "0"}}, "bucket"),
    ({"options": {"file.format": "csv"}}, "file.format"),
])
def test_bad_table_definitions_create_nothing(catalog, kwargs, match):
    with pytest.raises((SchemaError, InvalidOptionError), match=match):
        catalog.create_table_from_arrow("db.bad", SCHEMA, **kwargs)
    assert not catalog.table_exists("db.bad")


def test_a_metastore_we_cannot_serve_is_refused(tmp_path):
    from paimon_sql.catalog import load_catalog
    from paimon_sql.exceptions import InvalidOptionError
    with pytest.raises(InvalidOptionError, match="'metastore' = 'glue' is not supported"):
        load_catalog(str(tmp_path), {"metastore": "glue"})
    assert load_catalog(str(tmp_path), {"metastore": "filesystem"}).list_databases() == []
