"""FileStore: what the core reads of the table it works on (Paimon's ``AbstractFileStore``, which
hands ``pathFactory()``, ``snapshotManager()``, ``newTagManager()``, ``newConsumerManager()`` and
its manifest readers to the operations; ``FileStoreTable`` sits above it and is not named by them).

A protocol: ``table.table.FileStoreTable``, a layer above, is one. The layers above add what
only they can name: a scan (:class:`paimon_sql.read.scan.ScanStore`) and a commit
(:class:`paimon_sql.commit.table_commit.CommitStore`).

Example::

    def files_of(store: FileStore, snapshot_id: int) -> List[str]:
        snap = store.snapshot_manager.snapshot(snapshot_id)
        return [e.file.file_name for m in store.manifest_list(snap.delta_manifest_list)
                for e in store.manifest_entries(m.file_name)]
"""

from __future__ import annotations

from typing import Dict, List, Optional, Protocol, Tuple, TypeVar

from paimon_sql.consumer.consumer_manager import ConsumerManager
from paimon_sql.io import FileIO
from paimon_sql.io.paths import PathFactory
from paimon_sql.manifest.manifest_file import DataFileMeta, IndexManifestEntry, ManifestEntry, ManifestFileMeta
from paimon_sql.mergetree.merge_function import MergeFunction
from paimon_sql.options.core_options import CoreOptions
from paimon_sql.schema.schema_manager import SchemaManager
from paimon_sql.schema.table_schema import TableSchema
from paimon_sql.snapshot.snapshot_manager import SnapshotManager
from paimon_sql.snapshot.tag_manager import TagManager
from paimon_sql.store.catalog_environment import CatalogEnvironment

S = TypeVar("S", bound="FileStore")


class FileStore(Protocol):
    name: str  # db.table, as errors name it
    path: str  # the table's root
    branch: str
    io: FileIO
    paths: PathFactory  # the branch's
    schema: TableSchema  # the schema read and written with
    options: CoreOptions  # the schema's options
    dynamic_options: Dict[str, str]  # options given for one read or write only
    env: CatalogEnvironment  # what the table's catalog adds to its commits
    snapshot_manager: SnapshotManager
    schema_manager: SchemaManager
    consumer_manager: ConsumerManager

    @property
    def tag_manager(self) -> TagManager: ...

    @property
    def merge_function(self) -> MergeFunction: ...  # a primary-key table's merge engine

    def key_range(self, f: DataFileMeta) -> Tuple[tuple, tuple]: ...  # a primary-key file's (min, max) key

    def schema_at(self, schema_id: int) -> TableSchema: ...

    def manifest_list(self, name: Optional[str]) -> List[ManifestFileMeta]: ...

    def manifest_entries(self, name: str) -> List[ManifestEntry]: ...

    def index_manifest_entries(self, name: Optional[str]) -> List[IndexManifestEntry]: ...

    # the same store seen otherwise: with options for one read or write, pinned to the snapshot those
    # options travel to, through another schema, on another branch
    def copy(self: S, dynamic_options: Optional[Dict[str, str]]) -> S: ...

    def travel(self: S, dynamic_options: Optional[Dict[str, str]]) -> S: ...

    def with_schema(self: S, schema: TableSchema, branch: Optional[str] = None) -> S: ...

    def switch_to_branch(self: S, branch: str) -> S: ...
