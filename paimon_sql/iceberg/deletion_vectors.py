"""Paimon's deletion vectors as Iceberg v3 deletion vectors (Paimon 2.0's IcebergCommitCallback).

A 64-bit Paimon deletion vector (``deletion-vectors.bitmap64``) is stored exactly as Iceberg's
``deletion-vector-v1`` blob: a big-endian length, the magic number, the 64-bit portable Roaring
bitmap and a big-endian CRC. So no Puffin file is written (by default): as Java does, each vector becomes a
manifest entry of content POSITION_DELETES, format ``puffin``, whose file is Paimon's own index
file, ``content_offset`` / ``content_size_in_bytes`` the vector's range in it, ``record_count`` its
cardinality and ``referenced_data_file`` the data file it deletes rows of. Iceberg readers that
read a blob by its offset (Java Iceberg 1.8+) read them; readers that parse the whole file as Puffin
(pyiceberg 0.12) do not. Only format version 3 carries deletion vectors, and only 64-bit vectors
have Iceberg's layout (32-bit ones, Paimon's default, do not). With paimon-sql's own option
``metadata.iceberg.deletion-vectors.puffin-files`` the vectors are copied into a real Puffin file
instead (:func:`as_published`, :mod:`paimon_sql.iceberg.puffin`), which every reader can open.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Dict, List, Sequence, Tuple

from paimon_sql.data import binary_row
from paimon_sql.exceptions import CorruptMetadataError
from paimon_sql.iceberg import manifest as im
from paimon_sql.iceberg import puffin
from paimon_sql.index.deletion_vector import BITMAP64, INDEX_TYPE
from paimon_sql.manifest.manifest_file import ADD
from paimon_sql.store.file_store import FileStore

if TYPE_CHECKING:
    from paimon_sql.data.types import DataType
    from paimon_sql.iceberg.publication import Publication
    from paimon_sql.manifest.manifest_file import DeletionVectorMeta, IndexManifestEntry
    from paimon_sql.options.iceberg_options import IcebergOptions
    from paimon_sql.snapshot.snapshot import Snapshot

PUFFIN = "puffin"
FORMAT_VERSION = 3  # the first Iceberg format version with deletion vectors
UNKNOWN_SIZE = -1  # Java's file size of a vector found through a split: the index file's size unread
# a vector by (partition bytes, bucket, data file name): its index file entry and its range there
Vectors = Dict[Tuple[bytes, int, str], Tuple["IndexManifestEntry", "DeletionVectorMeta"]]


def published(table: FileStore, options: IcebergOptions) -> bool:
    """Java's needAddDvToIceberg: deletion vectors, 64-bit, format version 3."""
    return (bool(table.options.get("deletion-vectors.enabled")) and bool(table.options.get(BITMAP64))
            and options.format_version >= FORMAT_VERSION)


def index_changed(table: FileStore, snap: Snapshot) -> bool:
    """Whether ``snap``'s commit changed the index files (a commit that changes none keeps its
    parent's index manifest): Java rewrites the Iceberg deletion vectors only then."""
    previous = snap.id - 1
    if not table.io.exists(table.paths.snapshot_path(previous)):
        return True
    return table.snapshot_manager.snapshot(previous).index_manifest != snap.index_manifest


def vectors(table: FileStore, snap: Snapshot) -> Vectors:
    out: Vectors = {}
    for e in table.index_manifest_entries(snap.index_manifest):
        if e.index_type == INDEX_TYPE and e.kind == ADD:
            for r in e.dv_ranges or ():
                out[(e.partition, e.bucket, r.data_file)] = (e, r)
    return out


def entry(table: FileStore, sid: int, values: tuple, index: IndexManifestEntry, dv: DeletionVectorMeta,
          data_file: str, file_size: int) -> im.IcebergManifestEntry:
    """The Iceberg manifest entry of one vector, added by snapshot ``sid``. Iceberg checks a
    vector's cardinality against the entry's record count: a vector without one (written by an
    old Paimon) cannot be published."""
    if dv.cardinality is None:
        raise CorruptMetadataError(f"table {table.name}: the deletion vector of {data_file} in "
                                   f"{index.file_name} records no cardinality; Iceberg deletion vectors "
                                   f"are not written")
    path = index.external_path or table.paths.index_path(index.file_name)
    file = im.IcebergDataFile(path, PUFFIN, values, dv.cardinality, file_size, None, None, None,
                              im.POSITION_DELETES, data_file, dv.offset, dv.length)
    return im.IcebergManifestEntry(im.ADDED, sid, sid, sid, file)


def all_entries(table: FileStore, snap: Snapshot, part_types: Sequence[DataType]) -> List[im.IcebergManifestEntry]:
    """Every vector of the snapshot (Java's createDvManifestFileMetas): sized as its index file,
    pointing at its data file in the bucket's directory."""
    out = []
    for (partition, bucket, name), (index, dv) in vectors(table, snap).items():
        values = tuple(binary_row.from_bytes(partition, part_types))
        data_file = f"{table.paths.bucket_dir(list(values), bucket)}/{name}"
        out.append(entry(table, snap.id, values, index, dv, data_file, index.file_size))
    return out


def as_published(pub: Publication, sid: int, entries: List[im.IcebergManifestEntry]) -> List[im.IcebergManifestEntry]:
    """The vector entries of snapshot ``sid`` as its metadata names them: in Paimon's index files
    (Java's layout), or, with ``metadata.iceberg.deletion-vectors.puffin-files``, copied into one
    new Puffin file of the metadata directory."""
    if not pub.options.puffin_files:
        return entries
    return puffin.copy_vectors(pub.io, puffin.new_path(pub.paths.dir, sid), entries)


def live_counts(manifests: Sequence[im.IcebergManifestFile]) -> Dict[str, int]:
    """The snapshot summary's delete-file totals, from the delete manifests."""
    return {"total-delete-files": sum(m.live_files() for m in manifests),
            "total-position-deletes": sum(m.live_rows() for m in manifests)}

