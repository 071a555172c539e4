"""Iceberg manifests roll at ``manifest.target-file-size``, as Java Paimon 2.0's IcebergManifestFile
rolls them: its rolling writer looks at a manifest's size after every 1000th entry, so with a target
below a manifest's header size a manifest holds exactly 1000 entries. One commit of 1001 data files
(one per partition) through Java and through us: the same manifests, and pyiceberg reads every row."""

import json
import os

import fastavro
import pyarrow as pa
import pytest
from java_paimon import Driver, driver_command
from pyiceberg.table import StaticTable

from test_iceberg_interop import FOR_JAVA, SCHEMA, SOURCE, latest_metadata, metadata_dir, ours

pytestmark = pytest.mark.interop

TINY = {**FOR_JAVA, "manifest.target-file-size": "1 kb"}
N = 1001


def _batch(ids) -> list:
    return [[i, f"n{i}", f"d{i}"] for i in ids]


def _manifests(directory: str) -> list:
    """(content, added, existing, deleted entries) of each manifest of the current snapshot."""
    meta = json.load(open(latest_metadata(directory)))
    current = next(s for s in meta["snapshots"] if s["snapshot-id"] == meta["current-snapshot-id"])
    records = fastavro.reader(open(f"{directory}/{os.path.basename(current['manifest-list'])}", "rb"))
    return sorted((r["content"], r["added_files_count"], r["existing_files_count"], r["deleted_files_count"])
                  for r in records)


def _iceberg_rows(directory: str) -> list:
    scan = StaticTable.from_metadata(latest_metadata(directory)).scan()
    return sorted(tuple(r.values()) for r in scan.to_arrow().to_pylist())


def test_manifests_roll_at_the_target_size_as_javas(catalog, tmp_path):
    theirs = str(tmp_path / "java")
    batches = [_batch(range(N)), _batch([N])]
    with Driver(driver_command(SOURCE, version="2.0")) as driver:
        driver.on(theirs, [{"op": "create", "table": "db.t", "pk": False, "options": TINY}]
                  + [{"op": "write", "table": "db.t", "rows": b} for b in batches[:1]])
        java_dir = f"{theirs}/db.db/t/metadata"
        t = catalog.create_table_from_arrow("db.t", SCHEMA, partition_keys=["dt"], options=TINY)
        t.write_arrow(pa.table(list(zip(*batches[0])), schema=SCHEMA))
        assert _manifests(metadata_dir(t)) == _manifests(java_dir) == [(0, 1, 0, 0), (0, 1000, 0, 0)]
        # the next commit keeps both and adds its own manifest, merging none (none is under 2/3 of the target)
        driver.on(theirs, [{"op": "write", "table": "db.t", "rows": batches[1]}])
        t.write_arrow(pa.table(list(zip(*batches[1])), schema=SCHEMA))
        assert _manifests(metadata_dir(t)) == _manifests(java_dir) == [(0, 1, 0, 0), (0, 1, 0, 0), (0, 1000, 0, 0)]
    assert _iceberg_rows(metadata_dir(t)) == _iceberg_rows(java_dir) == ours(t)
    assert len(ours(t)) == N + 1


def test_the_default_target_keeps_one_manifest(catalog):
    t = catalog.create_table_from_arrow("db.t", SCHEMA, partition_keys=["dt"], options=FOR_JAVA)
    t.write_arrow(pa.table(list(zip(*_batch(range(N)))), schema=SCHEMA))
    assert _manifests(metadata_dir(t)) == [(0, N, 0, 0)]
    assert _iceberg_rows(metadata_dir(t)) == ours(t)
