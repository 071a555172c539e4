"""Iceberg format version 3 row lineage: the row ids Iceberg readers give every row (``_row_id``).

Iceberg 1.10 refuses v3 metadata without the table's ``next-row-id``, and REST catalogs refuse a v3
snapshot without ``first-row-id``. Java Paimon 2.0 writes neither; Paimon's master after 2.0 does
(apache/paimon #9244, #9245), and so do we, as it does: each new snapshot's ``first-row-id`` is the
table's ``next-row-id`` before it; every data manifest of the snapshot's manifest list without a
``first_row_id`` gets the next range, as long as its ADDED and EXISTING rows (a reader gives those
rows ids in manifest order, DELETED entries none); the snapshot's ``added-rows`` is the total
assigned and the table's ``next-row-id`` moves past it. Delete manifests get none. A manifest kept
from the base keeps its range; entries copied into a new manifest (a rewrite, a compaction) carry
the id they had as their file's ``first_row_id``, so a row keeps its id (the new manifest's range,
reserved for all its rows, then leaves gaps, which the spec allows). Ids are never handed out
twice: the next range starts above the ``next-row-id`` of the newest metadata before the snapshot,
above every range its snapshots hold (Java Paimon 2.0 continuing our metadata drops ``next-row-id``
but keeps its snapshots'), and above the metadata a rollback dropped (:func:`floor`, applied by
the publisher).
"""

from __future__ import annotations

import dataclasses
from typing import List, Optional, Sequence, Tuple

from paimon_sql.exceptions import CorruptMetadataError
from paimon_sql.iceberg import manifest as im
from paimon_sql.iceberg.metadata import read_metadata

FORMAT_VERSION = 3  # the first Iceberg format version with row lineage
NEXT_ROW_ID = "next-row-id"


def floor(metadata: Optional[dict]) -> int:
    """The lowest row id not handed out by ``metadata`` (0 for none): its ``next-row-id`` and the
    end of every range its snapshots hold."""
    if metadata is None:
        return 0
    ends = [s["first-row-id"] + s.get("added-rows", 0) for s in metadata.get("snapshots", [])
            if s.get("first-row-id") is not None]
    return max([metadata.get(NEXT_ROW_ID) or 0, *ends])


def floor_at(fio, path: str) -> int:
    """:func:`floor` of the metadata file at ``path``; 0 when it is damaged (nothing to learn)."""
    try:
        return floor(read_metadata(fio, path))
    except CorruptMetadataError:
        return 0


def assign(manifests: Sequence[im.IcebergManifestFile],
           first_row_id: int) -> Tuple[List[im.IcebergManifestFile], int]:
    """``manifests`` with a ``first_row_id`` for each data manifest that has none, from
    ``first_row_id`` on; and the number of ids assigned (the snapshot's ``added-rows``)."""
    out, next_id = [], first_row_id
    for m in manifests:
        if m.content == im.DATA and m.first_row_id is None:
            out.append(dataclasses.replace(m, first_row_id=next_id))
            next_id += m.added_rows + m.existing_rows
        else:
            out.append(m)
    return out, next_id - first_row_id


def materialize(manifest: im.IcebergManifestFile,
                entries: Sequence[im.IcebergManifestEntry]) -> List[im.IcebergManifestEntry]:
    """The entries of ``manifest`` with the row id each file inherits written into it, before they
    are copied into another manifest: in manifest order, past DELETED entries and files that
    carry their own, as readers assign them. As they are for a manifest without a range."""
    if manifest.content != im.DATA or manifest.first_row_id is None:
        return list(entries)
    out, next_id = [], manifest.first_row_id
    for e in entries:
        if e.status != im.DELETED and e.file.first_row_id is None:
            e = dataclasses.replace(e, file=dataclasses.replace(e.file, first_row_id=next_id))
            next_id += e.file.record_count
        out.append(e)
    return out
