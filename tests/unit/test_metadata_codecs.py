"""Round trips of every metadata codec: schema JSON, snapshot JSON, Avro manifest records."""

import datetime as dt
import json

import pytest

from paimon_sql.data import binary_row
from paimon_sql.data.stats import SimpleStats
from paimon_sql.data.types import DataField, parse_type
from paimon_sql.exceptions import CorruptMetadataError
from paimon_sql.manifest import manifest_file
from paimon_sql.schema.table_schema import TableSchema
from paimon_sql.snapshot.snapshot import Snapshot


def _schema():
    fields = [DataField(0, "id", parse_type("BIGINT")), DataField(0, "tags", parse_type("ARRAY<STRING>")),
              DataField(0, "pt", parse_type("STRING"))]
    return TableSchema.create(fields, ["pt"], ["id", "pt"], {"bucket": "2"}, comment="c")


def test_schema_json_round_trip_and_field_ids():
    s = _schema()
    d = json.loads(s.to_json())
    assert d["version"] == 3 and d["highestFieldId"] == 2
    assert d["fields"][0] == {"id": 0, "name": "id", "type": "BIGINT NOT NULL"}  # primary keys become NOT NULL
    assert d["fields"][1]["type"] == {"type": "ARRAY", "element": "STRING"}
    assert TableSchema.from_json(s.to_json()) == s
    assert s.trimmed_primary_keys == ["id"] and s.bucket_keys == ["id"]


def test_schema_old_versions_get_their_defaults():
    d = json.loads(_schema().to_json())
    d["version"] = 1
    d["options"] = {}
    s = TableSchema.from_json(json.dumps(d))
    assert s.options == {"bucket": "1", "file.format": "orc"}


def test_snapshot_json_omits_nulls_and_round_trips():
    snap = Snapshot(3, 0, "manifest-list-a-0", "manifest-list-a-1", "u", 2 ** 63 - 1, "APPEND", 1700000000000,
                    total_record_count=10, delta_record_count=2)
    d = json.loads(snap.to_json())
    assert "changelogManifestList" not in d and "indexManifest" not in d
    assert d["commitKind"] == "APPEND" and d["schemaId"] == 0
    assert Snapshot.from_json(snap.to_json()) == snap


@pytest.mark.parametrize("text", ["{", '{"id": 1}', "[]"])
def test_corrupt_snapshot_is_a_clear_error(text):
    with pytest.raises(CorruptMetadataError):
        Snapshot.from_json(text)


def _file_meta():
    key = binary_row.to_bytes([5], [parse_type("BIGINT")])
    stats = SimpleStats(key, key, [0])
    return manifest_file.DataFileMeta("data-x-0.parquet", 100, 3, key, key, stats, stats, 0, 2, 0, 0, ("a.index",),
                                 dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc), 1, b"idx", 0, ("id",), None)


def test_manifest_records_round_trip():
    entry = manifest_file.ManifestEntry(manifest_file.ADD, binary_row.empty_row(), 1, 2, _file_meta())
    data = manifest_file.write_records([entry], "ManifestEntry")
    assert data[:4] == b"Obj\x01"
    assert manifest_file.read_records(data, "ManifestEntry") == [entry]
    meta = manifest_file.ManifestFileMeta("manifest-x-0", 10, 1, 0, SimpleStats(b"", b"", None), 0, 0, 1, 0, 0)
    assert manifest_file.read_records(manifest_file.write_records([meta], "ManifestFileMeta"), "ManifestFileMeta") == [meta]
    idx = manifest_file.IndexManifestEntry(manifest_file.ADD, binary_row.empty_row(), 0, "DELETION_VECTORS", "index-x-0", 9,
                                      1, (manifest_file.DeletionVectorMeta("data-x-0.parquet", 1, 8, 3),))
    assert manifest_file.read_records(manifest_file.write_records([idx], "IndexManifestEntry"), "IndexManifestEntry") == [idx]


def test_entries_merge_last_wins():
    f = _file_meta()
    add = manifest_file.ManifestEntry(manifest_file.ADD, b"p", 0, 1, f)
    delete = manifest_file.ManifestEntry(manifest_file.DELETE, b"p", 0, 1, f)
    assert manifest_file.merge_entries([add, delete]) == []
    assert manifest_file.merge_entries([add, delete, add]) == [add]


def test_corrupt_manifest_is_a_clear_error():
    with pytest.raises(CorruptMetadataError, match="manifest-bad"):
        manifest_file.read_records(b"Obj\x01garbage", "ManifestEntry", "manifest-bad")


def test_manifests_use_the_manifest_compression_codec(catalog):
    import io

    import fastavro
    import pyarrow as pa
    from support import SCHEMA
    t = catalog.create_table_from_arrow("db.a", SCHEMA)
    t.write_arrow(pa.table({"id": [1], "name": ["x"], "value": [1.0], "dt": ["d"]}, schema=SCHEMA))
    names = t.io.list_names(t.paths.manifest_dir)
    codecs = {fastavro.reader(io.BytesIO(t.io.read_bytes(t.paths.manifest_path(n)))).codec for n in names}
    assert codecs == {"zstandard"} and any(n.startswith("manifest-list-") for n in names)
