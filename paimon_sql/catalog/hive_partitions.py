"""A table's partitions in the Hive metastore (``metastore.partitioned-table``), as Paimon's
AddPartitionCommitCallback and HiveMetastoreClient keep them.

Partition values are the text Paimon names the partition directories with (``partition.legacy-name``,
``partition.default-name``), each partition's location ``<table location>/k=v/...``. After each
commit the partitions its ADD entries bring are added (if absent; a cache skips those this table
object already added). Partitions an OVERWRITE commit left without files (DROP PARTITION, partition
expiry, TRUNCATE, an overwrite writing nothing there) are dropped from the metastore: Paimon drops
them on DROP PARTITION and expiry; here every way of emptying a partition does the same, so the
metastore lists the partitions that hold data. Only the main branch's commits touch the metastore.
"""

from __future__ import annotations

import time
from typing import Callable, Iterable, List, Sequence

from paimon_sql.catalog.hive_client import ClientPool, ttypes
from paimon_sql.data import binary_row
from paimon_sql.exceptions import MetastoreMissing
from paimon_sql.io.paths import MAIN_BRANCH
from paimon_sql.manifest.manifest_file import ADD, DELETE
from paimon_sql.options.core_options import PARTITIONED_IN_METASTORE


def syncs_partitions(schema) -> bool:
    """Whether the metastore table of ``schema`` is partitioned (and its partitions kept)."""
    return bool(schema.core_options().get(PARTITIONED_IN_METASTORE)) and bool(schema.partition_keys)


class PartitionSync:
    """A commit callback (table/catalog_environment.py) of one table of a Hive catalog."""

    def __init__(self, pool: ClientPool, database: str, table: str, hms_table: Callable[[], "ttypes.Table"]):
        self.pool, self.database, self.table = pool, database, table
        self._hms_table = hms_table  # the metastore's table (its storage descriptor and location)
        self._added: set = set()  # partitions (bytes) this table object has added

    def __call__(self, table, snapshot, entries) -> None:
        if table.branch != MAIN_BRANCH or not syncs_partitions(table.schema):
            return
        added = {e.partition for e in entries if e.kind == ADD}
        self.add(table, [p for p in added if p not in self._added])
        if snapshot.commit_kind == "OVERWRITE":
            removed = {e.partition for e in entries if e.kind == DELETE} - added
            if removed:
                live = {e.partition for e in table.new_scan().with_snapshot(snapshot.id).plan_entries()}
                self.drop(table, [p for p in removed if p not in live])

    def add(self, table, partitions: Sequence[bytes]) -> None:
        """Register ``partitions`` (binary rows) unless the metastore has them."""
        if not partitions:
            return
        hms = self._hms_table()
        now = int(time.time())
        parts = [ttypes.Partition(values=[text for _, text in table.paths.partition_spec(values)],
                                  dbName=self.database, tableName=self.table, createTime=now, lastAccessTime=now,
                                  sd=_located(hms.sd, f"{hms.sd.location}/{table.paths.partition_dir(values)}"),
                                  parameters={})
                 for values in _values(table, partitions)]
        request = ttypes.AddPartitionsRequest(dbName=self.database, tblName=self.table, parts=parts,
                                              ifNotExists=True, needResult=False)
        self.pool.call(lambda c: c.add_partitions_req(request), f"add partitions to {self.database}.{self.table}")
        self._added.update(partitions)

    def drop(self, table, partitions: Sequence[bytes]) -> None:
        for values in _values(table, partitions):
            texts = [text for _, text in table.paths.partition_spec(values)]
            try:
                self.pool.call(lambda c: c.drop_partition(self.database, self.table, texts, False),
                               f"drop a partition of {self.database}.{self.table}")
            except MetastoreMissing:
                pass
        self._added.difference_update(partitions)


def _values(table, partitions: Iterable[bytes]) -> List[list]:
    types = [f.type for f in table.schema.fields_of(table.schema.partition_keys)]
    return [binary_row.from_bytes(p, types) for p in partitions]


def _located(sd, location: str):
    """A copy of the table's storage descriptor at ``location`` (a partition's, as Java copies it)."""
    return ttypes.StorageDescriptor(cols=sd.cols, location=location, inputFormat=sd.inputFormat,
                                    outputFormat=sd.outputFormat, compressed=sd.compressed, numBuckets=sd.numBuckets,
                                    serdeInfo=sd.serdeInfo, bucketCols=sd.bucketCols, sortCols=sd.sortCols,
                                    parameters=sd.parameters, skewedInfo=sd.skewedInfo,
                                    storedAsSubDirectories=sd.storedAsSubDirectories)
