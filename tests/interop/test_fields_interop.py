"""Metadata fields against real Java Paimon, field by field (docs/format.md, "Paimon 1.0 and 2.0: what
differs"): what only a Java writer produces — data files at external paths, embedded file indexes,
value stats over some columns, column default values, a snapshot's ``uuid``, statistics, tags with a
retention — we read; what we write in those places Java 2.0 and 1.0 read.

Java 2.0-only writers run through tests/interop/java/FieldsDriver.java; the tag and statistics
readers through PaimonDriver on both 1.0 and 2.0 (the ``java`` fixture of java_paimon.py). Statistics
are also exchanged with paimon-spark itself (relay.py): each engine's ANALYZE TABLE read by the other.
"""

import datetime as dt
import json
from pathlib import Path

import pytest
from java_paimon import Driver, driver_command, java, ok, paimon_version  # noqa: F401  (fixtures)
from relay import ENGINES, Relay, relays  # noqa: F401  (fixture)
from spark.conftest import rows, session, spark  # noqa: F401  (fixtures: one SparkSession per run)

from paimon_sql.exceptions import PaimonError
from paimon_sql.table.statistics import read_statistics

pytestmark = pytest.mark.interop

SOURCE = Path(__file__).resolve().parent / "java" / "FieldsDriver.java"


@pytest.fixture(scope="module")
def java2():
    """``java2(warehouse, commands)``: FieldsDriver's results on Java Paimon 2.0, one JVM per module."""
    with Driver(driver_command(SOURCE, version="2.0")) as driver:
        yield driver.on


def _rows(s, table: str) -> list:
    return [list(r) for r in rows(s, f"SELECT id, name, dt FROM {table} ORDER BY id")]


def _snapshot_count(s, table: str) -> int:
    return s.catalog.get_table(table).snapshot_manager.latest().id


def test_we_read_java_external_paths(java2, session, tmp_path):
    t, ext = "db.ext", tmp_path / "ext"
    *_, files, theirs = java2(session.warehouse, [
        {"op": "create", "table": t, "options": {"data-file.external-paths": f"file://{ext}",
                                                 "data-file.external-paths.strategy": "round-robin"}},
        {"op": "write", "table": t, "rows": [[1, "a", "x"], [2, "b", "y"]]},
        {"op": "write", "table": t, "rows": [[3, "c", "x"]]},
        {"op": "files", "table": t}, {"op": "read", "table": t}])
    assert len(files) == 3 and all(f[1] and f[1].startswith("file:") and str(ext) in f[1] for f in files)
    assert not list(Path(session.warehouse, "db.db", "ext").glob("dt=*/bucket-0/*.parquet"))  # all outside
    assert _rows(session, t) == theirs == [[1, "a", "x"], [2, "b", "y"], [3, "c", "x"]]
    table = session.catalog.get_table(t)
    assert sorted(e.file.external_path for e in table.new_scan().plan_entries()) == sorted(f[1] for f in files)
    assert sorted(table.to_arrow().column("id").to_pylist()) == [1, 2, 3]  # the core reader too
    before = _snapshot_count(session, t)
    with pytest.raises(PaimonError, match="data-file.external-paths"):  # we write inside the table only
        session.sql(f"INSERT INTO {t} VALUES (4, 'd', 'x')")
    assert _snapshot_count(session, t) == before


def test_we_read_java_embedded_index_and_stats_cols(java2, session):
    t = "db.idx"
    *_, files, theirs = java2(session.warehouse, [
        {"op": "create", "table": t, "options": {"file-index.bloom-filter.columns": "name",
                                                 "file-index.in-manifest-threshold": "1 mb",
                                                 "metadata.stats-mode": "none", "fields.id.stats-mode": "full"}},
        {"op": "write", "table": t, "rows": [[1, "a", "x"], [2, "b", "x"]]},
        {"op": "write", "table": t, "rows": [[3, "c", "x"]]},
        {"op": "files", "table": t}, {"op": "read", "table": t}])
    assert all(f[2] and f[3] == ["id"] for f in files)  # _EMBEDDED_FILE_INDEX, _VALUE_STATS_COLS
    assert _rows(session, t) == theirs
    assert [list(r) for r in rows(session, f"SELECT id FROM {t} WHERE name = 'b'")] == [[2]]
    assert [list(r) for r in rows(session, f"SELECT name FROM {t} WHERE id = 3")] == [["c"]]
    ours = session.catalog.get_table(t).new_scan().plan_entries()
    assert all(e.file.embedded_index and e.file.value_stats_cols == ("id",) for e in ours)


def test_column_defaults_kept_and_writes_refused(java2, session):
    t = "db.dflt"
    java2(session.warehouse, [
        {"op": "create", "table": t, "defaults": {"name": "'anon'"}},
        {"op": "write", "table": t, "rows": [[1, None, "x"], [2, "b", "x"]]}])
    assert _rows(session, t) == [[1, "anon", "x"], [2, "b", "x"]]  # Java put the default in
    assert session.catalog.get_table(t).schema.field("name").default_value == "'anon'"
    with pytest.raises(PaimonError, match="default value"):  # ours would keep the NULL
        session.sql(f"INSERT INTO {t} VALUES (3, NULL, 'x')")
    session.sql(f"ALTER TABLE {t} ADD COLUMN note STRING")  # our schema change keeps the default
    schema_json, theirs = java2(session.warehouse, [{"op": "schema", "table": t}, {"op": "read", "table": t}])
    fields = {f["name"]: f for f in json.loads(schema_json)["fields"]}
    assert fields["name"]["defaultValue"] == "'anon'" and "note" in fields
    assert theirs == [[1, "anon", "x", None], [2, "b", "x", None]]


def test_snapshot_uuid_and_statistics_both_ways(java2, java, session):
    t = "db.st"
    stats = {"snapshotId": 1, "schemaId": 0, "mergedRecordCount": 2, "mergedRecordSize": 100,
             "colStats": {"id": {"colId": 0, "distinctCount": 2, "min": "1", "max": "2", "nullCount": 0,
                                 "avgLen": 8, "maxLen": 8}}}
    *_, (sid, java_uuid, _, kind, stats_file) = java2(session.warehouse, [
        {"op": "create", "table": t}, {"op": "write", "table": t, "rows": [[1, "a", "x"], [2, "b", "x"]]},
        {"op": "analyze", "table": t, "statistics": json.dumps(stats)}, {"op": "snapshot", "table": t}])
    assert kind == "ANALYZE" and java_uuid and stats_file
    table = session.catalog.get_table(t)
    latest = table.snapshot_manager.latest()
    assert (latest.id, latest.uuid, latest.statistics) == (sid, java_uuid, stats_file)
    assert read_statistics(table, latest)["colStats"]["id"]["max"] == "2"
    session.sql(f"INSERT INTO {t} VALUES (3, 'c', 'y')")
    ours = session.catalog.get_table(t).snapshot_manager.latest()
    assert ours.uuid and ours.uuid != java_uuid and ours.statistics == stats_file  # inherited, as Java does
    (_, their_uuid, operation, kind, inherited), = java2(session.warehouse, [{"op": "snapshot", "table": t}])
    assert (their_uuid, operation, kind, inherited) == (ours.uuid, "WRITE", "APPEND", stats_file)  # as paimon-spark
    session.sql(f"ANALYZE TABLE {t} COMPUTE STATISTICS FOR ALL COLUMNS")
    mine = ok(java.run([{"op": "statistics", "warehouse": session.warehouse, "table": t}])[0])
    assert mine[0] == 3 and mine[2]["id"][2:] == ["1", "3", 0, 8, 8]  # Spark's ANALYZE: lengths for every type,
    assert mine[2]["name"][2:4] == [None, None]  # no min or max for strings


def test_tags_with_retention_both_ways(java, session):
    t, w = "db.tags", session.warehouse
    ok(java.run([{"op": "create", "warehouse": w, "table": t, "fields": [["id", "BIGINT"], ["name", "STRING"]]},
                 {"op": "write", "warehouse": w, "table": t, "rows": [[1, "a"]]},
                 {"op": "tag", "warehouse": w, "table": t, "name": "java_tag", "snapshot": 1,
                  "time_retained_seconds": 3600}])[-1])
    theirs = session.catalog.get_table(t).tag_manager.get("java_tag")
    assert theirs.time_retained == dt.timedelta(hours=1) and theirs.create_time is not None
    assert theirs.snapshot.id == 1
    session.sql(f"INSERT INTO {t} VALUES (2, 'b')")
    session.sql(f"CALL sys.create_tag(table => '{t}', tag => 'our_tag', snapshot => 2, time_retained => '2 h')")
    info, snapshots, tagged = java.run([
        {"op": "tag_info", "warehouse": w, "table": t, "name": "our_tag"},
        {"op": "snapshots", "warehouse": w, "table": t},
        {"op": "read", "warehouse": w, "table": t, "tag": "our_tag"}])
    sid, created, retained = ok(info)
    assert (sid, retained) == (2, 7200) and created  # tagCreateTime, tagTimeRetained as Java parses them
    assert ok(snapshots)["ids"] == [1, 2]  # our snapshot (with uuid) parses on 1.0 and 2.0
    assert sorted(r[0] for r in ok(tagged)) == [1, 2]


RELAYS = {"analyze": Relay(steps=[
    """CREATE TABLE st (id BIGINT, name STRING, dt STRING) PARTITIONED BY (dt);
       INSERT INTO st VALUES (1, 'a', 'x'), (2, NULL, 'x'), (3, 'c', 'y');
       ANALYZE TABLE st COMPUTE STATISTICS FOR ALL COLUMNS;""",
    """INSERT INTO st VALUES (4, 'dd', 'y');
       ANALYZE TABLE st COMPUTE STATISTICS;""",
    """ANALYZE TABLE st COMPUTE STATISTICS FOR COLUMNS id, name;"""],
    # colstat parsed: the JSON text is each writer's (key order, layout), its content the same
    reads="""SELECT snapshot_id, schema_id, mergedRecordCount, mergedRecordSize, from_json(colstat, 'map<string,
               struct<colId: int, distinctCount: bigint, min: string, max: string, nullCount: bigint, avgLen: int,
               maxLen: int>>') AS colstat FROM `st$statistics`;
             SELECT snapshot_id, commit_kind, total_record_count FROM `st$snapshots`;""")}


@pytest.mark.parametrize("first", ENGINES)
def test_statistics_between_paimon_spark_and_us(relays, first):
    relays.check("analyze", first)
