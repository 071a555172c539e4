"""Snapshot: the content of ``snapshot/snapshot-N`` (JSON, version 3).

A snapshot names the manifest lists that make up the table at one commit: the *base* list (all
files live before this commit), the *delta* list (what this commit added/deleted), the optional
*changelog* list, and the index manifest. Optional fields are omitted from the JSON when None.

Fields are those of Java Paimon 2.0's ``Snapshot`` (``uuid``, ``properties``, ``nextRowId`` and
``operation`` are newer than 1.0, whose reader ignores them) plus 1.0's ``logOffsets`` (2.0 no longer
writes it, ignores it when read). Unknown keys are ignored, as Java's ``ignoreUnknown`` does; the
known ones are kept, so a tag or a long-lived changelog of a snapshot carries them on (docs/format.md).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Optional

from paimon_sql.exceptions import CorruptMetadataError

BATCH_COMMIT_IDENTIFIER = (1 << 63) - 1  # Java Long.MAX_VALUE: what batch writes commit with

COMMIT_KINDS = ("APPEND", "COMPACT", "OVERWRITE", "ANALYZE")

# python attribute -> JSON key, in the order Java writes them
_JSON_KEYS = [
    ("version", "version"), ("uuid", "uuid"), ("id", "id"), ("schema_id", "schemaId"),
    ("base_manifest_list", "baseManifestList"), ("base_manifest_list_size", "baseManifestListSize"),
    ("delta_manifest_list", "deltaManifestList"), ("delta_manifest_list_size", "deltaManifestListSize"),
    ("changelog_manifest_list", "changelogManifestList"),
    ("changelog_manifest_list_size", "changelogManifestListSize"),
    ("index_manifest", "indexManifest"), ("commit_user", "commitUser"),
    ("commit_identifier", "commitIdentifier"), ("commit_kind", "commitKind"), ("time_millis", "timeMillis"),
    ("log_offsets", "logOffsets"), ("total_record_count", "totalRecordCount"),
    ("delta_record_count", "deltaRecordCount"), ("changelog_record_count", "changelogRecordCount"),
    ("watermark", "watermark"), ("statistics", "statistics"), ("properties", "properties"),
    ("next_row_id", "nextRowId"), ("operation", "operation"),
]


@dataclass(frozen=True)
class Snapshot:
    id: int
    schema_id: int
    base_manifest_list: str
    delta_manifest_list: str
    commit_user: str
    commit_identifier: int
    commit_kind: str
    time_millis: int
    total_record_count: Optional[int] = None
    delta_record_count: Optional[int] = None
    changelog_record_count: Optional[int] = None
    changelog_manifest_list: Optional[str] = None
    index_manifest: Optional[str] = None
    base_manifest_list_size: Optional[int] = None
    delta_manifest_list_size: Optional[int] = None
    changelog_manifest_list_size: Optional[int] = None
    log_offsets: Optional[dict] = None
    watermark: Optional[int] = None
    statistics: Optional[str] = None
    properties: Optional[dict] = None
    next_row_id: Optional[int] = None
    uuid: Optional[str] = None  # Java 2.0: random per snapshot (a REST catalog's commit names its base by it)
    operation: Optional[str] = None  # Java 2.0's Snapshot.Operation (WRITE, DELETE, ...), set by paimon-spark
    version: int = 3

    def to_dict(self) -> dict:
        return {key: getattr(self, attr) for attr, key in _JSON_KEYS if getattr(self, attr) is not None}

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2)

    @staticmethod
    def read(io, path: str) -> "Snapshot":
        """The snapshot (or changelog) file at ``path``; a damaged one fails naming it. A missing one
        raises FileNotFoundError: callers tell an expired id or a stale hint from damage."""
        return Snapshot.from_json(io.read_bytes(path), f"snapshot file {path}")

    @staticmethod
    def from_json(text, where: str = "snapshot JSON") -> "Snapshot":
        """``text``: str or UTF-8 bytes; ``where`` names it in the error when it is not a snapshot."""
        try:
            d = json.loads(text)
        except ValueError as e:  # also bytes that are not UTF-8
            raise CorruptMetadataError(f"{where} is malformed: {e}") from None
        return Snapshot.from_dict(d, where)

    @staticmethod
    def from_dict(d: dict, where: str = "snapshot JSON") -> "Snapshot":
        """Keys we do not model (a tag's own, a later release's) are ignored, as Java ignores them."""
        try:
            return Snapshot(**{attr: d[key] for attr, key in _JSON_KEYS if key in d})
        except (TypeError, ValueError) as e:
            raise CorruptMetadataError(f"{where} is malformed: {e}") from None
