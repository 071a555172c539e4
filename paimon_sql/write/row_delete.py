"""Deleting rows by position: deletion vectors, or copy-on-write.

Rows are named by (partition, bucket, data file, row position). With ``deletion-vectors.enabled``
the positions join the bucket's deletion vectors: a new index file holds all of the bucket's
vectors and replaces the old one in the index manifest — no data file is rewritten. Without it,
each touched file is rewritten without those rows (copy-on-write of only the touched files). Either
way the result is commit messages for one snapshot, which may also carry new rows (UPDATE).

A primary-key table's rows are deleted so when its merge engine cannot apply a ``-D`` row
(paimon-spark's DELETE on first-row, partial-update and aggregation tables): only in buckets whose
candidate files need no merge (:func:`rows_in_files`); a rewritten file keeps its level and its
rows their sequence numbers, so the rows left are merged as before.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Dict, List, Tuple

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyroaring import BitMap

from paimon_sql.data import binary_row
from paimon_sql.exceptions import PaimonError
from paimon_sql.format.file_format import read_file
from paimon_sql.index import deletion_vector as dv
from paimon_sql.manifest.manifest_file import DELETE
from paimon_sql.read import data_evolution
from paimon_sql.read.metadata_columns import row_tracking
from paimon_sql.read.scan import ScanStore
from paimon_sql.read.split import Split
from paimon_sql.read.split_read import FILE_COLUMN, POSITION_COLUMN, SplitReader
from paimon_sql.write.commit_message import CommitMessage
from paimon_sql.write.file_writer import write_files
from paimon_sql.write.row_tracking_write import write_tracked


Positions = Dict[Tuple[bytes, int, str], np.ndarray]  # (partition, bucket, data file) → row positions


def positions_of(table: ScanStore, rows: pa.Table) -> Positions:
    """Group rows carrying ``FILE_COLUMN`` / ``POSITION_COLUMN`` into :data:`Positions`."""
    files = rows.column(FILE_COLUMN)
    names = pc.unique(files).to_pylist()
    if not names:
        return {}
    where = {e.file.file_name: (e.partition, e.bucket) for e in table.new_scan().plan_entries()}
    out: Positions = {}
    for name in names:
        chosen = rows.column(POSITION_COLUMN).filter(pc.equal(files, name))
        out[(*where[name], name)] = np.asarray(chosen.to_numpy(), dtype=np.int64)
    return out


def delete_messages(table: ScanStore, positions: Positions) -> List[CommitMessage]:
    """Commit messages that delete ``positions`` (deletion vectors or copy-on-write)."""
    if not positions:
        return []
    if table.options.get("deletion-vectors.enabled"):
        return _with_deletion_vectors(table, positions)
    return _copy_on_write(table, positions)


def _with_deletion_vectors(table: ScanStore, positions: Positions) -> List[CommitMessage]:
    snap = table.snapshot_manager.latest()
    entries = table.index_manifest_entries(snap.index_manifest) if snap else []
    by_bucket: Dict[Tuple[bytes, int], Dict[str, np.ndarray]] = {}
    for (partition, bucket, name), pos in positions.items():
        by_bucket.setdefault((partition, bucket), {})[name] = pos
    messages = []
    for (partition, bucket), files in by_bucket.items():
        old = [e for e in entries if (e.partition, e.bucket, e.index_type) == (partition, bucket, dv.INDEX_TYPE)]
        vectors = dv.read_vectors(table, old)
        for name, pos in files.items():
            vectors.setdefault(name, BitMap()).update(pos.astype(np.uint32))
        new = dv.write_index_file(table, partition, bucket, vectors)
        removed = [replace(e, kind=DELETE) for e in old]
        messages.append(CommitMessage(partition, bucket, table.options.bucket, index_changes=removed + [new],
                                      base_snapshot=snap.id if snap else 0))
    return messages


def _copy_on_write(table: ScanStore, positions: Positions) -> List[CommitMessage]:
    if data_evolution.enabled(table):  # a rewritten file would break its row id group (paimon-spark's words)
        raise PaimonError(f"table {table.name}: Can only perform deletion operation on data evolution tables with "
                          "DeletionVector enabled.")
    if row_tracking(table.schema):
        return _copy_on_write_tracked(table, positions)
    live = {(e.partition, e.bucket, e.file.file_name): e for e in table.new_scan().plan_entries()}
    part_types = [f.type for f in table.schema.fields_of(table.schema.partition_keys)]
    pk = table.schema.is_primary_key_table
    messages: Dict[Tuple[bytes, int], CommitMessage] = {}
    for key, pos in positions.items():
        entry = live[key]
        f = entry.file
        pvals = binary_row.from_bytes(entry.partition, part_types)
        path = table.paths.data_file_path(pvals, entry.bucket, f.file_name, f.external_path)
        rows = read_file(table.io, path, f.file_name.rsplit(".", 1)[-1])
        keep = dv.keep_mask(BitMap(pos.astype(np.uint32)), rows.num_rows)
        msg = messages.setdefault((entry.partition, entry.bucket),
                                  CommitMessage(entry.partition, entry.bucket, entry.total_buckets))
        msg.deleted_files.append(f)
        if keep.any():  # a primary-key file's rows keep their sequence numbers and level, as in a compaction
            survivors = rows.filter(pa.array(keep)).cast(table.schema_at(f.schema_id).data_file_arrow_schema())
            msg.new_files += write_files(_as_of_schema(table, f.schema_id), survivors, pvals, entry.bucket, f.level,
                                         first_sequence=None if pk else f.min_sequence_number)
    return list(messages.values())


def _copy_on_write_tracked(table: ScanStore, positions: Positions) -> List[CommitMessage]:
    """Copy-on-write of a row-tracking table: the survivors keep their ``_ROW_ID`` and
    ``_SEQUENCE_NUMBER`` (:mod:`paimon_sql.write.row_tracking_write`), as paimon-spark rewrites them."""
    live = {(e.partition, e.bucket, e.file.file_name): e for e in table.new_scan().plan_entries()}
    reader = SplitReader(table)
    deleted, survivors = [], []
    for key, pos in positions.items():
        entry = live[key]
        deleted.append(entry)
        rows = reader.read_positions(Split(entry.partition, entry.bucket, (entry.file,)), tracked=True)
        survivors.append(rows.filter(pc.invert(pc.is_in(rows.column(POSITION_COLUMN), pa.array(pos)))))
    kept = pa.concat_tables(survivors)
    messages = write_tracked(table, kept) if kept.num_rows else []
    for e in deleted:
        mine = next((m for m in messages if (m.partition, m.bucket) == (e.partition, e.bucket)), None)
        if mine is None:
            mine = CommitMessage(e.partition, e.bucket, e.total_buckets)
            messages.append(mine)
        mine.deleted_files.append(e.file)
    return messages


def _as_of_schema(table: ScanStore, schema_id: int) -> ScanStore:
    """The table as of a file's schema, so a rewritten file keeps that schema (and its id)."""
    return table if schema_id == table.schema.id else table.with_schema(table.schema_at(schema_id))


def rows_in_files(table: ScanStore, predicate) -> pa.Table:
    """The rows of the files of the latest snapshot ``predicate`` may match, each with its data file
    and position (``FILE_COLUMN``, ``POSITION_COLUMN``), read as they lie. On a primary-key table
    each bucket's candidate files must need no merge, by Paimon's rule for a raw-convertible split:
    one file, or files above level 0 all on one level (any levels with deletion vectors or on a
    first-row table), none holding retractions; else paimon-spark's error."""
    scan = table.new_scan().filter(predicate)
    plan = scan.plan()
    reader = table.new_scan().with_snapshot(plan.snapshot.id if plan.snapshot else None).reader()
    lenient = bool(table.options.get("deletion-vectors.enabled")) or table.options.merge_engine == "first-row"
    parts = []
    for split in plan.splits:
        files = split.files
        clean = all(not f.delete_row_count for f in files)
        upper = all(f.level != 0 for f in files) and (lenient or len({f.level for f in files}) == 1)
        if table.schema.is_primary_key_table and not (clean and (upper or len(files) == 1)):
            raise PaimonError(f"table {table.name}: Only compacted table can generate touched files, please use "
                              "'COMPACT' procedure first.")
        for f in files:
            dvs = tuple(d for d in split.deletion_vectors if d[0] == f.file_name)
            parts.append(reader.read_positions(replace(split, files=(f,), sections=((f,),), deletion_vectors=dvs)))
    return pa.concat_tables(parts) if parts else reader.read_positions(Split(b"", 0, ()))


def positions_where(table: ScanStore, predicate) -> Positions:
    """The positions of the rows of the latest snapshot matching ``predicate`` (the core's
    ``delete_where``, which commits :func:`delete_messages` of them)."""
    columns = [c for c in table.schema.field_names if c in predicate.columns()]
    scan = table.new_scan().filter(predicate).select(columns)  # positions need only the filter's columns
    reader = scan.reader()
    parts = [reader.read_positions(split) for split in scan.plan().splits]
    return positions_of(table, pa.concat_tables(parts)) if parts else {}
