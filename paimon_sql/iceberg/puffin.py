"""Real Puffin files of deletion vectors (``metadata.iceberg.deletion-vectors.puffin-files``).

Java Paimon points Iceberg at its own index files, which hold each 64-bit vector in Iceberg's
``deletion-vector-v1`` layout but are not Puffin files; readers that open a delete file whole as
Puffin (pyiceberg 0.12, DuckDB 1.5) fail on them. With the option on, each commit that rewrites the
published vectors copies every vector's blob into one Puffin file of the Iceberg metadata directory
and points the manifest entries there instead (spec: https://iceberg.apache.org/puffin-spec/):

    magic | blob 1 .. blob n | magic | footer JSON | footer size (4 bytes LE) | flags (4 zero bytes) | magic

Each blob's metadata names its data file (``referenced-data-file``) and its ``cardinality``; its
snapshot id and sequence number are -1, as the spec asks (neither is known when the file is written).
The files are named ``dv-<snapshot id>-<uuid>.puffin`` so that expiry can tell ours from other files
and never touches one a newer snapshot is writing (:func:`written_before`).
"""

from __future__ import annotations

import json
import re
import struct
import uuid
from dataclasses import replace
from typing import TYPE_CHECKING, Dict, List, Sequence

if TYPE_CHECKING:
    from paimon_sql.iceberg import manifest as im
    from paimon_sql.io.file_io import FileIO

MAGIC = b"PFA1"
BLOB_TYPE = "deletion-vector-v1"
ROW_POSITION_FIELD = 2147483645  # Iceberg's _pos metadata column: what a deletion vector is computed for
UNKNOWN = -1  # a blob's snapshot id and sequence number in a Puffin v1 file of deletion vectors
CREATED_BY = "paimon-sql"
_NAME = re.compile(r"dv-(\d+)-[0-9a-f-]+\.puffin")


def new_path(directory: str, sid: int) -> str:
    return f"{directory}/dv-{sid}-{uuid.uuid4()}.puffin"


def encode(blobs: Sequence[bytes], properties: Sequence[Dict[str, str]]) -> bytes:
    """A Puffin file of ``blobs`` (each ``deletion-vector-v1``, uncompressed), with ``properties`` per blob."""
    body, metas, offset = [MAGIC], [], len(MAGIC)
    for blob, props in zip(blobs, properties):
        metas.append({"type": BLOB_TYPE, "fields": [ROW_POSITION_FIELD], "snapshot-id": UNKNOWN,
                      "sequence-number": UNKNOWN, "offset": offset, "length": len(blob), "properties": props})
        body.append(blob)
        offset += len(blob)
    footer = json.dumps({"blobs": metas, "properties": {"created-by": CREATED_BY}}).encode("utf-8")
    return b"".join(body + [MAGIC, footer, struct.pack("<i", len(footer)), bytes(4), MAGIC])


def copy_vectors(io: FileIO, path: str, entries: List[im.IcebergManifestEntry]) -> List[im.IcebergManifestEntry]:
    """Write the blobs ``entries`` point at (ranges of Paimon's index files) into a Puffin file at
    ``path``; returns the entries pointing at their copies there. No entries: no file."""
    if not entries:
        return entries
    sources: Dict[str, bytes] = {}
    blobs, props = [], []
    for e in entries:
        f = e.file
        if f.file_path not in sources:
            sources[f.file_path] = io.read_bytes(f.file_path)
        blobs.append(sources[f.file_path][f.content_offset:f.content_offset + f.content_size])
        props.append({"referenced-data-file": f.referenced_data_file, "cardinality": str(f.record_count)})
    data = encode(blobs, props)
    io.write_bytes(path, data)
    out, offset = [], len(MAGIC)
    for e, blob in zip(entries, blobs):
        out.append(replace(e, file=replace(e.file, file_path=path, file_size=len(data), content_offset=offset)))
        offset += len(blob)
    return out


def written_before(io: FileIO, directory: str, sid: int) -> List[str]:
    """Our Puffin files in ``directory`` written for snapshots before ``sid``."""
    return [f"{directory}/{name}" for name in io.list_names(directory)
            if (m := _NAME.fullmatch(name)) and int(m.group(1)) < sid]
