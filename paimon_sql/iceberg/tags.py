"""Iceberg tag refs follow Paimon's tags the moment they change (Paimon's IcebergCommitCallback as
a TagCallback), not only at the next commit.

A tag created or replaced on a snapshot the current Iceberg metadata still holds becomes a tag ref;
a deleted tag's ref goes, and so does a replaced tag's when its new snapshot is not held (Java 2.0
keeps the old ref until the next commit). As Java does, the latest ``v<N>.metadata.json`` is rewritten in place (its
version stays the Paimon snapshot id, so a metastore registration of it needs no update). A tag on
a snapshot Iceberg no longer holds, or a table whose metadata is not written yet, is left to the
next commit, which rebuilds every ref from the tags. A rename moves the ref (Java 2.0 leaves that
to the next commit).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Optional

from paimon_sql.exceptions import PaimonError
from paimon_sql.iceberg.metadata import read_metadata, tag_ref, to_json
from paimon_sql.iceberg.paths import IcebergPaths, metadata_dir
from paimon_sql.io.paths import MAIN_BRANCH
from paimon_sql.options.iceberg_options import iceberg_options
from paimon_sql.store.file_store import FileStore

if TYPE_CHECKING:
    from paimon_sql.snapshot.snapshot import Snapshot

_LOG = logging.getLogger(__name__)


def iceberg_tag_changed(table: FileStore, name: str, snapshot: Optional[Snapshot]) -> None:
    """The TagManager callback: tag ``name`` now names ``snapshot`` (None: it was deleted). The tag
    itself has changed: a failure here is logged, and the next commit writes the refs again."""
    options = iceberg_options(table.schema.options)
    if options is None or table.branch != MAIN_BRANCH:
        return
    latest = table.snapshot_manager.latest_id()
    if latest is None:
        return
    try:
        path = IcebergPaths(metadata_dir(table, options)).metadata(latest)
        if not table.io.exists(path):
            _LOG.info("table %s: no Iceberg metadata of snapshot %s, tag %s reaches Iceberg at the next commit",
                      table.name, latest, name)
            return
        metadata = read_metadata(table.io, path)
        refs = dict(metadata.get("refs") or {})
        if snapshot is not None and snapshot.id in {s["snapshot-id"] for s in metadata.get("snapshots", [])}:
            refs[name] = tag_ref(snapshot.id)
        else:
            if snapshot is not None:
                _LOG.info("table %s: snapshot %s of tag %s is not in the Iceberg metadata: no Iceberg tag",
                          table.name, snapshot.id, name)
            if refs.pop(name, None) is None:  # a replaced tag's old ref goes too
                return
        table.io.write_bytes(path, to_json({**metadata, "refs": refs}))
    except (PaimonError, OSError) as e:
        _LOG.warning("table %s: the Iceberg ref of tag %s was not updated, the next commit writes it: %s",
                     table.name, name, e)
