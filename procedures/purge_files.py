"""``purge_files``: paimon-spark's PurgeFilesProcedure (Java's ``FileStoreTable.purgeFiles``).

Empties a table and removes its history, keeping the table itself (its schemas and options), in
Paimon's order: every branch is dropped, every tag and consumer deleted; one OVERWRITE snapshot
truncates the table; every snapshot but that last one expires and the changelog directory is
deleted (after the expiry here, which on a table keeping changelog longer than snapshots writes
the expired snapshots' changes there); then every file nothing references is removed, however young (so a write running
meanwhile loses its files, as in Paimon: purge a table nobody writes). The table reads empty
afterwards and takes new writes. Returns ``Success``.
"""

from __future__ import annotations

import time

from paimon_sql.io.paths import MAIN_BRANCH
from paimon_sql.maintenance.expire_snapshots import expire_snapshots
from paimon_sql.maintenance.remove_orphan_files import remove_orphan_files
from paimon_sql.procedures.base import Procedure, columns, register, required
from paimon_sql.store.references import CHANGELOG_DIR


@register
class PurgeFilesProcedure(Procedure):
    name = "purge_files"
    rewrites_files = True
    parameters = (required("table", "STRING"),)
    output = columns("result STRING")
    description = "Delete all data, snapshots but the last (empty) one, tags, branches and consumers of a table."

    def call(self, session, args):
        table = self.table(session, args["table"])
        if table.branch != MAIN_BRANCH:
            raise self.fail(f"table '{args['table']}' is branch '{table.branch}': purge_files purges the whole "
                            "table with all its branches, name the table itself")
        for name, _ in table.branch_manager.branches():
            table.branch_manager.drop(name)
        for name in table.tag_manager.names():
            table.tag_manager.delete(name)
        for consumer in table.consumer_manager.consumers():
            table.consumer_manager.delete(consumer)
        quiet = table.copy({"write-only": "true"})  # no maintenance after the truncate: it follows here
        quiet.new_commit().overwrite([])
        expire_snapshots(quiet, retain_max=1, retain_min=1, older_than=int(time.time() * 1000) + 1,
                         max_deletes=2 ** 31 - 1)
        # after the expiry, which keeps a decoupled table's expired changes as changelog-N files
        table.io.delete(f"{table.paths.branch_root}/{CHANGELOG_DIR}")
        remove_orphan_files(quiet, int(time.time() * 1000))
        return [("Success",)]
