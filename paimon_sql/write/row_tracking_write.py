"""Rows of a row-tracking table written with the row ids they already have: UPDATE, MERGE INTO and
copy-on-write DELETE keep each row's ``_ROW_ID``, as paimon-spark 2.0 writes them (its writer's
``withRowTracking``).

The file stores ``_ROW_ID`` and ``_SEQUENCE_NUMBER`` after the table's columns, lists them in
``_WRITE_COLS`` and has no first row id (the commit gives it none: its rows have theirs). A changed
row's ``_SEQUENCE_NUMBER`` is NULL, so readers take the file's, which the commit sets to the new
snapshot's id; a row only moved (the survivors of a copy-on-write) keeps its own. Stats cover the
table's columns (``_VALUE_STATS_COLS``), as our compaction writes them.

Example: ``UPDATE t SET v = 0 WHERE id = 7`` on a row-tracking table with deletion vectors deletes
the row by vector and writes it anew here with its old ``_ROW_ID`` and a NULL sequence number.
"""

from __future__ import annotations

from dataclasses import replace
from typing import List

import pyarrow as pa

from paimon_sql.data import binary_row
from paimon_sql.manifest.manifest_file import FILE_SOURCE_APPEND
from paimon_sql.schema.table_schema import ROW_ID, SEQUENCE_NUMBER
from paimon_sql.store.file_store import FileStore
from paimon_sql.write.commit_message import CommitMessage, delete_files
from paimon_sql.write.file_writer import write_files
from paimon_sql.write.table_write import partition_codes


def tracked_schema(table: FileStore) -> pa.Schema:
    """The file layout: the table's columns, ``_ROW_ID`` and a nullable ``_SEQUENCE_NUMBER``."""
    return pa.schema(list(table.schema.data_file_arrow_schema())
                     + [pa.field(ROW_ID, pa.int64(), False), pa.field(SEQUENCE_NUMBER, pa.int64(), True)])


def write_tracked(table: FileStore, rows: pa.Table) -> List[CommitMessage]:
    """Messages writing ``rows`` (the table's columns and ``_ROW_ID``; ``_SEQUENCE_NUMBER`` if they keep
    theirs, else NULL: changed rows) into their partitions' bucket 0 (row tracking means ``bucket`` = -1)."""
    if SEQUENCE_NUMBER not in rows.column_names:
        rows = rows.append_column(SEQUENCE_NUMBER, pa.nulls(rows.num_rows, pa.int64()))
    schema = tracked_schema(table)
    rows = rows.select(schema.names).cast(schema)
    part_fields = table.schema.fields_of(table.schema.partition_keys)
    part_types = [f.type for f in part_fields]
    messages: List[CommitMessage] = []
    try:
        codes, partitions = partition_codes([f.name for f in part_fields], rows)
        for code, values in partitions.items():
            written = write_files(table, rows.filter(pa.array(codes == code)), values, 0, first_sequence=0,
                                  file_source=FILE_SOURCE_APPEND)
            written = [replace(f, write_cols=tuple(schema.names), value_stats_cols=tuple(table.schema.field_names))
                       for f in written]
            messages.append(CommitMessage(binary_row.to_bytes(values, part_types), 0, table.options.bucket,
                                          new_files=written))
    except BaseException:
        delete_files(table, messages)
        raise
    return messages

