"""FileStore: what the core reads of the table it works on (Paimon's ``AbstractFileStore``, which
hands ``pathFactory()``, ``snapshotManager()``, ``schemaManager()`` and its manifest readers to the
operations; ``FileStoreTable`` sits above it and is not named by them).

A protocol: ``table.table.FileStoreTable``, a layer above, is one, and the core's modules that
need no more than this name it instead of the table (issue 49 moves the others here too: the
scans, commits, tag and consumer managers they still take from the table).

Example::

    def files_of(store: FileStore, snapshot_id: int) -> List[str]:
        snap = store.snapshot_manager.snapshot(snapshot_id)
        return [e.file.file_name for m in store.manifest_list(snap.delta_manifest_list)
                for e in store.manifest_entries(m.file_name)]
"""

from __future__ import annotations

from typing import Dict, List, Optional, Protocol

from paimon_sql.io import FileIO
from paimon_sql.io.paths import PathFactory
from paimon_sql.manifest.manifest_file import IndexManifestEntry, ManifestEntry, ManifestFileMeta
from paimon_sql.options.core_options import CoreOptions
from paimon_sql.schema.schema_manager import SchemaManager
from paimon_sql.schema.table_schema import TableSchema
from paimon_sql.snapshot.snapshot_manager import SnapshotManager


class FileStore(Protocol):
    name: str  # db.table, as errors name it
    path: str  # the table's root
    branch: str
    io: FileIO
    paths: PathFactory  # the branch's
    schema: TableSchema  # the schema read and written with
    options: CoreOptions  # the schema's options
    dynamic_options: Dict[str, str]  # options given for one read or write only
    snapshot_manager: SnapshotManager
    schema_manager: SchemaManager

    def schema_at(self, schema_id: int) -> TableSchema: ...

    def manifest_list(self, name: Optional[str]) -> List[ManifestFileMeta]: ...

    def manifest_entries(self, name: str) -> List[ManifestEntry]: ...

    def index_manifest_entries(self, name: Optional[str]) -> List[IndexManifestEntry]: ...
