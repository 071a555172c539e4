"""What a Paimon 2.0 writer may put in a table that paimon-sql does not serve, and the one line a
read or write of it fails with, so that such a table never yields wrong rows or a half-made write.

- BLOB columns (``BLOB``, ``ARRAY<BLOB>``, ``MAP<K, BLOB>``, or a column named by ``blob-field``,
  ``blob-descriptor-field``, ``blob-view-field``): Paimon keeps their bytes in ``.blob`` files (or a
  descriptor inline), so a plain read of the data files would give NULLs or descriptors.
- VECTOR columns (``VECTOR<FLOAT, n>``, or an ARRAY named by ``vector-field``): with
  ``vector.file.format`` they live in ``.vector.`` files.

Reading the table's other columns is served as Paimon's own readers serve a projection without them
(:func:`check_read`). Any write is refused before anything is written (:func:`check_write`): a write
must carry those columns' files along, which paimon-sql cannot make.

- Global indexes (btree, bitmap, vector ... entries of the index manifest beside HASH and
  DELETION_VECTORS): a plain read ignores them, as Java's does when it does not search the index.
  Writes are refused: Java refuses updates of indexed columns (``global-index.column-update-action``
  = THROW_ERROR), and an index manifest we rewrote would lose the entries' global-index metadata.

- Chain tables (``chain-table.enabled``): their rows are those of the ``snapshot`` and ``delta`` branches
  merged per partition, which paimon-sql does not do; the table itself would read as empty. Reads and
  writes are refused (so is the option, at CREATE, by the options audit, which also stops a read through
  the Python API: :func:`paimon_sql.options.core_options.check_usable`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Dict, Iterable, List, Optional, Union

from paimon_sql.data.types import unserved_type
from paimon_sql.exceptions import UnservedFeatureError
from paimon_sql.iceberg.commit_callback import check_publishable
from paimon_sql.index.deletion_vector import INDEX_TYPE as DELETION_VECTORS
from paimon_sql.read.scan import ScanStore
from paimon_sql.table.format_table import FormatTable
from paimon_sql.write.dynamic_bucket import HASH_INDEX

if TYPE_CHECKING:
    from paimon_sql.schema.table_schema import TableSchema

# options naming columns Paimon stores apart from the data files (or as references), and what they are
COLUMN_OPTIONS = {"blob-field": "BLOB", "blob-descriptor-field": "BLOB (stored as a descriptor)",
                  "blob-view-field": "BLOB (a view of another table's)", "vector-field": "VECTOR"}
SERVED_INDEXES = (HASH_INDEX, DELETION_VECTORS)
CHAIN_TABLE = "chain-table.enabled"


def unserved_columns(schema: "TableSchema") -> Dict[str, str]:
    """Column name -> the feature that keeps paimon-sql from reading or writing it."""
    out = {f.name: kind for f in schema.fields if (kind := unserved_type(f.type))}
    for key, kind in COLUMN_OPTIONS.items():
        for name in (schema.options.get(key) or "").split(","):
            if name.strip():
                out.setdefault(name.strip(), kind)
    return out


def _check_chain(table: ScanStore) -> None:
    if (table.schema.options.get(CHAIN_TABLE) or "").strip().lower() == "true":
        raise UnservedFeatureError(f"table {table.name} is a chain table ('{CHAIN_TABLE}'), which paimon-sql does "
                                   "not read or write")


def check_read(table: ScanStore, columns: Iterable[str]) -> None:
    """Raise when ``table`` is a chain table, or ``columns`` include one paimon-sql cannot read."""
    _check_chain(table)
    check_publishable(table)
    unserved = unserved_columns(table.schema)
    for name in columns:
        if name in unserved:
            raise UnservedFeatureError(f"table {table.name}: column '{name}' is {unserved[name]}, "
                                       "which paimon-sql does not read")


def readable_columns(table: ScanStore) -> List[str]:
    """The columns of ``table`` a read may ask for."""
    unserved = unserved_columns(table.schema)
    return [n for n in table.schema.field_names if n not in unserved]


def global_indexes(table: ScanStore) -> List[str]:
    """The index types of the latest snapshot's index manifest that are global indexes."""
    latest = table.snapshot_manager.latest()
    entries = table.index_manifest_entries(latest.index_manifest) if latest else []
    return sorted({e.index_type for e in entries if e.index_type not in SERVED_INDEXES})


def check_write(table: ScanStore, indexes: bool = True) -> None:
    """Raise when ``table`` holds what a write of paimon-sql would leave broken or stale: an unserved
    column, or (``indexes``: the latest snapshot is read for them) a global index; or it is a chain table;
    or its Iceberg metadata could not be written right."""
    _check_chain(table)
    check_publishable(table)
    unserved = unserved_columns(table.schema)
    if unserved:
        name, kind = next(iter(unserved.items()))
        raise UnservedFeatureError(f"table {table.name}: column '{name}' is {kind}, which paimon-sql does not "
                                   "write: writes to the table are refused")
    found = global_indexes(table) if indexes else []
    if found:
        raise UnservedFeatureError(f"table {table.name} has a global index ({', '.join(found)}), which "
                                   "paimon-sql does not maintain: writes to the table are refused")


def refuse_write(table: Optional[Union[ScanStore, FormatTable]]) -> None:
    """:func:`check_write` for a statement's target when it is a data table (not a format table)."""
    if table is not None and not isinstance(table, FormatTable):
        check_write(table)
