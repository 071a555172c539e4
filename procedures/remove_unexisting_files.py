"""``remove_unexisting_files``: paimon-spark's RemoveUnexistingFilesProcedure.

Repairs a table whose data files were lost from storage: the live files of the latest snapshot
whose data file no longer exists get DELETE entries, all in one snapshot, so the table reads again
(the lost rows are gone). Returns one row per such file (its path); ``dry_run`` only lists them.
``parallelism`` is the number of threads checking existence.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Dict, Tuple

from paimon_sql.format import binary_row
from paimon_sql.procedures.base import Procedure, columns, optional, register, required
from paimon_sql.table.write import CommitMessage


@register
class RemoveUnexistingFilesProcedure(Procedure):
    name = "remove_unexisting_files"
    parameters = (required("table", "STRING"), optional("dry_run", "BOOLEAN", False), optional("parallelism", "INT"))
    output = columns("fileName STRING")
    description = "Drop the manifest entries of data files missing from storage, in one snapshot (dry_run: list them)."

    def call(self, session, args):
        threads = 8 if args["parallelism"] is None else args["parallelism"]
        if threads < 1:
            raise self.fail(f"parallelism must be at least 1, got {threads}")
        table = self.table(session, args["table"])
        types = [f.type for f in table.schema.fields_of(table.schema.partition_keys)]
        entries = table.new_scan().plan_entries()
        paths = [table.paths.data_file_path(binary_row.from_bytes(e.partition, types), e.bucket,
                                            e.file.file_name, e.file.external_path) for e in entries]
        with ThreadPoolExecutor(threads) as pool:
            present = list(pool.map(table.io.exists, paths))
        missing = [(e, p) for e, p, ok in zip(entries, paths, present) if not ok]
        if missing and not args["dry_run"]:
            messages: Dict[Tuple[bytes, int], CommitMessage] = {}
            for e, _ in missing:
                messages.setdefault((e.partition, e.bucket),
                                    CommitMessage(e.partition, e.bucket, e.total_buckets)).deleted_files.append(e.file)
            table.new_commit().commit(list(messages.values()))
        return [(p,) for _, p in missing]
