"""The Iceberg table metadata JSON (``v<N>.metadata.json``), as Paimon 2.0 writes it.

Kept as a plain dict in the key order Paimon writes, so that a metadata file another writer left
(Java Paimon, or ours before) is extended without losing what we do not model. The schema is the
Paimon schema with the same ids (Iceberg's ids are Paimon's column ids); the partition spec is
one identity field per partition key, ids from 1000; one unsorted sort order; snapshot ids and
sequence numbers are Paimon's snapshot ids.
"""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING, Dict, List, Optional, Sequence

from paimon_sql.exceptions import CorruptMetadataError
from paimon_sql.iceberg.conversions import iceberg_field
from paimon_sql.iceberg.manifest import FIRST_PARTITION_FIELD_ID

if TYPE_CHECKING:
    from paimon_sql.schema.table_schema import TableSchema

LONG_MAX = 2 ** 63 - 1


def iceberg_schema(schema: TableSchema) -> dict:
    return {"type": "struct", "schema-id": schema.id, "fields": [iceberg_field(f) for f in schema.fields]}


def highest_field_id(iceberg_schema_: dict) -> int:
    """Iceberg's last-column-id as Paimon computes it (IcebergSchema.highestFieldId): the highest
    top-level column id, not counting ROW fields' ids nor the derived ids of list elements and map
    keys and values, which can be higher (pyiceberg reads such metadata; Iceberg Java is not tested here)."""
    return max((f["id"] for f in iceberg_schema_["fields"]), default=0)


def partition_spec_fields(partition_keys: Sequence[str], iceberg_schema_: dict) -> List[dict]:
    ids = {f["name"]: f["id"] for f in iceberg_schema_["fields"]}
    return [{"name": k, "transform": "identity", "source-id": ids[k], "field-id": FIRST_PARTITION_FIELD_ID + i}
            for i, k in enumerate(partition_keys)]


def snapshot(snapshot_id: int, parent: Optional[int], summary: Dict[str, str], manifest_list: str,
             schema_id: int, first_row_id: Optional[int] = None, added_rows: Optional[int] = None) -> dict:
    """A snapshot entry; ``first_row_id`` and ``added_rows`` (row lineage) in format version 3 only."""
    d = {"sequence-number": snapshot_id, "snapshot-id": snapshot_id}
    if parent is not None:
        d["parent-snapshot-id"] = parent
    d.update({"timestamp-ms": int(time.time() * 1000), "summary": summary, "manifest-list": manifest_list,
              "schema-id": schema_id})
    if first_row_id is not None:
        d.update({"first-row-id": first_row_id, "added-rows": added_rows})
    return d


def tag_ref(snapshot_id: int) -> dict:
    """A Paimon tag as an Iceberg tag ref: never aged out by Iceberg (Paimon expires its tags)."""
    return {"snapshot-id": snapshot_id, "type": "tag", "max-ref-age-ms": LONG_MAX}


def new_metadata(format_version: int, table_uuid: str, location: str, last_sequence_number: int,
                 last_column_id: int, schemas: List[dict], current_schema_id: int, partition_specs: List[dict],
                 last_partition_id: int, snapshots: List[dict], current_snapshot_id: int,
                 refs: Dict[str, dict], next_row_id: Optional[int] = None) -> dict:
    """The metadata; ``next_row_id`` (row lineage) in format version 3 only."""
    metadata = {"format-version": format_version, "table-uuid": table_uuid, "location": location,
                "last-sequence-number": last_sequence_number, "last-updated-ms": int(time.time() * 1000),
                "last-column-id": last_column_id, "schemas": schemas, "current-schema-id": current_schema_id,
                "partition-specs": partition_specs, "default-spec-id": 0, "last-partition-id": last_partition_id,
                "sort-orders": [{"order-id": 0, "fields": []}], "default-sort-order-id": 0, "snapshots": snapshots,
                "current-snapshot-id": current_snapshot_id}
    if next_row_id is not None:
        metadata["next-row-id"] = next_row_id
    metadata.update({"properties": {}, "refs": refs})
    return metadata


def read_metadata(fio, path: str) -> dict:
    try:
        return json.loads(fio.read_bytes(path))
    except ValueError as e:
        raise CorruptMetadataError(f"Iceberg metadata {path} is malformed: {e}") from None


def current_snapshot(metadata: dict) -> dict:
    sid = metadata.get("current-snapshot-id")
    for s in metadata.get("snapshots", []):
        if s["snapshot-id"] == sid:
            return s
    raise CorruptMetadataError(f"Iceberg metadata names current snapshot {sid}, which it does not hold")


def to_json(metadata: dict) -> bytes:
    return json.dumps(metadata).encode("utf-8")
