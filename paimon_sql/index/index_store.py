"""IndexStore: what index files are read and written through (Paimon hands its ``IndexFileHandler``
the table's ``FileIO`` and path factory, and the index its options).

A protocol, so this layer names no table: the store the core works on
(:class:`paimon_sql.store.file_store.FileStore`, layers above) is one.
"""

from __future__ import annotations

from typing import Protocol

from paimon_sql.io import FileIO
from paimon_sql.io.paths import PathFactory
from paimon_sql.options.core_options import CoreOptions


class IndexStore(Protocol):
    io: FileIO
    paths: PathFactory  # where index files go (``index/``), and data files beside which file indexes go
    options: CoreOptions  # which format a deletion vector takes, how big an index stays in the manifest
