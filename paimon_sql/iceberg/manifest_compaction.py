"""Small Iceberg manifests merged (Paimon's compactMetadataIfNeeded, ``metadata.iceberg.compaction.*``).

Without it, every commit would add a manifest for good: readers would open ever more of them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, List

from paimon_sql.iceberg import lineage
from paimon_sql.iceberg import manifest as im

if TYPE_CHECKING:
    from paimon_sql.iceberg.publication import Publication


def compact(pub: Publication, manifests: List[im.IcebergManifestFile], sid: int) -> List[im.IcebergManifestFile]:
    """Merge small manifests: those under 2/3 of ``manifest.target-file-size``, once there are
    ``compaction.min.file-num`` of them and their size reaches the target, or
    ``compaction.max.file-num`` of them. Entries of older snapshots become EXISTING, older DELETED
    entries are dropped; the merged entries keep their row ids (:func:`lineage.materialize`)."""
    target = pub.table.options.get("manifest.target-file-size")
    small = [m for m in manifests if m.length < target * 2 / 3]
    if len(small) < pub.options.compaction_min_files:
        return manifests
    if len(small) < pub.options.compaction_max_files and sum(m.length for m in small) < target:
        return manifests
    entries = []
    for m in small:
        path = pub.paths.file(m.path)
        for e in lineage.materialize(m, im.read_manifest(pub.io, path, pub.part_fields)):
            if e.file_sequence_number == sid or e.snapshot_id == sid or e.status == im.EXISTING:
                entries.append(e)
            elif e.status == im.ADDED:
                entries.append(im.IcebergManifestEntry(im.EXISTING, e.snapshot_id, e.sequence_number,
                                                       e.file_sequence_number, e.file))
        if m.sequence_number == sid:
            pub.io.delete(path)
    return [m for m in manifests if m not in small] + pub.write(entries, sid)
