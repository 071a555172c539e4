"""The options audit (issues 13 and 35): every Paimon option is honoured, refused, engine tuning or
Flink-only (option_support.tsv), and so is every key of Paimon 2.0's other option classes (catalog,
Spark, format, index, Iceberg: honoured, refused or engine-only); a refused one is never accepted
and silently ignored.

Honoured options point at the test showing their effect; the ones without such a test elsewhere
have it here (codecs, manifest merging, partition option, sequence sort order, time travel by
timestamp and watermark, commit retries, the compaction strategy's ratios).
"""

import datetime as dt
import glob
import importlib.util
import json
import os
from dataclasses import replace
from pathlib import Path

import fastavro
import sqlite3
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from oracles.paimon_java import VERSIONS
from support import SCHEMA

from paimon_sql.catalog import load_catalog
from paimon_sql.exceptions import CommitConflictError, InvalidOptionError, PaimonError
from paimon_sql.mergetree.compact_strategy import UniversalCompaction
from paimon_sql.mergetree.levels import SortedRun
from paimon_sql.options.core_options import (CATALOG, ENGINE_ONLY, ENGINE_TUNING, HONOURED, REFUSED, STREAMING,
                                             CoreOptions, as_paimon_spells, catalog_registry, class_keys,
                                             other_options, registry)

ROOT = Path(__file__).resolve().parents[2]
# every key of Paimon's CoreOptions (the registry was extracted from it, key for key)
ALL_KEYS = [line.split("\t")[0] for line in (ROOT / "paimon_sql/options/core_options.tsv").read_text().splitlines()
            if line.strip() and not line.startswith("#")]
# every key of Paimon 2.0's other option classes, with its class and scope (extracted from Paimon's source)
OTHER_ROWS = [line.split("\t") for line in (ROOT / "paimon_sql/options/paimon_options.tsv").read_text().splitlines()
              if line.strip() and not line.startswith("#")]
CLASSES = {"CatalogOptions": "catalog", "RESTCatalogOptions": "catalog", "JdbcCatalogOptions": "catalog",
           "HiveCatalogOptions": "catalog", "SparkCatalogOptions": "catalog", "SparkConnectorOptions": "spark",
           "OrcOptions": "table", "CsvOptions": "table", "JsonOptions": "table", "TextOptions": "table",
           "BitmapGlobalIndexOptions": "table", "BTreeIndexOptions": "table", "SortedIndexOptions": "table",
           "LuminaVectorIndexOptions": "table", "IcebergOptions": "table"}
REFUSED_KEYS = [k for k, s in registry().items() if s.support.status == REFUSED]
REFUSED_CATALOG_KEYS = [k for k, s in catalog_registry().items() if s.support.status == REFUSED]
PK = {"primary_keys": ["id"]}


def other_value(spec) -> str:
    """A value of the option's type that is not its default."""
    by_type = {"Boolean": str(not spec.default).lower(), "MemorySize": "3 mb", "Duration": "7 min",
               "Map<String, String>": "0:avro", "Integer": "7", "Long": "7", "Double": "0.5", "Float": "0.5"}
    value = by_type.get(spec.java_type, "something-else")
    return "9" if spec.parse(value) == spec.default else value


# -- the classification --------------------------------------------------------------------------

def test_every_option_has_a_status():
    specs = registry()
    assert ALL_KEYS and set(ALL_KEYS) == {k for k, s in specs.items() if s.option_class == "CoreOptions"}
    for key in ALL_KEYS:
        s = specs[key].support
        assert s.status in (HONOURED, REFUSED, ENGINE_TUNING, STREAMING), key
        assert (s.scope in ("read", "write")) == (s.status == REFUSED), key
        assert s.note or s.status in (ENGINE_TUNING, STREAMING), f"{key}: a {s.status} option says why / where"


def test_every_key_of_every_other_class_has_a_status():
    assert {cls: scope for cls, scope, *_ in OTHER_ROWS} == CLASSES
    assert {(cls, scope) for cls, scope in class_keys()} == set(CLASSES.items())
    for cls, scope, key, java_type, default, description in OTHER_ROWS:
        spec = other_options()[scope][key]
        s = spec.support
        assert s.status in (HONOURED, REFUSED, ENGINE_ONLY), key
        refused_in = (CATALOG,) if scope == "catalog" else ("read", "write")
        assert (s.scope in refused_in) == (s.status == REFUSED), key
        assert s.note, f"{key}: a {s.status} option says why / where"
        assert java_type and description, key
    assert len({k for _, _, k, *_ in OTHER_ROWS}) == len(OTHER_ROWS) - 1  # 'uri': CatalogOptions' and REST's
    assert {k for k, s in registry().items() if s.option_class != "CoreOptions"} == \
        {k for _, scope, k, *_ in OTHER_ROWS if scope != "catalog"}


def test_iceberg_options_are_judged_as_table_options():
    """Their statuses are the Iceberg metadata's (paimon_sql/options/iceberg_options.py, docs/iceberg.md)."""
    keys = class_keys()["IcebergOptions", "table"]
    assert len(keys) == 17 and all(k.startswith("metadata.iceberg.") for k in keys)
    assert registry()["metadata.iceberg.storage"].support.status == HONOURED
    assert registry()["metadata.iceberg.uri"].support.status == HONOURED
    assert registry()["metadata.iceberg.hadoop-conf-dir"].support.status == REFUSED


def test_paimon_sqls_own_options_are_no_paimon_keys():
    """Our own keys (option_support.tsv rows no Paimon class declares; Java ignores them): a Paimon
    version that declared one would take it from this list, and its own meaning would then win."""
    from paimon_sql.options.core_options import own_keys
    from paimon_sql.options.iceberg_options import PUFFIN_FILES
    assert set(own_keys()) == {PUFFIN_FILES}
    for key, s in own_keys().items():
        assert s.status == HONOURED and key in (ROOT / s.note).read_text(), key


def test_the_other_engineers_options_keep_their_status():
    specs = registry()
    assert specs["partition.default-name"].support.status == HONOURED
    assert specs["partition.legacy-name"].support.status == HONOURED
    assert specs["cross-partition-upsert.index-ttl"].support.status == HONOURED
    assert specs["cross-partition-upsert.bootstrap-parallelism"].support.status == ENGINE_TUNING


@pytest.mark.parametrize("key", [k for k, s in registry().items() if s.support.status == HONOURED
                                 and not s.support.note.startswith("in progress")])
def test_an_honoured_option_names_a_test_showing_it(key):
    evidence = ROOT / registry()[key].support.note
    assert evidence.is_file(), f"{key}: {evidence} is not a test file"
    assert key in evidence.read_text(), f"{key}: {evidence} never sets it"


def test_the_doc_is_in_sync():
    spec = importlib.util.spec_from_file_location("options_doc", ROOT / "scripts" / "options_doc.py")
    doc = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(doc)
    text = (ROOT / "docs" / "options.md").read_text()
    assert doc.synced(text) == text, "docs/options.md is out of date: run scripts/options_doc.py"
    assert all(f"| `{k}` |" in text for k in ALL_KEYS + [k for _, _, k, *_ in OTHER_ROWS])
    assert all(f"### {cls} (" in text for cls in CLASSES)


# -- refused options are refused ---------------------------------------------------------------

@pytest.mark.parametrize("key", REFUSED_KEYS)
def test_a_refused_option_is_refused_at_create_and_by_a_hint(catalog, key):
    spec = registry()[key]
    value = other_value(spec)
    with pytest.raises(InvalidOptionError, match=f"^option '{key}' is not supported by paimon-sql \\(.+\\)$"):
        catalog.create_table_from_arrow("db.t", SCHEMA, options={key: value}, **PK)
    assert not catalog.table_exists("db.t")
    t = catalog.create_table_from_arrow("db.t", SCHEMA, **PK)
    if key == "branch":  # a dynamic option only: a hint picks the branch (tests/spark/test_fallback_branch.py)
        with pytest.raises(PaimonError, match=f"^branch '{value}' of table db.t does not exist$"):
            t.copy({key: value})
        return
    with pytest.raises(InvalidOptionError, match=f"^option '{key}' is not supported by paimon-sql"):
        t.copy({key: value})


@pytest.mark.parametrize("key", REFUSED_CATALOG_KEYS)
def test_a_refused_catalog_option_is_refused_when_the_catalog_loads(tmp_path, key):
    value = other_value(catalog_registry()[key])
    with pytest.raises(InvalidOptionError) as e:
        load_catalog(str(tmp_path / "wh"), {key: value})
    assert str(e.value) == f"catalog option '{key}' is not supported by paimon-sql ({catalog_registry()[key].support.note})"
    assert not (tmp_path / "wh").exists()


def test_catalog_options_at_their_default_and_engine_only_ones_are_accepted(tmp_path):
    catalog = load_catalog(str(tmp_path / "wh"), {"table.type": "MANAGED", "location-in-properties": "false",
                                                  "defaultDatabase": "default", "cache-enabled": "false",
                                                  "token": "t", "alter-table-cascade": "false"})
    catalog.create_database("db")
    assert catalog.create_table_from_arrow("db.t", SCHEMA).to_arrow().num_rows == 0


def test_dataframe_option_keys_are_matched_as_paimon_spells_them():
    assert as_paimon_spells({"read.allow.fullscan": "false", "defaultdatabase": "x", "mine": "1"}) == \
        {"read.allow.fullScan": "false", "defaultDatabase": "x", "mine": "1"}


@pytest.mark.parametrize("default_function, value", [(None, 3), ("sum", 5)])
def test_fields_default_aggregate_function_aggregates_every_column(catalog, default_function, value):
    schema = pa.schema([pa.field("id", pa.int64(), False), ("v", pa.int64())])
    options = {"merge-engine": "aggregation", "bucket": "1"}
    if default_function:
        options["fields.default-aggregate-function"] = default_function
    t = catalog.create_table_from_arrow("db.t", schema, options=options, **PK)
    t.write_arrow(pa.table({"id": [1], "v": [2]}, schema=schema))
    t.write_arrow(pa.table({"id": [1], "v": [3]}, schema=schema))
    assert t.to_arrow().to_pylist() == [{"id": 1, "v": value}]


def test_lock_key_max_length_sizes_the_jdbc_lock_table(tmp_path):
    uri = f"{tmp_path}/catalog.sqlite"
    load_catalog(str(tmp_path / "wh"), {"metastore": "jdbc", "uri": f"jdbc:sqlite:{uri}", "lock.enabled": "true",
                                        "lock-key-max-length": "100"})
    with sqlite3.connect(uri) as db:
        (sql,) = db.execute("SELECT sql FROM sqlite_master WHERE name = 'paimon_distributed_locks'").fetchone()
    assert "lock_id VARCHAR(100)" in sql


def test_a_refused_option_at_its_default_is_accepted(catalog):
    options = {"snapshot.num-retained.max": "2147483647", "type": "TABLE", "scan.ignore-corrupt-files": "false",
               "tag.callbacks": "", "snapshot.time-retained": "60 min"}
    t = catalog.create_table_from_arrow("db.t", SCHEMA, options=options, **PK)
    t.write_arrow(pa.table({"id": [1], "name": ["a"], "value": [1.0], "dt": ["d"]}, schema=SCHEMA))
    assert t.to_arrow().num_rows == 1


def _as_java_wrote(table, **options):
    """The table's schema file with ``options`` added, as Java or Flink would have stored them."""
    path = os.path.join(table.path, "schema", f"schema-{table.schema.id}")
    with open(path) as f:
        d = json.load(f)
    d["options"].update(options)
    with open(path, "w") as f:
        json.dump(d, f)


def _rows(ids):
    return pa.table({"id": ids, "name": ["n"] * len(ids), "value": [1.0] * len(ids), "dt": ["d"] * len(ids)},
                    schema=SCHEMA)


def test_a_stored_read_scope_option_stops_reads_and_writes(catalog):
    catalog.create_table_from_arrow("db.t", SCHEMA, **PK).write_arrow(_rows([1, 2]))
    _as_java_wrote(catalog.get_table("db.t"), **{"scan.ignore-corrupt-files": "true"})
    t = catalog.get_table("db.t")
    line = ("option 'scan.ignore-corrupt-files' is not supported by paimon-sql (a corrupt file always fails the "
            "read): the table cannot be {} here")
    with pytest.raises(InvalidOptionError) as e:
        t.to_arrow()
    assert str(e.value) == line.format("read")
    with pytest.raises(InvalidOptionError) as e:
        t.write_arrow(_rows([3]))
    assert str(e.value) == line.format("written")
    assert t.snapshot_manager.latest().id == 1


def test_a_stored_write_scope_option_stops_writes_only(catalog):
    catalog.create_table_from_arrow("db.t", SCHEMA, **PK).write_arrow(_rows([1, 2]))
    _as_java_wrote(catalog.get_table("db.t"), **{"snapshot.clean-empty-directories": "true"})
    t = catalog.get_table("db.t")
    assert sorted(t.to_arrow().column("id").to_pylist()) == [1, 2]
    with pytest.raises(InvalidOptionError, match=r"^option 'snapshot.clean-empty-directories' is not supported by "
                                                 r"paimon-sql \(.+\): the table cannot be written here$"):
        t.write_arrow(_rows([3]))
    assert t.snapshot_manager.latest().id == 1


# -- honoured options: their effect --------------------------------------------------------------

def _files(table, pattern):
    return sorted(glob.glob(os.path.join(table.path, pattern), recursive=True))


@pytest.mark.parametrize("codec, parquet_name", [("snappy", "SNAPPY"), ("gzip", "GZIP"), ("zstd", "ZSTD")])
def test_file_compression_is_the_data_files_codec(catalog, codec, parquet_name):
    t = catalog.create_table_from_arrow("db.t", SCHEMA, options={"file.compression": codec}, **PK)
    t.write_arrow(_rows([1, 2]))
    (data,) = _files(t, "**/data-*.parquet")
    assert pq.ParquetFile(data).metadata.row_group(0).column(0).compression == parquet_name


@pytest.mark.parametrize("codec, avro_name", [("deflate", "deflate"), ("zstd", "zstandard"), ("none", "null")])
def test_manifest_compression_is_the_manifests_codec(catalog, codec, avro_name):
    t = catalog.create_table_from_arrow("db.t", SCHEMA, options={"manifest.compression": codec}, **PK)
    t.write_arrow(_rows([1]))
    for path in _files(t, "manifest/manifest-*"):
        with open(path, "rb") as f:
            assert fastavro.reader(f).codec == avro_name


@pytest.mark.parametrize("min_count, manifests", [(3, 3), (100, 5)])  # 3: the 4th commit folds its base
def test_manifest_merge_min_count_folds_manifests(catalog, min_count, manifests):
    t = catalog.create_table_from_arrow("db.t", SCHEMA, options={"manifest.merge-min-count": str(min_count)})
    for i in range(5):
        t.write_arrow(_rows([i]))
    snap = t.snapshot_manager.latest()
    live = t.manifest_list(snap.base_manifest_list) + t.manifest_list(snap.delta_manifest_list)
    assert len(live) == manifests
    assert sorted(t.to_arrow().column("id").to_pylist()) == [0, 1, 2, 3, 4]


def test_partition_option_makes_the_partition_keys(catalog):
    t = catalog.create_table_from_arrow("db.t", SCHEMA, options={"partition": "dt"}, **PK)
    assert t.schema.partition_keys == ["dt"] and "partition" not in t.schema.options
    t.write_arrow(_rows([1]))
    assert os.path.isdir(os.path.join(t.path, "dt=d"))


@pytest.mark.parametrize("default_name", [None, "nil"])
def test_partition_default_name_names_the_null_partition(catalog, default_name):
    options = {"partition.default-name": default_name} if default_name else {}
    t = catalog.create_table_from_arrow("db.t", pa.schema([("id", pa.int64()), ("p", pa.string())]),
                                        partition_keys=["p"], options=options)
    t.write_arrow(pa.table({"id": [1], "p": pa.array([None], pa.string())}))
    assert os.path.isdir(os.path.join(t.path, f"p={default_name or '__DEFAULT_PARTITION__'}"))
    assert t.to_arrow().to_pylist() == [{"id": 1, "p": None}]


@pytest.mark.parametrize("order, kept", [("ascending", "late"), ("descending", "early")])
def test_sequence_field_sort_order_picks_the_winner(catalog, order, kept):
    schema = pa.schema([pa.field("id", pa.int64(), False), ("v", pa.string()), ("ts", pa.int64())])
    t = catalog.create_table_from_arrow("db.t", schema, options={"sequence.field": "ts", "bucket": "1",
                                                                 "sequence.field.sort-order": order}, **PK)
    t.write_arrow(pa.table({"id": [1], "v": ["late"], "ts": [20]}, schema=schema))
    t.write_arrow(pa.table({"id": [1], "v": ["early"], "ts": [10]}, schema=schema))
    assert t.to_arrow().column("v").to_pylist() == [kept]


def _stamp(table, sid, **fields):
    """Snapshot ``sid``'s file with ``fields`` set, as a Flink job would have written them."""
    path = os.path.join(table.path, "snapshot", f"snapshot-{sid}")
    with open(path) as f:
        d = json.load(f)
    d.update(fields)
    with open(path, "w") as f:
        json.dump(d, f)


def test_scan_timestamp_and_watermark_travel(catalog):
    t = catalog.create_table_from_arrow("db.t", SCHEMA)
    for i in range(3):
        t.write_arrow(_rows([i]))
    for sid, (millis, watermark) in {1: (1_000_000, 100), 2: (2_000_000, 200), 3: (3_000_000, 300)}.items():
        _stamp(t, sid, timeMillis=millis, watermark=watermark)
    t = catalog.get_table("db.t")
    at = dt.datetime.fromtimestamp(2_500_000 / 1000).isoformat(sep=" ")
    assert t.travel({"scan.timestamp": at}).to_arrow().num_rows == 2
    assert t.travel({"scan.watermark": "150"}).to_arrow().num_rows == 2
    assert t.travel({"scan.watermark": "250"}).to_arrow().num_rows == 3


@pytest.mark.parametrize("retries", [0, 2])
def test_commit_max_retries_bounds_the_attempts(catalog, retries):
    """Snapshot id 2 is taken but unreadable (a dangling link, as a racing writer's half-published
    file looks): each attempt loses the race for it, and the commit gives up after its retries."""
    t = catalog.create_table_from_arrow("db.t", SCHEMA, options={"commit.max-retries": str(retries)})
    t.write_arrow(_rows([1]))
    os.symlink(os.path.join(t.path, "nowhere"), os.path.join(t.path, "snapshot", "snapshot-2"))
    with pytest.raises(CommitConflictError, match=f"gave up committing after {retries} retries"):
        t.write_arrow(_rows([2]))


def _runs(file, *sized_levels):
    return [SortedRun(level, (replace(file, file_name=f"f{i}", file_size=size, level=level),))
            for i, (size, level) in enumerate(sized_levels)]


@pytest.fixture
def data_file(catalog):
    t = catalog.create_table_from_arrow("db.t", SCHEMA, options={"bucket": "1"}, **PK)
    t.write_arrow(_rows([1]))
    return t.new_scan().plan_entries()[0].file


def _picked(file, options, runs):
    unit = UniversalCompaction.from_options(CoreOptions({"num-sorted-run.compaction-trigger": "3", **options})).pick(
        5, _runs(file, *runs))
    return 0 if unit is None else len(unit.files)


@pytest.mark.parametrize("amplification, picked", [("200", 2), ("10", 3)])
def test_compaction_max_size_amplification_percent_triggers_full_compaction(data_file, amplification, picked):
    options = {"compaction.max-size-amplification-percent": amplification}
    assert _picked(data_file, options, [(10, 0), (10, 0), (100, 4)]) == picked


@pytest.mark.parametrize("ratio, picked", [("1", 0), ("50", 2)])
def test_compaction_size_ratio_widens_the_runs_taken(data_file, ratio, picked):
    assert _picked(data_file, {"compaction.size-ratio": ratio}, [(10, 0), (12, 0), (1000, 4)]) == picked


@pytest.mark.parametrize("min_files, compacts", [(2, True), (5, False)])
def test_compaction_min_file_num_bounds_an_append_minor_compaction(catalog, min_files, compacts):
    t = catalog.create_table_from_arrow("db.t", SCHEMA, options={"bucket": "1", "bucket-key": "id"})
    for i in range(4):
        t.write_arrow(_rows([i]))
    target = max(e.file.file_size for e in t.new_scan().plan_entries()) + 1  # each file small, two reach it
    t = t.copy({"target-file-size": f"{target} b", "compaction.min.file-num": str(min_files)})
    assert (t.compact() is not None) == compacts
    assert sorted(t.to_arrow().column("id").to_pylist()) == [0, 1, 2, 3]


@pytest.mark.interop
@pytest.mark.parametrize("paimon_version", VERSIONS)
def test_a_table_java_writes_under_a_read_scope_option_is_not_read(catalog, warehouse, paimon_version):
    """Java Paimon (1.0 and 2.0) writes level-0 files of this table as Avro (``file.format.per.level``): reading
    them as Parquet would fail or mislead, so the read stops first, naming the option."""
    spec = importlib.util.spec_from_file_location("java_paimon", ROOT / "tests" / "interop" / "java_paimon.py")
    java_paimon = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(java_paimon)
    java = java_paimon.started(paimon_version)
    java_paimon.ok(java.run([
        {"op": "create", "warehouse": warehouse, "table": "db.j", "fields": [["id", "INT NOT NULL"], ["v", "STRING"]],
         "primary_keys": ["id"], "partition_keys": [], "options": {"bucket": "1", "file.format.per.level": "0:avro"}},
        {"op": "write", "warehouse": warehouse, "table": "db.j", "rows": [[1, "a"], [2, "b"]]}])[-1])
    t = catalog.get_table("db.j")
    assert _files(t, "**/data-*.avro")  # what Java wrote
    with pytest.raises(InvalidOptionError) as e:
        t.to_arrow()
    assert str(e.value) == ("option 'file.format.per.level' is not supported by paimon-sql (every level is read "
                            "and written in 'file.format'): the table cannot be read here")


@pytest.mark.parametrize("buffer, spillable, many_files", [("1 kb", "false", True), ("256 mb", "false", False)])
def test_write_buffer_size_flushes_level0_files(catalog, buffer, spillable, many_files):
    """A full buffer is a level-0 file, unless it spills to local disk (tests/unit/test_write_spill.py)."""
    t = catalog.create_table_from_arrow("db.t", SCHEMA, options={"bucket": "1", "write-only": "true",
                                                                 "write-buffer-size": buffer,
                                                                 "write-buffer-spillable": spillable}, **PK)
    write = t.new_write()
    for i in range(5):
        write.write_arrow(_rows(list(range(i * 50, i * 50 + 50))))
    t.new_commit().commit(write.prepare_commit())
    files = t.new_scan().plan_entries()
    assert (len(files) > 1) == many_files and {e.file.level for e in files} == {0}
    assert t.copy({"write-only": "false"}).compact(full=True) is not None
    assert sorted(catalog.get_table("db.t").to_arrow().column("id").to_pylist()) == list(range(250))
