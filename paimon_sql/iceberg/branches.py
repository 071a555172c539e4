"""Iceberg metadata and Paimon branches: Iceberg's one table is Paimon's main branch.

A commit to another branch publishes nothing (:func:`~paimon_sql.iceberg.commit_callback.iceberg_after_commit`).
Java 2.0's callback runs for a branch commit too and writes into the same metadata directory as
main: a branch snapshot whose id main has published already gets nothing, and one beyond main's
latest extends main's metadata with the branch's delta, after which main's own commit of that id
publishes nothing. paimon-sql keeps main's metadata untouched instead.

A fast-forward (``CALL sys.fast_forward``) replaces main's snapshots from the branch's earliest one
on. Main's Iceberg metadata then catches up at once (:func:`after_fast_forward`): it is written
afresh from main's new latest snapshot, as for a first commit, and every earlier metadata file goes
with its manifests, since the snapshots they describe are no longer all main's (a branch's
snapshot before its earliest one is not recorded, so nothing older can safely be extended).
Java 2.0 does nothing at a fast-forward, and its next commit extends metadata of snapshots that
are no longer main's.
"""

from __future__ import annotations

import logging

from paimon_sql.exceptions import PaimonError
from paimon_sql.iceberg import expiry
from paimon_sql.iceberg.publisher import Publisher
from paimon_sql.io.paths import MAIN_BRANCH
from paimon_sql.options.iceberg_options import iceberg_options
from paimon_sql.read.scan import ScanStore


_LOG = logging.getLogger(__name__)


def after_fast_forward(table: ScanStore, first: int) -> None:
    """``table`` (main, just fast-forwarded to a branch's snapshots from ``first`` on, loaded with
    its new schema) gets the Iceberg metadata of its latest snapshot afresh. The metadata of
    snapshots from ``first`` on goes first, and its files once the new metadata is written. The
    fast-forward has happened: a failure is logged, and the next commit publishes again."""
    options = iceberg_options(table.schema.options)
    latest = table.snapshot_manager.latest_id()
    if table.branch != MAIN_BRANCH or options is None or latest is None:
        return
    try:
        publisher = Publisher(table, options)
        stale = [v for v in publisher.paths.metadata_ids(table.io) if v >= first]
        files = expiry.files_of(publisher, stale)
        for v in stale:
            publisher.retire(v)
        publisher.publish(table.snapshot_manager.snapshot(latest), afresh_only=True)
        for path in files:  # never named by the new metadata, whose files are new
            table.io.delete(path)
    except (PaimonError, OSError) as e:
        _LOG.warning("table %s: the Iceberg metadata of fast-forwarded snapshot %s was not written, the next "
                     "commit publishes it: %s", table.name, latest, e)
