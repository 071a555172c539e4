"""``remove_unexisting_files``: paimon-spark's RemoveUnexistingFilesProcedure.

Repairs a table whose data files were lost from storage: the live files of the latest snapshot
whose data file no longer exists get DELETE entries, all in one snapshot, so the table reads again
(the lost rows are gone). Returns one row per such file (its path); ``dry_run`` only lists them.
Existence is checked by Spark tasks on the executors, ``parallelism`` of them (default Spark's
default parallelism), as paimon-spark does.
"""

from __future__ import annotations

from functools import partial
from typing import Dict, List, Tuple

from paimon_sql.data import binary_row
from paimon_sql.procedures.base import Procedure, columns, optional, register, required
from paimon_sql.spark.tasks import run_tasks
from paimon_sql.write.commit_message import CommitMessage


def _missing(io, paths: List[str]) -> List[str]:
    """The paths of one task's share that do not exist."""
    return [p for p in paths if not io.exists(p)]


@register
class RemoveUnexistingFilesProcedure(Procedure):
    name = "remove_unexisting_files"
    rewrites_files = True
    parameters = (required("table", "STRING"), optional("dry_run", "BOOLEAN", False), optional("parallelism", "INT"))
    output = columns("fileName STRING")
    description = "Drop the manifest entries of data files missing from storage, in one snapshot (dry_run: list them)."

    def call(self, session, args):
        tasks = session.spark.sparkContext.defaultParallelism if args["parallelism"] is None else args["parallelism"]
        if tasks < 1:
            raise self.fail(f"parallelism must be at least 1, got {tasks}")
        table = self.table(session, args["table"])
        types = [f.type for f in table.schema.fields_of(table.schema.partition_keys)]
        entries = table.new_scan().plan_entries()
        paths = [table.paths.data_file_path(binary_row.from_bytes(e.partition, types), e.bucket,
                                            e.file.file_name, e.file.external_path) for e in entries]
        size = max(1, -(-len(paths) // tasks))
        lost = {p for chunk in run_tasks(session.spark, f"paimon remove_unexisting_files {table.name}",
                                         partial(_missing, table.io), [paths[i:i + size] for i in
                                                                      range(0, len(paths), size)])
                for p in chunk}
        missing = [(e, p) for e, p in zip(entries, paths) if p in lost]
        if missing and not args["dry_run"]:
            messages: Dict[Tuple[bytes, int], CommitMessage] = {}
            for e, _ in missing:
                messages.setdefault((e.partition, e.bucket),
                                    CommitMessage(e.partition, e.bucket, e.total_buckets)).deleted_files.append(e.file)
            table.new_commit().commit(list(messages.values()))
        return [(p,) for _, p in missing]
