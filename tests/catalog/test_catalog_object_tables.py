"""Object tables on every catalog: created with Paimon's columns (and refused otherwise, by the one
check every catalog runs), refreshed, read back by a new catalog instance, time-travelled, dropped."""


import pytest

from catalog.conftest import open_catalog
from paimon_sql.data.types import DataField, parse_type
from paimon_sql.exceptions import PaimonError
from paimon_sql.schema.table_schema import TableSchema
from paimon_sql.table.object_table import FIELDS, ObjectTable


def _schema(location, fields=FIELDS, **options):
    return TableSchema.create(fields, options={"type": "object-table", "object-location": str(location), **options})


def test_create_refresh_read_drop(catalog_options, tmp_path):
    location = tmp_path / "objects"
    for i in range(5):
        (location / f"d{i % 2}").mkdir(parents=True, exist_ok=True)
        (location / f"d{i % 2}" / f"f{i}").write_bytes(b"x" * i)
    store = {k: v for k, v in catalog_options.items() if k != "warehouse"}
    catalog = open_catalog(catalog_options)
    catalog.create_database("obj_db", ignore_if_exists=True)
    catalog.create_table("obj_db.o", _schema(location))
    table = open_catalog(catalog_options).get_table("obj_db.o")  # a new instance: what the catalog keeps
    assert isinstance(table, ObjectTable) and table.schema.fields == FIELDS
    assert table.refresh(store) == 5
    (location / "d0" / "f0").unlink()
    assert table.refresh(store) == 4
    rows = open_catalog(catalog_options).get_table("obj_db.o").to_arrow().sort_by("path")
    assert rows.column("name").to_pylist() == ["f2", "f4", "f1", "f3"]
    assert rows.column("length").to_pylist() == [2, 4, 1, 3]
    assert rows.column("parent_path").to_pylist()[0] == f"file:{location}/d0"
    assert table.to_arrow(snapshot_id=1).num_rows == 5
    with pytest.raises(PaimonError, match="object table obj_db.o does not support write"):
        table.write_arrow(rows)
    catalog.drop_table("obj_db.o")
    assert "o" not in open_catalog(catalog_options).list_tables("obj_db")
    assert sorted(p.name for p in location.rglob("f*")) == ["f1", "f2", "f3", "f4"]  # the index went, not the files


def test_a_location_that_is_one_file_lists_it(catalog, tmp_path):
    (tmp_path / "one.bin").write_bytes(b"abc")
    catalog.create_table("db.o", _schema(tmp_path / "one.bin"))
    table = catalog.get_table("db.o")
    assert table.refresh() == 1
    assert table.to_arrow().select(["path", "parent_path", "name", "length"]).to_pylist() == [
        {"path": f"file:{tmp_path}/one.bin", "parent_path": f"file:{tmp_path}", "name": "one.bin", "length": 3}]


@pytest.mark.parametrize("fields, options, error", [
    ([DataField(0, "a", parse_type("INT"))], {}, "its columns are Paimon's"),
    (FIELDS, {"object-location": ""}, "needs the option 'object-location'"),
    (FIELDS, {"object-location": "relative/dir"}, "must be an absolute path or a URI"),
])
def test_creation_is_refused_on_every_catalog(catalog_options, fields, options, error):
    catalog = open_catalog(catalog_options)
    catalog.create_database("obj_db", ignore_if_exists=True)
    with pytest.raises(PaimonError, match=error):
        catalog.create_table("obj_db.bad", _schema("/tmp", fields, **options))
    assert "bad" not in open_catalog(catalog_options).list_tables("obj_db")
