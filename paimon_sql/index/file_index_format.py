"""The file index container (seed 003 §3.9.6.1): every index of one data file in one blob.

Layout, integers big-endian: magic (8 bytes, 1493475289347502), version (4, = 1), head length
(4, bytes from the file start to the body), column count (4); per column its name (Java
``writeUTF``: 2-byte length + modified UTF-8) and index count (4), per index its type name
(writeUTF), start (4, from the file start) and length (4); a redundant length (4, = 0) and that
many redundant bytes; then the body, each index's bytes back to back. Map entries are indexed
under ``column##key``.
"""

from __future__ import annotations

import struct
from typing import Dict, Tuple

from paimon_sql.exceptions import CorruptMetadataError

MAGIC = 1493475289347502
VERSION = 1

# column → index type → (start, length) within the blob
Header = Dict[str, Dict[str, Tuple[int, int]]]


def java_utf(text: str) -> bytes:
    """Java's DataOutput.writeUTF: length-prefixed modified UTF-8 (NUL as C0 80, astral characters
    as two 3-byte surrogates)."""
    out = bytearray()
    for unit in struct.unpack(f"<{len(text.encode('utf-16-le')) // 2}H", text.encode("utf-16-le")):
        if 0 < unit < 0x80:
            out.append(unit)
        elif unit < 0x800:
            out += bytes((0xC0 | unit >> 6, 0x80 | unit & 0x3F))
        else:
            out += bytes((0xE0 | unit >> 12, 0x80 | unit >> 6 & 0x3F, 0x80 | unit & 0x3F))
    return struct.pack(">H", len(out)) + bytes(out)


def _read_utf(data: bytes, pos: int) -> Tuple[str, int]:
    (n,) = struct.unpack_from(">H", data, pos)
    raw = data[pos + 2: pos + 2 + n]
    text = raw.replace(b"\xc0\x80", b"\x00").decode("utf-8", errors="surrogatepass")
    return text.encode("utf-16", "surrogatepass").decode("utf-16"), pos + 2 + n


def write(indexes: Dict[str, Dict[str, bytes]]) -> bytes:
    """One blob of ``indexes`` (column → index type → serialized index)."""
    names = b"".join(java_utf(c) + b"".join(java_utf(t) for t in types) for c, types in indexes.items())
    n_indexes = sum(len(types) for types in indexes.values())
    head_length = 8 + 4 + 4 + 4 + 8 * n_indexes + 4 * len(indexes) + 4 + len(names)
    head, body = [struct.pack(">qiii", MAGIC, VERSION, head_length, len(indexes))], []
    pos = head_length
    for column, types in indexes.items():
        head.append(java_utf(column) + struct.pack(">i", len(types)))
        for index_type, data in types.items():
            head.append(java_utf(index_type) + struct.pack(">ii", pos, len(data)))
            body.append(data)
            pos += len(data)
    head.append(struct.pack(">i", 0))
    return b"".join(head + body)


def read_header(data: bytes, where: str) -> Header:
    try:
        magic, version, head_length, n_columns = struct.unpack_from(">qiii", data, 0)
        if magic != MAGIC:
            raise CorruptMetadataError(f"file index {where} is not a file index (magic {magic})")
        if version != VERSION:
            raise CorruptMetadataError(f"file index {where} has unsupported version {version}")
        header: Header = {}
        pos = 20
        for _ in range(n_columns):
            column, pos = _read_utf(data, pos)
            (n_types,) = struct.unpack_from(">i", data, pos)
            pos += 4
            for _ in range(n_types):
                index_type, pos = _read_utf(data, pos)
                start, length = struct.unpack_from(">ii", data, pos)
                pos += 8
                if start + length > len(data) or start < head_length:
                    raise CorruptMetadataError(f"file index {where}: {column}/{index_type} lies outside the file")
                header.setdefault(column, {})[index_type] = (start, length)
    except (struct.error, UnicodeDecodeError):
        raise CorruptMetadataError(f"file index {where} is truncated or malformed") from None
    return header
