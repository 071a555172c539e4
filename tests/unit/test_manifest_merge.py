"""Manifest merging on commit (Paimon's ManifestFileMerger): manifests roll at
``manifest.target-file-size``; minor merges keep a DELETE whose ADD is in an earlier manifest;
full merges (``manifest.full-compaction-threshold-size``) cancel every DELETE and keep full-size
manifests that hold no deleted file."""

import pyarrow as pa

from paimon_sql.data import predicate as P

SCHEMA = pa.schema([("id", pa.int64()), ("p", pa.int32())])


def _table(catalog, **options):
    return catalog.create_table_from_arrow("db.t", SCHEMA, partition_keys=["p"],
                                           options={k.replace("_", "-"): v for k, v in options.items()})


def _rows(ids, parts):
    return pa.table({"id": pa.array(ids, pa.int64()), "p": pa.array(parts, pa.int32())})


def _manifests(t):
    snap = t.snapshot_manager.latest()
    return t.manifest_list(snap.base_manifest_list) + t.manifest_list(snap.delta_manifest_list)


def _ids(t):
    return sorted(t.to_arrow().column("id").to_pylist())


def test_a_large_commit_rolls_into_manifests_of_the_target_size(catalog):
    """Paimon checks a manifest's size every 1,000 entries: ~2,500 entries at a tiny target → 1,000,
    1,000 and the rest."""
    t = catalog.create_table_from_arrow("db.t", SCHEMA, options={"manifest.target-file-size": "1 kb",
                                                                  "bucket": "2500", "bucket-key": "id"})
    t.write_arrow(_rows(list(range(20000)), [0] * 20000))
    added = [m.num_added_files for m in _manifests(t)]
    assert added[:2] == [1000, 1000] and 0 < added[2] <= 500 and len(added) == 3
    assert _ids(t) == list(range(20000))


def test_minor_merge_keeps_a_delete_whose_add_is_in_an_earlier_manifest(catalog):
    t = catalog.create_table_from_arrow("db.t", SCHEMA, partition_keys=["p"], options={
        "manifest.target-file-size": "2 kb", "manifest.merge-min-count": "2",
        "manifest.full-compaction-threshold-size": "1 gb"})
    t.write_arrow(_rows(list(range(60)), list(range(60))))  # a manifest over the target size
    big = {m.file_name for m in _manifests(t)}
    assert len(big) == 1 and _manifests(t)[0].file_size >= 2048
    t.delete_where(P.equal("id", 7))  # small: DELETE of the file of partition 7 (its ADD is in a big one)
    t.write_arrow(_rows([100], [1]))  # small: the two small ones now merge on the next commit
    t.write_arrow(_rows([101], [2]))
    metas = _manifests(t)
    assert big <= {m.file_name for m in metas}  # the full-size manifests were kept as they are
    assert sum(m.num_deleted_files for m in metas) == 1  # the unmatched DELETE survived the merge
    assert _ids(t) == [i for i in range(60) if i != 7] + [100, 101]


def test_full_merge_cancels_deletes_and_keeps_untouched_full_size_manifests(catalog):
    t = catalog.create_table_from_arrow("db.t", SCHEMA, partition_keys=["p"], options={
        "manifest.target-file-size": "2 kb", "manifest.full-compaction-threshold-size": "1 b"})
    t.write_arrow(_rows(list(range(60)), list(range(60))))
    t.write_arrow(_rows(list(range(60, 120)), list(range(60, 120))))  # a second full-size manifest
    first, second = _manifests(t)
    t.delete_where(P.equal("id", 70))  # partition 70: only the second manifest may hold it
    t.write_arrow(_rows([200], [1]))
    metas = _manifests(t)
    assert sum(m.num_deleted_files for m in metas) == 0
    assert first.file_name in {m.file_name for m in metas} and second.file_name not in {m.file_name for m in metas}
    assert _ids(t) == [i for i in range(120) if i != 70] + [200]
