"""Iceberg snapshot expiry in step with Paimon's (Paimon's shouldExpire, expireManifestList,
expireAllBefore and deleteApplicableMetadataFiles).

An Iceberg snapshot goes when Paimon's ``snapshot.num-retained.*`` / ``snapshot.time-retained``
would expire its Paimon snapshot, with its manifest list and the manifests the next kept snapshot
no longer uses. Older metadata files go after each commit
(``metadata.iceberg.delete-after-commit.enabled``, ``previous-versions-max``). Puffin files of
deletion vectors (``metadata.iceberg.deletion-vectors.puffin-files``) go once no kept snapshot names
them (:func:`delete_puffin_files`), also those whose snapshots Java Paimon expired, which deletes
manifests but knows nothing of our Puffin files.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Dict, List

from paimon_sql.iceberg import manifest as im
from paimon_sql.iceberg import puffin
from paimon_sql.iceberg.metadata import read_metadata
from paimon_sql.store.file_store import FileStore

if TYPE_CHECKING:
    from paimon_sql.iceberg.publication import Publication


def retained(table: FileStore, snapshots: List[dict], sid: int) -> List[dict]:
    """The snapshots from the first one Paimon's retention keeps (the newest always)."""
    opts = table.options
    retain_min, retain_max = opts.get("snapshot.num-retained.min"), opts.get("snapshot.num-retained.max")
    oldest_kept_ms = int(time.time() * 1000) - opts.get("snapshot.time-retained")

    def expires(s: dict) -> bool:
        if s["snapshot-id"] > sid - retain_min:
            return False
        return s["snapshot-id"] <= sid - retain_max or s["timestamp-ms"] < oldest_kept_ms

    for i, s in enumerate(snapshots[:-1]):
        if not expires(s):
            return snapshots[i:]
    return snapshots[-1:]


def expire_list(pub: Publication, old: str, nxt: str) -> None:
    """Delete an expired snapshot's manifest list and its manifests the next snapshot does not use."""
    in_use = {pub.paths.file(m.path) for m in im.read_manifest_list(pub.io, pub.paths.file(nxt))}
    old_path = pub.paths.file(old)
    if pub.io.exists(old_path):
        for m in im.read_manifest_list(pub.io, old_path):
            if pub.paths.file(m.path) not in in_use:
                pub.io.delete(pub.paths.file(m.path))
    pub.io.delete(old_path)


def expire_all_before(pub: Publication, sid: int) -> None:
    """Every manifest, manifest list and metadata file of older metadata files (Paimon's expireAllBefore)."""
    for path in files_of(pub, [old for old in pub.paths.metadata_ids(pub.io) if old < sid]):
        pub.io.delete(path)
    delete_old_metadata(pub, sid)


def files_of(pub: Publication, versions: List[int]) -> List[str]:
    """The manifest lists of every snapshot of metadata ``versions``, each after its manifests."""
    out: Dict[str, None] = {}
    for old in versions:
        for s in read_metadata(pub.io, pub.paths.metadata(old)).get("snapshots", []):
            list_path = pub.paths.file(s["manifest-list"])
            if list_path in out:
                continue
            if pub.io.exists(list_path):
                out.update((pub.paths.file(m.path), None) for m in im.read_manifest_list(pub.io, list_path))
            out[list_path] = None
    return list(out)


def delete_puffin_files(pub: Publication, oldest_kept: dict) -> None:
    """Delete our Puffin files that no snapshot from ``oldest_kept`` on names. A file is named by
    the snapshots from the one it was written for until the next that rewrites the vectors (both
    Paimons keep the previous delete manifests otherwise), so a file older than ``oldest_kept`` is
    in use only if ``oldest_kept`` names it; newer ones are left alone. Files are compared by name
    (a copied table names them at its old location)."""
    candidates = puffin.written_before(pub.io, pub.paths.dir, oldest_kept["snapshot-id"])
    if not candidates:
        return
    list_path = pub.paths.file(oldest_kept["manifest-list"])
    named = set()
    for m in im.read_manifest_list(pub.io, list_path) if pub.io.exists(list_path) else ():
        if m.content == im.DELETES:
            named.update(pub.paths.file(e.file.file_path)
                         for e in im.read_manifest(pub.io, pub.paths.file(m.path), pub.part_fields))
    for path in candidates:
        if path not in named:
            pub.io.delete(path)


def delete_old_metadata(pub: Publication, sid: int) -> None:
    if not pub.options.delete_after_commit:
        return
    earliest = sid - pub.options.previous_versions_max
    for old in pub.paths.metadata_ids(pub.io):
        if old < earliest:
            pub.io.delete(pub.paths.metadata(old))
