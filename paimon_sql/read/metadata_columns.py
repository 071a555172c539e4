"""Paimon's metadata columns: hidden columns a query may name beside a table's own.

``__paimon_file_path`` (the data file a row was read from, as ``t$files`` names it),
``__paimon_row_index`` (the row's position in that file, counting deleted rows),
``__paimon_partition`` (a ROW of the partition columns) and ``__paimon_bucket``. They are never
stored, never part of ``SELECT *``, and only exist where a query names them. File and row index
need rows read as they lie in a file: an append table, a primary-key table with deletion vectors,
or one whose buckets need no merge (fully compacted) — as in Paimon, a merging read refuses them.

A row-tracking table (``row-tracking.enabled``) has two more, as paimon-spark exposes them:
``_ROW_ID`` (BIGINT, the row's id: its file's ``first_row_id`` + its position, or the id a
compacted file holds) and ``_SEQUENCE_NUMBER`` (BIGINT, the snapshot that committed the row).
"""

from __future__ import annotations

from typing import List

from paimon_sql.data.types import DataField, RowType, parse_type
from paimon_sql.exceptions import PaimonError
from paimon_sql.schema.table_schema import ROW_ID, SEQUENCE_NUMBER
from paimon_sql.store.file_store import FileStore


FILE_PATH = "__paimon_file_path"
ROW_INDEX = "__paimon_row_index"
PARTITION = "__paimon_partition"
BUCKET = "__paimon_bucket"
TRACKED = (ROW_ID, SEQUENCE_NUMBER)  # a row-tracking table's (Java's SpecialFields)
NAMES = (FILE_PATH, ROW_INDEX, PARTITION, BUCKET) + TRACKED  # Paimon's order
LOWER_NAMES = frozenset(n.lower() for n in NAMES)  # Spark matches names without case
LOCATED = frozenset({FILE_PATH, ROW_INDEX})  # known only for rows read as they lie in a file

_IDS = -1000  # never stored: ids below any real field's


def fields(schema) -> List[DataField]:
    """The metadata columns of a table with this schema (less any name the table uses itself)."""
    own = {f.name.lower() for f in schema.fields}
    types = {FILE_PATH: parse_type("STRING"), ROW_INDEX: parse_type("BIGINT"),
             PARTITION: RowType(tuple(schema.fields_of(schema.partition_keys))), BUCKET: parse_type("INT"),
             ROW_ID: parse_type("BIGINT"), SEQUENCE_NUMBER: parse_type("BIGINT")}
    names = NAMES if row_tracking(schema) else NAMES[:-len(TRACKED)]
    return [DataField(_IDS - i, name, types[name]) for i, name in enumerate(names) if name.lower() not in own]


def row_tracking(schema) -> bool:
    """Whether the table tracks row ids (``row-tracking.enabled``): then ``_ROW_ID`` and
    ``_SEQUENCE_NUMBER`` can be read."""
    return str(schema.options.get("row-tracking.enabled", "false")).strip().lower() == "true"


def check_located(table: FileStore, splits) -> None:
    """Refuse file path / row index when a split's rows come out of a merge (Paimon's rule)."""
    if any(not s.raw_convertible for s in splits):
        raise PaimonError(f"table {table.name}: {FILE_PATH} and {ROW_INDEX} need rows read as they lie in a "
                          f"file (an append table, deletion vectors, or a full compaction); "
                          f"some buckets of this snapshot must be merged")
