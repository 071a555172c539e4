"""The ``metadata.iceberg.*`` options and the Iceberg codecs (paimon_sql/iceberg/): each honoured option's
effect on the metadata written, Iceberg's binary single values against pyiceberg's, and the refusals."""

import datetime as dt
import glob
import json
import os
from decimal import Decimal

import fastavro
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyiceberg import conversions
from pyiceberg import types as it
from pyiceberg.table import StaticTable

from paimon_sql.data import predicate as P
from paimon_sql.data.types import DataField, RowType, parse_type
from paimon_sql.exceptions import InvalidOptionError, SchemaError, UnservedFeatureError
from paimon_sql.iceberg import publisher
from paimon_sql.iceberg.alter import commit_changes
from paimon_sql.maintenance.rollback import rollback_to_snapshot
from paimon_sql.schema.schema_change import DropColumn, SetOption
from paimon_sql.iceberg.conversions import iceberg_field, to_bytes
from paimon_sql.options.iceberg_options import hive_options, iceberg_options

SCHEMA = pa.schema([("id", pa.int64()), ("name", pa.string()), ("dt", pa.string())])
ON = {"metadata.iceberg.storage": "table-location"}


def _rows(ids, dt_="x"):
    return pa.table({"id": ids, "name": [f"n{i}" for i in ids], "dt": [dt_] * len(ids)}, schema=SCHEMA)


def _hint(directory: str) -> str:
    return f"{directory}/v{open(f'{directory}/version-hint.text').read()}.metadata.json"


def _current_list(directory: str) -> list:
    meta = json.load(open(_hint(directory)))
    current = next(s for s in meta["snapshots"] if s["snapshot-id"] == meta["current-snapshot-id"])
    return list(fastavro.reader(open(f"{directory}/{os.path.basename(current['manifest-list'])}", "rb")))


def _read(directory: str) -> list:
    return sorted(tuple(r.values()) for r in StaticTable.from_metadata(_hint(directory)).scan().to_arrow().to_pylist())


@pytest.mark.parametrize("sql_type, value, iceberg_type", [
    ("BOOLEAN", True, it.BooleanType()), ("INT", -7, it.IntegerType()), ("SMALLINT", 300, it.IntegerType()),
    ("BIGINT", 2 ** 40, it.LongType()), ("FLOAT", 1.5, it.FloatType()), ("DOUBLE", -2.25, it.DoubleType()),
    ("STRING", "héllo", it.StringType()), ("BYTES", b"\x00\x01", it.BinaryType()),
    ("DATE", dt.date(2024, 2, 29), it.DateType()),
    ("DECIMAL(10, 2)", Decimal("-123.45"), it.DecimalType(10, 2)),
    ("DECIMAL(20, 3)", Decimal("98765432109876.543"), it.DecimalType(20, 3)),
    ("TIMESTAMP(6)", dt.datetime(2024, 1, 2, 3, 4, 5, 678901), it.TimestampType()),
])
def test_single_values_are_pyicebergs(sql_type, value, iceberg_type):
    assert to_bytes(parse_type(sql_type), value) == conversions.to_bytes(iceberg_type, value)


def test_types_iceberg_cannot_take_in_version_2_are_refused():
    assert iceberg_field(DataField(3, "c", parse_type("DECIMAL(5, 1) NOT NULL"))) == \
        {"id": 3, "name": "c", "required": True, "type": "decimal(5, 1)"}
    for t in ("TIMESTAMP(9)", "TIMESTAMP(0)", "TIME(6)"):
        with pytest.raises(SchemaError, match="^column 'c' is "):
            iceberg_field(DataField(3, "c", parse_type(t)))


# SpecialFields: Integer.MAX_VALUE / 4, plus or minus the column id times 1024 and the depth
_BASE = 2 ** 31 // 4 - 1


def test_nested_types_are_javas_list_map_and_struct_objects():
    f = DataField(2, "m", parse_type("MAP<STRING, ARRAY<BIGINT NOT NULL>> NOT NULL"))
    assert iceberg_field(f) == {"id": 2, "name": "m", "required": True, "type": {
        "type": "map", "key-id": _BASE - 2 * 1024 - 1, "key": "string", "value-id": _BASE + 2 * 1024 + 1,
        "value-required": False, "value": {"type": "list", "element-id": _BASE + 2 * 1024 + 2,
                                           "element-required": True, "element": "long"}}}
    assert iceberg_field(DataField(5, "bag", parse_type("MULTISET<INT>")))["type"] == {
        "type": "map", "key-id": _BASE - 5 * 1024 - 1, "key": "int", "value-id": _BASE + 5 * 1024 + 1,
        "value-required": True, "value": "int"}
    row = RowType(fields=(DataField(7, "a", parse_type("INT"), "doc a"),
                          DataField(8, "b", parse_type("ARRAY<STRING>"))))
    assert iceberg_field(DataField(6, "r", row))["type"] == {"type": "struct", "fields": [
        {"id": 7, "name": "a", "required": False, "type": "int", "doc": "doc a"},
        {"id": 8, "name": "b", "required": False, "type": {  # ids from the ROW field's own id
            "type": "list", "element-id": _BASE + 8 * 1024 + 1, "element-required": False, "element": "string"}}]}


def test_variant_is_refused_naming_where_it_sits():
    with pytest.raises(SchemaError, match="^column 'v' is VARIANT, which .* does not publish"):
        iceberg_field(DataField(1, "v", parse_type("VARIANT")))
    with pytest.raises(SchemaError, match="^column 'c.value.element' is VARIANT"):
        iceberg_field(DataField(1, "c", parse_type("MAP<INT, ARRAY<VARIANT>>")))


def test_nested_parquet_field_ids_are_javas(catalog):
    t = catalog.create_table_from_arrow("db.n", pa.schema([
        ("id", pa.int64()), ("a", pa.list_(pa.int32())), ("m", pa.map_(pa.string(), pa.list_(pa.int64()))),
        ("r", pa.struct([("x", pa.int32())]))]))
    t.write_arrow(pa.table({"id": [1], "a": [[1]], "m": [[("k", [2])]], "r": [{"x": 3}]},
                           schema=t.schema.arrow_schema()))
    (e,) = t.new_scan().plan_entries()
    schema = pq.read_schema(t.paths.data_file_path([], e.bucket, e.file.file_name))
    ids = lambda f: int(f.metadata[b"PARQUET:field_id"])  # noqa: E731
    m, r = schema.field("m").type, schema.field("r").type
    assert [ids(schema.field(c)) for c in ("id", "a", "m", "r")] == [0, 1, 2, 3]
    assert ids(schema.field("a").type.value_field) == _BASE + 1024 + 1
    assert (ids(m.key_field), ids(m.item_field), ids(m.item_field.type.value_field)) == \
        (_BASE - 2 * 1024 - 1, _BASE + 2 * 1024 + 1, _BASE + 2 * 1024 + 2)
    assert ids(r.field("x")) == t.schema.field("r").type.fields[0].id == 4


def test_turning_on_is_refused_for_a_file_without_nested_field_ids(catalog):
    t = catalog.create_table_from_arrow("db.n", pa.schema([("id", pa.int64()), ("a", pa.list_(pa.int32()))]))
    t.write_arrow(pa.table({"id": [1], "a": [[1]]}, schema=t.schema.arrow_schema()))
    (e,) = t.new_scan().plan_entries()
    path = t.paths.data_file_path([], e.bucket, e.file.file_name)
    data = pq.read_table(path)  # top-level ids only, as paimon-sql wrote them before nested ids
    pq.write_table(data.cast(pa.schema([f.with_type(pa.list_(pa.int32())) if f.name == "a" else f
                                        for f in data.schema])), path)
    a = pq.read_schema(path).field("a")
    assert b"PARQUET:field_id" in a.metadata and not a.type.value_field.metadata
    with pytest.raises(UnservedFeatureError, match=r"data file .* has no Parquet field ids"):
        commit_changes(t, [SetOption("metadata.iceberg.storage", "table-location")])
    assert "metadata.iceberg.storage" not in catalog.get_table("db.n").schema.options


def test_options_parse_with_paimons_defaults():
    assert iceberg_options({}) is None
    o = iceberg_options({"metadata.iceberg.storage": "hadoop-catalog"})
    assert (o.location, o.format_version, o.codec, o.delete_after_commit, o.previous_versions_max,
            o.compaction_min_files, o.compaction_max_files, o.legacy_manifest) == \
        ("catalog-location", 2, "snappy", True, 0, 10, 50, False)
    assert iceberg_options({**ON, "metadata.iceberg.format-version": "2"}).format_version == 2
    assert iceberg_options({**ON, "metadata.iceberg.format-version": "3"}).format_version == 3
    with pytest.raises(InvalidOptionError, match="^option 'metadata.iceberg.format-version' expects 2 or 3"):
        iceberg_options({**ON, "metadata.iceberg.format-version": "4"})
    with pytest.raises(InvalidOptionError, match="^option 'metadata.iceberg.manifest-compression' expects one of"):
        iceberg_options({**ON, "metadata.iceberg.manifest-compression": "lz9"})
    for key, value in (("metadata.iceberg.hadoop-conf-dir", "/etc/hadoop"),
                       ("metadata.iceberg.hive-client-class", "com.amazonaws.glue.catalog.metastore."
                                                              "AWSCatalogMetastoreClient")):
        with pytest.raises(InvalidOptionError, match=f"^option '{key}' is not supported by paimon-sql"):
            iceberg_options({**ON, key: value})
    bad = {"metadata.iceberg.uri": ("http://h:9083", "expects thrift://host:port"),
           "metadata.iceberg.database": ("a;;b", "expects database names separated by ';'"),
           "metadata.iceberg.glue.skip-archive": ("yes", "expects a Boolean"),
           "metadata.iceberg.hive-skip-update-stats": ("1", "expects a Boolean")}
    for key, (value, why) in bad.items():
        with pytest.raises(InvalidOptionError, match=f"^option '{key}' {why}"):
            iceberg_options({**ON, key: value})
    hive = hive_options({"metadata.iceberg.uri": "thrift://h:9083", "metadata.iceberg.database": "a; b",
                         "metadata.iceberg.hive-client-class": "org.apache.hadoop.hive.metastore.HiveMetaStoreClient"})
    assert (hive.uri, hive.databases, hive.table, hive.glue_skip_archive, hive.skip_update_stats) == \
        ("thrift://h:9083", ("a", "b"), None, False, False)


def test_storage_location_overrides_the_storage_types_default(catalog, warehouse):
    t = catalog.create_table_from_arrow("db.a", SCHEMA, options={
        "metadata.iceberg.storage": "hadoop-catalog", "metadata.iceberg.storage-location": "table-location"})
    t.write_arrow(_rows([1]))
    assert _read(f"{t.path}/metadata") == [(1, "n1", "x")]
    t = catalog.create_table_from_arrow("db.b", SCHEMA, options={
        **ON, "metadata.iceberg.storage-location": "catalog-location"})
    t.write_arrow(_rows([2]))
    assert _read(f"{warehouse}/iceberg/db/b/metadata") == [(2, "n2", "x")]
    assert not os.path.exists(f"{t.path}/metadata")


def test_manifests_merge_per_the_compaction_options(catalog):
    t = catalog.create_table_from_arrow("db.t", SCHEMA, options={
        **ON, "metadata.iceberg.compaction.min.file-num": "3", "metadata.iceberg.compaction.max.file-num": "3"})
    directory = f"{t.path}/metadata"
    t.write_arrow(_rows([1]))
    t.write_arrow(_rows([2]))
    assert len(_current_list(directory)) == 2
    t.write_arrow(_rows([3]))  # three small manifests: merged into one, older entries EXISTING
    (merged,) = _current_list(directory)
    assert (merged["added_files_count"], merged["existing_files_count"]) == (1, 2)
    assert _read(directory) == [(1, "n1", "x"), (2, "n2", "x"), (3, "n3", "x")]
    t = catalog.create_table_from_arrow("db.u", SCHEMA, options={
        **ON, "metadata.iceberg.compaction.min.file-num": "3", "metadata.iceberg.compaction.max.file-num": "50"})
    for i in range(3):
        t.write_arrow(_rows([i]))
    assert len(_current_list(f"{t.path}/metadata")) == 3  # under the target size and the max count: kept


@pytest.mark.parametrize("options, kept", [
    ({}, [3]),
    ({"metadata.iceberg.previous-versions-max": "1"}, [2, 3]),
    ({"metadata.iceberg.delete-after-commit.enabled": "false"}, [1, 2, 3]),
])
def test_old_metadata_files_are_deleted_after_a_commit(catalog, options, kept):
    t = catalog.create_table_from_arrow("db.t", SCHEMA, options={**ON, **options})
    for i in range(3):
        t.write_arrow(_rows([i]))
    names = sorted(os.path.basename(p) for p in glob.glob(f"{t.path}/metadata/v*.metadata.json"))
    assert names == [f"v{v}.metadata.json" for v in kept]


def test_manifest_compression_and_legacy_version(catalog):
    t = catalog.create_table_from_arrow("db.t", SCHEMA, options={
        **ON, "metadata.iceberg.manifest-compression": "zstd", "metadata.iceberg.manifest-legacy-version": "true"})
    t.write_arrow(_rows([1, 2]))
    directory = f"{t.path}/metadata"
    files = glob.glob(f"{directory}/*.avro")
    assert files and all(fastavro.reader(open(p, "rb")).metadata["avro.codec"] == "zstandard" for p in files)
    (record,) = _current_list(directory)
    assert record["added_data_files_count"] == 1 and "added_files_count" not in record  # Iceberg 1.4's names
    assert _read(directory) == [(1, "n1", "x"), (2, "n2", "x")]
    t = catalog.create_table_from_arrow("db.s", SCHEMA, options=ON)
    t.write_arrow(_rows([1]))
    assert {fastavro.reader(open(p, "rb")).metadata["avro.codec"]
            for p in glob.glob(f"{t.path}/metadata/*.avro")} == {"snappy"}  # Paimon's default


def test_data_files_carry_paimons_field_ids(catalog):
    t = catalog.create_table_from_arrow("db.k", SCHEMA, primary_keys=["id"], options={"bucket": "1"})
    t.write_arrow(_rows([1]))
    (e,) = t.new_scan().plan_entries()
    path = t.paths.data_file_path([], e.bucket, e.file.file_name)
    ids = {f.name: int(f.metadata[b"PARQUET:field_id"]) for f in pq.read_schema(path)}
    assert ids == {"_KEY_id": 1073741823, "_SEQUENCE_NUMBER": 2147483646, "_VALUE_KIND": 2147483645,
                   "id": 0, "name": 1, "dt": 2}


def test_a_rollback_is_followed(catalog):
    t = catalog.create_table_from_arrow("db.t", SCHEMA, options={**ON, "metadata.iceberg.previous-versions-max": "9"})
    for i in range(3):
        t.write_arrow(_rows([i]))
    rollback_to_snapshot(t, 1)
    t = catalog.get_table("db.t")
    t.write_arrow(_rows([7]))  # snapshot 2 again: its old metadata (and v3's) are not this table's history
    assert _read(f"{t.path}/metadata") == [(0, "n0", "x"), (7, "n7", "x")]
    assert not os.path.exists(f"{t.path}/metadata/v3.metadata.json")


def test_format_version_3_is_written_afresh_and_never_lowered(catalog, caplog):
    t = catalog.create_table_from_arrow("db.t", SCHEMA, options=ON)
    t.write_arrow(_rows([1]))
    t.write_arrow(_rows([2]))
    directory = f"{t.path}/metadata"
    assert json.load(open(_hint(directory)))["format-version"] == 2
    t.schema_manager.commit_changes([SetOption("metadata.iceberg.format-version", "3")])
    t = catalog.get_table("db.t")
    t.write_arrow(_rows([3]))  # as Java: a version raised writes the metadata afresh, in the new version
    meta = json.load(open(_hint(directory)))
    assert (meta["format-version"], [s["snapshot-id"] for s in meta["snapshots"]]) == (3, [3])
    assert (meta["next-row-id"], meta["snapshots"][0]["first-row-id"], meta["snapshots"][0]["added-rows"]) == (3, 0, 3)
    assert _read(directory) == [(1, "n1", "x"), (2, "n2", "x"), (3, "n3", "x")]
    t.schema_manager.commit_changes([SetOption("metadata.iceberg.format-version", "2")])
    t = catalog.get_table("db.t")
    t.write_arrow(_rows([4]))  # the commit stands; its metadata is not written, the failure logged
    assert "above 'metadata.iceberg.format-version' = 2: a version is never lowered" in caplog.text
    assert json.load(open(_hint(directory)))["current-snapshot-id"] == 3


# -- format version 3 row lineage ------------------------------------------------------------------

V3 = {**ON, "metadata.iceberg.format-version": "3"}


def _row_ids(directory: str) -> dict:
    """The first row id of each live data file of the current snapshot, as an Iceberg reader
    assigns it: the file's own, else inherited from its manifest's range in manifest order."""
    out = {}
    for m in _current_list(directory):
        if m["content"] != 0:
            assert m["first_row_id"] is None  # delete manifests take no range
            continue
        next_id = m["first_row_id"]
        for e in fastavro.reader(open(f"{directory}/{os.path.basename(m['manifest_path'])}", "rb")):
            d = e["data_file"]
            if e["status"] == 2:
                continue
            if d["first_row_id"] is None:
                d["first_row_id"], next_id = next_id, next_id + d["record_count"]
            out[d["file_path"]] = (d["first_row_id"], d["record_count"])
    return out


def _check_lineage(directory: str, before: dict, floor: int) -> dict:
    """The spec's invariants: the new snapshot's range starts at ``floor`` (the previous
    next-row-id) and ends at next-row-id; no id is given twice; a file kept keeps its ids."""
    meta = json.load(open(_hint(directory)))
    current = next(s for s in meta["snapshots"] if s["snapshot-id"] == meta["current-snapshot-id"])
    assert current["first-row-id"] == floor
    assert meta["next-row-id"] == current["first-row-id"] + current["added-rows"]
    ids = _row_ids(directory)
    taken = [i for first, n in ids.values() for i in range(first, first + n)]
    assert len(set(taken)) == len(taken) and max(taken) < meta["next-row-id"]
    assert {p: ids[p] for p in before if p in ids} == {p: v for p, v in before.items() if p in ids}
    return ids


def test_format_version_2_carries_no_row_lineage(catalog):
    t = catalog.create_table_from_arrow("db.t", SCHEMA, options=ON)
    t.write_arrow(_rows([1]))
    directory = f"{t.path}/metadata"
    meta = json.load(open(_hint(directory)))
    assert "next-row-id" not in meta and "first-row-id" not in meta["snapshots"][0]
    [m] = _current_list(directory)
    [e] = fastavro.reader(open(f"{directory}/{os.path.basename(m['manifest_path'])}", "rb"))
    assert "first_row_id" not in m and "first_row_id" not in e["data_file"]


def test_format_version_3_row_ids_follow_the_rows(catalog):
    """Appends, copy-on-write deletes (a manifest rewritten: its EXISTING entries keep their ids)
    and merged manifests (``compaction.min.file-num`` 2, ``max`` 3): each snapshot's ids follow the last."""
    t = catalog.create_table_from_arrow("db.t", SCHEMA, partition_keys=["dt"],
                                        options={**V3, "metadata.iceberg.compaction.min.file-num": "2",
                                                 "metadata.iceberg.compaction.max.file-num": "3"})
    directory = f"{t.path}/metadata"
    t.write_arrow(pa.concat_tables([_rows([1, 2, 3]), _rows([4, 5], "y")]))
    ids = _check_lineage(directory, {}, 0)
    assert sorted(ids.values()) == [(0, 3), (3, 2)]
    floor = 5
    steps = [lambda: t.write_arrow(_rows([6], "z")), lambda: t.delete_where(P.equal("id", 2)),
             lambda: t.write_arrow(_rows([7], "y")), lambda: t.delete_where(P.equal("id", 6))]
    statuses, counts = set(), []
    for step in steps:
        step()
        ids = _check_lineage(directory, ids, floor)
        floor = json.load(open(_hint(directory)))["next-row-id"]
        manifests = _current_list(directory)
        counts.append(len(manifests))
        statuses |= {e["status"] for m in manifests
                     for e in fastavro.reader(open(f"{directory}/{os.path.basename(m['manifest_path'])}", "rb"))}
    assert statuses == {0, 1, 2} and counts == [2, 1, 2, 2]  # rewritten (EXISTING, DELETED) and merged
    assert _read(directory) == [(1, "n1", "x"), (3, "n3", "x"), (4, "n4", "y"), (5, "n5", "y"), (7, "n7", "y")]


def test_format_version_3_without_row_lineage_is_written_again(catalog):
    """Metadata as Java Paimon 2.0 writes it (no next-row-id, no manifest ranges, its snapshot
    without one): the next commit writes it afresh under the same table uuid, past every id handed out."""
    t = catalog.create_table_from_arrow("db.t", SCHEMA, options=V3)
    t.write_arrow(_rows([1, 2]))
    t.write_arrow(_rows([3]))
    directory = f"{t.path}/metadata"
    path = _hint(directory)
    meta = json.load(open(path))
    del meta["next-row-id"], meta["snapshots"][-1]["first-row-id"], meta["snapshots"][-1]["added-rows"]
    json.dump(meta, open(path, "w"))
    t.write_arrow(_rows([4]))
    healed = json.load(open(_hint(directory)))
    assert healed["table-uuid"] == meta["table-uuid"] and [s["snapshot-id"] for s in healed["snapshots"]] == [3]
    _check_lineage(directory, {}, 2)  # snapshot 1's range (0, 2) is the highest the metadata still names
    assert healed["next-row-id"] == 2 + 4
    assert _read(directory) == [(1, "n1", "x"), (2, "n2", "x"), (3, "n3", "x"), (4, "n4", "x")]


def test_format_version_3_ids_of_a_rolled_back_snapshot_are_not_given_again(catalog):
    t = catalog.create_table_from_arrow("db.t", SCHEMA, options={**V3, "metadata.iceberg.previous-versions-max": "9"})
    for i in range(3):
        t.write_arrow(_rows([i, i + 10]))
    rollback_to_snapshot(t, 1)
    t = catalog.get_table("db.t")
    t.write_arrow(_rows([7]))  # snapshot 2 again, extending v1; the ids up to 6 were out with readers
    meta = json.load(open(_hint(f"{t.path}/metadata")))
    assert [(s["snapshot-id"], s["first-row-id"], s["added-rows"]) for s in meta["snapshots"]] == [(1, 0, 2),
                                                                                                   (2, 6, 1)]
    assert meta["next-row-id"] == 7


def test_format_version_3_written_afresh_without_its_base_starts_past_older_metadata(catalog, monkeypatch):
    """A gap too long to catch up (``CATCH_UP`` snapshots, 1 here) writes the latest snapshot's
    metadata afresh: its ids start past the newest metadata left (v1: 2 ids), not at 0."""
    t = catalog.create_table_from_arrow("db.t", SCHEMA, options={**V3, "metadata.iceberg.previous-versions-max": "9"})
    for i in range(3):
        t.write_arrow(_rows([i, i + 10]))
    directory = f"{t.path}/metadata"
    for v in (2, 3):
        os.remove(f"{directory}/v{v}.metadata.json")
    monkeypatch.setattr(publisher, "CATCH_UP", 1)
    t.write_arrow(_rows([7]))
    meta = json.load(open(_hint(directory)))
    assert [(s["snapshot-id"], s["first-row-id"], s["added-rows"]) for s in meta["snapshots"]] == [(4, 2, 7)]


# -- after a rollback, as Paimon's master after 2.0 (#9036) --------------------------------------

def test_metadata_of_a_rolled_back_snapshot_is_known_by_its_commit_not_its_clock(catalog):
    """Metadata names the Paimon commit it was built from (``paimon-commit-identity``): written
    by a writer whose clock ran ahead, the abandoned v2 is still replaced by the new snapshot 2's."""
    t = catalog.create_table_from_arrow("db.t", SCHEMA, options={**ON, "metadata.iceberg.previous-versions-max": "9"})
    t.write_arrow(_rows([0]))
    t.write_arrow(_rows([1]))
    directory = f"{t.path}/metadata"
    meta = json.load(open(f"{directory}/v2.metadata.json"))
    assert meta["snapshots"][-1]["summary"]["paimon-commit-identity"] == t.snapshot_manager.snapshot(2).uuid
    meta["snapshots"][-1]["timestamp-ms"] += 10 ** 9  # a clock 11 days ahead
    open(f"{directory}/v2.metadata.json", "w").write(json.dumps(meta))
    rollback_to_snapshot(t, 1)
    t = catalog.get_table("db.t")
    t.write_arrow(_rows([7]))
    assert _read(directory) == [(0, "n0", "x"), (7, "n7", "x")]


def test_a_base_left_by_a_rollback_is_not_extended(catalog):
    """Snapshot 2 made again by a writer that publishes nothing leaves the abandoned v2 behind;
    the next snapshot's metadata is written afresh under the same table uuid, not on top of it."""
    t = catalog.create_table_from_arrow("db.t", SCHEMA, options={**ON, "metadata.iceberg.previous-versions-max": "9"})
    for i in range(3):
        t.write_arrow(_rows([i]))
    directory = f"{t.path}/metadata"
    table_uuid = json.load(open(_hint(directory)))["table-uuid"]
    rollback_to_snapshot(t, 1)
    catalog.get_table("db.t").copy({"metadata.iceberg.storage": "disabled"}).write_arrow(_rows([7]))
    t = catalog.get_table("db.t")
    t.write_arrow(_rows([8]))
    assert _read(directory) == [(0, "n0", "x"), (7, "n7", "x"), (8, "n8", "x")]
    assert json.load(open(_hint(directory)))["table-uuid"] == table_uuid


def test_metadata_written_afresh_after_a_rollback_keeps_the_table_uuid(catalog):
    """Old versions deleted (the default), a rollback leaves no base: the metadata written afresh
    keeps the uuid readers and catalogs know the table by."""
    t = catalog.create_table_from_arrow("db.t", SCHEMA, options=ON)
    for i in range(3):
        t.write_arrow(_rows([i]))
    directory = f"{t.path}/metadata"
    table_uuid = json.load(open(_hint(directory)))["table-uuid"]
    rollback_to_snapshot(t, 1)
    t = catalog.get_table("db.t")
    t.write_arrow(_rows([7]))
    assert _read(directory) == [(0, "n0", "x"), (7, "n7", "x")]
    assert json.load(open(_hint(directory)))["table-uuid"] == table_uuid


def test_last_column_id_never_goes_down(catalog):
    """Iceberg's last-column-id is the highest id ever assigned: a dropped column's id is not
    given again, so it stays after the drop, and in metadata written afresh (every schema held)."""
    t = catalog.create_table_from_arrow("db.t", SCHEMA, options={**ON, "metadata.iceberg.previous-versions-max": "9"})
    t.write_arrow(_rows([1]))
    t.schema_manager.commit_changes([DropColumn("dt")])
    t = catalog.get_table("db.t")
    t.write_arrow(pa.table({"id": [2], "name": ["n2"]}))
    directory = f"{t.path}/metadata"
    assert json.load(open(_hint(directory)))["last-column-id"] == 2  # id, name, dt: ids 0, 1, 2
    for v in (1, 2):
        os.remove(f"{directory}/v{v}.metadata.json")
    t.write_arrow(pa.table({"id": [3], "name": ["n3"]}))  # no base: written afresh
    meta = json.load(open(_hint(directory)))
    assert [s["snapshot-id"] for s in meta["snapshots"]] == [3] and meta["last-column-id"] == 2


# -- manifest partition summaries, as Paimon's master after 2.0 (#9152, #9188) ------------------

def _summaries(directory: str) -> list:
    """(contains_null, contains_nan, lower, upper) of each data manifest's one partition field."""
    out = []
    for m in _current_list(directory):
        p = m["partitions"][0]
        out.append((p["contains_null"], p["contains_nan"], p["lower_bound"], p["upper_bound"]))
    return out


def test_nan_is_no_partition_bound(catalog):
    """NaN partition values set contains_nan and are left out of the bounds (Iceberg's spec: bounds
    exclude NaN); a manifest of NaN alone has no bounds. Java 2.0 took NaN for a bound."""
    schema = pa.schema([("pt", pa.float64()), ("v", pa.int64())])
    t = catalog.create_table_from_arrow("db.t", schema, partition_keys=["pt"], options=ON)
    t.write_arrow(pa.table({"pt": [1.0, 2.0, float("nan")], "v": [1, 2, 3]}, schema=schema))
    directory = f"{t.path}/metadata"
    assert _summaries(directory) == [(False, True, to_bytes(parse_type("DOUBLE"), 1.0),
                                      to_bytes(parse_type("DOUBLE"), 2.0))]
    t.write_arrow(pa.table({"pt": [float("nan")], "v": [4]}, schema=schema))
    assert (False, True, None, None) in _summaries(directory)
    scan = StaticTable.from_metadata(_hint(directory)).scan(row_filter="pt > 1.5")
    assert sorted(scan.to_arrow()["v"].to_pylist()) == [2]  # pyiceberg prunes by the summaries


def test_a_partition_of_nulls_alone_has_no_bounds(catalog):
    """A manifest whose partition values are all null: contains_null, both bounds omitted
    (unknown, not a value); pyiceberg prunes and reads by them."""
    t = catalog.create_table_from_arrow("db.t", SCHEMA, partition_keys=["dt"], options=ON)
    t.write_arrow(_rows([1], "a"))
    t.write_arrow(pa.table({"id": [2], "name": ["n2"], "dt": [None]}, schema=SCHEMA))
    directory = f"{t.path}/metadata"
    assert sorted(_summaries(directory), key=repr) == sorted([(False, False, b"a", b"a"), (True, False, None, None)],
                                                             key=repr)
    t.write_arrow(_rows([3], "b"))
    assert _read(directory) == [(1, "n1", "a"), (2, "n2", None), (3, "n3", "b")]
    scan = StaticTable.from_metadata(_hint(directory)).scan(row_filter="dt IS NULL")
    assert scan.to_arrow()["id"].to_pylist() == [2]
