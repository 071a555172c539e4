"""Iceberg metadata written afresh (Paimon's createMetadataWithoutBase): for the first snapshot,
or when the previous metadata is missing or of another format version.

The metadata names the files of the snapshot that Paimon reads without a merge (its
rawConvertible splits), with their deletion vectors when they are published, in one new Iceberg
snapshot; the files of every older metadata file are then expired.
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Dict, List, Optional, Tuple

from paimon_sql.data import binary_row
from paimon_sql.iceberg import deletion_vectors as dvs
from paimon_sql.iceberg import expiry
from paimon_sql.iceberg import manifest as im
from paimon_sql.iceberg.metadata import new_metadata, partition_spec_fields, snapshot
from paimon_sql.manifest.manifest_file import ManifestEntry
from paimon_sql.mergetree.interval_partition import sections
from paimon_sql.read.scan import ScanStore

if TYPE_CHECKING:
    from paimon_sql.iceberg.publication import Changes, Publication
    from paimon_sql.snapshot.snapshot import Snapshot


def write_afresh(pub: Publication, snap: Snapshot, row_floor: int, table_uuid: Optional[str] = None) -> None:
    """The metadata of ``snap`` alone, its row ids (format version 3) from ``row_floor`` on; under
    ``table_uuid`` when given, else a new one."""
    sid = snap.id
    table = pub.table
    changes: Changes = {}
    found = dvs.vectors(table, snap) if pub.dv else {}
    deletes = []
    for e in raw_convertible(table, table.new_scan().with_snapshot(sid).plan_entries(), pub.dv):
        values = tuple(binary_row.from_bytes(e.partition, pub.part_types))
        path = pub.path(values, e.bucket, e.file)
        changes[path] = (values, e.file)
        if (e.partition, e.bucket, e.file.file_name) in found:
            index, dv = found[(e.partition, e.bucket, e.file.file_name)]
            deletes.append(dvs.entry(table, sid, values, index, dv, path, dvs.UNKNOWN_SIZE))
    delete_manifests = pub.write(dvs.as_published(pub, sid, deletes), sid, im.DELETES)
    list_path, first_row_id, added_rows = pub.write_list(pub.write(pub.added(changes, sid), sid) + delete_manifests,
                                                         row_floor)
    files = [f for _, f in changes.values()]
    metrics = {"added-data-files": len(files), "added-records": sum(f.row_count for f in files),
               "added-files-size": sum(f.file_size for f in files),
               "changed-partition-count": len({v for v, _ in changes.values()})}
    metrics.update({"total-data-files": metrics["added-data-files"], "total-records": metrics["added-records"],
                    "total-files-size": metrics["added-files-size"], **dvs.live_counts(delete_manifests)})
    schema_id = table.schema_manager.latest().id
    current = pub.schema(schema_id)
    spec = partition_spec_fields(table.schema.partition_keys, current)
    snapshots = [snapshot(sid, None if sid == 1 else sid - 1, pub.summary("append", snap, metrics), list_path,
                          snap.schema_id, first_row_id, added_rows)]  # its own schema, as Paimon's master
    schemas = [pub.schema(i) for i in range(schema_id + 1)]
    metadata = new_metadata(pub.options.format_version, table_uuid or str(uuid.uuid4()), table.path, sid,
                            pub.last_column_id(schemas), schemas, schema_id,
                            [{"spec-id": 0, "fields": spec}],
                            max((f["field-id"] for f in spec), default=im.FIRST_PARTITION_FIELD_ID - 1),
                            snapshots, sid, {}, None if first_row_id is None else first_row_id + added_rows)
    pub.finish(metadata, sid)
    expiry.expire_all_before(pub, sid)
    if pub.dv:
        expiry.delete_puffin_files(pub, snapshots[0])


def raw_convertible(table: ScanStore, entries: List[ManifestEntry], vectors: bool = False) -> List[ManifestEntry]:
    """The files a fresh metadata exposes: Paimon reads a snapshot's rawConvertible splits
    (MergeTreeSplitGenerator.splitForBatch): an append table's every file; in a primary-key
    bucket, every file when all sit above level 0 without deleted rows and in one level (any
    levels with deletion vectors), else each file that is alone in its split (one key section,
    packed by ``source.split.*`` as Paimon packs).

    With its deletion ``vectors`` published, a primary-key table's every file above level 0 is
    named too, as metadata extended from a base names them (``Publication.exposed``) and as Paimon's
    batch scan of such a table reads them (level 0 left out): a level-0 file overlapping its
    bucket's compacted files otherwise hid them all, and every metadata extending this one lost
    them for good (met after Java Paimon 2.0's metadata, written again afresh for want of row
    lineage, when our commit added a level-0 file). Where no level-0 file overlaps a compacted
    one, the files named are Java's (its afresh metadata, compared in the interop tests)."""
    if not table.schema.is_primary_key_table:
        return entries
    buckets: Dict[Tuple[bytes, int], List[ManifestEntry]] = {}
    for e in entries:
        buckets.setdefault((e.partition, e.bucket), []).append(e)
    target = table.options.get("source.split.target-size")
    open_cost = table.options.get("source.split.open-file-cost")
    out = []
    for group in buckets.values():
        by_name = {e.file.file_name: e for e in group}
        files = [e.file for e in group]
        raw = all(f.level != 0 and not f.delete_row_count for f in files)
        if raw and (table.options.get("deletion-vectors.enabled") or len({f.level for f in files}) == 1):
            out += group
            continue
        splits, current, weight = [], [], 0
        for section in sections(files, table.key_range):
            flat = list(section)
            w = max(sum(f.file_size for f in flat), open_cost)
            if current and weight + w > target:
                splits.append(current)
                current, weight = [], 0
            current += flat
            weight += w
        splits.append(current)
        out += [by_name[s[0].file_name] for s in splits if len(s) == 1 and not s[0].delete_row_count]
    if vectors:
        named = {(e.partition, e.bucket, e.file.file_name) for e in out}
        out += [e for e in entries if e.file.level > 0 and (e.partition, e.bucket, e.file.file_name) not in named]
    return out
