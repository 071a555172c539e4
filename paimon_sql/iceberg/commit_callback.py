"""The entry points of Iceberg compatibility (Paimon's IcebergCommitCallback): the check before a
write, the job after each commit, and the metadata written at once when the options are turned on.

After each commit, every snapshot committed since the last one published gets Iceberg metadata
(:mod:`paimon_sql.iceberg.publisher`): extending ``v<N-1>.metadata.json`` when it exists
(:mod:`paimon_sql.iceberg.incremental`), else written afresh from the snapshot's live files
(:mod:`paimon_sql.iceberg.afresh`). An append table exposes every data file; a primary-key table
only the files of its top level (fully compacted: one row per key, no merge needed). Format
version 3 carries the table's 64-bit deletion vectors (:mod:`paimon_sql.iceberg.deletion_vectors`),
and a primary-key table with them exposes every file above level 0. With ``hive-catalog`` storage
each metadata file is then registered in a Hive metastore by the table's catalog environment
(catalog/iceberg_hive.py), which the catalog layer above provides.

Iceberg's one table is Paimon's main branch: a commit to another branch publishes nothing
(:mod:`paimon_sql.iceberg.branches`). What cannot be published correctly is refused before
anything is written (:func:`check_publishable`).
"""

from __future__ import annotations

import logging

from paimon_sql.exceptions import PaimonError, UnservedFeatureError
from paimon_sql.iceberg import deletion_vectors as dvs
from paimon_sql.iceberg.conversions import iceberg_field
from paimon_sql.iceberg.paths import metadata_dir
from paimon_sql.iceberg.publisher import Publisher
from paimon_sql.io.paths import MAIN_BRANCH
from paimon_sql.options.iceberg_options import HIVE_CATALOG, REST_CATALOG, iceberg_options
from paimon_sql.read.scan import ScanStore


_LOG = logging.getLogger(__name__)


def check_publishable(table: ScanStore) -> None:
    """Refuse, before a write, a table whose Iceberg metadata paimon-sql would write wrong."""
    options = iceberg_options(table.schema.options)
    if options is None:
        return
    why = None  # checked on every branch too: a branch's files reach main by a fast-forward or a merge
    if table.options.get("deletion-vectors.enabled") and not dvs.published(table, options):
        why = ("carries deletion vectors only with 'metadata.iceberg.format-version' = '3' and "
               "'deletion-vectors.bitmap64' = 'true' ('deletion-vectors.enabled')")
    elif table.options.get("data-evolution.enabled"):
        why = "cannot describe partial-column files ('data-evolution.enabled')"
    if why:
        raise UnservedFeatureError(f"table {table.name}: Iceberg metadata ('metadata.iceberg.storage' = "
                                   f"'{options.storage}') {why}: writes to the table are refused")
    for f in table.schema.fields:
        iceberg_field(f)  # a column Iceberg cannot describe fails naming it
    metadata_dir(table, options)
    if options.storage == HIVE_CATALOG:
        if table.env.iceberg_hive is None:
            raise UnservedFeatureError(f"table {table.name}: 'metadata.iceberg.storage' = 'hive-catalog' registers "
                                       "the table in a metastore under its catalog name: load the table from a "
                                       "catalog, not by its path")
        table.env.iceberg_hive.check(table)
    if options.storage == REST_CATALOG and table.env.iceberg_hive is None:  # the catalog's name of the table
        raise UnservedFeatureError(f"table {table.name}: 'metadata.iceberg.storage' = 'rest-catalog' commits the "
                                   "table to a REST catalog under its catalog name: load the table from a "
                                   "catalog, not by its path")


def iceberg_after_commit(table: ScanStore) -> None:
    """The post-commit job: Iceberg metadata for every snapshot committed since the last one
    published. The commit has happened: a failure is logged, and the next commit catches up (writing
    the metadata afresh when its base is missing, as Paimon's callback recovers; registering it again
    in a Hive metastore or REST catalog)."""
    options = iceberg_options(table.schema.options)
    latest = table.snapshot_manager.latest_id()
    if options is None or latest is None or table.branch != MAIN_BRANCH:  # Iceberg's one table is main
        return
    try:
        Publisher(table, options).publish_up_to(latest)
    except (PaimonError, OSError) as e:
        _LOG.warning("table %s: writing the Iceberg metadata of snapshot %s failed, the next commit catches "
                     "up: %s", table.name, latest, e)


def publish_now(table: ScanStore) -> None:
    """The Iceberg metadata of the table's latest snapshot, written now (options just turned on);
    unlike the post-commit job, a failure reaches the caller."""
    options = iceberg_options(table.schema.options)
    latest = table.snapshot_manager.latest_id()
    if options is not None and latest is not None and table.branch == MAIN_BRANCH:
        Publisher(table, options).publish_up_to(latest)
