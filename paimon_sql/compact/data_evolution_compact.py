"""Compaction of a data-evolution table: each row id group of several files folded into one.

As Java Paimon 2.0's ``DataEvolutionNormalCompactTask``: the group's rows are read merged (each
column from its newest file) with deleted rows kept — the new file must span the group's whole row
id range — and written as one COMPACT file with every column, the group's ``first_row_id`` and the
group's sequence range (least min, greatest max). The group's deletion vector, keyed by its anchor,
moves to the new file (Java's ``DataEvolutionCompactDeletionVectorRewriter``). Groups of one file are
left alone, and groups are not joined: Java's coordinator may also bin adjacent groups into one
file, which readers see the same way.

:func:`materialize_unit` is ``CALL sys.materialize_deletion_vectors`` (Java's
``DataEvolutionMaterializeDeletionCompactTask``): a group whose anchor has a deletion vector is
rewritten without its deleted rows, as new APPEND files without a first row id — the commit gives
their rows new ids — and the vector leaves the index.

Caveat: groups holding BLOB files are refused (their columns are not read here).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Optional

from pyroaring import FrozenBitMap

from paimon_sql.compact.append_compact import bucket_vectors, with_vectors
from paimon_sql.data import binary_row
from paimon_sql.exceptions import PaimonError
from paimon_sql.manifest.manifest_file import FILE_SOURCE_APPEND, FILE_SOURCE_COMPACT
from paimon_sql.read import data_evolution
from paimon_sql.read.scan import ScanStore
from paimon_sql.read.split import Split
from paimon_sql.read.split_read import SplitReader
from paimon_sql.write.commit_message import CommitMessage, delete_files
from paimon_sql.write.file_writer import write_files


def compact_unit(table: ScanStore, unit, full: bool = False) -> Optional[CommitMessage]:
    """The message folding the unit's row id groups of several files (None: there are none)."""
    groups = _without_blobs(table, [g for g in data_evolution.row_id_groups(unit.files, table.name) if len(g) > 1])
    if not groups:
        return None
    dv_entries, vectors = bucket_vectors(table, unit)
    part_types = [f.type for f in table.schema.fields_of(table.schema.partition_keys)]
    pvals = binary_row.from_bytes(unit.partition, part_types)
    reader = SplitReader(table)
    message = CommitMessage(unit.partition, unit.bucket, unit.total_buckets, base_snapshot=unit.base_snapshot)
    kept, moved = dict(vectors), False
    try:
        for group in groups:
            rows = reader.read(Split(unit.partition, unit.bucket, group))  # no vectors: every row of the range
            rows = rows.cast(table.schema.data_file_arrow_schema())
            written = write_files(table, rows, pvals, unit.bucket, 0, FILE_SOURCE_COMPACT, first_sequence=0,
                                  columns=table.schema.field_names)
            folded = replace(written[0], first_row_id=group[0].first_row_id, write_cols=None,
                             min_sequence_number=min(f.min_sequence_number for f in group),
                             max_sequence_number=max(f.max_sequence_number for f in group))
            message.compact_before += list(group)
            message.compact_after.append(folded)
            vector = kept.pop(data_evolution.anchor(group).file_name, None)
            if vector is not None:
                kept[folded.file_name], moved = vector, True
    except BaseException:
        delete_files(table, [message])
        raise
    return with_vectors(table, unit, message, dv_entries, kept) if moved else message


def materialize_unit(table: ScanStore, unit) -> Optional[CommitMessage]:
    """The message rewriting the unit's groups that have deleted rows (None: there are none)."""
    dv_entries, vectors = bucket_vectors(table, unit)
    groups = _without_blobs(table, [g for g in data_evolution.row_id_groups(unit.files, table.name)
                                    if data_evolution.anchor(g).file_name in vectors])
    if not groups:
        return None
    part_types = [f.type for f in table.schema.fields_of(table.schema.partition_keys)]
    pvals = binary_row.from_bytes(unit.partition, part_types)
    reader = SplitReader(table)
    message = CommitMessage(unit.partition, unit.bucket, unit.total_buckets, base_snapshot=unit.base_snapshot)
    kept = dict(vectors)
    try:
        for group in groups:
            name = data_evolution.anchor(group).file_name
            split = Split(unit.partition, unit.bucket, group, deletion_vectors=((name, FrozenBitMap(kept.pop(name))),))
            rows = reader.read(split).cast(table.schema.data_file_arrow_schema())
            message.compact_before += list(group)
            if rows.num_rows:
                message.compact_after += write_files(table, rows, pvals, unit.bucket, 0, FILE_SOURCE_APPEND,
                                                     first_sequence=0)
    except BaseException:
        delete_files(table, [message])
        raise
    return with_vectors(table, unit, message, dv_entries, kept)


def _without_blobs(table: ScanStore, groups: list) -> list:
    blobs = [f.file_name for g in groups for f in g if data_evolution.is_blob(f)]
    if blobs:
        raise PaimonError(f"table {table.name}: rewriting row ids held in BLOB files ({blobs[0]}) is not supported")
    return groups
