"""Partial-column writes of a data-evolution table: UPDATE and MERGE INTO write the changed columns only.

As paimon-spark 2.0 (``MergeIntoPaimonDataEvolutionTable``, ``DataEvolutionTableDataWrite``): for each
row id group an update touches, one new file holding only the updated columns, for every row of the
group's range — the new values where rows changed, the current values elsewhere (deleted rows too:
the range must stay whole). It takes the group's ``first_row_id`` and ``_WRITE_COLS`` = the updated
columns; the commit gives it the new snapshot's sequence number, so it is the group's newest file
and its columns win on read (:mod:`paimon_sql.read.data_evolution`). No other file is touched: an
update of one column of a 50-column table writes that column.

Caveat, as Paimon: two concurrent updates of one group would each copy the other's rows unchanged,
the later hiding the earlier, so the commit refuses a group another commit changed since the
update's snapshot (:mod:`paimon_sql.commit.row_id_conflicts`).

Example: ``UPDATE t SET name = upper(name) WHERE id < 10`` on a table of files of 1M rows writes,
per touched file, one file of 1M ``name`` values.
"""

from __future__ import annotations

from dataclasses import replace
from functools import partial
from typing import Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from paimon_sql.data import binary_row
from paimon_sql.exceptions import PaimonError
from paimon_sql.manifest.manifest_file import FILE_SOURCE_APPEND, DataFileMeta
from paimon_sql.read import data_evolution
from paimon_sql.read.scan import ScanStore
from paimon_sql.read.split import Split
from paimon_sql.read.split_read import FILE_COLUMN, POSITION_COLUMN, SplitReader
from paimon_sql.write.commit_message import CommitMessage, delete_files
from paimon_sql.write.file_writer import write_files


def update_columns(table: ScanStore, changes: pa.Table, columns: Sequence[str], snapshot_id: int,
                   run: Optional[Callable] = None) -> List[CommitMessage]:
    """Commit messages writing ``columns`` anew for the groups ``changes`` touches. ``changes`` holds
    the new values of ``columns`` and, per row, the anchor file and position it was read at
    (``FILE_COLUMN``, ``POSITION_COLUMN``) in snapshot ``snapshot_id``. ``run(fn, items)`` maps the
    per-group work to ``(ok, message or error)`` outcomes (SQL passes guarded Spark tasks); without
    it the groups are written here, in turn. When any group fails, what the others wrote is deleted."""
    columns = list(columns)
    groups = _groups_by_anchor(table, snapshot_id)
    files = changes.column(FILE_COLUMN).to_numpy(zero_copy_only=False).astype(str)
    order = np.argsort(files, kind="stable")
    names, starts = np.unique(files[order], return_index=True)
    work = []
    for name, start, end in zip(names, starts, list(starts[1:]) + [len(order)]):
        if name not in groups:
            raise PaimonError(f"table {table.name}: data file {name} is not live in snapshot {snapshot_id}")
        work.append((*groups[name], changes.take(pa.array(order[start:end]))))
    fn = partial(_write_group, table, columns, snapshot_id)
    if run is None:
        messages: List[CommitMessage] = []
        try:
            for w in work:
                messages.append(fn(w))
        except BaseException:
            delete_files(table, messages)
            raise
        return messages
    outcomes = run(fn, work)
    messages = [m for ok, m in outcomes if ok]
    errors = [m for ok, m in outcomes if not ok]
    if errors:
        delete_files(table, messages)
        raise PaimonError(f"table {table.name}: updating columns {', '.join(columns)} failed, nothing committed: "
                          f"{errors[0]}")
    return messages


def _write_group(table: ScanStore, columns: List[str], snapshot_id: int, work) -> CommitMessage:
    """One touched group's partial file (a task's work)."""
    partition, group, rows = work
    part_types = [f.type for f in table.schema.fields_of(table.schema.partition_keys)]
    merged = _merged(table, SplitReader(table, columns).read(Split(partition, 0, group)), rows, columns, group)
    written = write_files(table, merged, binary_row.from_bytes(partition, part_types), 0, first_sequence=0,
                          columns=columns)
    return CommitMessage(partition, 0, table.options.bucket, new_files=[_as_partial(written[0], group[0].first_row_id)],
                         base_snapshot=snapshot_id)


def _groups_by_anchor(table: ScanStore, snapshot_id: int) -> Dict[str, Tuple[bytes, Tuple[DataFileMeta, ...]]]:
    out = {}
    for split in table.new_scan().with_snapshot(snapshot_id).plan().splits:
        for group in data_evolution.row_id_groups(split.files, table.name):
            out[data_evolution.anchor(group).file_name] = (split.partition, group)
    return out


def _merged(table: ScanStore, current: pa.Table, rows: pa.Table, columns: List[str],
            group: Tuple[DataFileMeta, ...]) -> pa.Table:
    """The group's ``columns`` (``current``: every row of its range, deleted ones too) with the rows
    at ``rows``' positions replaced by their new values."""
    n = current.num_rows
    if n != group[0].row_count:
        raise PaimonError(f"table {table.name}: row id group of {group[0].file_name} read {n} rows, not "
                          f"{group[0].row_count}")
    positions = rows.column(POSITION_COLUMN).to_numpy()
    if len(np.unique(positions)) != len(positions):
        raise PaimonError(f"table {table.name}: a row of data file {group[0].file_name} would be updated twice "
                          "(the source matches one target row more than once)")
    take = np.arange(n)
    take[positions] = n + np.arange(len(positions))
    indices = pa.array(take)
    out = []
    for c in columns:
        field = table.schema.field(c).to_arrow()
        both = pa.concat_arrays([current.column(c).combine_chunks().cast(field.type),
                                 rows.column(c).combine_chunks().cast(field.type)])
        out.append(pc.take(both, indices))
    return pa.Table.from_arrays(out, schema=pa.schema([table.schema.field(c).to_arrow() for c in columns]))


def _as_partial(f: DataFileMeta, first_row_id: int) -> DataFileMeta:
    """A partial file: the group's first row id; sequence 0 (the commit numbers it as the new snapshot)."""
    return replace(f, first_row_id=first_row_id, min_sequence_number=0, max_sequence_number=0,
                   file_source=FILE_SOURCE_APPEND)
