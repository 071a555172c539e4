"""The path guard: every name that becomes part of a path (database, table, tag, branch, consumer
id) is one path segment, checked where the path is built, before any file is created, read or
deleted. The core API (no Spark); the SQL entry points are in tests/spark/test_path_escape.py."""

import os
import posixpath

import pyarrow as pa
import pytest

from paimon_sql.catalog import Identifier, load_catalog
from paimon_sql.exceptions import BranchError, InvalidIdentifierError, TagError
from paimon_sql.io.path_guard import check_segment
from paimon_sql.io.paths import PathFactory

BAD = ["", ".", "..", "../x", "a/b", "a\\b", ".hidden", " x", "x ", "a\x00b", "a\nb", "x/../../y"]
GOOD = ["t", "t1", "my_table", "v1.0", "2024-01-01 10", "a-b", "Ünïcode", "a..b", "x.db"]


@pytest.mark.parametrize("name", BAD)
def test_bad_segments_are_refused_in_one_line(name):
    with pytest.raises(InvalidIdentifierError) as err:
        check_segment("tag", name)
    assert "\n" not in str(err.value) and str(err.value).startswith(f"invalid tag name {name!r}")


def test_names_longer_than_a_path_segment_takes_are_refused_in_one_line(catalog):
    """File systems take 255 bytes a segment: a longer name is ours to refuse, not an OS error."""
    assert check_segment("table", "t" * 240) == "t" * 240
    for name in ("t" * 241, "é" * 121):
        with pytest.raises(InvalidIdentifierError, match="at most 240 bytes") as err:
            check_segment("table", name)
        assert "\n" not in str(err.value) and len(str(err.value)) < 200
    with pytest.raises(InvalidIdentifierError, match="invalid table name 'xxx"):
        catalog.create_table_from_arrow("db." + "x" * 300, pa.schema([("id", pa.int64())]))


@pytest.mark.parametrize("name", GOOD)
def test_good_segments_stay_one_directory_below_their_parent(name):
    assert check_segment("table", name) == name
    assert posixpath.dirname(posixpath.normpath(f"/w/db.db/{name}")) == "/w/db.db"


@pytest.mark.parametrize("db, table", [("..", "x"), ("db", "../x"), ("db", "a/b"), ("", "t"), ("db", ""),
                                       ("db", "t$files"), ("db", "t$branch_b")])
def test_identifier_is_checked_when_built(db, table):
    """``Identifier(...)`` in Python is held to the same rules as a parsed name; '$' is refused in
    table names because it separates a table from its system table or branch (as in Paimon)."""
    with pytest.raises(InvalidIdentifierError, match="invalid (database|table) name"):
        Identifier(db, table)


def test_catalog_never_leaves_the_warehouse(catalog, outside):
    """Drop, load, create and rename with names that would leave the warehouse all fail before
    any file is touched; string and Identifier forms alike."""
    catalog.create_table_from_arrow("db.r", pa.schema([("id", pa.int64())]))
    escape = "../../other/sec.db/secret"
    attacks = [
        lambda: catalog.drop_table(Identifier("db", escape)),
        lambda: catalog.drop_table(f"db.`{escape}`", ignore_if_not_exists=True),
        lambda: catalog.get_table(Identifier("db", escape)),
        lambda: catalog.table_exists(f"db.`{escape}`"),
        lambda: catalog.create_table_from_arrow(f"db.`{escape}`", pa.schema([("id", pa.int64())])),
        lambda: catalog.rename_table("db.r", Identifier("db", "../../x")),
        lambda: catalog.rename_table(Identifier("db", escape), "db.stolen"),
        lambda: catalog.drop_database("../other/sec", cascade=True),
        lambda: catalog.list_tables("../other/sec"),
        lambda: catalog.create_database("../evil"),
    ]
    for attack in attacks:
        with pytest.raises(InvalidIdentifierError):
            attack()
    assert catalog.list_tables("db") == ["r"]
    outside.assert_untouched()


def test_tags_never_leave_the_table(catalog, outside):
    t = catalog.create_table_from_arrow("db.r", pa.schema([("id", pa.int64())]))
    t.write_arrow(pa.table({"id": [1]}))
    snap = t.snapshot_manager.latest()
    steal = outside.escape(f"{t.path}/tag/tag-", "other/sec.db/secret/tag/tag-keep")
    plant = outside.escape(f"{t.path}/tag/tag-", "planted")
    t.tag_manager.create("mine", snap)
    attacks = [
        lambda: t.tag_manager.create(plant, snap),
        lambda: t.tag_manager.exists(steal),
        lambda: t.tag_manager.get(steal),
        lambda: t.tag_manager.delete(steal),
        lambda: t.tag_manager.delete(steal, ignore_if_missing=True),
        lambda: t.tag_manager.rename(steal, "stolen"),
        lambda: t.tag_manager.rename("mine", plant),
        lambda: t.travel({"scan.tag-name": steal}),
        lambda: t.travel({"scan.version": steal}),
    ]
    for attack in attacks:
        with pytest.raises(InvalidIdentifierError, match="invalid tag name"):
            attack()
    assert t.tag_manager.names() == ["mine"]
    outside.assert_untouched()


def test_tag_names_follow_paimon():
    """Blank tag names are refused as Paimon does; a name of digits is Paimon 2.0's too."""
    from paimon_sql.snapshot.tag_manager import check_tag_name
    for bad in ["", "  "]:
        with pytest.raises(TagError):
            check_tag_name(bad)
    assert check_tag_name("12") == "12"


def test_branches_never_leave_the_table(catalog, outside):
    t = catalog.create_table_from_arrow("db.r", pa.schema([("id", pa.int64())]))
    t.write_arrow(pa.table({"id": [1]}))
    steal = outside.escape(f"{t.path}/branch/branch-", "other/sec.db/secret")
    plant = outside.escape(f"{t.path}/branch/branch-", "planted")
    attacks = [
        lambda: t.branch_manager.exists(steal),
        lambda: t.branch_manager.drop(steal),
        lambda: t.switch_to_branch(steal),
        lambda: PathFactory(t.path, [], "parquet", branch=plant),
    ]
    for attack in attacks:
        with pytest.raises(InvalidIdentifierError, match="invalid branch name"):
            attack()
    with pytest.raises((BranchError, InvalidIdentifierError)):
        t.branch_manager.create(plant, t)
    outside.assert_untouched()


@pytest.mark.parametrize("bad", ["main", "", "12", "a/b", "a$b"])
def test_branch_names_follow_paimon(catalog, bad):
    t = catalog.create_table_from_arrow("db.r", pa.schema([("id", pa.int64())]))
    with pytest.raises((BranchError, InvalidIdentifierError)):
        t.branch_manager.create(bad, t)
    assert t.branch_manager.branches() == []


def test_consumers_never_leave_the_table(catalog, outside):
    t = catalog.create_table_from_arrow("db.r", pa.schema([("id", pa.int64())]))
    steal = outside.escape(f"{t.path}/consumer/consumer-", "other/sec.db/secret/consumer/consumer-c1")
    plant = outside.escape(f"{t.path}/consumer/consumer-", "planted")
    attacks = [
        lambda: t.consumer_manager.next_snapshot(steal),
        lambda: t.consumer_manager.record(plant, 7),
        lambda: t.consumer_manager.delete(steal),
    ]
    for attack in attacks:
        with pytest.raises(InvalidIdentifierError, match="invalid consumer name"):
            attack()
    assert t.consumer_manager.consumers() == {}
    assert not os.path.exists(os.path.join(outside.base, "planted"))
    outside.assert_untouched()


def test_identifier_parse_still_takes_quoted_names(warehouse):
    cat = load_catalog(warehouse)
    assert Identifier.parse("`my db`.`t.1`") == Identifier("my db", "t.1")
    cat.create_database("my db")
    cat.create_table_from_arrow("`my db`.`t.1`", pa.schema([("id", pa.int64())]))
    assert cat.list_tables("my db") == ["t.1"]
