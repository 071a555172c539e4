"""Iceberg metadata extending the previous snapshot's (Paimon's createMetadataWithBase).

The snapshot's delta (its ADD / DELETE manifest entries) becomes a new manifest of added files;
base manifests holding a file the snapshot deleted are rewritten with that file DELETED and the
rest EXISTING, the others kept as they are. Small manifests are then merged
(:mod:`paimon_sql.iceberg.manifest_compaction`), totals carried over from the base summary, tag
refs rebuilt from the tags, and snapshots Paimon would expire dropped (:mod:`paimon_sql.iceberg.expiry`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, List, Tuple

from paimon_sql.data import binary_row
from paimon_sql.exceptions import PaimonError
from paimon_sql.iceberg import deletion_vectors as dvs
from paimon_sql.iceberg import expiry, lineage
from paimon_sql.iceberg import manifest as im
from paimon_sql.iceberg.manifest_compaction import compact
from paimon_sql.iceberg.metadata import current_snapshot, new_metadata, snapshot, tag_ref
from paimon_sql.manifest.manifest_file import ADD, DELETE
from paimon_sql.read.scan import manifest_entries, manifest_list

if TYPE_CHECKING:
    from paimon_sql.iceberg.publication import Changes, Publication
    from paimon_sql.snapshot.snapshot import Snapshot


def write_with_base(pub: Publication, snap: Snapshot, base: dict, row_floor: int) -> None:
    """The metadata of ``snap`` extending ``base``, its new row ids (format version 3) from ``row_floor`` on."""
    sid = snap.id
    table = pub.table
    base_snapshot = current_snapshot(base)
    base_list = im.read_manifest_list(pub.io, pub.paths.file(base_snapshot["manifest-list"]))
    base_manifests = [m for m in base_list if m.content == im.DATA]
    delete_manifests = []  # Java's: all vectors anew when the commit changed the index, else the base's
    if pub.dv and dvs.index_changed(table, snap):
        delete_manifests = pub.write(dvs.as_published(pub, sid, dvs.all_entries(table, snap, pub.part_types)), sid,
                                     im.DELETES)
    elif pub.dv:
        delete_manifests = [m for m in base_list if m.content == im.DELETES]
    removed, added, add_only = _changes(pub, snap)
    changed_partitions = len({v for v, _ in removed.values()} | {v for v, _ in added.values()})
    operation = "append"
    manifests: List[im.IcebergManifestFile] = []
    if add_only:
        manifests = list(base_manifests)
    else:
        for m in base_manifests:
            entries = im.read_manifest(pub.io, pub.paths.file(m.path), pub.part_fields)
            live = [e for e in lineage.materialize(m, entries) if e.is_live()]
            for e in live:
                added.pop(e.file.file_path, None)  # already published (a file moved between levels)
            if not any(e.file.file_path in removed for e in live):
                manifests.append(m)
                continue
            operation = "replace" if snap.commit_kind == "COMPACT" else "overwrite"
            rewritten = [im.IcebergManifestEntry(im.DELETED, sid, e.sequence_number, e.file_sequence_number, e.file)
                         if e.file.file_path in removed else
                         im.IcebergManifestEntry(im.EXISTING, e.snapshot_id, e.sequence_number,
                                                 e.file_sequence_number, e.file) for e in live]
            manifests += pub.write(rewritten, sid)
    manifests = compact(pub, manifests + pub.write(pub.added(added, sid), sid), sid) + delete_manifests
    list_path, first_row_id, added_rows = pub.write_list(manifests, row_floor)

    before = base_snapshot.get("summary", {})

    def total(key: str, fallback: Callable[[], int]) -> int:
        try:
            return int(before[key])
        except (KeyError, ValueError):
            return fallback()

    metrics = {"added-data-files": len(added), "added-records": sum(f.row_count for _, f in added.values()),
               "added-files-size": sum(f.file_size for _, f in added.values()),
               "deleted-data-files": len(removed), "deleted-records": sum(f.row_count for _, f in removed.values()),
               "removed-files-size": sum(f.file_size for _, f in removed.values()),
               "changed-partition-count": changed_partitions, **dvs.live_counts(delete_manifests)}
    metrics["total-records"] = (total("total-records", lambda: sum(m.live_rows() for m in base_manifests))
                                + metrics["added-records"] - metrics["deleted-records"])
    metrics["total-data-files"] = (total("total-data-files", lambda: sum(m.live_files() for m in base_manifests))
                                   + metrics["added-data-files"] - metrics["deleted-data-files"])
    metrics["total-files-size"] = (total("total-files-size", lambda: _live_size(pub, base_manifests))
                                   + metrics["added-files-size"] - metrics["removed-files-size"])

    schema_id = table.schema_manager.latest().id
    schemas = list(base["schemas"])
    if schema_id != base["current-schema-id"]:
        if schema_id < base["current-schema-id"]:
            raise PaimonError(f"table {table.name}: its schema {schema_id} is older than the Iceberg "
                              f"metadata's {base['current-schema-id']}")
        schemas += [pub.schema(i) for i in range(base["current-schema-id"] + 1, schema_id + 1)]
    snapshots = list(base["snapshots"]) + [snapshot(sid, sid - 1, pub.summary(operation, snap, metrics),  # its own
                                                    list_path, snap.schema_id, first_row_id, added_rows)]  # schema
    kept = expiry.retained(table, snapshots, sid)
    expired = snapshots[:len(snapshots) - len(kept)]
    kept_ids = {s["snapshot-id"] for s in kept}
    refs = {}
    for tag in table.tag_manager.tags():  # one ref per snapshot: its first tag, as Paimon
        if tag.snapshot.id in kept_ids and tag.snapshot.id not in {r["snapshot-id"] for r in refs.values()}:
            refs[tag.name] = tag_ref(tag.snapshot.id)
    metadata = new_metadata(base["format-version"], base["table-uuid"], base["location"], sid,
                            pub.last_column_id(schemas, base), schemas, schema_id,
                            base["partition-specs"], base["last-partition-id"], kept, sid, refs,
                            None if first_row_id is None else first_row_id + added_rows)
    pub.finish(metadata, sid)
    expiry.delete_old_metadata(pub, sid)
    chain = expired + kept[:1]
    for old, nxt in zip(chain, chain[1:]):
        expiry.expire_list(pub, old["manifest-list"], nxt["manifest-list"])
    if pub.dv:
        expiry.delete_puffin_files(pub, kept[0])


def _changes(pub: Publication, snap: Snapshot) -> Tuple[Changes, Changes, bool]:
    """(removed, added, add-only) of the snapshot's delta, by path. DELETE entries are taken
    before ADD entries: a file in both moved between levels and stays (Paimon's writers list a
    compaction's deletions first; ours may not)."""
    removed: Changes = {}
    added: Changes = {}
    add_only = True
    delta = manifest_entries(pub.table, manifest_list(pub.table, snap.delta_manifest_list,
                                                      snap.delta_manifest_list_size))
    for e in sorted(delta, key=lambda x: x.kind != DELETE):
        values = tuple(binary_row.from_bytes(e.partition, pub.part_types))
        path = pub.path(values, e.bucket, e.file)
        if e.kind == ADD:
            if pub.exposed(e.file):
                removed.pop(path, None)
                added[path] = (values, e.file)
        else:
            add_only = False
            added.pop(path, None)
            removed[path] = (values, e.file)
    return removed, added, add_only


def _live_size(pub: Publication, manifests: List[im.IcebergManifestFile]) -> int:
    return sum(e.file.file_size for m in manifests
               for e in im.read_manifest(pub.io, pub.paths.file(m.path), pub.part_fields) if e.is_live())
