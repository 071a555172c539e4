"""The hidden columns of the ``paimon`` data source: the bucket and row-kind columns the write
planner adds to the rows it hands each write task (:mod:`paimon_sql.spark.write`), and the row-kind
outputs of ``$audit_log`` and ``$binlog`` reads (``rowkind`` first, as Paimon's system tables).
Shared by the batch source, the streaming reader and the write planner."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from paimon_sql.data import row_kind
from paimon_sql.schema.table_schema import SEQUENCE_NUMBER, VALUE_KIND
from paimon_sql.spark.types import to_spark_arrow

BUCKET_COLUMN = "__paimon_bucket"  # added by the write planner to shuffle by bucket; never stored
ROWKIND_NAME = "rowkind"  # the row kind as text, first column of $audit_log / $binlog
ROWKIND_COLUMN = "__paimon_rowkind"  # TINYINT +I/-U/+U/-D of each row, set by UPDATE/DELETE/MERGE


def with_row_kind_columns(rows: pa.Table, fields) -> pa.Table:
    """Rows read with their kinds → ``rowkind`` (text), ``_SEQUENCE_NUMBER``, then the columns."""
    out = to_spark_arrow(rows, fields)
    kinds = pc.take(pa.array(row_kind.SHORT_STRINGS), rows.column(VALUE_KIND).cast(pa.int32()))
    return pa.Table.from_arrays([kinds, rows.column(SEQUENCE_NUMBER)] + out.columns,
                                names=[ROWKIND_NAME, SEQUENCE_NUMBER] + out.column_names)


def binlog_columns(rows: pa.Table, fields) -> pa.Table:
    """Rows read with their kinds → ``rowkind`` then each column as an ARRAY: ``[value]``, or
    ``[before, after]`` for an update whose -U row is followed by its +U (one +U row)."""
    kinds = rows.column(VALUE_KIND).to_numpy()
    n = len(kinds)
    pair = np.zeros(n, bool)
    pair[:-1] = (kinds[:-1] == row_kind.UPDATE_BEFORE) & (kinds[1:] == row_kind.UPDATE_AFTER)
    partner = np.zeros(n, bool)
    partner[1:] = pair[:-1]
    starts = np.flatnonzero(~partner)
    offsets = pa.array(np.append(starts, n).astype(np.int32))
    out_kinds = kinds[starts].astype(np.int32)
    out_kinds[pair[starts]] = row_kind.UPDATE_AFTER
    data = to_spark_arrow(rows, fields)
    columns = [pa.array(np.asarray(row_kind.SHORT_STRINGS, object)[out_kinds], pa.string())]
    columns += [pa.ListArray.from_arrays(offsets, data.column(f.name).combine_chunks()) for f in fields]
    return pa.Table.from_arrays(columns, names=[ROWKIND_NAME] + [f.name for f in fields])


ROW_KIND_OUTPUTS = {"audit_log": with_row_kind_columns, "binlog": binlog_columns}
