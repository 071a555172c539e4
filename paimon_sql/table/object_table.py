"""Object tables (``'type' = 'object-table'``): the files under the table's location, listed at each read.

As Paimon 2.0's ``ObjectTable``: a read-only table of fixed columns (:data:`FIELDS`), one row per file
under its location, made when the table is read: no snapshots, no refresh, no time travel; writes
are refused. The location is the table's directory: Java 2.0's filesystem and JDBC catalogs give an
object table its ``path`` when they load it, and ObjectTableImpl lists that. Files put under the
directory are the table's rows; the table's own schema files (``schema/schema-N``, which the catalog
keeps there) are not: the listing holds only the user's objects. Java 2.0 lists them too (its
filesystem catalog makes no object tables; its JDBC catalog keeps their schema there as well).

Paimon 1.0's object tables (a data table whose rows ``ObjectRefresh`` wrote from an ``object-location``)
are read the same way, as Java 2.0 reads them: their stored rows and ``object-location`` are not used.

The values are those Java's FileIO reports: ``path`` relative to the location (``d/f.png``), ``name``
the file's name, ``mtime`` the store's modification time in epoch millis, ``atime`` 0 and ``owner``
NULL (what Java's local FileIO reports; Hadoop-backed stores may report theirs, which pyarrow cannot see).
"""

from __future__ import annotations

import os
from dataclasses import replace
from typing import List, Optional

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.fs as pafs

from paimon_sql.data.types import DataField, arrow_schema, parse_type
from paimon_sql.exceptions import PaimonError, SchemaError
from paimon_sql.io import FileIO
from paimon_sql.io.paths import MAIN_BRANCH
from paimon_sql.schema.table_schema import TableSchema
from paimon_sql.store.catalog_environment import NO_CATALOG, CatalogEnvironment
from paimon_sql.store.time_travel import TRAVEL_KEYS
from paimon_sql.table.table import FileStoreTable

# ObjectTable.SCHEMA of Paimon 2.0, in order (field ids 0..5), with its descriptions
FIELDS = [DataField(i, name, parse_type(text), description) for i, (name, text, description) in enumerate([
    ("path", "STRING NOT NULL", "Relative path of object"), ("name", "STRING NOT NULL", "Name of object"),
    ("length", "BIGINT NOT NULL", "Bytes length of object"), ("mtime", "BIGINT NOT NULL", "Modification time of object"),
    ("atime", "BIGINT NOT NULL", "Access time of object"), ("owner", "STRING", "Owner of object"),
])]
ARROW_SCHEMA = arrow_schema(FIELDS)
OWN_SCHEMA_FILES = "schema/schema-"  # + the schema id: the table's own files under its location, not objects


class ObjectTable(FileStoreTable):
    """The listing of the table's directory (Paimon's ``ObjectTableImpl``). Its columns are Paimon 2.0's
    whatever its schema file holds (a 1.0 object table's holds 1.0's), as Java 2.0's ``rowType()``.
    Copies (options, branches) stay object tables, so a write through one is refused too."""

    def __init__(self, io: FileIO, path: str, schema: TableSchema, name: str = "", branch: str = MAIN_BRANCH,
                 env: CatalogEnvironment = NO_CATALOG):
        super().__init__(io, path, replace(schema, fields=FIELDS, highest_field_id=len(FIELDS) - 1, primary_keys=[],
                                           partition_keys=[]), name, branch, env)

    def new_write(self, overwrite: bool = False):
        raise self.write_refused()

    def new_commit(self, commit_user: Optional[str] = None):
        raise self.write_refused()

    def write_refused(self) -> PaimonError:
        """Writes (INSERT, UPDATE, DELETE, MERGE, TRUNCATE, compaction) fail with this, as Java's do."""
        return PaimonError(f"object table {self.name} does not support write: its rows are the files under "
                           f"{self.path}, listed at each read")

    def with_schema(self, schema: TableSchema, branch: Optional[str] = None) -> "ObjectTable":
        return ObjectTable(self.io, self.path, schema, self.name, branch or self.branch, self.env)

    def travel(self, dynamic_options: Optional[dict]) -> "ObjectTable":
        """No time travel: there are no snapshots, the rows are the listing now (as Java 2.0)."""
        if any(k in (dynamic_options or {}) for k in TRAVEL_KEYS):
            raise PaimonError(f"object table {self.name} has no snapshots to travel to: its rows are the files "
                              "under its location now")
        return self.copy(dynamic_options)

    def to_arrow(self, snapshot_id: Optional[int] = None) -> pa.Table:
        if snapshot_id is not None:
            self.travel({"scan.snapshot-id": str(snapshot_id)})
        return self.listing()

    def listing(self, columns: Optional[List[str]] = None) -> pa.Table:
        """The rows: the files under the table's directory now (``columns``: those columns only)."""
        rows = listing(self.io, self.path)
        return rows if columns is None else rows.select(columns)


def refuse_write(table) -> None:
    """Raise when ``table`` is an object table: a SQL write statement fails before any work."""
    if isinstance(table, ObjectTable):
        raise table.write_refused()


def listing(io: FileIO, location: str) -> pa.Table:
    """The files under the directory ``location`` (recursively) but the table's own schema files,
    as rows of :data:`FIELDS`, ordered by path. The listing is the only per-file Python; the columns
    are computed on its arrays."""
    root = io.arrow_path(location)
    root = os.path.abspath(root) if io.scheme == "" else root.rstrip("/")
    infos = io.fs.get_file_info(pafs.FileSelector(root, recursive=True, allow_not_found=True))
    schema_files = f"{root}/{OWN_SCHEMA_FILES}"
    files = sorted((i.path, i.size, i.mtime_ns) for i in infos if i.type == pafs.FileType.File
                   and not (i.path.startswith(schema_files) and i.path[len(schema_files):].isdigit()))
    paths, sizes, mtimes = (list(c) for c in zip(*files)) if files else ([], [], [])
    path = pc.utf8_slice_codeunits(pa.array(paths, pa.string()), len(root) + 1)  # below the root, no separator
    columns = {
        "path": path,
        "name": pc.replace_substring_regex(path, r"^.*/", ""),
        "length": pa.array(sizes, pa.int64()),
        "mtime": pc.divide(pa.array(mtimes, pa.int64()), 1_000_000),  # integer division (times are positive)
        "atime": pa.array([0] * len(paths), pa.int64()),
        "owner": pa.nulls(len(paths), pa.string()),
    }
    return pa.table([columns[f.name].cast(f.type) for f in ARROW_SCHEMA], schema=ARROW_SCHEMA)


# -- creation ---------------------------------------------------------------------------------

def check_schema(schema: TableSchema, name: str) -> None:
    """Refuse an object table Paimon could not make: its columns must be Paimon's
    (AbstractCatalog.buildObjectTableSchema), no keys."""
    if [(f.name, str(f.type)) for f in schema.fields] != [(f.name, str(f.type)) for f in FIELDS]:
        given = ", ".join(f"{f.name} {f.type}" for f in schema.fields)
        raise SchemaError(f"object table {name}: its columns are Paimon's ({', '.join(f.name for f in FIELDS)}); "
                          f"give no columns or exactly those, not ({given})")
    if schema.primary_keys or schema.partition_keys:
        raise SchemaError(f"object table {name} cannot have primary or partition keys")
