"""Every metadata field Java Paimon 2.0 writes is read, kept where Java keeps it, and written back in
2.0's shape; keys and Avro fields a later release may add are ignored, as Java's readers ignore them
(docs/format.md, "Paimon 1.0 and 2.0: what differs"). Field lists are 2.0's source
(Snapshot, Tag, Changelog, DataField, IndexFileMeta / GlobalIndexMeta, Statistics, Consumer)."""

import io
import json

import fastavro
import numpy as np
import pyarrow as pa
import pytest

from paimon_sql.commit.table_commit import TableCommit
from paimon_sql.data import predicate as P
from paimon_sql.data.stats import SimpleStats
from paimon_sql.exceptions import SchemaError, UnservedFeatureError
from paimon_sql.manifest import manifest_file as mf
from paimon_sql.schema.table_schema import TableSchema
from paimon_sql.snapshot.snapshot import Snapshot
from paimon_sql.snapshot.tag_manager import Tag
from paimon_sql.store import changelog_lifecycle
from paimon_sql.table.statistics import read_statistics
from paimon_sql.write.row_delete import delete_messages

SNAPSHOT_2_0 = {  # every field of 2.0's Snapshot, in its order, plus one no release writes yet
    "version": 3, "uuid": "6f1c0ffe-0000-4000-8000-000000000001", "id": 7, "schemaId": 1,
    "baseManifestList": "manifest-list-a-0", "baseManifestListSize": 1000,
    "deltaManifestList": "manifest-list-a-1", "deltaManifestListSize": 900,
    "changelogManifestList": "manifest-list-a-2", "changelogManifestListSize": 800,
    "indexManifest": "index-manifest-a-0", "commitUser": "u", "commitIdentifier": 9223372036854775807,
    "commitKind": "APPEND", "timeMillis": 1700000000000, "totalRecordCount": 10, "deltaRecordCount": 2,
    "changelogRecordCount": 2, "watermark": 5, "statistics": "stat-a-0", "properties": {"k": "v"},
    "nextRowId": 10, "operation": "MERGE",
}
FUTURE = {"someFutureField": {"nested": [1, 2]}}


def test_snapshot_reads_every_2_0_field_and_ignores_unknown_ones():
    snap = Snapshot.from_json(json.dumps({**SNAPSHOT_2_0, **FUTURE}))
    assert (snap.uuid, snap.operation, snap.properties, snap.next_row_id) == (
        SNAPSHOT_2_0["uuid"], "MERGE", {"k": "v"}, 10)
    assert json.loads(snap.to_json()) == SNAPSHOT_2_0  # same keys, same order, the unknown one dropped
    assert list(json.loads(snap.to_json())) == list(SNAPSHOT_2_0)


def test_snapshot_of_1_0_keeps_log_offsets_and_omits_2_0_fields():
    old = {k: v for k, v in SNAPSHOT_2_0.items()
           if k not in ("uuid", "properties", "nextRowId", "operation", "baseManifestListSize",
                        "deltaManifestListSize", "changelogManifestListSize")}
    old["logOffsets"] = {}
    snap = Snapshot.from_dict(old)
    assert snap.uuid is None and snap.log_offsets == {}
    assert json.loads(snap.to_json()) == old


def test_tag_keeps_snapshot_and_tag_fields():
    text = json.dumps({**SNAPSHOT_2_0, "tagCreateTime": [2024, 5, 1, 12, 30, 15, 500000000],
                       "tagTimeRetained": 3600.0, **FUTURE})
    tag = Tag.from_json("t1", text)
    assert tag.snapshot.uuid == SNAPSHOT_2_0["uuid"] and tag.time_retained.total_seconds() == 3600
    out = json.loads(tag.to_json())
    assert out == {**SNAPSHOT_2_0, "tagCreateTime": [2024, 5, 1, 12, 30, 15, 500000000], "tagTimeRetained": 3600.0}


def test_long_lived_changelog_carries_the_snapshots_2_0_fields():
    changelog = changelog_lifecycle.of_snapshot(Snapshot.from_dict(SNAPSHOT_2_0))
    assert (changelog.uuid, changelog.operation, changelog.properties, changelog.next_row_id) == (
        SNAPSHOT_2_0["uuid"], "MERGE", {"k": "v"}, 10)


def test_our_commits_write_a_uuid_per_snapshot(catalog):
    t = catalog.create_table_from_arrow("db.u", pa.schema([("id", pa.int64())]))
    t.write_arrow(pa.table({"id": [1]}))
    t.write_arrow(pa.table({"id": [2]}))
    first, second = (t.snapshot_manager.snapshot(i) for i in (1, 2))
    assert first.uuid and second.uuid and first.uuid != second.uuid
    assert json.loads(t.io.read_text(t.paths.snapshot_path(2)))["uuid"] == second.uuid


SCHEMA_2_0 = {
    "version": 3, "id": 0,
    "fields": [{"id": 0, "name": "id", "type": "BIGINT NOT NULL"},
               {"id": 1, "name": "name", "type": "STRING", "description": "who", "defaultValue": "'anon'",
                "futureFieldKey": 1}],
    "highestFieldId": 1, "partitionKeys": [], "primaryKeys": ["id"], "options": {"bucket": "1"},
    "comment": "c", "timeMillis": 1700000000000, "futureSchemaKey": True,
}


def test_schema_keeps_column_default_values_and_ignores_unknown_keys():
    schema = TableSchema.from_json(json.dumps(SCHEMA_2_0))
    assert schema.field("name").default_value == "'anon'"
    out = json.loads(schema.to_json())
    assert out["fields"][1] == {"id": 1, "name": "name", "type": "STRING", "description": "who",
                                "defaultValue": "'anon'"}
    assert "futureSchemaKey" not in out and out["comment"] == "c"
    with pytest.raises(SchemaError, match="column\\(s\\) name have a default value"):
        schema.check_writable("db.t")
    TableSchema.from_json(json.dumps({**SCHEMA_2_0, "fields": SCHEMA_2_0["fields"][:1]})).check_writable("db.t")


def test_statistics_and_consumer_files_with_unknown_keys_read(catalog):
    t = catalog.create_table_from_arrow("db.s", pa.schema([("id", pa.int64())]))
    t.write_arrow(pa.table({"id": [1]}))
    body = {"snapshotId": 1, "schemaId": 0, "mergedRecordCount": 1, **FUTURE,
            "colStats": {"id": {"colId": 0, "min": "1", "max": "1", "nullCount": 0, "futureColKey": 1}}}
    t.io.write_bytes(t.paths.statistics_path("stat-x-0"), json.dumps(body).encode())
    snap = Snapshot.from_dict({**t.snapshot_manager.latest().to_dict(), "statistics": "stat-x-0"})
    assert read_statistics(t, snap)["colStats"]["id"]["max"] == "1"
    t.io.write_bytes(t.paths.consumer_path("c1"), json.dumps({"nextSnapshot": 4, **FUTURE}).encode())
    assert t.consumer_manager.next_snapshot("c1") == 4


def _stats() -> SimpleStats:
    return SimpleStats.from_avro({"_MIN_VALUES": b"", "_MAX_VALUES": b"", "_NULL_COUNTS": None})


def test_manifest_written_by_1_0_and_a_later_release_reads():
    """Java's Avro reader matches fields by name against the writer's schema: a 1.0 manifest lacks
    2.0's fields (read as None), a later one may add fields (ignored)."""
    legacy = [f for f in mf.DATA_FILE_META_SCHEMA["fields"] if f["name"] not in ("_FIRST_ROW_ID", "_WRITE_COLS")]
    future = mf.DATA_FILE_META_SCHEMA["fields"][::-1] + [mf._opt("_SOME_FUTURE_FIELD", "string")]  # reordered, +1
    for fields in (legacy, future):
        schema = {**mf.MANIFEST_ENTRY_SCHEMA, "fields": [
            *mf.MANIFEST_ENTRY_SCHEMA["fields"][:-1],
            {"name": "_FILE", "type": {**mf.DATA_FILE_META_SCHEMA, "fields": fields}}]}
        meta = mf.DataFileMeta("f.parquet", 10, 1, b"", b"", _stats(), _stats(), 0, 0, 0, 0,
                               external_path="file:/ext/f.parquet", first_row_id=5, write_cols=("id",))
        record = mf.ManifestEntry(mf.ADD, b"", 0, 1, meta).to_avro()
        record["_FILE"]["_SOME_FUTURE_FIELD"] = "x"
        buf = io.BytesIO()
        fastavro.writer(buf, fastavro.parse_schema(schema), [record])
        (entry,) = mf.read_records(buf.getvalue(), "ManifestEntry")
        assert entry.file.external_path == "file:/ext/f.parquet"
        assert (entry.file.first_row_id, entry.file.write_cols) == ((None, None) if fields is legacy else (5, ("id",)))


GLOBAL = mf.GlobalIndexMeta(0, 99, 3, (4, 5), b"meta", None)


def test_index_manifest_keeps_global_index_meta():
    entry = mf.IndexManifestEntry(mf.ADD, b"", 0, "btree", "global-index-1", 10, 100, global_index=GLOBAL)
    data = mf.write_records([entry], "IndexManifestEntry")
    assert mf.read_records(data, "IndexManifestEntry") == [entry]
    names = [f["name"] for f in fastavro.reader(io.BytesIO(data)).writer_schema["fields"]]
    assert names[-2:] == ["_EXTERNAL_PATH", "_GLOBAL_INDEX"]  # IndexManifestEntry's 2.0 field list


def test_our_commits_carry_java_global_index_entries(catalog):
    """An index manifest our commit rewrites (a delete writing a deletion vector) keeps the global
    index entries Java wrote, with their meta. Writes through the table are refused while it has a
    global index (paimon_sql.table.unserved_features): the commit is driven here below that check."""
    t = catalog.create_table_from_arrow("db.g", pa.schema([("id", pa.int64())]),
                                        options={"deletion-vectors.enabled": "true"})
    t.write_arrow(pa.table({"id": [1, 2, 3]}))
    latest = t.snapshot_manager.latest()
    partition = t.new_scan().plan_entries()[0].partition
    java_entry = mf.IndexManifestEntry(mf.ADD, partition, 0, "btree", "global-index-x", 10, 3,
                                       global_index=GLOBAL)
    name = "index-manifest-java-0"
    t.io.write_bytes(t.paths.manifest_path(name), mf.write_records([java_entry], "IndexManifestEntry"))
    t.io.write_bytes(t.paths.snapshot_path(latest.id),
                     Snapshot.from_dict({**latest.to_dict(), "indexManifest": name}).to_json().encode())
    with pytest.raises(UnservedFeatureError, match=r"has a global index \(btree\), which paimon-sql does not"):
        t.delete_where(P.equal("id", 2))
    (entry,) = t.new_scan().plan_entries()
    TableCommit(t).commit(delete_messages(t, {(entry.partition, entry.bucket, entry.file.file_name): np.array([1])}))
    entries = t.index_manifest_entries(t.snapshot_manager.latest().index_manifest)
    assert java_entry in entries and any(e.index_type == "DELETION_VECTORS" for e in entries)
    assert sorted(t.to_arrow().column("id").to_pylist()) == [1, 3]
