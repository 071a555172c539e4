"""Option values that would break a table are refused at CREATE, ALTER and in hints; secrets are masked."""

import time
import threading
from dataclasses import replace

import pyarrow as pa
import pytest
from support import SCHEMA

from paimon_sql.exceptions import InvalidOptionError, SchemaError
from paimon_sql.options.core_options import MASK, redact, registry, validate
from paimon_sql.schema import schema_change as sc
from paimon_sql.schema.schema_manager import SchemaManager

PK = {"primary_keys": ["id"]}


def batch(ids):
    return pa.table({"id": ids, "name": [f"n{i}" for i in ids], "value": [float(i) for i in ids],
                     "dt": ["d"] * len(ids)}, schema=SCHEMA)


@pytest.mark.parametrize("options, match", [
    ({"dynamic-bucket.target-row-num": "0"}, "'dynamic-bucket.target-row-num' must be at least 1, got '0'"),
    ({"num-sorted-run.compaction-trigger": "0"}, "'num-sorted-run.compaction-trigger' must be at least 1"),
    ({"num-sorted-run.compaction-trigger": "-1"}, "'num-sorted-run.compaction-trigger' must be at least 1"),
    ({"bucket": "-3"}, "'bucket' must be between -2 and -1 or between 1 and 2147483647.*-2 .postpone bucket."),
    ({"bucket": "99999999999"}, "'bucket' expects a Integer value.*out of the 32-bit range"),
    ({"bucket": "0"}, "'bucket' must be between -2 and -1 or between 1 and 2147483647"),
    ({"commit.max-retries": "-1"}, "'commit.max-retries' must be at least 0"),
    ({"sequence.field": "nope"}, "'sequence.field' names unknown column.s. nope .columns: id, name, value, dt."),
    ({"sequence.field": "value,value"}, "'sequence.field' names column.s. value more than once"),
    ({"rowkind.field": "op"}, "'rowkind.field' names unknown column.s. op"),
    ({"file.compression": "bogus"}, "'file.compression' must be one of the parquet codecs none, uncompressed"),
    ({"file.format": "orc", "file.compression": "gzip"}, "'file.compression' must be one of the orc codecs"),
    ({"manifest.compression": "lz4"}, "'manifest.compression' must be one of the avro codecs"),
    ({"target-file-size": "0 b"}, "'target-file-size' must be at least 1, got '0 b'"),
    ({"write-buffer-size": "0"}, "'write-buffer-size' must be at least 1"),
    ({"page-size": "0 kb"}, "'page-size' must be at least 1"),
    ({"num-levels": "1"}, "'num-levels' must be at least 2"),
    ({"snapshot.num-retained.min": "0"}, "'snapshot.num-retained.min' must be at least 1"),
    ({"compaction.offpeak.start.hour": "24"}, "'compaction.offpeak.start.hour' is not supported by paimon-sql"),
    ({"full-compaction.delta-commits": "0"}, "'full-compaction.delta-commits' must be at least 1"),
    ({"merge-engine": "dedupe"}, "'merge-engine' must be one of deduplicate, partial-update, aggregation"),
    ({"merge-engine": "aggregation", "fields.zz.aggregate-function": "sum"},
     "'fields.zz.aggregate-function' names unknown column.s. zz"),
    ({"merge-engine": "partial-update", "fields.value.sequence-group": "name,zz"},
     "'fields.value.sequence-group' names unknown column.s. zz"),
    ({"bucket": "2", "bucket-key": "nope"}, "'bucket-key' names unknown column.s. nope"),
    ({"data-file.external-paths": "file:///elsewhere"},
     "'data-file.external-paths' is not supported by paimon-sql.*inside the table directory"),
])
def test_breaking_values_are_refused_at_create(catalog, options, match):
    with pytest.raises(InvalidOptionError, match=match):
        catalog.create_table_from_arrow("db.t", SCHEMA, options=options, **PK)
    assert not catalog.table_exists("db.t")


@pytest.mark.parametrize("options", [
    {"bucket": "4", "file.compression": "snappy", "manifest.compression": "none"},
    {"file.format": "orc", "file.compression": "zlib"},
    {"file.format": "avro", "file.compression": "deflate", "commit.max-retries": "0"},
    {"sequence.field": "value", "rowkind.field": "name", "num-levels": "2"},
    {"merge-engine": "partial-update", "fields.value.sequence-group": "name"},
    {"snapshot.num-retained.min": "10", "snapshot.num-retained.max": "2147483647"},  # retention at its defaults
])
def test_sound_values_are_kept(catalog, options):
    t = catalog.create_table_from_arrow("db.t", SCHEMA, options=options, **PK)
    assert {k: t.schema.options[k] for k in options} == options


def test_each_rule_is_declared_in_the_registry():
    specs = registry()
    assert type(specs["bucket"].rule).__name__ == "Range" and "postpone" in specs["bucket"].note
    assert type(specs["merge-engine"].rule).__name__ == "OneOf"
    assert type(specs["sequence.field"].rule).__name__ == "Columns" and specs["sequence.field"].rule.many
    assert specs["target-file-size"].rule.problem(0, None) == "must be at least 1"
    validate({"sequence.field": "not-checked-without-columns"})


def _table(catalog, **options):
    schema = SCHEMA.append(pa.field("ts", pa.int64()))
    return catalog.create_table_from_arrow("db.t", schema, options=options, **PK)


@pytest.mark.parametrize("change, match", [
    (sc.SetOption("num-sorted-run.compaction-trigger", "0"), "compaction-trigger' must be at least 1"),
    (sc.SetOption("commit.max-retries", "-1"), "'commit.max-retries' must be at least 0"),
    (sc.SetOption("file.compression", "bogus"), "'file.compression' must be one of the parquet codecs"),
    (sc.SetOption("file.format", "orc"), "'file.compression' must be one of the orc codecs.*got 'gzip'"),
    (sc.SetOption("fields.nope.ignore-retract", "true"), "'fields.nope.ignore-retract' names unknown column"),
    (sc.SetOption("bucket", "-2"), "between postpone and dynamic"),
    (sc.DropColumn("ts"), "cannot drop column 'ts': option.s. sequence.field name it"),
    (sc.DropColumn("value"), "cannot drop column 'value': option.s. fields.value.aggregate-function name it"),
])
def test_breaking_changes_are_refused_at_alter(catalog, change, match):
    t = _table(catalog, **{"sequence.field": "ts", "file.compression": "gzip", "merge-engine": "aggregation",
                           "fields.value.aggregate-function": "sum"})
    with pytest.raises((InvalidOptionError, SchemaError), match=match):
        t.schema_manager.commit_changes([change])
    assert catalog.get_table("db.t").schema.id == 0


def test_one_alter_is_judged_as_a_whole(catalog):
    """Options that depend on each other may be set together in any order."""
    t = _table(catalog, **{"file.compression": "gzip"})
    s = t.schema_manager.commit_changes([sc.SetOption("file.compression", "zlib"), sc.SetOption("file.format", "orc"),
                                         sc.SetOption("num-levels", "5")])
    assert s.options["file.compression"] == "zlib" and s.options["num-levels"] == "5"


def test_rename_column_renames_the_options_naming_it(catalog):
    t = _table(catalog, **{"sequence.field": "ts", "merge-engine": "partial-update",
                           "fields.ts.sequence-group": "value,name", "rowkind.field": "name"})
    s = t.schema_manager.commit_changes([sc.RenameColumn("ts", "ts2"), sc.RenameColumn("name", "label")])
    assert {k: v for k, v in s.options.items() if k != "merge-engine"} == {
        "sequence.field": "ts2", "fields.ts2.sequence-group": "value,label", "rowkind.field": "label"}


def test_hints_are_checked_like_alter(catalog):
    t = _table(catalog, **{"sequence.field": "ts"})
    for hint, match in [({"commit.max-retries": "-1"}, "'commit.max-retries' must be at least 0"),
                        ({"file.compression": "bogus"}, "'file.compression' must be one of"),
                        ({"write-buffer-size": "0 b"}, "'write-buffer-size' must be at least 1"),
                        ({"fields.zz.aggregate-function": "sum"}, "names unknown column.s. zz"),
                        ({"sequence.field": "value"}, "'sequence.field' cannot be changed"),
                        ({"bucket": "3"}, "between dynamic and fixed")]:
        with pytest.raises((InvalidOptionError, SchemaError), match=match):
            t.copy(hint)
    assert t.copy({"scan.snapshot-id": "1", "sequence.field": "ts"}).options.get("scan.snapshot-id") == 1


def test_dynamic_bucket_assignment_cannot_spin_on_a_stored_zero(catalog):
    """A schema written before the rule (or by another engine) with target-row-num 0: the write fails
    with a one-line error instead of looping forever."""
    t = catalog.create_table_from_arrow("db.t", SCHEMA, **PK)
    bad = replace(t.schema, id=1, options={**t.schema.options, "dynamic-bucket.target-row-num": "0"})
    SchemaManager(t.io, t.paths).commit(bad)
    table = catalog.get_table("db.t")
    outcome = []

    def write():
        try:
            table.write_arrow(batch([1, 2, 3]))
        except InvalidOptionError as e:
            outcome.append(str(e))
    worker = threading.Thread(target=write, daemon=True)
    worker.start()
    worker.join(timeout=60)
    assert not worker.is_alive(), "dynamic bucket assignment did not terminate"
    assert outcome == ["option 'dynamic-bucket.target-row-num' must be at least 1, got '0'"]


def test_dynamic_bucket_fill_is_bounded(catalog):
    from paimon_sql.write.dynamic_bucket import DynamicBucketAssigner
    t = catalog.create_table_from_arrow("db.t", SCHEMA, options={"dynamic-bucket.target-row-num": "2"}, **PK)
    assigner = DynamicBucketAssigner(t)
    import numpy as np
    full = {0: np.array([1, 2], np.int32), 2: np.array([3], np.int32)}
    got = assigner._fill(full, np.array([10, 11, 12, 13], np.int32))
    assert {b: list(h) for b, h in got.items()} == {2: [10], 1: [11, 12], 3: [13]}  # Paimon: non-full buckets first
    assigner.target_rows = 0  # a value validation refuses: still ends, assigning nothing
    assert assigner._fill(full, np.array([10], np.int32)) == {}


def test_secret_values_are_masked():
    shown = redact({"s3.secret-key": "s", "s3.access-key": "a", "fs.oss.accessKeyId": "i", "jdbc.password": "p",
                    "dlf.token": "t", "s3.access.key": "k", "bucket": "4", "s3.endpoint": "http://x"})
    assert shown == {"s3.secret-key": MASK, "s3.access-key": MASK, "fs.oss.accessKeyId": MASK, "jdbc.password": MASK,
                     "dlf.token": MASK, "s3.access.key": MASK, "bucket": "4", "s3.endpoint": "http://x"}


def test_credential_scan_is_linear_in_a_long_word():
    # a statement carrying a 100 kB literal (say base64) is scanned for credentials before every audit
    # line and error: the quadratic scan it replaced took ~3 min on it; linear, a tenth of a second
    from paimon_sql.options.core_options import scrub
    statement = "INSERT INTO t VALUES ('" + "x" * 100_000 + "') -- password=hunter2"
    start = time.perf_counter()
    assert scrub("failed at password=hunter2", statement) == "failed at password=******"
    assert time.perf_counter() - start < 5
