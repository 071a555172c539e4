"""Where a table's Iceberg metadata lives and how its files are named (Paimon's IcebergPathFactory).

``table-location``: ``<table>/metadata``, where an Iceberg reader given the table's directory
looks. ``catalog-location`` (hadoop-catalog's default): ``<warehouse>/iceberg/<db>/<table>/metadata``,
so that ``<warehouse>/iceberg`` is the warehouse of an Iceberg Hadoop catalog. Metadata files are
``v<snapshot id>.metadata.json`` (the Iceberg version is the Paimon snapshot id), with
``version-hint.text`` naming the latest; manifests and manifest lists carry one random id per writer.
"""

from __future__ import annotations

import re
import uuid
from itertools import count
from typing import TYPE_CHECKING, List

from paimon_sql.exceptions import InvalidOptionError
from paimon_sql.options.iceberg_options import STORAGE_LOCATION, TABLE_LOCATION
from paimon_sql.store.file_store import FileStore

if TYPE_CHECKING:
    from paimon_sql.options.iceberg_options import IcebergOptions

VERSION_HINT = "version-hint.text"
_METADATA_NAME = re.compile(r"v(\d+)\.metadata\.json")


def metadata_dir(table: FileStore, options: IcebergOptions) -> str:
    """The directory of ``table``'s Iceberg metadata."""
    if options.location == TABLE_LOCATION:
        return f"{table.path}/metadata"
    db_dir, table_dir = table.path.rsplit("/", 1)
    warehouse, db = db_dir.rsplit("/", 1)
    if not db.endswith(".db"):
        raise InvalidOptionError(f"table {table.name}: catalog-location Iceberg metadata needs the table in a "
                                 f"warehouse database directory (<db>.db), not {db_dir}; set "
                                 f"'{STORAGE_LOCATION}' = 'table-location'")
    return f"{warehouse}/iceberg/{db[:-3]}/{table_dir}/metadata"


class IcebergPaths:
    def __init__(self, directory: str):
        self.dir = directory
        self._uuid = str(uuid.uuid4())
        self._manifests = count(1)
        self._lists = count(1)

    def new_manifest(self) -> str:
        return f"{self.dir}/{self._uuid}-m{next(self._manifests)}.avro"

    def new_manifest_list(self) -> str:
        return f"{self.dir}/snap-{next(self._lists)}-{self._uuid}.avro"

    def metadata(self, snapshot_id: int) -> str:
        return f"{self.dir}/v{snapshot_id}.metadata.json"

    def version_hint(self) -> str:
        return f"{self.dir}/{VERSION_HINT}"

    def file(self, name: str) -> str:
        """A file of this directory by its name (a manifest's path in another copy of the table)."""
        return f"{self.dir}/{name.rsplit('/', 1)[-1]}"

    def metadata_ids(self, io) -> List[int]:
        """The versions of the metadata files present, ascending."""
        return sorted(int(m.group(1)) for m in map(_METADATA_NAME.fullmatch, io.list_names(self.dir)) if m)
