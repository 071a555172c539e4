"""Object tables (``'type' = 'object-table'``): the metadata of the files under ``object-location``.

As Paimon 1.0's ``ObjectTable``: an append table of Paimon's fixed columns (:data:`FIELDS`) whose
rows only :meth:`ObjectTable.refresh` writes, by listing the location recursively and replacing the
table's rows with the listing in one OVERWRITE snapshot (``ObjectRefresh``). Everything else is a
data table's: queries, time travel, tags, system tables. Writes are refused, as Java refuses them.

The values are those Java's FileIO reports: ``path`` is the file's full path (``file:/dir/f`` for a
local file, ``s3://bucket/dir/f`` on S3), ``parent_path`` its directory, ``mtime`` the store's
modification time; ``atime`` is the epoch (Java's FileIO reports 0 where the store keeps no access
time, as for local files and object stores), ``owner`` NULL, ``metadata`` an empty map, and the
other columns NULL, as ``ObjectRefresh`` writes them.
"""

from __future__ import annotations

import os
from typing import List, Optional, Tuple
from urllib.parse import urlparse

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.fs as pafs

from paimon_sql.data.types import DataField, arrow_schema, parse_type
from paimon_sql.exceptions import InvalidOptionError, PaimonError, SchemaError
from paimon_sql.io import FileIO
from paimon_sql.schema.table_schema import TableSchema
from paimon_sql.table.table import FileStoreTable

OBJECT_LOCATION = "object-location"

# ObjectTable.SCHEMA of Paimon 1.0, in order (field ids 0..12)
FIELDS = [DataField(i, name, parse_type(text)) for i, (name, text) in enumerate([
    ("path", "STRING NOT NULL"), ("parent_path", "STRING NOT NULL"), ("name", "STRING NOT NULL"),
    ("length", "BIGINT NOT NULL"), ("mtime", "TIMESTAMP(3) WITH LOCAL TIME ZONE"),
    ("atime", "TIMESTAMP(3) WITH LOCAL TIME ZONE"), ("owner", "STRING"), ("generation", "INT"),
    ("content_type", "STRING"), ("storage_class", "STRING"), ("md5_hash", "STRING"),
    ("metadata_mtime", "TIMESTAMP(3) WITH LOCAL TIME ZONE"), ("metadata", "MAP<STRING, STRING>"),
])]
ARROW_SCHEMA = arrow_schema(FIELDS)


class ObjectTable(FileStoreTable):
    """A data table whose rows are the listing of ``object-location`` (Paimon's ``ObjectTableImpl``).
    Copies (options, time travel, branches) stay object tables, so a write through one is refused too."""

    @property
    def object_location(self) -> str:
        location = self.schema.options.get(OBJECT_LOCATION)
        if not location:
            raise InvalidOptionError(f"object table {self.name} has no '{OBJECT_LOCATION}' option")
        return location

    def new_write(self, overwrite: bool = False):
        raise self.write_refused()

    def new_commit(self, commit_user: Optional[str] = None):
        raise self.write_refused()

    def write_refused(self) -> PaimonError:
        """Writes (INSERT, UPDATE, DELETE, MERGE, TRUNCATE, compaction) fail with this, as Java's do."""
        return PaimonError(f"object table {self.name} does not support write: its rows are the files "
                           f"under {self.object_location} (CALL sys.refresh_object_table('{self.name}'))")

    def with_schema(self, schema: TableSchema, branch: Optional[str] = None) -> "ObjectTable":
        return ObjectTable(self.io, self.path, schema, self.name, branch or self.branch, self.env)

    def refresh(self, store_options: Optional[dict] = None) -> int:
        """List ``object-location`` (reached with the catalog's ``store_options``: ``s3.*`` ...)
        and make the listing the table's rows in one OVERWRITE snapshot; returns the number of files."""
        check_schema(self.schema, self.name)  # a table altered since, or made by Java with keys, is not refreshed
        rows = listing(FileIO.for_path(self.object_location, store_options), self.object_location)
        underlying = FileStoreTable(self.io, self.path, self.schema, self.name, self.branch, self.env)
        underlying.write_arrow(rows, overwrite=True)
        return rows.num_rows


def refuse_write(table) -> None:
    """Raise when ``table`` is an object table: a SQL write statement fails before any work."""
    if isinstance(table, ObjectTable):
        raise table.write_refused()


def listing(io: FileIO, location: str) -> pa.Table:
    """The files under ``location`` (recursively; the file itself when it is one) as rows of
    :data:`FIELDS`, ordered by path. The listing is the only per-file Python; the columns are
    computed on its arrays."""
    root = io.arrow_path(location)
    root = os.path.abspath(root) if io.scheme == "" else root.rstrip("/")
    info = io.fs.get_file_info(root)
    if info.type == pafs.FileType.Directory:
        infos = io.fs.get_file_info(pafs.FileSelector(root, recursive=True, allow_not_found=True))
    else:
        infos = [info] if info.type == pafs.FileType.File else []
    files = [(i.path, i.size, i.mtime_ns) for i in infos if i.type == pafs.FileType.File]
    paths, sizes, mtimes = (list(c) for c in zip(*files)) if files else ([], [], [])
    n = len(paths)
    inner = pc.utf8_slice_codeunits(pa.array(paths, pa.string()), len(root))  # "/d/f" below the root ("" for a file)
    path = pc.binary_join_element_wise(_java_prefix(location, root), inner, "")
    order = pc.sort_indices(path)
    path = path.take(order)
    millis = pc.divide(pa.array(mtimes, pa.int64()).take(order), 1_000_000)  # integer division (times are positive)
    ts = pa.timestamp("ms", tz="UTC")
    columns = {
        "path": path,
        "parent_path": pc.replace_substring_regex(path, r"/[^/]*$", ""),
        "name": pc.replace_substring_regex(path, r"^.*/", ""),
        "length": pa.array(sizes, pa.int64()).take(order),
        "mtime": millis.cast(ts),
        "atime": pa.array(np.zeros(n, np.int64)).cast(ts),
        "metadata": pa.MapArray.from_arrays(pa.array(np.zeros(n + 1, np.int32)), pa.array([], pa.string()),
                                            pa.array([], pa.string())),
    }
    return pa.table([columns[f.name].cast(f.type) if f.name in columns else pa.nulls(n, f.type)
                     for f in ARROW_SCHEMA], schema=ARROW_SCHEMA)


def _java_prefix(location: str, root: str) -> str:
    """The listing root as Java's FileIO names the files below it: ``file:/abs/dir`` for a local
    location (LocalFileIO), else the location's own URI (``s3://bucket/dir``)."""
    parsed = urlparse(location)
    if parsed.scheme in ("", "file"):
        return "file:" + root
    return location.rstrip("/")


# -- creation ---------------------------------------------------------------------------------

def check_schema(schema: TableSchema, name: str) -> None:
    """Refuse an object table Paimon could not create or we could not refresh: its columns must be
    Paimon's (AbstractCatalog.createObjectTable), ``object-location`` absolute, no keys."""
    if [(f.name, str(f.type)) for f in schema.fields] != [(f.name, str(f.type)) for f in FIELDS]:
        given = ", ".join(f"{f.name} {f.type}" for f in schema.fields)
        raise SchemaError(f"object table {name}: its columns are Paimon's ({', '.join(f.name for f in FIELDS)}); "
                          f"give no columns or exactly those, not ({given})")
    location = schema.options.get(OBJECT_LOCATION, "").strip()
    if not location:
        raise InvalidOptionError(f"object table {name} needs the option '{OBJECT_LOCATION}' (the directory it lists)")
    if not urlparse(location).scheme and not os.path.isabs(location):
        raise InvalidOptionError(f"object table {name}: '{OBJECT_LOCATION}' = '{location}' must be an absolute "
                                 "path or a URI")
    if schema.primary_keys or schema.partition_keys:
        raise SchemaError(f"object table {name} cannot have primary or partition keys")


def sql_columns(fields: List[DataField], options: dict, warehouse: str) -> Tuple[List[DataField], dict]:
    """What ``CREATE TABLE t WITH ('type' = 'object-table', ...)`` creates: Paimon's columns when
    none are given, and a relative ``object-location`` made absolute against the warehouse (a SQL
    script cannot know where its warehouse is; the stored path is absolute, so Java reads it alike)."""
    location = options.get(OBJECT_LOCATION, "").strip()
    if location and not urlparse(location).scheme and not os.path.isabs(location):
        joined = f"{warehouse.rstrip('/')}/{location}"
        options = {**options, OBJECT_LOCATION: joined if urlparse(joined).scheme else os.path.normpath(joined)}
    return (fields or FIELDS), options
