"""Merging a snapshot's manifests on commit, as Paimon's ``ManifestFileMerger``.

Every commit rewrites the base manifest list as the previous snapshot's manifests passed through
:func:`merge_manifests`, so planning never has to read thousands of tiny manifests and DELETE
entries do not pile up. Java, pypaimon and we must leave comparable manifest lists behind (a
reader of a table Java wrote is as fast as Java's), hence Paimon's two rules, in its order:

- **full compaction** when the manifests that must change (those with DELETE entries or smaller
  than ``manifest.target-file-size``) add up to ``manifest.full-compaction-threshold-size``: every
  DELETE entry is cancelled against its ADD; manifests that are full-size, DELETE-free and cannot
  hold a deleted file (by their partition stats, else by reading them) are kept as they are, the
  rest are rewritten into manifests of about the target size;
- otherwise **minor compaction**: consecutive manifests are merged whenever they reach the target
  size together, and the trailing small ones once there are ``manifest.merge-min-count`` of them.
  A DELETE whose ADD lies in an earlier manifest than the merged run is kept.

``CALL sys.compact_manifest`` is the full rule with both thresholds at their minimum (1).
"""

from __future__ import annotations

from typing import Callable, Dict, List, Optional, Sequence, Set

from paimon_sql.data import binary_row
from paimon_sql.manifest.manifest_file import ADD, DELETE, ManifestEntry, ManifestFileMeta

Read = Callable[[ManifestFileMeta], List[ManifestEntry]]
Write = Callable[[List[ManifestEntry]], List[ManifestFileMeta]]


def merge_manifests(metas: List[ManifestFileMeta], read: Read, write: Write, target_size: int, min_count: int,
                    full_trigger: int, partition_types: Sequence) -> List[ManifestFileMeta]:
    """The manifests to list instead of ``metas`` (the same ones when nothing is due)."""
    full = _full_compaction(metas, read, write, target_size, full_trigger, partition_types)
    return full if full is not None else _minor_compaction(metas, read, write, target_size, min_count)


def _minor_compaction(metas, read: Read, write: Write, target_size: int, min_count: int) -> List[ManifestFileMeta]:
    result: List[ManifestFileMeta] = []
    run: List[ManifestFileMeta] = []
    size = 0
    for meta in metas:
        run.append(meta)
        size += meta.file_size
        if size >= target_size:
            result += _merge_run(run, read, write)
            run, size = [], 0
    result += _merge_run(run, read, write) if len(run) >= min_count else run
    return result


def _merge_run(run: List[ManifestFileMeta], read: Read, write: Write) -> List[ManifestFileMeta]:
    if len(run) == 1:
        return run
    merged: Dict[tuple, ManifestEntry] = {}
    for meta in run:
        for e in read(meta):
            key = e.identifier()
            if e.kind == DELETE and key in merged:
                del merged[key]  # added and deleted within the run: neither entry is needed
            else:
                merged[key] = e  # an unmatched DELETE stays: its ADD is in an earlier manifest
    return write(list(merged.values())) if merged else []


def _full_compaction(metas, read: Read, write: Write, target_size: int, trigger: int,
                     partition_types: Sequence) -> Optional[List[ManifestFileMeta]]:
    def must_change(m: ManifestFileMeta) -> bool:
        return m.num_deleted_files > 0 or m.file_size < target_size

    if sum(m.file_size for m in metas if must_change(m)) < trigger:
        return None
    deleted = {e.identifier() for m in metas if m.num_deleted_files for e in read(m) if e.kind == DELETE}
    may_hold = may_hold_partitions({key[0] for key in deleted}, partition_types)
    kept = [m for m in metas if not must_change(m) and not may_hold(m)]
    candidates = [m for m in metas if must_change(m) or may_hold(m)]
    if len(candidates) <= 1:
        return None
    rewrite: List[ManifestEntry] = []
    for meta in candidates:
        adds = [e for e in read(meta) if e.kind == ADD]
        live = [e for e in adds if e.identifier() not in deleted]
        if must_change(meta) or len(live) < len(adds):
            rewrite += live
        else:
            kept.append(meta)
    return kept + (write(rewrite) if rewrite else [])


def may_hold_partitions(partitions: Set[bytes], types: Sequence) -> Callable[[ManifestFileMeta], bool]:
    """Whether a manifest's partition stats admit one of ``partitions`` (here those of deleted files;
    a write's restore asks it of the partitions it writes)."""
    if not partitions:
        return lambda meta: False
    if not types:
        return lambda meta: True
    values = [binary_row.from_bytes(p, types) for p in partitions]

    def admits(meta: ManifestFileMeta) -> bool:
        stats = meta.partition_stats.decode(types)
        return any(all(_within(v, stats.mins[i], stats.maxs[i], stats.null_counts[i]) for i, v in enumerate(row))
                   for row in values)
    return admits


def _within(value, low, high, nulls) -> bool:
    if value is None:
        return nulls is None or nulls > 0
    try:
        return (low is None or low <= value) and (high is None or value <= high)
    except TypeError:  # stats of another type after a schema change: read the manifest
        return True
