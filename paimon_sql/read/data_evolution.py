"""Data evolution (``data-evolution.enabled``): a row-tracking append table whose files are merged by
row id, so that an update of some columns writes those columns only.

Taken from Java Paimon 2.0's ``DataEvolutionSplitRead`` (``mergeRangesAndSort``,
``createUnionReader``) and ``DataEvolutionUtils.retrieveAnchorFile``:

- A table's files fall into *row id groups*: files whose ``[first_row_id, first_row_id + row_count)``
  ranges overlap. Every normal file of a group spans the same range (a partial-column file is
  written for the whole range of the file it updates); a group where they differ is refused.
- Each column of a row is read from the newest file of its group that holds it: files ordered by
  ``max_sequence_number``, newest first; a file holds the columns of its ``_WRITE_COLS`` (all of its
  schema's when it has none). A column no file holds reads NULL. A read opens only the files holding
  a column it reads (``DataEvolutionFileStoreScan.pruneByReadType``, :func:`read_files`), and
  ``_ROW_ID`` and ``_SEQUENCE_NUMBER`` come from the newest of those: a row's sequence number is that
  of the last write of a column the query reads.
- A group's deletion vector is its *anchor*'s: the oldest normal file (least max sequence number,
  then file name). Its positions are the group's, so it applies to every file of the group.
- ``.blob`` files (BLOB columns, Paimon 2.0) are not normal files: they never anchor, and a column
  only they hold is refused (:func:`check_unclaimed`).

Example::

    files                         (first_row_id, rows, write_cols, max_seq)
    data-1.parquet                (0, 3, None, 1)           id, name, value
    data-7.parquet                (0, 3, ('name',), 3)      name, newer
    → one group [data-7, data-1]: name from data-7, id and value from data-1, anchor data-1
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Dict, List, Optional, Sequence, Set, Tuple

from paimon_sql.exceptions import PaimonError
from paimon_sql.manifest.manifest_file import DataFileMeta
from paimon_sql.schema.table_schema import ROW_ID, SEQUENCE_NUMBER
from paimon_sql.store.file_store import FileStore

if TYPE_CHECKING:
    from paimon_sql.schema.table_schema import DataField, TableSchema

OPTION = "data-evolution.enabled"
_TRACKING = (ROW_ID, SEQUENCE_NUMBER)

Group = Tuple[DataFileMeta, ...]


def enabled(table: FileStore) -> bool:
    return bool(table.options.get(OPTION))


def is_blob(f: DataFileMeta) -> bool:
    return f.file_name.endswith(".blob")


def row_range(f: DataFileMeta, table_name: str) -> Tuple[int, int]:
    """A file's row ids, ``[first, end)``."""
    if f.first_row_id is None:
        raise PaimonError(f"table {table_name}: data file {f.file_name} of a data-evolution table has no first "
                          f"row id")
    return f.first_row_id, f.first_row_id + f.row_count


def row_id_groups(files: Sequence[DataFileMeta], table_name: str) -> List[Group]:
    """``files`` as row id groups in row id order, each with its normal files newest first, then its
    blob files (by first row id, newest first)."""
    ordered = sorted(files, key=lambda f: row_range(f, table_name))
    groups: List[List[DataFileMeta]] = []
    end = None
    for f in ordered:
        start, stop = row_range(f, table_name)
        if groups and start < end:
            groups[-1].append(f)
            end = max(end, stop)
        else:
            groups.append([f])
            end = stop
    return [_sorted_group(g, table_name) for g in groups]


def _sorted_group(group: List[DataFileMeta], table_name: str) -> Group:
    normal = sorted((f for f in group if not is_blob(f)), key=lambda f: -f.max_sequence_number)
    blobs = sorted((f for f in group if is_blob(f)), key=lambda f: (f.first_row_id, -f.max_sequence_number))
    if len({row_range(f, table_name) for f in normal}) > 1:
        spans = ", ".join(f"{f.file_name} [{f.first_row_id}, {f.first_row_id + f.row_count})" for f in normal)
        raise PaimonError(f"table {table_name}: data files of one row id group span different row ids ({spans})")
    return tuple(normal + blobs)


def anchor(group: Group) -> DataFileMeta:
    """The group's oldest normal file: the one its deletion vector is keyed by."""
    normal = [f for f in group if not is_blob(f)]
    if not normal:
        raise PaimonError(f"row id group of {group[0].file_name} has only blob files")
    return min(normal, key=lambda f: (f.max_sequence_number, f.file_name))


def read_files(table: FileStore, group: Group, fields: Sequence[DataField]) -> Group:
    """The files of ``group`` a read of ``fields`` opens, as Java's scan prunes a group by its read
    type: the normal files holding one of ``fields`` (with deletion vectors, the anchor too, which
    keys them), else the newest; then the blob files. A read of no column (only ``_ROW_ID`` or
    ``_SEQUENCE_NUMBER``) opens them all."""
    if not fields or len(group) <= 1:
        return group
    wanted = {x.id for x in fields}
    normal = [f for f in group if not is_blob(f)]
    kept = [f for f in normal if held_ids(table.schema_at(f.schema_id), f) & wanted]
    if table.options.get("deletion-vectors.enabled") and anchor(group) not in kept:
        kept.append(anchor(group))
    return tuple((kept or normal[:1]) + [f for f in group if is_blob(f)])


def held_ids(file_schema: TableSchema, f: DataFileMeta) -> Set[int]:
    """Field ids of the table columns ``f`` holds."""
    if f.write_cols is None:
        return {x.id for x in file_schema.fields}
    names = set(f.write_cols) - set(_TRACKING)
    return {x.id for x in file_schema.fields if x.name in names}


def claims(table: FileStore, group: Group, fields: Sequence[DataField]) -> Dict[str, List[DataField]]:
    """Per normal file of ``group`` (by name), the ``fields`` it is the newest holder of."""
    claimed: Set[int] = set()
    out: Dict[str, List[DataField]] = {}
    for f in group:
        if is_blob(f):
            continue
        held = held_ids(table.schema_at(f.schema_id), f)
        mine = [x for x in fields if x.id in held and x.id not in claimed]
        claimed.update(x.id for x in mine)
        out[f.file_name] = mine
    return out


def check_unclaimed(table: FileStore, group: Group, unclaimed: Sequence[DataField]) -> None:
    """Columns no normal file holds read NULL, unless blob files hold them: those are refused."""
    blobs = [f for f in group if is_blob(f)]
    held: Optional[Set[str]] = {c for f in blobs for c in (f.write_cols or ())} if blobs else None
    for x in unclaimed:
        if held is not None and x.name in held:
            raise PaimonError(f"table {table.name}: column '{x.name}' is held in BLOB files, which paimon-sql "
                              f"does not read")


def check_incremental(table: FileStore, added: Sequence[DataFileMeta], start: int, end: int) -> None:
    """An incremental read returns the rows of added files; a partial file (columns written beside
    existing rows by UPDATE or MERGE INTO) holds no whole rows: such a range is refused."""
    if not enabled(table):
        return
    partial = [f for f in added if f.write_cols is not None
               and not set(table.schema.field_names) <= set(f.write_cols)]
    if partial:
        raise PaimonError(f"table {table.name}: snapshots ({start}, {end}] updated columns of existing rows "
                          f"({partial[0].file_name} holds {', '.join(partial[0].write_cols)}), which an incremental "
                          "read of a data-evolution table cannot return; read the table at a snapshot instead")
