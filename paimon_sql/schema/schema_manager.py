"""SchemaManager: the ``schema/schema-N`` files of a table; old ones stay for old data files."""

from __future__ import annotations

from typing import Dict, List, Optional

from paimon_sql.exceptions import CorruptMetadataError, PaimonError, SchemaError
from paimon_sql.io import FileIO
from paimon_sql.io.catalog_lock import unlocked
from paimon_sql.io.paths import PathFactory
from paimon_sql.schema.schema_change import apply
from paimon_sql.schema.table_schema import TableSchema


class SchemaManager:
    def __init__(self, io: FileIO, paths: PathFactory, lock=unlocked, callbacks=(), alter=None):
        self.io = io
        self.paths = paths
        self.lock = lock  # the catalog's commit lock (io/catalog_lock.py), held to create schema-N
        self.callbacks = callbacks  # the catalog's schema_callbacks, told of each schema-N committed
        self.alter = alter  # the catalog's alter_table, when the catalog writes the schema files
        self._cache: Dict[int, TableSchema] = {}

    def list_ids(self) -> List[int]:
        names = self.io.list_names(self.paths.schema_dir)
        return sorted(int(n[7:]) for n in names if n.startswith("schema-") and n[7:].isdigit())

    def latest(self) -> Optional[TableSchema]:
        ids = self.list_ids()
        return self.schema(ids[-1]) if ids else None

    def schema(self, schema_id: int) -> TableSchema:
        if schema_id not in self._cache:
            path = self.paths.schema_path(schema_id)
            try:
                self._cache[schema_id] = TableSchema.read(self.io, path)
            except FileNotFoundError:
                raise CorruptMetadataError(f"schema {schema_id} is missing ({path})") from None
        return self._cache[schema_id]

    def commit_changes(self, changes) -> TableSchema:
        """Apply schema changes (:mod:`paimon_sql.schema.schema_change`) to the latest schema and
        commit the result as the next ``schema-N``."""
        latest = self.latest()
        if latest is None:
            raise SchemaError(f"no schema under {self.paths.schema_dir}")
        schema = apply(latest, changes)  # checked here first: what we would refuse is never sent
        if self.alter is None:
            return self.commit(schema)
        self.alter(self.paths.branch, changes)
        return self.latest()

    def commit(self, schema: TableSchema) -> TableSchema:
        """Write ``schema`` as ``schema-<id>``; fails if that id is taken (a concurrent change)."""
        if self.alter is not None:
            raise SchemaError(f"schema {schema.id} of {self.paths.schema_dir}: the table's catalog keeps its "
                              "schemas; change it by its schema changes")
        path, data = self.paths.schema_path(schema.id), schema.to_json().encode("utf-8")
        if not self.lock(lambda: self.io.try_create(path, data)):
            raise SchemaError(f"schema {schema.id} already exists: the table was changed concurrently")
        try:
            for callback in self.callbacks:
                callback(self.paths.branch, schema)
        except PaimonError:
            self.io.delete(path)
            raise
        self._cache[schema.id] = schema
        return schema
