"""Marking partitions done (Paimon's ``PartitionMarkDoneAction``): telling downstream jobs that a
partition's data is complete.

``partition.mark-done-action`` lists the actions (``,``-separated). Only ``success-file`` can run
here: it writes Paimon's ``_SUCCESS`` file in the partition's directory (``SuccessFile``: JSON with
``creationTime`` and ``modificationTime``, epoch milliseconds; marking an already marked partition
keeps its creation time and moves its modification time). The others need what a filesystem
catalog does not have, and are refused before anything is written, as Java refuses them there:
``done-partition`` (adds a ``<value>.done`` partition to the metastore) and ``mark-event`` (a Hive
metastore LOAD_DONE event) need a metastore, ``http-report`` and ``custom`` run Java code (an HTTP
client, a user class).
"""

from __future__ import annotations

import json
import time
from typing import Dict, List, Optional, Sequence

from paimon_sql.exceptions import CorruptMetadataError, InvalidOptionError
from paimon_sql.store.file_store import FileStore


ACTION_OPTION = "partition.mark-done-action"
SUCCESS_FILE_NAME = "_SUCCESS"
_NEEDS = {
    "done-partition": "a metastore to add the '.done' partition to (Hive catalog with "
                      "'metastore.partitioned-table'); this filesystem catalog has none",
    "mark-event": "a Hive metastore to send the LOAD_DONE event to; this filesystem catalog has none",
    "http-report": "Java's HTTP reporter, which paimon-sql does not run",
    "custom": "a Java class ('partition.mark-done-action.custom.class'), which paimon-sql cannot load",
}


def actions(options) -> List[str]:
    """The table's mark-done actions, each checked to run here (else one line naming what it needs)."""
    text = options.get(ACTION_OPTION)
    out = [a.strip().lower() for a in text.split(",") if a.strip()]
    for a in out:
        if a == "success-file":
            continue
        if a not in _NEEDS:
            raise InvalidOptionError(f"option '{ACTION_OPTION}' = '{text}': unknown action '{a}' (Paimon's are "
                                     f"success-file, done-partition, mark-event, http-report, custom)")
        raise InvalidOptionError(f"option '{ACTION_OPTION}' action '{a}' needs {_NEEDS[a]}")
    if not out:
        raise InvalidOptionError(f"option '{ACTION_OPTION}' names no action")
    return out


def success_file_json(creation_time: int, modification_time: int) -> str:
    """``SuccessFile.toJson()``: as Jackson's default pretty printer writes it."""
    return json.dumps({"creationTime": creation_time, "modificationTime": modification_time},
                      indent=2, separators=(",", " : "))


def read_success_file(io, path: str) -> Optional[Dict[str, int]]:
    """The ``_SUCCESS`` file at ``path`` as a dict, None when there is none."""
    if not io.exists(path):
        return None
    try:
        d = json.loads(io.read_text(path))
        return {"creationTime": int(d["creationTime"]), "modificationTime": int(d["modificationTime"])}
    except (ValueError, KeyError, TypeError) as e:
        raise CorruptMetadataError(f"success file {path} is malformed: {type(e).__name__}: {e}") from None


def mark_done(table: FileStore, partitions: Sequence[Sequence]) -> List[str]:
    """Run the table's mark-done actions for each partition (its values, in partition-key order);
    the ``_SUCCESS`` paths written. Every check (actions, existing files) runs before any write."""
    actions(table.options)
    return write_success_files(table, partitions)


def write_success_files(table: FileStore, partitions: Sequence[Sequence]) -> List[str]:
    """The ``success-file`` action alone: each partition's ``_SUCCESS`` file written (existing ones
    read first, their creation time kept); the paths written."""
    paths = [f"{table.path}/{table.paths.partition_dir(values)}/{SUCCESS_FILE_NAME}" for values in partitions]
    existing = {p: read_success_file(table.io, p) for p in dict.fromkeys(paths)}
    now = int(time.time() * 1000)
    for path, old in existing.items():
        created = old["creationTime"] if old else now
        table.io.write_bytes(path, success_file_json(created, now).encode("utf-8"))
    return list(existing)
