"""FileStoreTable: one Paimon table directory and the operations on it.

It binds the schema, options, paths and managers together and hands out the three verbs:
``new_write()`` (rows → files), ``new_commit()`` (files → snapshot) and ``new_scan()``
(snapshot → rows). Manifest files are immutable, so their decoded records are cached here.
"""

from __future__ import annotations

import os
from dataclasses import replace
from functools import cached_property, partial
from typing import List, Optional
from urllib.parse import urlparse

import pyarrow as pa

from paimon_sql.commit.table_commit import LAST_SAFE_SNAPSHOT, TableCommit
from paimon_sql.compact.merge_tree_compact import BucketCompactor, compact_messages
from paimon_sql.compact.postpone_compact import postpone_messages
from paimon_sql.consumer.consumer_manager import ConsumerManager
from paimon_sql.data import binary_row
from paimon_sql.data.partition_names import specs_predicate
from paimon_sql.exceptions import BranchError, PaimonError, TableNotFoundError
from paimon_sql.format.file_format import check_format
from paimon_sql.iceberg.commit_callback import iceberg_after_commit
from paimon_sql.iceberg.tags import iceberg_tag_changed
from paimon_sql.io import FileIO
from paimon_sql.io.paths import MAIN_BRANCH, PathFactory
from paimon_sql.maintenance.expire_partitions import expire_partitions_after_commit
from paimon_sql.maintenance.expire_snapshots import expire_after_commit
from paimon_sql.maintenance.rewrite_file_index import rewrite_file_index
from paimon_sql.manifest import manifest_file
from paimon_sql.manifest.objects_cache import ObjectsCache
from paimon_sql.mergetree.merge_function import for_schema
from paimon_sql.options import core_options as opts
from paimon_sql.options.core_options import check_usable
from paimon_sql.read.postpone import postpone_table
from paimon_sql.read.scan import TableScan, in_partitions
from paimon_sql.schema.schema_change import check_option_changes
from paimon_sql.schema.schema_manager import SchemaManager
from paimon_sql.schema.table_schema import TableSchema
from paimon_sql.snapshot.snapshot_manager import SnapshotManager
from paimon_sql.snapshot.tag_manager import TagManager
from paimon_sql.store.catalog_environment import NO_CATALOG, CatalogEnvironment
from paimon_sql.store.time_travel import TRAVEL_KEYS, travel_snapshot
from paimon_sql.table.branch_manager import BranchManager
from paimon_sql.table.unserved_features import check_read, check_write
from paimon_sql.tag.tag_auto_creation import tags_after_commit, to_auto_tag
from paimon_sql.write.row_delete import delete_messages, positions_where
from paimon_sql.write.table_write import TableWrite

TO_AUTO_TAG = "incremental-to-auto-tag"

# What every commit of a table is followed by, in Paimon's order: the commit callbacks (Iceberg
# metadata), then automatic tags and tag expiry (its maintain()), then partition expiry, then
# consumer and snapshot expiry (as Paimon's writers do; each is cheap unless something is due).
# The commit gets them from the table.
POST_COMMIT_JOBS = (iceberg_after_commit, tags_after_commit, expire_partitions_after_commit, expire_after_commit)


class FileStoreTable:
    def __init__(self, io: FileIO, path: str, schema: TableSchema, name: str = "", branch: str = MAIN_BRANCH,
                 env: CatalogEnvironment = NO_CATALOG):
        self.io = io
        self.env = env
        self.path = path.rstrip("/")
        self.schema = schema
        self.name = name or self.path.rsplit("/", 1)[-1]
        self.branch = branch
        self.options = schema.core_options()
        check_format(self.options.file_format)
        self.paths = PathFactory(self.path, schema.partition_keys, self.options.file_format,
                                 self.options.partition_default_name, branch,
                                 [f.type for f in schema.fields_of(schema.partition_keys)],
                                 self.options.get("partition.legacy-name"))
        self.snapshot_manager = SnapshotManager(io, self.paths, env.lock, env.snapshot_commit, env.latest_snapshot)
        self.schema_manager = SchemaManager(io, self.paths, env.lock, env.schema_callbacks, env.alter_table)
        self.consumer_manager = ConsumerManager(io, self.paths)
        self.branch_manager = (env.branches or BranchManager)(io, self.path)
        self.dynamic_options: dict = {}  # options given for this read/write only (see copy)
        self._entries, self._lists, self._index = ObjectsCache(4096), ObjectsCache(1024), ObjectsCache(256)

    @property
    def tag_manager(self) -> TagManager:
        """Made on use: a TagManager holds its table (the Iceberg tag callback), and a table holding
        it would be a reference cycle (see :mod:`paimon_sql.manifest.objects_cache`)."""
        return TagManager(self.io, self.paths, (partial(iceberg_tag_changed, self),))

    def __getstate__(self):
        """Pickle as (io, path, schema, name, branch, options): executors rebuild paths, managers and
        caches; the catalog environment stays on the driver, the only place that commits."""
        return {"io": self.io, "path": self.path, "schema": self.schema, "name": self.name, "branch": self.branch,
                "dynamic_options": self.dynamic_options}

    def __setstate__(self, state):
        self.__init__(state["io"], state["path"], state["schema"], state["name"], state.get("branch", MAIN_BRANCH))
        self.dynamic_options = state.get("dynamic_options", {})

    def copy(self, dynamic_options: Optional[dict]) -> "FileStoreTable":
        """This table with options overridden for one read or write (``/*+ OPTIONS(...) */``,
        ``scan.*``); nothing is persisted. ``branch`` names the branch read or written (its schema,
        its snapshots). Unknown keys are kept; a value that does not parse, breaks its rule, names
        a column the table lacks or changes an option fixed at CREATE fails here, as it would at
        ALTER TABLE."""
        if not dynamic_options:
            return self
        if "branch" in dynamic_options:  # Paimon's dynamic 'branch' option: the same table on that branch
            rest = {k: v for k, v in dynamic_options.items() if k != "branch"}
            branch = str(dynamic_options["branch"]).strip()
            table = self if branch == self.branch else self.switch_to_branch(branch)
            return table.copy(rest)
        merged = {**self.schema.options, **dynamic_options}
        opts.validate(merged, self.schema.field_names, keys=dynamic_options)
        check_option_changes(self.schema.options, dynamic_options)
        schema = replace(self.schema, options=merged)
        table = self.with_schema(schema)
        table.dynamic_options = {**self.dynamic_options, **dynamic_options}
        return table

    def travel(self, dynamic_options: Optional[dict]) -> "FileStoreTable":
        """:meth:`copy`, and when the options travel in time (``scan.snapshot-id``, ``scan.tag-name``,
        ``scan.version``, ``scan.timestamp[-millis]``, ``scan.watermark``), pinned to that snapshot
        (``scan.snapshot-id``) and read through the schema it was written with, as Paimon does.
        ``incremental-to-auto-tag`` becomes the incremental read between two tags it means."""
        if (dynamic_options or {}).get(TO_AUTO_TAG):
            rest = {k: v for k, v in dynamic_options.items() if k != TO_AUTO_TAG}
            dynamic_options = {**rest, **to_auto_tag(self.copy(rest), str(dynamic_options[TO_AUTO_TAG]))}
        table = self.copy(dynamic_options)
        if not any(k in (dynamic_options or {}) for k in TRAVEL_KEYS):
            return table
        snap = travel_snapshot(table)
        if snap is None:
            return table
        pinned = {k: v for k, v in table.dynamic_options.items() if k not in TRAVEL_KEYS}
        sm = table.snapshot_manager
        tag = None if sm.io.exists(sm.paths.snapshot_path(snap.id)) else \
            next((t.name for t in table.tag_manager.tags() if t.snapshot == snap), None)
        if tag is not None:  # an expired snapshot a tag keeps: read through the tag
            pinned["scan.tag-name"] = tag
        else:
            pinned["scan.snapshot-id"] = str(snap.id)
        base = self.schema_at(snap.schema_id)
        schema = replace(base, options={**base.options, **pinned})
        out = self.with_schema(schema)
        out.dynamic_options = pinned
        return out

    def switch_to_branch(self, branch: str) -> "FileStoreTable":
        """The same table read and written through ``branch`` (its own snapshots and schemas)."""
        if not self.branch_manager.exists(branch):
            raise BranchError(f"branch '{branch}' of table {self.name} does not exist")
        paths = PathFactory(self.path, [], "parquet", branch=branch)
        schema = SchemaManager(self.io, paths).latest()
        return self.with_schema(schema, branch)

    def with_schema(self, schema: TableSchema, branch: Optional[str] = None) -> "FileStoreTable":
        """The same table (location, name, catalog environment) read and written through ``schema``,
        on ``branch`` (default: this table's); no per-read options carried over."""
        return FileStoreTable(self.io, self.path, schema, self.name, branch or self.branch, self.env)

    # -- metadata access (cached) -----------------------------------------------------------

    def schema_at(self, schema_id: int) -> TableSchema:
        return self.schema if schema_id == self.schema.id else self.schema_manager.schema(schema_id)

    def _read_records(self, name: str, record_type: str) -> tuple:
        return tuple(manifest_file.read_file(self.io, self.paths.manifest_path(name), record_type))

    def _read_list(self, name: str) -> tuple:
        return self._read_records(name, "ManifestFileMeta")

    def _read_entries(self, name: str) -> tuple:
        return self._read_records(name, "ManifestEntry")

    def _read_index(self, name: str) -> tuple:
        return self._read_records(name, "IndexManifestEntry")

    def manifest_list(self, name: Optional[str]) -> List[manifest_file.ManifestFileMeta]:
        return list(self._lists.get(name, self._read_list)) if name else []

    def manifest_entries(self, name: str) -> List[manifest_file.ManifestEntry]:
        return list(self._entries.get(name, self._read_entries))

    def index_manifest_entries(self, name: Optional[str]) -> List[manifest_file.IndexManifestEntry]:
        return list(self._index.get(name, self._read_index)) if name else []

    # -- verbs ------------------------------------------------------------------------------

    @cached_property
    def merge_function(self):
        """The primary-key table's merge engine (its options validated on first use)."""
        return for_schema(self.schema)

    def key_range(self, f) -> tuple:
        """A primary-key data file's (min key, max key) as comparable tuples."""
        types = self._key_types
        return tuple(binary_row.from_bytes(f.min_key, types)), tuple(binary_row.from_bytes(f.max_key, types))

    @cached_property
    def _key_types(self):
        return [f.type for f in self.schema.key_fields()]

    def new_write(self, overwrite: bool = False):
        check_usable(self.schema.options, "written")
        self.schema.check_writable(self.name)
        check_write(self, indexes=False)  # a task's write: the driver's commit looks for global indexes
        return TableWrite(self, BucketCompactor, overwrite)

    def new_commit(self, commit_user: Optional[str] = None):
        check_usable(self.schema.options, "written")
        check_write(self)
        return TableCommit(self, commit_user, POST_COMMIT_JOBS)

    def has_partition(self, spec: dict) -> bool:
        """Whether the latest snapshot holds files of the partition ``spec`` (``{key: literal}``,
        literals cast to the partition columns' types; NULL: the default partition)."""
        return bool(in_partitions(self.new_scan().plan_entries(), specs_predicate(self.schema, [spec]), self.schema))

    def compact(self, partitions=None, full: bool = False, commit_user: Optional[str] = None) -> Optional[int]:
        """Compact the table's buckets (``partitions``: a predicate on partition columns) into one
        COMPACT snapshot, committed as ``commit_user`` (default: a new one): primary-key buckets' LSM
        trees (``full``: every bucket into its max level), append buckets' small files (``full``: all
        but leading full-size ones). Returns the snapshot id (None: nothing to compact)."""
        check_write(self)
        if postpone_table(self):  # as on Spark, with this machine's cores for Spark's default parallelism
            if partitions is not None:
                raise PaimonError(f"table {self.name}: a postpone table's compaction takes no partitions")
            base, messages = postpone_messages(self, os.cpu_count() or 1)
            return self.copy({LAST_SAFE_SNAPSHOT: str(base)}).new_commit().commit_or_abort(messages) \
                if messages else None
        return self.new_commit(commit_user).commit_or_abort(compact_messages(self, partitions, full))

    def rewrite_file_index(self, partitions=None) -> Optional[int]:
        """Rebuild every data file's file index for the current ``file-index.*`` options (one
        COMPACT snapshot; None when nothing changed). ``partitions``: a predicate on partition keys."""
        check_write(self)
        return rewrite_file_index(self, partitions)

    def delete_where(self, predicate) -> int:
        """Delete an append table's rows matching ``predicate`` (deletion vectors when enabled, else
        copy-on-write of the touched files) in one snapshot; returns how many rows were deleted."""
        check_write(self)
        positions = positions_where(self, predicate)
        self.new_commit().commit_or_abort(delete_messages(self, positions))
        return int(sum(len(p) for p in positions.values()))

    def new_scan(self):
        check_usable(self.schema.options, "read")
        return TableScan(self)

    def write_arrow(self, data: pa.Table, overwrite: bool = False, row_kinds=None,
                    commit_user: Optional[str] = None) -> Optional[int]:
        """Write and commit in one call (batch), as ``commit_user`` (default: a new one); returns the
        last snapshot id the commit made."""
        write = self.new_write(overwrite)
        try:
            write.write_arrow(data, row_kinds=row_kinds)
            messages = write.prepare_commit()
        except BaseException:
            write.abort()
            raise
        commit = self.new_commit(commit_user)
        try:
            return commit.overwrite(messages) if overwrite else commit.commit(messages)
        except BaseException:
            commit.abort(messages)
            raise

    def to_arrow(self, snapshot_id: Optional[int] = None) -> pa.Table:
        check_read(self, self.schema.field_names)  # every column: none may be one paimon-sql does not read
        return self.new_scan().with_snapshot(snapshot_id).to_arrow()

    def __repr__(self) -> str:
        branch = "" if self.branch == MAIN_BRANCH else f", branch {self.branch}"
        return f"FileStoreTable({self.name}, {self.path}{branch})"


def table_at(path: str, options: Optional[dict] = None) -> FileStoreTable:
    """The table stored at ``path`` (a directory, ``file:`` URI, or ``s3://`` URI with ``s3.*``
    ``options``), without a catalog, as Paimon's FileStoreTableFactory loads a table by path."""
    path = _local(path)
    io = FileIO.for_path(path, options)
    schema = SchemaManager(io, PathFactory(path, [], "parquet")).latest()
    if schema is None:
        raise TableNotFoundError(f"no Paimon table at {path} (it has no schema/schema-N file)")
    return FileStoreTable(io, path, schema, name_of_path(path))


def create_table_at(path: str, schema: TableSchema, options: Optional[dict] = None) -> FileStoreTable:
    """A new table at ``path`` with ``schema`` (its first schema file); options a primary-key
    merge engine cannot honour fail before anything is written."""
    path = _local(path)
    io = FileIO.for_path(path, options)
    table = FileStoreTable(io, path, schema, name_of_path(path))
    if schema.is_primary_key_table:
        table.merge_function  # noqa: B018 - validates the merge engine's options
    table.schema_manager.commit(schema)
    return table


def name_of_path(path: str) -> str:
    """``db.t`` for a table at ``.../db.db/t`` (a warehouse's layout, as Paimon names a table
    loaded by path), else the directory's name."""
    parent, _, table = path.rstrip("/").rpartition("/")
    database = parent.rpartition("/")[2]
    return f"{database[:-3]}.{table}" if database.endswith(".db") and len(database) > 3 else table


def _local(path: str) -> str:
    """Local paths absolute and ``file:`` URIs as such paths (what Spark's own local writes and
    reads expect, from any working directory); other URIs as they are."""
    parsed = urlparse(path)
    if parsed.scheme and parsed.scheme != "file":
        return path.rstrip("/")
    return os.path.abspath(parsed.path if parsed.scheme == "file" else path)
