"""Object tables on every catalog, as Paimon 2.0 defines them: created with 2.0's columns (and refused
otherwise, by the one check every catalog runs), their rows the files under the table's directory, listed at
each read by a new catalog instance; dropped with the table."""


import pytest

from catalog.conftest import open_catalog
from paimon_sql.data.types import DataField, parse_type
from paimon_sql.exceptions import PaimonError
from paimon_sql.schema.table_schema import TableSchema
from paimon_sql.table.object_table import FIELDS, ObjectTable


def _schema(fields=FIELDS, **options):
    return TableSchema.create(fields, options={"type": "object-table", **options})


def test_create_list_drop(catalog_options):
    catalog = open_catalog(catalog_options)
    catalog.create_database("obj_db", ignore_if_exists=True)
    catalog.create_table("obj_db.o", _schema())
    table = open_catalog(catalog_options).get_table("obj_db.o")  # a new instance: what the catalog keeps
    assert isinstance(table, ObjectTable) and table.schema.fields == FIELDS
    for i in range(5):
        table.io.write_bytes(f"{table.path}/d{i % 2}/f{i}", b"x" * i)
    table.io.delete(f"{table.path}/d0/f0")
    rows = open_catalog(catalog_options).get_table("obj_db.o").to_arrow().to_pylist()
    assert [(r["path"], r["name"], r["length"], r["atime"], r["owner"]) for r in rows if r["path"][0] == "d"] == [
        ("d0/f2", "f2", 2, 0, None), ("d0/f4", "f4", 4, 0, None), ("d1/f1", "f1", 1, 0, None),
        ("d1/f3", "f3", 3, 0, None)]
    assert all(r["mtime"] > 0 for r in rows)
    with pytest.raises(PaimonError, match="^object table obj_db.o does not support write"):
        table.write_arrow(table.to_arrow())
    with pytest.raises(PaimonError, match="^object table obj_db.o has no snapshots to travel to"):
        table.to_arrow(snapshot_id=1)
    catalog.drop_table("obj_db.o")
    assert "o" not in open_catalog(catalog_options).list_tables("obj_db")
    assert not table.io.exists(f"{table.path}/d1/f1")  # its files were the table's


@pytest.mark.parametrize("fields, options, error", [
    ([DataField(0, "a", parse_type("INT"))], {}, "its columns are Paimon's"),
    (FIELDS, {"object-location": "/tmp"}, "option 'object-location' is not supported by paimon-sql"),
    (FIELDS, {"primary-key": "path"}, "cannot have primary or partition keys"),
])
def test_creation_is_refused_on_every_catalog(catalog_options, fields, options, error):
    catalog = open_catalog(catalog_options)
    catalog.create_database("obj_db", ignore_if_exists=True)
    with pytest.raises(PaimonError, match=error):
        catalog.create_table("obj_db.bad", _schema(fields, **options))
    assert "bad" not in open_catalog(catalog_options).list_tables("obj_db")
